package compare

import (
	"math"
	"sort"
)

// uniformCore returns which of an arm's paired points (log changes ls,
// with q = 1/m + 1/n each) change alike, by a forward search: it starts
// from the h = ⌊k/2⌋+1 points whose changes, adjacent in value, scatter
// least, and adds the point nearest their weighted mean while its change
// lies inside their prediction interval (Student's t with the subset's
// degrees of freedom, at level heterogeneityP shared by the points still
// outside, Bonferroni). The points it never adds changed differently
// from the rest: a non-uniform effect (a capacity cliff past the KV
// limit), not noise, so the paired scatter leaves them out. Up to half of
// the points (less one) may be left out; with no outlier every point is
// kept.
func uniformCore(ls, qs []float64) []bool {
	k := len(ls)
	in := make([]bool, k)
	h := k/2 + 1
	if k <= 2 {
		for i := range in {
			in[i] = true
		}
		return in
	}
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ls[order[a]] < ls[order[b]] })
	best, bestSS := 0, math.Inf(1)
	for s := 0; s+h <= k; s++ {
		_, ss := weightedFit(ls, qs, order[s:s+h])
		if ss < bestSS {
			best, bestSS = s, ss
		}
	}
	set := append([]int(nil), order[best:best+h]...)
	for _, i := range set {
		in[i] = true
	}
	for len(set) < k {
		mean, ss := weightedFit(ls, qs, set)
		var sw float64
		for _, i := range set {
			sw += 1 / qs[i]
		}
		s2 := ss / float64(len(set)-1)
		next, nextR := -1, math.Inf(1)
		for j := range ls {
			if in[j] {
				continue
			}
			r := math.Abs(ls[j]-mean) / math.Sqrt(s2*(qs[j]+1/sw))
			if ls[j] == mean || math.Abs(ls[j]-mean) <= 1e-12*math.Max(1, math.Abs(mean)) {
				r = 0
			}
			if next < 0 || r < nextR {
				next, nextR = j, r
			}
		}
		if !(nextR <= studentT(1-heterogeneityP/float64(2*(k-len(set))), float64(len(set)-1))) {
			break
		}
		in[next] = true
		set = append(set, next)
	}
	return in
}

// weightedFit is the weighted mean (weights 1/q) of ls over idx and the
// weighted sum of squares around it, Σ (l − mean)²/q, which over
// len(idx)−1 estimates the variance of one result's log value.
func weightedFit(ls, qs []float64, idx []int) (mean, ss float64) {
	var sw, swl float64
	for _, i := range idx {
		sw += 1 / qs[i]
		swl += ls[i] / qs[i]
	}
	mean = swl / sw
	for _, i := range idx {
		ss += (ls[i] - mean) * (ls[i] - mean) / qs[i]
	}
	return mean, ss
}

// heterogeneityP is the level below which a scatter is too large, against
// the rest's, to be noise: an arm's against the other arms' (F test), a
// point's change against the other points' of its arm (uniformCore).
const heterogeneityP = 0.001
