package knee

// Kneedle locates a knee the way the kneed package's KneeLocator does with
// its defaults (S = 1, curve "concave", direction "increasing",
// interp_method "interp1d", online false): x and y are normalised to
// [0, 1], the difference curve y_n − x_n is formed, its local maxima and
// minima are taken with non-strict comparisons against both neighbours
// (an end point is compared with its one neighbour), each maximum gets the
// threshold d_max − S × mean(Δx_n), and the first maximum after which the
// difference curve falls below its threshold, before a local minimum
// switches detection off, is the knee. It returns the index of the knee in
// x, or false when there is none (fewer than two distinct x or y values
// included). x must be strictly increasing.
func Kneedle(x, y []float64, s float64) (int, bool) {
	n := len(x)
	if n < 2 || n != len(y) {
		return 0, false
	}
	xn, okx := normalise(x)
	yn, oky := normalise(y)
	if !okx || !oky {
		return 0, false // kneed divides by zero here and finds nothing
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = yn[i] - xn[i]
	}
	isMax := func(i int) bool {
		return d[i] >= d[max(i-1, 0)] && d[i] >= d[min(i+1, n-1)]
	}
	isMin := func(i int) bool {
		return d[i] <= d[max(i-1, 0)] && d[i] <= d[min(i+1, n-1)]
	}
	meanStep := (xn[n-1] - xn[0]) / float64(n-1)
	if meanStep < 0 {
		meanStep = -meanStep
	}
	first := -1
	for i := range n {
		if isMax(i) {
			first = i
			break
		}
	}
	if first < 0 {
		return 0, false
	}
	threshold, thresholdIndex, active := 0.0, first, true
	for i := first; i < n-1; i++ {
		if isMax(i) {
			threshold, thresholdIndex, active = d[i]-s*meanStep, i, true
		}
		if isMin(i) {
			threshold, active = 0, false
		}
		if active && d[i+1] < threshold {
			return thresholdIndex, true
		}
	}
	return 0, false
}

// normalise maps a onto [0, 1] by min and max; false when they are equal.
func normalise(a []float64) ([]float64, bool) {
	lo, hi := a[0], a[0]
	for _, v := range a {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == lo {
		return nil, false
	}
	out := make([]float64, len(a))
	for i, v := range a {
		out[i] = (v - lo) / (hi - lo)
	}
	return out, true
}
