package knee

import "math"

// isotonic returns the weighted least-squares non-decreasing fit of y
// (pool-adjacent-violators). Weights must be positive.
func isotonic(y, w []float64) []float64 {
	type block struct {
		sum, w float64
		n      int
	}
	bs := make([]block, 0, len(y))
	for i := range y {
		bs = append(bs, block{sum: y[i] * w[i], w: w[i], n: 1})
		for len(bs) > 1 {
			a, b := bs[len(bs)-2], bs[len(bs)-1]
			if a.sum/a.w <= b.sum/b.w {
				break
			}
			bs = bs[:len(bs)-2]
			bs = append(bs, block{sum: a.sum + b.sum, w: a.w + b.w, n: a.n + b.n})
		}
	}
	out := make([]float64, 0, len(y))
	for _, b := range bs {
		for range b.n {
			out = append(out, b.sum/b.w)
		}
	}
	return out
}

// antitonic returns the weighted least-squares non-increasing fit of y.
func antitonic(y, w []float64) []float64 {
	neg := make([]float64, len(y))
	for i, v := range y {
		neg[i] = -v
	}
	f := isotonic(neg, w)
	for i := range f {
		f[i] = -f[i]
	}
	return f
}

// unimodal returns the weighted least-squares unimodal fit of y (non-
// decreasing up to a mode, non-increasing after it) and the index of the
// first point of its mode block (the first index holding the fit's
// maximum).
func unimodal(y, w []float64) (fit []float64, mode int) {
	n := len(y)
	best := math.Inf(1)
	for m := range n {
		up := isotonic(y[:m+1], w[:m+1])
		down := antitonic(y[m+1:], w[m+1:])
		f := append(up, down...)
		sse := 0.0
		for i := range f {
			d := f[i] - y[i]
			sse += w[i] * d * d
		}
		if sse < best-1e-12 {
			best, fit = sse, f
		}
	}
	top := math.Inf(-1)
	for i, v := range fit {
		if v > top+1e-12 {
			top, mode = v, i
		}
	}
	return fit, mode
}
