package aiperf

import (
	"errors"
	"io"
)

// A long point's server_metrics_export.json runs to hundreds of MB (a
// simulated hour at c512 wrote 299 MiB; aiperf on real hardware writes
// GiBs), nearly all of it the per-series "timeslices" and the warm-up's
// families ("warmup_metrics", the same shape again) that no reader here
// uses. The skimmer reads the document as a stream through a small
// window, checks it for validity several times faster than encoding/json's
// scanner, and keeps its text but for the values of those members, each
// replaced by 0: what the decoder then reads is the same, and memory is
// bounded by what is kept, not by the file. Anything the skimmer does not
// recognise sends the caller back to the whole document, so what is read
// never changes.

// maxSkimDepth bounds the nesting the skimmer follows; deeper documents
// take the decoder's own path (which allows 10,000 levels).
const maxSkimDepth = 512

// skimWindow is the size of the window a stream is read through.
const skimWindow = 256 << 10

// maxHeldKey is the longest member key (as written, with its quotes) the
// skimmer holds to compare; no key it looks for is longer.
const maxHeldKey = 64

// withoutTimeslices returns data with the value of every "timeslices"
// member of the series objects under metrics.<family>.series, and of the
// top-level "warmup_metrics", replaced by 0, and whether it did so: false
// when data is not an object of that shape as far as the skimmer follows
// it, when any value it passes over is not valid JSON, or when there is
// nothing to replace. Keys are compared as written (an escaped spelling is
// left alone; the decoder then reads it as it is).
func withoutTimeslices(data []byte) ([]byte, bool) {
	s := newSkim(data, nil)
	kept, ok := s.export()
	if !ok || s.dropped == 0 {
		return nil, false
	}
	return kept, true
}

// skimStream reads an export from r as withoutTimeslices reads one from
// memory, window bytes at a time: kept is the text without the
// timeslices' values (all of it when there are none), ok whether the
// skimmer recognised the document, and err a read error (never io.EOF).
// When !ok, stop says where and why the skimmer stopped.
func skimStream(r io.Reader, window int) (kept []byte, ok bool, stop skimStop, err error) {
	s := newSkim(make([]byte, 0, max(window, 1)), r)
	kept, ok = s.export()
	if s.err != nil && !errors.Is(s.err, io.EOF) {
		return nil, false, skimStop{}, s.err
	}
	return kept, ok, s.stop(), nil
}

// skimStop is where the skimmer stopped in a document it did not
// recognise, and why (Why is "" for text that is not valid JSON).
type skimStop struct {
	Offset int64 // bytes before the stop
	Why    string
}

// skim walks JSON text, checking it as encoding/json's scanner does
// (grammar, control characters and escapes in strings; not UTF-8), and
// collects the text it keeps. The text is b, then (when r is not nil)
// what r gives: b is a window that fill slides along it.
type skim struct {
	b   []byte    // the window: b[i:] is unread
	i   int       // position in b
	r   io.Reader // the rest of the text; nil: b is all of it
	err error     // what ended r (io.EOF at its end)

	out     []byte // kept text let go of by the window
	from    int    // b[from:i] is kept text not yet in out; -1 while dropping
	dropped int    // values replaced by 0

	mark int              // -1, or where a key being held starts in b
	key  [maxHeldKey]byte // the last key held
	keyN int              // its length; -1 when it was longer than maxHeldKey

	base int64  // offset of b[0] in the text
	why  string // a reason for stopping other than invalid JSON
}

func newSkim(b []byte, r io.Reader) *skim { return &skim{b: b, r: r, mark: -1} }

