package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sweep/internal/pyjson"
)

// FloatMap is a JSON object of numbers that keeps its keys in insertion
// order (InferenceX's dicts do). The zero value is an empty map.
type FloatMap struct {
	keys []string
	vals map[string]float64
}

// Add adds v to the value under key, inserting the key at the end when new.
func (m *FloatMap) Add(key string, v float64) {
	if m.vals == nil {
		m.vals = make(map[string]float64)
	}
	if _, ok := m.vals[key]; !ok {
		m.keys = append(m.keys, key)
	}
	m.vals[key] += v
}

// Get returns the value under key.
func (m *FloatMap) Get(key string) (float64, bool) {
	v, ok := m.vals[key]
	return v, ok
}

// Keys returns the keys in insertion order.
func (m *FloatMap) Keys() []string { return m.keys }

// Len is the number of keys.
func (m *FloatMap) Len() int { return len(m.keys) }

// Sum is the sum of all values, or nil for an empty map.
func (m *FloatMap) Sum() *float64 {
	if m == nil || len(m.keys) == 0 {
		return nil
	}
	var s float64
	for _, k := range m.keys {
		s += m.vals[k]
	}
	return &s
}

// MarshalJSON implements json.Marshaler.
func (m FloatMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := pyjson.Rounded(m.vals[k]).MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// IntMap is a JSON object of counts in insertion order.
type IntMap struct {
	keys []string
	vals map[string]int
}

// Inc adds one to key.
func (m *IntMap) Inc(key string) {
	if m.vals == nil {
		m.vals = make(map[string]int)
	}
	if _, ok := m.vals[key]; !ok {
		m.keys = append(m.keys, key)
	}
	m.vals[key]++
}

// Get returns the count under key.
func (m *IntMap) Get(key string) int { return m.vals[key] }

// Keys returns the keys in insertion order.
func (m *IntMap) Keys() []string { return m.keys }

// MarshalJSON implements json.Marshaler.
func (m IntMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		fmt.Fprintf(&b, ":%d", m.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// roundRawJSON re-encodes an arbitrary JSON value compactly with every
// floating-point literal rounded as round_floats does and integer literals
// untouched. Key order is kept.
func roundRawJSON(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	type frame struct {
		object bool
		n      int // tokens written in this container
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out.WriteByte(byte(d))
			if len(stack) > 0 {
				stack[len(stack)-1].n++
			}
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.object && top.n%2 == 1:
				out.WriteByte(':')
			case top.n > 0:
				out.WriteByte(',')
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			out.WriteByte(byte(t))
			stack = append(stack, frame{object: t == '{'})
			continue
		case json.Number:
			s := string(t)
			if strings.ContainsAny(s, ".eE") {
				f, err := t.Float64()
				if err != nil {
					return nil, err
				}
				b, _ := pyjson.Rounded(f).MarshalJSON()
				out.Write(b)
			} else {
				out.WriteString(s)
			}
		default:
			b, err := json.Marshal(t)
			if err != nil {
				return nil, err
			}
			out.Write(b)
		}
		if len(stack) > 0 {
			stack[len(stack)-1].n++
		}
	}
	return out.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler: an object of numbers, keys
// kept in the file's order (a null value reads as NaN, as a NaN written
// by Python is read; see File.NonFinite).
func (m *FloatMap) UnmarshalJSON(data []byte) error {
	*m = FloatMap{}
	return decodeObject(data, func(k string, raw json.RawMessage) error {
		var v *float64
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if v == nil {
			m.Add(k, math.NaN())
			return nil
		}
		m.Add(k, *v)
		return nil
	})
}

// UnmarshalJSON implements json.Unmarshaler: an object of counts, keys
// kept in the file's order.
func (m *IntMap) UnmarshalJSON(data []byte) error {
	*m = IntMap{}
	return decodeObject(data, func(k string, raw json.RawMessage) error {
		var n int
		if err := json.Unmarshal(raw, &n); err != nil {
			return err
		}
		if m.vals == nil {
			m.vals = make(map[string]int)
		}
		if _, ok := m.vals[k]; !ok {
			m.keys = append(m.keys, k)
		}
		m.vals[k] += n
		return nil
	})
}

// decodeObject calls each for every member of the JSON object data, in
// order (none for null).
func decodeObject(data []byte, each func(key string, raw json.RawMessage) error) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("want an object, got %s", data)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if err := each(tok.(string), raw); err != nil {
			return fmt.Errorf("%s: %w", tok, err)
		}
	}
	_, err = dec.Token()
	return err
}
