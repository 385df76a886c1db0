package simengine

import (
	"math"
	"testing"
)

// TestPowerLogWatts: a GPU's power over a span counts the busy time of the
// buckets it covers in part in proportion. Counting such a bucket whole
// made the sampled power 15 % above the energy counters on a simulated
// point (the accumulator cross-check failed).
func TestPowerLogWatts(t *testing.T) {
	p := gpuPower{idle: 100, tdp: 1100}
	l := newPowerLog()
	l.add(0, 0.25, 0, 128) // a full decode batch for one bucket
	full := 0.35 + 0.5     // the decode factor of a full batch
	for _, tc := range []struct {
		from, to, busy float64 // busy: the decode fraction of the span
	}{
		{0, 1, 0.25},
		{0.2, 1.2, 0.05},
		{0.25, 1.25, 0},
		{0, 0.25, 1},
	} {
		want := p.idle + (p.tdp-p.idle)*tc.busy*full
		if got := l.watts(p, tc.from, tc.to, 0); math.Abs(got-want) > 1e-9 {
			t.Errorf("[%g, %g): %g W, want %g", tc.from, tc.to, got, want)
		}
	}
	// Work before since does not count.
	if got, want := l.watts(p, 0, 1, 0.2), p.idle+(p.tdp-p.idle)*0.05*full; math.Abs(got-want) > 1e-9 {
		t.Errorf("since 0.2: %g W, want %g", got, want)
	}
	// A fuller batch draws more power but less than in proportion.
	small, big := newPowerLog(), newPowerLog()
	small.add(0, 1, 0, 8)
	big.add(0, 1, 0, 64)
	ws, wb := small.watts(p, 0, 1, 0), big.watts(p, 0, 1, 0)
	if !(wb > ws && wb/ws < 64.0/8) {
		t.Errorf("batch 8: %g W, batch 64: %g W", ws, wb)
	}
}
