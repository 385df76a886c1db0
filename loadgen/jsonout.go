package loadgen

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"sweep/metrics/aiperf"
)

// aiperfVersion is the aiperf release whose artifact formats the load
// generator writes.
const aiperfVersion = "0.12.0"

// MarshalJSON writes the object's keys in order.
func (o object) MarshalJSON() ([]byte, error) { return appendJSON(nil, o) }

// appendJSON appends v's compact JSON to b. Objects, lists and numbers of
// the artifact trees are written directly; anything else goes through
// encoding/json. (A nested Marshaler would have encoding/json re-scan and
// compact its output once per level: a long point's 31 MB server-metrics
// export was compacted five times over.)
func appendJSON(b []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case object:
		b = append(b, '{')
		for i, f := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendKey(b, f.Key)
			b = append(b, ':')
			if b, err = appendJSON(b, f.Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []object:
		return appendList(b, v)
	case []any:
		return appendList(b, v)
	case num:
		return aiperf.FloatScalar(float64(v)).AppendJSON(b), nil
	case rawFloat:
		return appendRawFloat(b, float64(v)), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case string:
		if plainString(v) {
			b = append(b, '"')
			b = append(b, v...)
			return append(b, '"'), nil
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

func appendList[T any](b []byte, list []T) ([]byte, error) {
	if list == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	var err error
	for i, e := range list {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendJSON(b, e); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendKey appends strconv.Quote(k), a plain key without scanning it
// for runes to escape (an hour's timeslices hold 3.5 million keys).
func appendKey(b []byte, k string) []byte {
	if !plainString(k) {
		return strconv.AppendQuote(b, k)
	}
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"')
}

// plainString reports whether s is written as itself between quotes by
// encoding/json: printable ASCII without quotes, backslashes or the
// HTML-escaped <, > and &.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// MarshalJSON writes integral values as integers and NaN/Inf as null.
func (n num) MarshalJSON() ([]byte, error) {
	return aiperf.FloatScalar(float64(n)).AppendJSON(nil), nil
}

// MarshalJSON writes a Python-style float (64.0) and NaN/Inf as null.
func (f rawFloat) MarshalJSON() ([]byte, error) { return appendRawFloat(nil, float64(f)), nil }

// appendRawFloat appends v as rawFloat writes it.
func appendRawFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	n := len(b)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	if !bytes.ContainsAny(b[n:], ".eE") {
		b = append(b, '.', '0')
	}
	return b
}

// marshalIndent encodes v with two-space indentation (aiperf's
// orjson OPT_INDENT_2) and a trailing newline.
func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeIndent(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeIndent writes v to w as marshalIndent encodes it, indenting as it
// goes and handing w a chunk at a time, so a large export is neither
// built compact first nor held whole in memory.
func writeIndent(w io.Writer, v any) error {
	e := &indentWriter{w: w, buf: make([]byte, 0, indentChunk+indentChunk/4)}
	e.value(v, 0)
	e.buf = append(e.buf, '\n')
	e.flush()
	return e.err
}

// indentChunk is how many bytes indentWriter gathers before it writes.
const indentChunk = 256 << 10

// indentWriter is writeIndent's state: the bytes not yet written and the
// first error (encoding or writing).
type indentWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (e *indentWriter) flush() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

func (e *indentWriter) newline(depth int) {
	e.buf = append(e.buf, '\n')
	for range depth {
		e.buf = append(e.buf, ' ', ' ')
	}
}

// value appends v at the given depth, as indentJSON(appendJSON(v)) would
// place it there.
func (e *indentWriter) value(v any, depth int) {
	if e.err != nil {
		return
	}
	if len(e.buf) >= indentChunk {
		e.flush()
	}
	switch v := v.(type) {
	case object:
		e.container('{', '}', len(v), depth, func(i int) {
			e.buf = appendKey(e.buf, v[i].Key)
			e.buf = append(e.buf, ':', ' ')
			e.value(v[i].Value, depth+1)
		})
	case []object:
		indentList(e, v, depth)
	case []any:
		indentList(e, v, depth)
	case num, rawFloat, int64, int, string: // no structure to indent
		e.buf, e.err = appendJSON(e.buf, v)
	default:
		e.indentRaw(v, depth)
	}
}

// container appends an object or a list of n members at depth, one
// member a line; an empty one stays {} or [].
func (e *indentWriter) container(open, close byte, n, depth int, member func(i int)) {
	e.buf = append(e.buf, open)
	if n == 0 {
		e.buf = append(e.buf, close)
		return
	}
	for i := range n {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(depth + 1)
		member(i)
	}
	e.newline(depth)
	e.buf = append(e.buf, close)
}

// indentRaw appends what appendJSON writes for v, indented at depth.
func (e *indentWriter) indentRaw(v any, depth int) {
	raw, err := appendJSON(nil, v)
	if err != nil {
		e.err = err
		return
	}
	e.buf = indentJSONAt(e.buf, raw, depth)
}

func indentList[T any](e *indentWriter, list []T, depth int) {
	if list == nil {
		e.buf = append(e.buf, "null"...)
		return
	}
	e.container('[', ']', len(list), depth, func(i int) { e.value(list[i], depth+1) })
}

// indentJSON appends src, JSON that appendJSON wrote, indented as
// json.Indent(dst, src, "", "  ") does (empty objects and arrays stay
// {} and []), without json.Indent's validating scanner, which took most
// of the time of writing a large server-metrics export.
func indentJSON(dst, src []byte) []byte { return indentJSONAt(dst, src, 0) }

// indentJSONAt is indentJSON for a value that stands at the given depth
// of an enclosing document.
func indentJSONAt(dst, src []byte, depth int) []byte {
	inStr, esc, open := false, false, false
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for _, c := range src {
		if inStr {
			dst = append(dst, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline()
		}
		switch c {
		case '"':
			inStr = true
			dst = append(dst, c)
		case '{', '[':
			open = true // the newline waits: an empty one stays {} or []
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
