package knee

import (
	"math"

	"sweep/internal/stats"
)

// saturating is the smooth throughput model the knee is read from:
// T(c) = A·c / (c^p + s^p)^(1/p), linear in c well below s and flat well
// above it, p setting how sharp the bend is. In log space over u = log2 c
// (s = 2^v):
//
//	log T = log A + (u − v)·ln 2 − softplus(p·(u − v)·ln 2) / p
type saturating struct{ logA, v, p float64 }

func (m saturating) at(u float64) float64 {
	z := m.p * (u - m.v) * math.Ln2
	return m.logA + (u-m.v)*math.Ln2 - softplus(z)/m.p
}

func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

// sharpness values the fit tries for p.
var sharpness = []float64{1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 8, 12}

// fitSaturating fits the model to (u, y = log T) by weighted least squares
// over a grid of p and v (log A in closed form), then once more with
// points standing more than 3 robust standard deviations off the first
// fit down-weighted (a spike or a bad run must not bend the curve). It
// returns the model, the robust residual scale and the weights of the
// final fit.
func fitSaturating(u, y, w []float64) (saturating, float64, []float64) {
	m := gridFit(u, y, w)
	res := make([]float64, len(u))
	for i := range u {
		res[i] = math.Abs(y[i] - m.at(u[i]))
	}
	scale := max(1.4826*stats.Median(res), 0.01)
	w2 := make([]float64, len(w))
	changed := false
	for i := range w {
		w2[i] = w[i]
		if res[i] > 3*scale {
			w2[i], changed = w[i]*1e-3, true
		}
	}
	if changed {
		m = gridFit(u, y, w2)
	}
	return m, scale, w2
}

// gridFit is the weighted least-squares model over the grid of p and v.
func gridFit(u, y, w []float64) saturating {
	var best saturating
	bestSSE := math.Inf(1)
	eachModel(u, y, w, func(m saturating, sse float64) {
		if sse < bestSSE {
			best, bestSSE = m, sse
		}
	})
	return best
}

// eachModel calls f with every model of the fit's grid (p in sharpness,
// v from 4 doublings below the first point to 6 above the last in steps
// of 0.05), log A fitted to (u, y) by weighted least squares, and its
// weighted sum of squares.
func eachModel(u, y, w []float64, f func(m saturating, sse float64)) {
	lo, hi := u[0]-4, u[len(u)-1]+6
	sw := 0.0
	for _, x := range w {
		sw += x
	}
	for _, p := range sharpness {
		for v := lo; v <= hi+1e-9; v += 0.05 {
			m := saturating{v: v, p: p}
			// log A = weighted mean of y − model(log A = 0)
			s := 0.0
			for i := range u {
				s += w[i] * (y[i] - m.at(u[i]))
			}
			m.logA = s / sw
			f(m, m.sse(u, y, w))
		}
	}
}

// sse is the weighted sum of squares of y about the model.
func (m saturating) sse(u, y, w []float64) float64 {
	s := 0.0
	for i := range u {
		s += w[i] * sq(y[i]-m.at(u[i]))
	}
	return s
}

func sq(x float64) float64 { return x * x }
