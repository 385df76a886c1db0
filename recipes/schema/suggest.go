package schema

// Suggest returns the known spelling closest to an unknown flag, or "" when nothing is close.
// It ranks candidates the way cyclopts does (Python difflib.get_close_matches with its
// default cutoff 0.6, best first, ties to the greater string), so the hint matches the one
// the real aiperf prints ("Did you mean --apply-chat-template?").
func (s *Schema) Suggest(name string) string {
	best, bestScore := "", 0.0
	for _, cand := range s.spelling {
		r := matchRatio(name, cand)
		if r < 0.6 {
			continue
		}
		if r > bestScore || r == bestScore && cand > best {
			best, bestScore = cand, r
		}
	}
	return best
}

// matchRatio is difflib.SequenceMatcher(None, b=cand, a=word).ratio() without the autojunk
// heuristic (it only applies to sequences of 200 or more elements): 2*M/T where M counts
// the characters in matching blocks found by recursive longest-common-substring search.
func matchRatio(word, cand string) float64 {
	a, b := []rune(word), []rune(cand)
	total := len(a) + len(b)
	if total == 0 {
		return 1
	}
	return 2 * float64(matchingChars(a, 0, len(a), b, 0, len(b))) / float64(total)
}

func matchingChars(a []rune, alo, ahi int, b []rune, blo, bhi int) int {
	i, j, k := longestMatch(a, alo, ahi, b, blo, bhi)
	if k == 0 {
		return 0
	}
	n := k
	if alo < i && blo < j {
		n += matchingChars(a, alo, i, b, blo, j)
	}
	if i+k < ahi && j+k < bhi {
		n += matchingChars(a, i+k, ahi, b, j+k, bhi)
	}
	return n
}

// longestMatch finds the longest common block of a[alo:ahi] and b[blo:bhi]; ties go to the
// earliest start in a, then in b, as in difflib.find_longest_match.
func longestMatch(a []rune, alo, ahi int, b []rune, blo, bhi int) (besti, bestj, bestk int) {
	besti, bestj = alo, blo
	prev := make([]int, bhi-blo+1)
	cur := make([]int, bhi-blo+1)
	for i := alo; i < ahi; i++ {
		for j := blo; j < bhi; j++ {
			if a[i] != b[j] {
				cur[j-blo+1] = 0
				continue
			}
			k := prev[j-blo] + 1
			cur[j-blo+1] = k
			if k > bestk {
				besti, bestj, bestk = i-k+1, j-k+1, k
			}
		}
		prev, cur = cur, prev
	}
	return besti, bestj, bestk
}
