package knee_test

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/knee"
)

// TestAnalyzeSupersededProbe: a probe at a concurrency where the arm also
// has a full-length result (an adaptive discovery keeps the probe it ran
// again at the full length) is left out of the reading there, usable or
// failed, and listed as superseded: the verdict and every point's reading
// are those of the arm without it. A full-length result that failed
// supersedes its probe too. A probe alone at its concurrency still counts.
func TestAnalyzeSupersededProbe(t *testing.T) {
	curve := func(c int) float64 { return 1000 * float64(min(c, 16)) } // saturates at c16
	full := func(c int) knee.Sample {
		v := curve(c)
		return knee.Sample{File: "full", Conc: c, TotalTPS: &v, Seconds: 1200}
	}
	probe := func(c int, ratio float64) knee.Sample {
		v := ratio * curve(c)
		return knee.Sample{File: "probe", Conc: c, TotalTPS: &v, Probe: true, Seconds: 300}
	}
	failed := func(s knee.Sample, why string) knee.Sample {
		s.Excluded = why
		return s
	}
	base := []knee.Sample{probe(1, 1), probe(4, 1), full(16), probe(8, 1)}
	tests := []struct {
		name string
		at64 []knee.Sample // the samples at c64
		// want: the reading at c64 (0: not usable), its exclusions.
		want     float64
		excluded []knee.Exclusion
	}{
		{"usable probe read twice the full run", []knee.Sample{probe(64, 2), full(64)}, curve(64),
			[]knee.Exclusion{{File: "probe", Reason: knee.ExcludedSuperseded}}},
		{"failed probe", []knee.Sample{failed(probe(64, 1), "marked invalid: AL"), full(64)}, curve(64),
			[]knee.Exclusion{{File: "probe", Reason: knee.ExcludedSuperseded + " (the probe: marked invalid: AL)"}}},
		{"failed full-length run", []knee.Sample{probe(64, 1), failed(full(64), "error rate 15.0% > 10%")}, 0,
			[]knee.Exclusion{{File: "probe", Reason: knee.ExcludedSuperseded}, {File: "full", Reason: "error rate 15.0% > 10%"}}},
		{"probe alone", []knee.Sample{probe(64, 1)}, curve(64), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples := slices.Concat(base, tt.at64)
			slices.SortStableFunc(samples, func(a, b knee.Sample) int { return a.Conc - b.Conc })
			arm := &knee.Arm{Samples: samples}
			given := slices.Clone(samples)
			r := knee.Analyze(arm, knee.Options{})
			assert.Equal(t, given, arm.Samples, "the arm's samples are not changed")
			i := slices.IndexFunc(r.Points, func(p knee.Point) bool { return p.Conc == 64 })
			require.GreaterOrEqual(t, i, 0)
			pt := r.Points[i]
			if tt.want == 0 {
				assert.False(t, pt.Usable)
			} else {
				require.NotNil(t, pt.Throughput)
				assert.InDelta(t, tt.want, *pt.Throughput, 1e-9)
				assert.Len(t, pt.Replicates, 1)
			}
			assert.Equal(t, tt.excluded, pt.Excluded)

			// The verdict is the one without the superseded probe.
			without := slices.DeleteFunc(slices.Clone(samples), func(s knee.Sample) bool {
				return s.Probe && s.Conc == 64 && len(tt.at64) > 1
			})
			w := knee.Analyze(&knee.Arm{Samples: without}, knee.Options{})
			assert.Equal(t, w.Status, r.Status)
			assert.Equal(t, w.Knee, r.Knee, "%s", r.Reason)
			assert.Equal(t, w.Peak, r.Peak)
			assert.Equal(t, w.Reason, r.Reason)
			assert.InDelta(t, w.PeakValue, r.PeakValue, 1e-9*math.Max(1, w.PeakValue))
			if tt.want != 0 {
				assert.Equal(t, 16, r.Knee, "%s", r.Reason)
			}
		})
	}
}
