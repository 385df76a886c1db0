package configs

// lineOp is one step of a line diff: equal (a and b both advance), delete
// (a advances) or insert (b advances).
type lineOp struct {
	kind byte // '=', '-', '+'
	a, b int  // 0-based line index in a (for '=' and '-') and b (for '=' and '+')
}

// maxDiffEdits bounds the work of diffLines; beyond it the files are too
// different to explain line by line.
const maxDiffEdits = 2000

// diffLines returns a shortest edit script from a to b (Myers' algorithm),
// or ok=false when more than maxDiffEdits edits are needed.
func diffLines(a, b []string) (ops []lineOp, ok bool) {
	n, m := len(a), len(b)
	maxD := min(n+m, maxDiffEdits)
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
	var rev []lineOp
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
			rev = append(rev, lineOp{kind: '=', a: x, b: y})
		}
		if x == prevX {
			y--
			rev = append(rev, lineOp{kind: '+', a: x, b: y})
		} else {
			x--
			rev = append(rev, lineOp{kind: '-', a: x, b: y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, lineOp{kind: '=', a: x, b: y})
	}
	ops = make([]lineOp, len(rev))
	for i := range rev {
		ops[i] = rev[len(rev)-1-i]
	}
	return ops, true
}
