// Package textdiff compares text for error messages and key lookups: a
// line diff (Myers) and an edit distance with the closest candidates for
// did-you-mean hints.
//
//	ops, ok := textdiff.Lines(oldLines, newLines, 2000)
//	hints := textdiff.Closest("qwen3.5-fp8-mi325x-sglang", keys, 3, 5)
package textdiff

import (
	"slices"
)

// Op is one step of a line diff: equal (a and b both advance), delete
// (a advances) or insert (b advances).
type Op struct {
	Kind byte // '=', '-', '+'
	A, B int  // 0-based line index in a (for '=' and '-') and b (for '=' and '+')
}

// Lines returns a shortest edit script from a to b (Myers' algorithm), or
// ok=false when more than maxEdits edits are needed (the inputs are too
// different to explain line by line; the work is O((n+m)·maxEdits)).
func Lines(a, b []string, maxEdits int) (ops []Op, ok bool) {
	n, m := len(a), len(b)
	maxD := min(n+m, maxEdits)
	offset := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := false
	var dEnd int
	for d := 0; d <= maxD && !found; d++ {
		// Keep only the diagonals step d can read: -d..d.
		trace = append(trace, append([]int(nil), v[offset-d:offset+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				found = true
				dEnd = d
				break
			}
		}
	}
	if !found {
		return nil, false
	}
	// Walk back through the snapshots to recover the path.
	x, y := n, m
	var rev []Op
	for d := dEnd; d > 0; d-- {
		vPrev := trace[d] // diagonals -d..d before step d
		at := func(k int) int { return vPrev[k+d] }
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, Op{Kind: '=', A: x, B: y})
		}
		if x == prevX {
			y--
			rev = append(rev, Op{Kind: '+', A: x, B: y})
		} else {
			x--
			rev = append(rev, Op{Kind: '-', A: x, B: y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, Op{Kind: '=', A: x, B: y})
	}
	ops = make([]Op, len(rev))
	for i := range rev {
		ops[i] = rev[len(rev)-1-i]
	}
	return ops, true
}

// Distance is the Levenshtein distance of a and b, or limit when it is
// at least limit.
func Distance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// Closest returns up to n candidates within maxDist edits of s, nearest
// first (ties in candidate order).
func Closest(s string, candidates []string, n, maxDist int) []string {
	type cand struct {
		name string
		dist int
	}
	var cs []cand
	for _, c := range candidates {
		if d := Distance(s, c, maxDist+1); d <= maxDist {
			cs = append(cs, cand{c, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.dist - b.dist })
	out := make([]string, 0, min(n, len(cs)))
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}
