package aiperf

// A long point's server_metrics_export.json is about 100 MB, nearly all of
// it the per-series "timeslices" that no reader here uses. encoding/json
// skips an unknown member by running its validating scanner over every
// byte of it, which was most of the time the runner took to read the file
// after each point. withoutTimeslices hands the decoder the document with
// those values replaced by 0, checked for validity by a skimmer several
// times faster than the scanner; anything it does not recognise sends the
// caller back to the whole document, so what is read never changes.

// maxSkimDepth bounds the nesting the skimmer follows; deeper documents
// take the decoder's own path (which allows 10,000 levels).
const maxSkimDepth = 512

// withoutTimeslices returns data with the value of every "timeslices"
// member of the series objects under metrics.<family>.series replaced by
// 0, and whether it did so: false when data is not an object of that
// shape as far as the skimmer follows it, or when any value it passes
// over is not valid JSON. Keys are compared as written (an escaped
// spelling is left alone; the decoder then reads it as it is).
func withoutTimeslices(data []byte) ([]byte, bool) {
	s := &skim{b: data}
	var spans [][2]int
	member := func(key []byte) bool { // a series object's member
		start := s.ws()
		if !s.value(0) {
			return false
		}
		if string(key) == `"timeslices"` {
			spans = append(spans, [2]int{start, s.i})
		}
		return true
	}
	series := func() bool { return s.objectOr(member) }
	family := func(key []byte) bool {
		if string(key) == `"series"` {
			return s.arrayOr(series)
		}
		s.ws()
		return s.value(0)
	}
	families := func([]byte) bool { return s.objectOr(family) }
	top := func(key []byte) bool {
		if string(key) == `"metrics"` {
			return s.objectOr(families)
		}
		s.ws()
		return s.value(0)
	}
	if s.ws(); s.i >= len(data) || data[s.i] != '{' || !s.objectOr(top) {
		return nil, false
	}
	if s.ws(); s.i != len(data) || len(spans) == 0 {
		return nil, false
	}
	out := make([]byte, 0, len(data)/8)
	from := 0
	for _, sp := range spans {
		out = append(out, data[from:sp[0]]...)
		out = append(out, '0')
		from = sp[1]
	}
	return append(out, data[from:]...), true
}

// skim walks JSON text, checking it as encoding/json's scanner does
// (grammar, control characters and escapes in strings; not UTF-8).
type skim struct {
	b []byte
	i int
}

// ws skips white space and returns the position after it.
func (s *skim) ws() int {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return s.i
		}
	}
	return s.i
}

// objectOr reads the value at s.i: an object's members through member
// (called with the key as written, s.i after its colon), or any other
// value skipped.
func (s *skim) objectOr(member func(key []byte) bool) bool {
	if s.ws(); s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.value(0)
	}
	s.i++
	if s.ws(); s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.ws()
		start := s.i
		if !s.str() {
			return false
		}
		key := s.b[start:s.i]
		if s.ws(); s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		if !member(key) {
			return false
		}
		if more, ok := s.next('}'); !more {
			return ok
		}
	}
}

// arrayOr reads the value at s.i: an array's elements through elem
// (s.i at each), or any other value skipped.
func (s *skim) arrayOr(elem func() bool) bool {
	if s.ws(); s.i >= len(s.b) || s.b[s.i] != '[' {
		return s.value(0)
	}
	s.i++
	if s.ws(); s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		if more, ok := s.next(']'); !more {
			return ok
		}
	}
}

// next reads the separator after a member or element: more after a
// comma, !more && ok at the closing byte, neither at anything else.
func (s *skim) next(close byte) (more, ok bool) {
	if s.ws(); s.i < len(s.b) {
		switch s.b[s.i] {
		case ',':
			s.i++
			return true, true
		case close:
			s.i++
			return false, true
		}
	}
	return false, false
}

// value skips one JSON value at s.i (after white space), checking it.
func (s *skim) value(depth int) bool {
	if s.ws(); s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		if depth >= maxSkimDepth {
			return false
		}
		if c == '{' {
			return s.objectOr(func([]byte) bool { return s.value(depth + 1) })
		}
		return s.arrayOr(func() bool { return s.value(depth + 1) })
	case c == '-' || c >= '0' && c <= '9':
		return s.num()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	}
	return false
}

func (s *skim) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// str skips a string: no raw control characters, valid escapes.
func (s *skim) str() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	for s.i++; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(s.b)-s.i < 5 {
					return false
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				s.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// num skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *skim) num() bool {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
