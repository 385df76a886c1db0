package knee_test

import (
	"math"
	"testing"

	"sweep/sweep/knee"
)

// TestAnalyzeProbeBias: Analyze divides an arm's probes by how far they
// read above the curve of its steady full-length points (at least four,
// up to the highest), shrunk toward none; with fewer full-length points,
// probes outside their range, or probes whose KV pool came near full,
// there is nothing to read them against and nothing is scaled.
func TestAnalyzeProbeBias(t *testing.T) {
	curve := func(c int) float64 { return 1000 * float64(c) / math.Sqrt(1+float64(c*c)/256) } // bends at c16
	full := func(c int) knee.Sample {
		v := curve(c)
		return knee.Sample{Conc: c, TotalTPS: &v, Seconds: 1200}
	}
	probe := func(c int, ratio float64) knee.Sample {
		v := ratio * curve(c)
		return knee.Sample{Conc: c, TotalTPS: &v, Probe: true, Seconds: 300}
	}
	unsteady := func(s knee.Sample) knee.Sample {
		kv := 0.9
		s.KVUsage = &kv
		return s
	}
	tests := []struct {
		name     string
		samples  []knee.Sample
		min, max float64 // Result.ProbeBias within [min, max]; 0, 0: none
	}{
		{"probes read high", []knee.Sample{full(1), full(4), full(8), probe(12, 1.1), probe(16, 1.1), probe(24, 1.1), full(32), full(64)}, 1.02, 1.08},
		{"probes on the curve", []knee.Sample{full(1), full(4), full(8), probe(12, 1), probe(16, 1), probe(24, 1), full(32), full(64)}, 0.995, 1.005},
		{"three full-length points", []knee.Sample{full(1), full(4), probe(8, 1.1), probe(16, 1.1), full(32)}, 0, 0},
		{"probes above the full-length points", []knee.Sample{full(1), full(2), full(4), full(8), probe(16, 1.1), probe(32, 1.1)}, 0, 0},
		{"probes near a full pool", []knee.Sample{full(1), full(4), full(8), unsteady(probe(12, 1.1)), unsteady(probe(16, 1.1)), full(32), full(64)}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := knee.Analyze(&knee.Arm{Samples: tt.samples}, knee.Options{})
			if r.ProbeBias < tt.min || r.ProbeBias > tt.max {
				t.Errorf("probe bias %.4f, want in [%g, %g]; %s", r.ProbeBias, tt.min, tt.max, r.Reason)
			}
		})
	}
}
