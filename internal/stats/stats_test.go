package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		// numpy.percentile(..., method="linear") values.
		{"p0", []float64{1, 2, 3, 4, 10}, 0, 1},
		{"p50", []float64{1, 2, 3, 4, 10}, 50, 3},
		{"p75", []float64{1, 2, 3, 4, 10}, 75, 4},
		{"p90 interpolates", []float64{1, 2, 3, 4, 10}, 90, 7.6},
		{"p95 interpolates", []float64{1, 2, 3, 4, 10}, 95, 8.8},
		{"p100", []float64{1, 2, 3, 4, 10}, 100, 10},
		{"p5 of four (the A/B gate's interval)", []float64{1, 2, 3, 4}, 5, 1.15},
		{"p95 of four", []float64{1, 2, 3, 4}, 95, 3.85},
		{"one value", []float64{7}, 95, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, Percentile(tc.sorted, tc.p), 1e-12)
		})
	}
}

// TestEmpty pins the stated behaviour on empty input.
func TestEmpty(t *testing.T) {
	assert.True(t, math.IsNaN(Percentile(nil, 50)))
	assert.True(t, math.IsNaN(Median(nil)))
	assert.True(t, math.IsNaN(Mean(nil)))
	assert.True(t, math.IsNaN(PopStd(nil)))
	assert.Equal(t, 0.0, SampleStd(nil))
	assert.Equal(t, 0.0, SampleStd([]float64{3}), "one value has no sample spread")
}

func TestMeanStd(t *testing.T) {
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	assert.Equal(t, 5.0, Mean(xs))
	assert.Equal(t, 2.0, PopStd(xs))
	assert.InDelta(t, math.Sqrt(32.0/7), SampleStd(xs), 1e-15)
}

func TestMedian(t *testing.T) {
	xs := []float64{9, 1, 5}
	assert.Equal(t, 5.0, Median(xs))
	assert.Equal(t, []float64{9, 1, 5}, xs, "not sorted in place")
	assert.Equal(t, 3.0, Median([]float64{4, 1, 2, 9}))
	assert.Equal(t, 3.0, Median([]float64{4, 2}))
	// The two middle values are halved after summing (statistics.median),
	// which Percentile's interpolation does not reproduce in the last bit.
	a, b := 0.1, 0.7
	assert.Equal(t, (a+b)/2, Median([]float64{b, a}))
	assert.NotEqual(t, Percentile([]float64{a, b}, 50), Median([]float64{b, a}))
}
