package loadgen

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// MarshalJSON writes the object's keys in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(f.Key))
		b.WriteByte(':')
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON writes integral values as integers and NaN/Inf as null.
func (n num) MarshalJSON() ([]byte, error) { return jsonFloat(float64(n)), nil }

// MarshalJSON writes a Python-style float (64.0) and NaN/Inf as null.
func (f rawFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	b := strconv.AppendFloat(nil, v, 'g', -1, 64)
	if !bytes.ContainsAny(b, ".eE") {
		b = append(b, '.', '0')
	}
	return b, nil
}

// marshalIndent encodes v with two-space indentation (aiperf's
// orjson OPT_INDENT_2) and a trailing newline.
func marshalIndent(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
