package power

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"sweep/internal/pyjson"
)

// value is a JSON value as Python's json.loads holds it: objects keep their
// keys in first-seen order (a repeated key keeps its first position and its
// last value), numbers keep whether they were int or float literals. The
// aggregate is patched as such a value so that every key InferenceX's
// adapter leaves alone comes back in its place.
type value struct {
	kind  valueKind
	keys  []string // object
	vals  []*value // object values (parallel to keys) or array items
	num   string   // normalised number literal
	str   string
	truth bool
}

type valueKind int

const (
	kindNull valueKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func object() *value { return &value{kind: kindObject} }

func str(s string) *value { return &value{kind: kindString, str: s} }

func boolean(b bool) *value { return &value{kind: kindBool, truth: b} }

func null() *value { return &value{} }

// float is a Python float: json.dumps writes repr(f).
func float(f float64) *value {
	return &value{kind: kindNumber, num: string(pyjson.AppendFloat(nil, f))}
}

// integer is a Python int.
func integer(n int64) *value { return &value{kind: kindNumber, num: strconv.FormatInt(n, 10)} }

func array(items ...*value) *value { return &value{kind: kindArray, vals: items} }

func strList(ss []string) *value {
	a := array()
	for _, s := range ss {
		a.vals = append(a.vals, str(s))
	}
	return a
}

// set assigns key: an existing key keeps its position (a Python dict
// assignment), a new one goes last.
func (v *value) set(key string, val *value) *value {
	for i, k := range v.keys {
		if k == key {
			v.vals[i] = val
			return v
		}
	}
	v.keys = append(v.keys, key)
	v.vals = append(v.vals, val)
	return v
}

// pop removes key if present (dict.pop(key, None)).
func (v *value) pop(key string) {
	for i, k := range v.keys {
		if k == key {
			v.keys = append(v.keys[:i:i], v.keys[i+1:]...)
			v.vals = append(v.vals[:i:i], v.vals[i+1:]...)
			return
		}
	}
}

// get returns the value under key, nil when absent.
func (v *value) get(key string) *value {
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// parseValue reads one JSON document the way json.loads does (but for
// Python's NaN/Infinity extensions, which are refused).
func parseValue(data []byte) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("extra data after the JSON value")
	}
	return v, nil
}

func readValue(dec *json.Decoder) (*value, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			a := array()
			for dec.More() {
				item, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				a.vals = append(a.vals, item)
			}
			_, err := dec.Token()
			return a, err
		}
		o := object()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			item, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(kt.(string), item)
		}
		_, err := dec.Token()
		return o, err
	case json.Number:
		return number(string(t))
	case string:
		return str(t), nil
	case bool:
		return boolean(t), nil
	default:
		return null(), nil
	}
}

// number normalises a literal as Python re-writes it: an integer literal
// keeps its digits ("-0" becomes "0"), any other is repr(float(literal)).
func number(lit string) (*value, error) {
	if strings.ContainsAny(lit, ".eE") {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return float(f), nil
	}
	n, ok := new(big.Int).SetString(lit, 10)
	if !ok {
		return nil, fmt.Errorf("bad number %q", lit)
	}
	return &value{kind: kindNumber, num: n.String()}, nil
}

// dumps is json.dumps(v, indent=2): ASCII only, ", "-free item separators
// at line ends, ": " between key and value, no trailing newline.
func dumps(v *value) []byte {
	return v.appendIndent(nil, 0)
}

func (v *value) appendIndent(b []byte, depth int) []byte {
	switch v.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool:
		if v.truth {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case kindNumber:
		return append(b, v.num...)
	case kindString:
		return pyjson.AppendString(b, v.str, true)
	}
	open, close := byte('['), byte(']')
	if v.kind == kindObject {
		open, close = '{', '}'
	}
	if len(v.vals) == 0 {
		return append(b, open, close)
	}
	b = append(b, open)
	for i, item := range v.vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = appendSpaces(b, 2*(depth+1))
		if v.kind == kindObject {
			b = pyjson.AppendString(b, v.keys[i], true)
			b = append(b, ':', ' ')
		}
		b = item.appendIndent(b, depth+1)
	}
	b = append(b, '\n')
	b = appendSpaces(b, 2*depth)
	return append(b, close)
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}