// export skims a whole export and returns the kept text and whether the
// document was recognised.
func (s *skim) export() ([]byte, bool) {
	member := func(key []byte) bool { // a series object's member
		if string(key) == `"timeslices"` {
			return s.drop()
		}
		return s.value(0)
	}
	series := func() bool { return s.objectOr(member) }
	family := func(key []byte) bool {
		if string(key) == `"series"` {
			return s.arrayOr(series)
		}
		return s.value(0)
	}
	families := func([]byte) bool { return s.objectOr(family) }
	top := func(key []byte) bool {
		switch string(key) {
		case `"metrics"`:
			return s.objectOr(families)
		case `"warmup_metrics"`:
			return s.drop()
		}
		return s.value(0)
	}
	if c, ok := s.peekAfterWS(); !ok || c != '{' {
		s.why = "the top level is not an object"
		return nil, false
	}
	if !s.objectOr(top) {
		return nil, false
	}
	if s.ws(); s.more() {
		s.why = "more follows the top-level object"
		return nil, false
	}
	if s.out == nil && s.from == 0 {
		return s.b, true // all of it, never let go of: no copy
	}
	return append(s.out, s.b[s.from:]...), true
}

// drop skips the value at s.i, checking it, and keeps 0 in its place.
func (s *skim) drop() bool {
	start := s.ws()
	if s.from >= 0 {
		s.out = append(s.out, s.b[s.from:start]...)
	}
	s.from = -1
	if !s.value(0) {
		return false
	}
	s.out = append(s.out, '0')
	s.from = s.i
	s.dropped++
	return true
}

// stop says where the skimmer is.
func (s *skim) stop() skimStop { return skimStop{Offset: s.base + int64(s.i), Why: s.why} }

