// Package stats holds the sample statistics sweep writes into its outputs:
// Percentile (numpy's default linear method, which InferenceX and aiperf
// use), Median, Mean, PopStd (ddof=0) and SampleStd (ddof=1).
//
// Empty input: Percentile, Median, Mean and PopStd return NaN (the statistic is
// undefined; writers print NaN as null); SampleStd returns 0 for fewer
// than two values, as aiperf does. Callers that want another value for an
// empty sample check the length first.
//
// The arithmetic is fixed so that results are bit-for-bit those of numpy:
// products are kept out of fused multiply-adds. metrics/result keeps its own
// mean and standard deviation (pymath.go's moments): InferenceX computes
// them with Python's statistics module in exact rational arithmetic, which
// a float sum does not reproduce in the last bits.
package stats

import (
	"math"
	"slices"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of sorted, which
// must be sorted ascending: linear interpolation between the order
// statistics at (n−1)·p/100 (numpy's default, R's type 7). An empty slice
// gives NaN.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	k := float64(n-1) * (p / 100)
	f := int(k)
	c := f + 1
	if c >= n {
		return sorted[f]
	}
	frac := k - float64(f)
	step := float64(frac * (sorted[c] - sorted[f])) // no fused multiply-add
	return sorted[f] + step
}

// Mean returns the arithmetic mean of xs (summed in order); NaN when xs is
// empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Median returns the middle value of xs (not sorted in place), the mean of
// the two middle values for an even count, as Python's statistics.median;
// NaN when xs is empty. It is Percentile(·, 50) but for the last bit: the
// two middle values are summed and halved, not interpolated.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// PopStd returns the population standard deviation of xs (ddof=0) around
// Mean(xs); NaN when xs is empty.
func PopStd(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return math.Sqrt(squares(xs) / float64(len(xs)))
}

// SampleStd returns the sample standard deviation of xs (ddof=1); 0 for
// fewer than two values.
func SampleStd(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return math.Sqrt(squares(xs) / float64(len(xs)-1))
}

// squares is the sum of squared deviations from Mean(xs).
func squares(xs []float64) float64 {
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss
}
