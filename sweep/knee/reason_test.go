package knee

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBelowNeverRoundsUpToTheThreshold(t *testing.T) {
	for _, tc := range []struct {
		f, threshold float64
		want         string
	}{
		{0.896, 0.9, "89.6%"},
		{0.8999, 0.9, "89.9%"},
		{0.894, 0.9, "89%"},
		{0.73, 0.9, "73%"},
		{0.846, 0.85, "84.6%"},
	} {
		assert.Equal(t, tc.want, below(tc.f, tc.threshold), "below(%v, %v)", tc.f, tc.threshold)
	}
}

// An arm still gaining at its top usable point says where to measure
// next: further up when the grid ends there, between that point and the
// first failure when the points above it failed.
func TestUnsaturatedReasonNamesFailuresAbove(t *testing.T) {
	curve := []float64{2000, 6400, 10600, 13700, 18100}
	concs := []int{1, 4, 8, 12, 24}
	mk := func(failedAbove ...int) *Arm {
		a := &Arm{}
		for i, c := range concs {
			v := curve[i]
			a.Samples = append(a.Samples, Sample{Conc: c, TotalTPS: &v})
		}
		for _, c := range failedAbove {
			a.Samples = append(a.Samples, Sample{Conc: c, Excluded: "error rate 14% > 10%"})
		}
		return a
	}
	r := Analyze(mk(), Options{})
	assert.Equal(t, StatusUnsaturated, r.Status)
	assert.Contains(t, r.Reason, "at c24")
	assert.Contains(t, r.Reason, "extend the grid upward")

	r = Analyze(mk(32, 48), Options{})
	assert.Equal(t, StatusUnsaturated, r.Status)
	assert.Contains(t, r.Reason, "c32, c48 above failed, so the arm's capacity ends between c24 and c32; measure between them")
	assert.NotContains(t, r.Reason, "extend the grid upward")
}

// TestAnalyzeAbsurdThroughput: a finite throughput no GPU reaches (1e308
// tok/s, whose replicates' median overflowed to +Inf and made the fit
// index an empty slice) excludes its file with the reason instead of
// panicking; an arm of only such points is insufficient.
func TestAnalyzeAbsurdThroughput(t *testing.T) {
	// mk: a curve saturating at c8; the points at conc absurd (0: every
	// point) report 1e308 tok/s.
	mk := func(absurd int) *Arm {
		a := &Arm{}
		for _, c := range []int{1, 2, 4, 8, 16, 32} {
			for rep := range 2 {
				v := 1000.0 * float64(min(c, 8))
				if absurd == 0 || absurd == c {
					v = 1e308
				}
				a.Samples = append(a.Samples, Sample{Conc: c, TotalTPS: &v, File: fmt.Sprintf("c%d_%d.json", c, rep)})
			}
		}
		return a
	}
	var r *Result
	require.NotPanics(t, func() { r = Analyze(mk(4), Options{}) })
	assert.Equal(t, StatusOK, r.Status, r.Reason)
	require.Len(t, r.Points[2].Excluded, 2)
	assert.Equal(t, "per-GPU total throughput 1e+308 tok/s is beyond any GPU's (above 1e+09): a broken result", r.Points[2].Excluded[0].Reason)

	require.NotPanics(t, func() { r = Analyze(mk(0), Options{}) })
	assert.Equal(t, StatusInsufficient, r.Status)
}
