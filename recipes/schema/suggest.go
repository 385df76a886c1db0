package schema

// Suggest returns the known spelling closest to an unknown flag, or "" when nothing is close.
// It ranks candidates the way cyclopts does (Python difflib.get_close_matches with its
// default cutoff 0.6, best first, ties to the greater string), so the hint matches the one
// the real aiperf prints ("Did you mean --apply-chat-template?").
func (s *Schema) Suggest(name string) string { return closest(name, s.spelling) }

// closest returns the candidate closest to word by Suggest's ranking, or "" when none is
// close (a misspelt choice: "minimax_m9" finds "minimax_m2").
func closest(word string, cands []string) string {
	best, bestScore := "", 0.0
	w := []rune(word)
	for _, cand := range cands {
		if upperBound(w, []rune(cand)) < 0.6 {
			continue // difflib's quick_ratio: no need for the full match
		}
		r := matchRatio(word, cand)
		if r < 0.6 {
			continue
		}
		if r > bestScore || r == bestScore && cand > best {
			best, bestScore = cand, r
		}
	}
	return best
}

// upperBound is difflib's quick_ratio: 2*|multiset intersection|/T bounds the ratio.
func upperBound(a, b []rune) float64 {
	total := len(a) + len(b)
	if total == 0 {
		return 1
	}
	if 2*float64(min(len(a), len(b)))/float64(total) < 0.6 {
		return 0 // real_quick_ratio: the lengths alone rule it out
	}
	var counts [256]int
	other := map[rune]int{}
	for _, r := range b {
		if r < 256 {
			counts[r]++
		} else {
			other[r]++
		}
	}
	common := 0
	for _, r := range a {
		switch {
		case r < 256 && counts[r] > 0:
			counts[r]--
			common++
		case r >= 256 && other[r] > 0:
			other[r]--
			common++
		}
	}
	return 2 * float64(common) / float64(total)
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
