package schema

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Value is what a parsed argv holds for one flag.
type Value struct {
	Flag     *Flag
	Spelling string // spelling of the last occurrence
	// Occurrences holds the raw value tokens of each occurrence, in order ("--x=v" gives
	// ["v"]; a bool gives ["true"] or ["false"]). Argparse keeps only the last occurrence of
	// a non-list flag, as argparse itself does.
	Occurrences [][]string
	Bool        bool      // the value of a bool flag
	Strs        []string  // every element, after comma splitting and choice normalisation
	Ints        []int64   // the elements of an int flag or an int list
	Floats      []float64 // the elements of a float flag or list (ints are converted too)
	JSON        any       // the decoded document of a JSON flag

	merged bool // built from dotted keys (--compilation-config.mode 3)
}

// Escape is a flag passed through without a schema check, with the reason it was needed.
// Plans show every escape so a reviewer sees it.
type Escape struct {
	Flag   string
	Values []string
	Reason string
}

// Parsed is an argv read with a schema.
type Parsed struct {
	Schema *Schema
	// Help is true when the argv asks for --help; the tool prints help and exits 0.
	Help bool
	// Escapes lists the flags accepted through AllowUnchecked.
	Escapes []Escape
	// Warnings are problems the tool accepts (deprecated flags, argparse repeats, scenario
	// violations under the override flag, escapes).
	Warnings []*Error

	values map[string]*Value
	order  []string // canonical names, first occurrence order
	items  []item   // normalised argv items, for Args
}

type item struct {
	flag   string // canonical name, or "" for an escape
	escape *Escape
}

// ParseOption changes how Parse treats an argv.
type ParseOption func(*parseConfig)

type parseConfig struct{ escapes []Escape }

// AllowUnchecked lets Parse accept the given flags even though the schema does not know
// them; each takes exactly len(Values) value tokens.
func AllowUnchecked(escapes ...Escape) ParseOption {
	return func(c *parseConfig) { c.escapes = append(c.escapes, escapes...) }
}

// Has reports whether the flag (any spelling) was given.
func (p *Parsed) Has(name string) bool {
	_, ok := p.value(name)
	return ok
}

// Get returns the parsed value of a flag given by any spelling.
func (p *Parsed) Get(name string) (*Value, bool) { return p.value(name) }

// Sweeps returns the flags given as a comma list of several values (aiperf runs one
// benchmark per value), in first-occurrence order.
func (p *Parsed) Sweeps() []string {
	var out []string
	for _, name := range p.order {
		if v := p.values[name]; v.Flag.Sweep && len(v.Strs) > 1 {
			out = append(out, name)
		}
	}
	return out
}

// Flags returns the canonical names of the flags given, in first-occurrence order.
func (p *Parsed) Flags() []string { return slices.Clone(p.order) }

func (p *Parsed) value(name string) (*Value, bool) {
	if p == nil || p.Schema == nil {
		return nil, false
	}
	f, ok := p.Schema.Lookup(name)
	if !ok {
		return nil, false
	}
	v, ok := p.values[f.Name]
	return v, ok
}

func (p *Parsed) flagDefault(name string) any {
	if p == nil || p.Schema == nil {
		return nil
	}
	if f, ok := p.Schema.Lookup(name); ok {
		return f.Default
	}
	return nil
}

// Bool returns a bool flag's value and whether it was given; when absent it returns the
// schema default (false if none).
func (p *Parsed) Bool(name string) (bool, bool) {
	if v, ok := p.value(name); ok {
		return v.Bool, true
	}
	b, _ := p.flagDefault(name).(bool)
	return b, false
}

// Int returns an int flag's value (the last element of a list or sweep) and whether it was
// given; when absent it returns the schema default (0 if none).
func (p *Parsed) Int(name string) (int64, bool) {
	if v, ok := p.value(name); ok && len(v.Ints) > 0 {
		return v.Ints[len(v.Ints)-1], true
	}
	switch d := p.flagDefault(name).(type) {
	case int:
		return int64(d), false
	case float64:
		return int64(d), false
	}
	return 0, false
}

// Float returns a numeric flag's value (the last element of a list or sweep) and whether it
// was given; when absent it returns the schema default (0 if none).
func (p *Parsed) Float(name string) (float64, bool) {
	if v, ok := p.value(name); ok && len(v.Floats) > 0 {
		return v.Floats[len(v.Floats)-1], true
	}
	switch d := p.flagDefault(name).(type) {
	case int:
		return float64(d), false
	case float64:
		return d, false
	}
	return 0, false
}

