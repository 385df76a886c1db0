package matrix

// fnmatch reports whether name matches the shell pattern as Python's
// fnmatch.fnmatchcase does: '*' any run, '?' any one character, "[seq]"
// and "[!seq]" character sets with ranges; a '[' without a closing ']' is
// a literal. Matching is case-sensitive (POSIX).
func fnmatch(pattern, name string) bool {
	p, n := []rune(pattern), []rune(name)
	// Iterative matcher with backtracking to the last '*'.
	pi, ni := 0, 0
	starP, starN := -1, 0
	for ni < len(n) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starN = pi, ni
				pi++
				continue
			case '?':
				pi++
				ni++
				continue
			case '[':
				if ok, next, valid := matchSet(p, pi, n[ni]); valid {
					if ok {
						pi = next
						ni++
						continue
					}
				} else if n[ni] == '[' {
					pi++
					ni++
					continue
				}
			default:
				if p[pi] == n[ni] {
					pi++
					ni++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starN++
		pi, ni = starP+1, starN
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchSet matches c against the set starting at p[i] == '['. valid is
// false when the set has no closing ']' (then '[' is a literal).
func matchSet(p []rune, i int, c rune) (ok bool, next int, valid bool) {
	j := i + 1
	negate := false
	if j < len(p) && p[j] == '!' {
		negate = true
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++ // a leading ']' is a member
	}
	for j < len(p) && p[j] != ']' {
		j++
	}
	if j >= len(p) {
		return false, 0, false
	}
	body := p[i+1 : j]
	if negate {
		body = body[1:]
	}
	in := false
	for k := 0; k < len(body); k++ {
		if k+2 < len(body) && body[k+1] == '-' {
			if body[k] <= c && c <= body[k+2] {
				in = true
			}
			k += 2
			continue
		}
		if body[k] == c {
			in = true
		}
	}
	return in != negate, j + 1, true
}
