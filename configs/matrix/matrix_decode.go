package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"sweep/configs"
)

// This file reads rows back from the JSON MarshalJSON and AppendJSON write
// (InferenceX's generator output, optionally with "config-key"), so a
// matrix printed by `sweep matrix` or embedded in a planned point
// round-trips: Unmarshal(Marshal(rows)) gives rows that marshal to the same
// bytes, worker key order included.

// member is one key and its raw value of a JSON object, in input order.
type member struct {
	key string
	val json.RawMessage
}

// objectMembers splits a JSON object into its members, keeping their order.
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", firstBytes(data))
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string) // object keys are always strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out = append(out, member{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

func firstBytes(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 20 {
		return string(b[:20]) + "..."
	}
	return string(b)
}

// fieldOf maps a row's JSON key to its field.
var fieldOf = func() map[string]field {
	m := make(map[string]field, numFields)
	for f, d := range rowFields {
		m[d.name] = field(f)
	}
	return m
}()

// UnmarshalJSON reads a row as MarshalJSON (or AppendJSON with
// WithConfigKey) writes it. The kind comes from the keys: "prefill" makes
// a multi-node row, "scenario-type": "agentic-coding" an agentic one. An
// unknown key is an error naming it.
func (r *Row) UnmarshalJSON(data []byte) error {
	ms, err := objectMembers(data)
	if err != nil {
		return fmt.Errorf("matrix row: %w", err)
	}
	var row Row
	multi, agentic := false, false
	for _, m := range ms {
		switch m.key {
		case "prefill", "decode":
			multi = true
		case "scenario-type":
			var st string
			if err := json.Unmarshal(m.val, &st); err != nil || (st != "agentic-coding" && st != "fixed-seq-len") {
				return fmt.Errorf("matrix row: scenario-type %s: want \"agentic-coding\" or \"fixed-seq-len\"", m.val)
			}
			agentic = st == "agentic-coding"
		}
	}
	switch {
	case multi && agentic:
		row.Kind = AgenticMultiNode
	case multi:
		row.Kind = FixedMultiNode
	case agentic:
		row.Kind = AgenticSingleNode
	default:
		row.Kind = FixedSingleNode
	}
	var errs []error
	for _, m := range ms {
		if err := row.setMember(m); err != nil {
			errs = append(errs, fmt.Errorf("matrix row: key %q: %w", m.key, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	*r = row
	return nil
}

func (r *Row) setMember(m member) error {
	if m.key == "config-key" {
		return json.Unmarshal(m.val, &r.ConfigKey)
	}
	f, ok := fieldOf[m.key]
	if !ok {
		return errors.New("not a matrix row key")
	}
	return decodeValue(rowFields[f].value(r), m.val)
}

// decodeValue reads data into v, a rowField.value or workerField.value.
func decodeValue(v any, data json.RawMessage) error {
	switch p := v.(type) {
	case derived:
		return nil // scenario-type: the kind already says it
	case **Worker:
		w, err := decodeWorker(data)
		*p = w
		return err
	case **Backend:
		var b struct {
			Name    string  `json:"name"`
			Version *string `json:"version"`
		}
		if err := strictUnmarshal(data, &b); err != nil {
			return err
		}
		*p = &Backend{Name: b.Name, Version: b.Version}
		return nil
	case **configs.Component:
		var c struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		if err := strictUnmarshal(data, &c); err != nil {
			return err
		}
		*p = &configs.Component{Name: c.Name, Version: c.Version}
		return nil
	case *[]int:
		if err := json.Unmarshal(data, p); err != nil {
			return err
		}
		if *p == nil {
			*p = []int{} // a multi-node conc is always a list
		}
		return nil
	}
	return json.Unmarshal(data, v)
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// decodeWorker reads a prefill or decode block, keeping its key order.
func decodeWorker(data []byte) (*Worker, error) {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil, nil
	}
	ms, err := objectMembers(data)
	if err != nil {
		return nil, err
	}
	w := &Worker{keys: make([]workerKey, 0, len(ms))}
	for _, m := range ms {
		k, ok := workerKeyOf(m.key)
		if !ok {
			return nil, fmt.Errorf("%q is not a worker key", m.key)
		}
		w.keys = append(w.keys, k)
		if err := decodeValue(workerFields[k].value(w), m.val); err != nil {
			return nil, fmt.Errorf("%s: %w", m.key, err)
		}
	}
	return w, nil
}

// UnmarshalJSON reads a JSON array of rows (see Row.UnmarshalJSON).
func (m *Matrix) UnmarshalJSON(data []byte) error {
	var rows []*Row
	if err := json.Unmarshal(data, &rows); err != nil {
		return err
	}
	for i, r := range rows {
		if r == nil {
			return fmt.Errorf("matrix row %d: null", i)
		}
	}
	*m = rows
	return nil
}