// fill reads more of the text into the window, keeping its unread part
// and a key being held, and reports whether it did. Kept text the window
// lets go of moves to out.
func (s *skim) fill() bool {
	if s.r == nil || s.err != nil {
		return false
	}
	if s.mark >= 0 && s.i-s.mark > maxHeldKey {
		s.mark = -1 // longer than any key looked for
	}
	hold := s.i
	if s.mark >= 0 {
		hold = s.mark
	}
	if s.from >= 0 && s.from < hold {
		s.out = append(s.out, s.b[s.from:hold]...)
		s.from = hold
	}
	n := copy(s.b, s.b[hold:])
	s.b = s.b[:n]
	s.i -= hold
	s.base += int64(hold)
	if s.from >= 0 {
		s.from -= hold
	}
	if s.mark >= 0 {
		s.mark -= hold
	}
	if len(s.b) == cap(s.b) {
		s.b = append(s.b, 0)[:len(s.b)] // room for what need asks beyond a held key
	}
	for range 100 {
		n, err := s.r.Read(s.b[len(s.b):cap(s.b)])
		s.b = s.b[:len(s.b)+n]
		if err != nil {
			s.err = err
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
	s.err = io.ErrNoProgress
	return false
}

// more reports whether a byte is left at s.i.
func (s *skim) more() bool { return s.i < len(s.b) || s.fill() }

// peek returns the byte at s.i, if there is one.
func (s *skim) peek() (byte, bool) {
	if s.i < len(s.b) {
		return s.b[s.i], true
	}
	if !s.fill() {
		return 0, false
	}
	return s.b[s.i], true
}

// need reports whether n bytes are left from s.i, reading them in.
func (s *skim) need(n int) bool {
	for len(s.b)-s.i < n {
		if !s.fill() {
			return false
		}
	}
	return true
}

// ws skips white space and returns the position after it.
func (s *skim) ws() int {
	for {
		b, i := s.b, s.i
		for ; i < len(b); i++ {
			if c := b[i]; c > ' ' || c != ' ' && c != '\n' && c != '\t' && c != '\r' {
				s.i = i
				return i
			}
		}
		s.i = i
		if !s.fill() {
			return i
		}
	}
}

// objectOr reads the value at s.i: an object's members through member
// (called with the key as written, or nil for a key longer than
// maxHeldKey, s.i after its colon), or any other value skipped.
func (s *skim) objectOr(member func(key []byte) bool) bool {
	if s.ws(); !s.more() || s.b[s.i] != '{' {
		return s.value(0)
	}
	return s.object(member, 0)
}

// object reads the object at s.i: its members through member, or with
// member nil skipped as values nested depth+1 deep.
func (s *skim) object(member func(key []byte) bool, depth int) bool {
	s.i++
	if c, ok := s.peekAfterWS(); ok && c == '}' {
		s.i++
		return true
	}
	for {
		s.ws()
		var key []byte
		if member == nil {
			if !s.str() {
				return false
			}
		} else if key = s.heldKey(); key == nil && s.keyN != -1 {
			return false
		}
		if c, ok := s.peekAfterWS(); !ok || c != ':' {
			return false
		}
		s.i++
		var ok bool
		if member == nil {
			ok = s.value(depth + 1)
		} else {
			ok = member(key)
		}
		if !ok {
			return false
		}
		if more, ok := s.next('}'); !more {
			return ok
		}
	}
}

// heldKey reads the string at s.i and returns it as written, copied out
// of the window; nil with keyN -1 for a string longer than maxHeldKey,
// nil with keyN 0 for an invalid one.
func (s *skim) heldKey() []byte {
	s.mark = s.i
	if !s.str() {
		s.mark, s.keyN = -1, 0
		return nil
	}
	if s.mark < 0 || s.i-s.mark > maxHeldKey {
		s.mark, s.keyN = -1, -1
		return nil
	}
	s.keyN = copy(s.key[:], s.b[s.mark:s.i])
	s.mark = -1
	return s.key[:s.keyN]
}

func (s *skim) peekAfterWS() (byte, bool) {
	s.ws()
	return s.peek()
}

// arrayOr reads the value at s.i: an array's elements through elem
// (s.i at each), or any other value skipped.
func (s *skim) arrayOr(elem func() bool) bool {
	if s.ws(); !s.more() || s.b[s.i] != '[' {
		return s.value(0)
	}
	return s.array(elem)
}

// array reads the array at s.i, its elements through elem.
func (s *skim) array(elem func() bool) bool {
	s.i++
	if c, ok := s.peekAfterWS(); ok && c == ']' {
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
	if c, ok := s.peekAfterWS(); ok {
		switch c {
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
	c, ok := s.peekAfterWS()
	if !ok {
		return false
	}
	switch {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		if depth >= maxSkimDepth {
			s.why = "it is nested deeper than the streaming reader follows"
			return false
		}
		if c == '{' {
			return s.object(nil, depth)
		}
		return s.array(func() bool { return s.value(depth + 1) })
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
	if !s.need(len(word)) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// str skips a string: no raw control characters, valid escapes.
func (s *skim) str() bool {
	if c, ok := s.peek(); !ok || c != '"' {
		return false
	}
	s.i++
	for {
		b, i := s.b, s.i
		for i < len(b) {
			c := b[i]
			if c == '"' {
				s.i = i + 1
				return true
			}
			if c < 0x20 || c == '\\' {
				break
			}
			i++
		}
		s.i = i
		if i == len(b) {
			if !s.fill() {
				return false
			}
			continue
		}
		if b[i] != '\\' {
			return false // a raw control character
		}
		s.i++
		if !s.more() {
			return false
		}
		switch s.b[s.i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.i++
		case 'u':
			if !s.need(5) {
				return false
			}
			for _, h := range s.b[s.i+1 : s.i+5] {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return false
				}
			}
			s.i += 5
		default:
			return false
		}
	}
}

// digits skips decimal digits and returns how many.
func (s *skim) digits() int {
	n := 0
	for {
		b, i := s.b, s.i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		n += i - s.i
		s.i = i
		if i < len(b) || !s.fill() {
			return n
		}
	}
}

// num skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *skim) num() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch c, ok := s.peek(); {
	case ok && c == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if c, ok := s.peek(); ok && c == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if c, ok := s.peek(); ok && (c == 'e' || c == 'E') {
		s.i++
		if c, ok := s.peek(); ok && (c == '+' || c == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}
