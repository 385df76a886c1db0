package knee

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