// String returns a flag's value as text (the last element of a list) and whether it was
// given; when absent it returns the schema default rendered as text ("" if none).
func (p *Parsed) String(name string) (string, bool) {
	if v, ok := p.value(name); ok {
		if len(v.Strs) > 0 {
			return v.Strs[len(v.Strs)-1], true
		}
		return "", true
	}
	switch d := p.flagDefault(name).(type) {
	case nil:
		return "", false
	case string:
		return d, false
	default:
		return fmt.Sprint(d), false
	}
}

// Strings returns every element of a flag (list items, sweep values) as text.
func (p *Parsed) Strings(name string) []string {
	if v, ok := p.value(name); ok {
		return slices.Clone(v.Strs)
	}
	return nil
}

// Ints returns every element of an int flag or list (a comma sweep gives several).
func (p *Parsed) Ints(name string) []int64 {
	if v, ok := p.value(name); ok {
		return slices.Clone(v.Ints)
	}
	return nil
}

// Floats returns every element of a numeric flag or list.
func (p *Parsed) Floats(name string) []float64 {
	if v, ok := p.value(name); ok {
		return slices.Clone(v.Floats)
	}
	return nil
}

// JSON returns the decoded document of a JSON flag and whether it was given.
func (p *Parsed) JSON(name string) (any, bool) {
	if v, ok := p.value(name); ok {
		return v.JSON, true
	}
	return nil, false
}

// Args returns the normalised argv: the tool's subcommand, the positional, then every flag
// under its canonical name in first-occurrence order, then escapes.
func (p *Parsed) Args() []string {
	s := p.Schema
	out := slices.Clone(s.Command)
	// A positional that looks like an option ("-A", given after "--")
	// goes last, after "--", or it would parse back as a flag.
	var dashed string
	if s.Positional != nil {
		if v, ok := p.values[s.Positional.Flag]; ok && len(v.Strs) > 0 {
			if pos := v.Strs[len(v.Strs)-1]; strings.HasPrefix(pos, "-") {
				dashed = pos
			} else {
				out = append(out, pos)
			}
		}
	}

	for _, it := range p.items {
		if it.escape != nil {
			out = append(out, it.escape.Flag)
			out = append(out, it.escape.Values...)
			continue
		}
		if s.Positional != nil && it.flag == s.Positional.Flag {
			continue
		}
		out = append(out, p.values[it.flag].tokens(s)...)
	}
	if dashed != "" {
		out = append(out, "--", dashed)
	}
	return out
}

// tokens renders one flag's value in canonical form.
func (v *Value) tokens(s *Schema) []string {
	f := v.Flag
	switch {
	case f.isBool():
		if v.Bool {
			return []string{f.Name}
		}
		if neg := f.negatives(); len(neg) > 0 {
			return []string{neg[0]}
		}
		return []string{f.Name + "=false"}
	case f.Type == List:
		var out []string
		for _, occ := range v.Occurrences {
			if f.Multi || s.Family == Argparse {
				out = append(out, f.Name)
				out = append(out, occ...)
				continue
			}
			for _, t := range occ {
				out = append(out, f.Name, t)
			}
		}
		return out
	case f.Type == JSON:
		if !v.merged && len(v.Occurrences) == 1 && len(v.Occurrences[0]) == 1 {
			return []string{f.Name, v.Occurrences[0][0]}
		}
		b, _ := json.Marshal(v.JSON) // merged dotted keys; a decoded document always re-encodes
		return []string{f.Name, string(b)}
	case f.Type == Enum && len(v.Strs) > 0:
		return []string{f.Name, strings.Join(v.Strs, ",")} // canonical spelling of the choice
	default:
		last := v.Occurrences[len(v.Occurrences)-1]
		return append([]string{f.Name}, last...)
	}
}

// Write is a path a command line writes: the flag as spelled and the path.
type Write struct{ Flag, Path string }

// Writes lists the paths the command line names for the tool to write:
// the values of its Path flags not marked Reads, in first-occurrence
// order (a flag not given writes where its default says, which Writes
// does not list).
func (p *Parsed) Writes() []Write {
	var out []Write
	for _, name := range p.order {
		v := p.values[name]
		if v.Flag.elemType() != Path || v.Flag.Reads {
			continue
		}
		for _, path := range v.Strs {
			out = append(out, Write{Flag: v.Spelling, Path: path})
		}
	}
	return out
}

// WritesOutside lists the paths of Writes that are not dir or under it
// (a relative path lies under a relative dir only: it is relative to the
// tool's working directory).
func (p *Parsed) WritesOutside(dir string) []Write {
	var out []Write
	for _, w := range p.Writes() {
		rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(w.Path))
		if err != nil || filepath.IsAbs(w.Path) != filepath.IsAbs(dir) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			out = append(out, w)
		}
	}
	return out
}
