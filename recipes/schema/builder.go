package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Builder collects typed flag settings for one command and renders them as argv. Every
// setter checks the flag's name, type and repetition at once; Argv then checks values,
// choices, bounds, cross-flag rules and scenario locks by parsing the result with the same
// schema, so a built command and a validated one always agree. Errors are collected, not
// returned one by one: Argv reports all of them.
//
// The zero Builder is not usable; get one from Schema.NewBuilder. A Builder is not safe for
// concurrent use.
type Builder struct {
	s       *Schema
	tokens  []string
	set     map[string]bool // canonical names already set
	escapes []Escape
	probs   *problems
}

// NewBuilder starts an empty command for this schema.
func (s *Schema) NewBuilder() *Builder {
	return &Builder{s: s, set: map[string]bool{}, probs: &problems{s: s}}
}

// Schema returns the schema the builder checks against.
func (b *Builder) Schema() *Schema { return b.s }

// flag resolves name for a setter that supplies values of kind want.
func (b *Builder) flag(name string, want ...Type) (*Flag, bool) {
	f, ok := b.s.bySpell[name]
	if !ok {
		b.probs.add(&Error{Kind: UnknownFlag, Spelling: name, Suggestion: b.s.Suggest(name)})
		return nil, false
	}
	if f.Removed != "" {
		b.probs.add(&Error{Kind: RemovedFlag, Flag: f.Name, Spelling: name, Msg: "removed in this version: " + f.Removed})
		return nil, false
	}
	if len(want) > 0 && !slices.Contains(want, f.Type) && !(f.Type == List && slices.Contains(want, f.elemType())) {
		b.probs.add(&Error{Kind: BadValue, Flag: f.Name, Spelling: name, Msg: fmt.Sprintf("is a %s flag, not %s", describe(f), want[0])})
		return nil, false
	}
	if b.set[f.Name] && f.Type != List {
		b.probs.add(&Error{Kind: Repeated, Flag: f.Name, Spelling: name, Msg: "set more than once by the recipe"})
		return nil, false
	}
	b.set[f.Name] = true
	return f, true
}

func describe(f *Flag) string {
	if f.Type == List {
		return "list of " + string(f.elemType())
	}
	return string(f.Type)
}

// Bool sets a boolean flag. True renders as the bare flag. False renders as the explicit
// false form the tool has (aiperf --no-x or --x=false, vLLM --no-x); an argparse store_true
// flag has no false form, so false leaves it out. Named by its false form (--no-x), the flag
// is set to the opposite of v.
func (b *Builder) Bool(name string, v bool) *Builder {
	f, ok := b.flag(name, Bool, BoolOptional)
	if !ok {
		return b
	}
	if slices.Contains(f.negatives(), name) {
		v = !v
	}
	switch {
	case v:
		b.tokens = append(b.tokens, f.Name)
	case len(f.negatives()) > 0:
		b.tokens = append(b.tokens, f.negatives()[0])
	case b.s.Family == Cyclopts:
		b.tokens = append(b.tokens, f.Name+"=false")
	}
	return b
}

// Int sets an int (or float) flag.
func (b *Builder) Int(name string, v int64) *Builder {
	if f, ok := b.flag(name, Int, Float); ok {
		b.tokens = append(b.tokens, f.Name, strconv.FormatInt(v, 10))
	}
	return b
}

// Float sets a float flag.
func (b *Builder) Float(name string, v float64) *Builder {
	if f, ok := b.flag(name, Float); ok {
		b.tokens = append(b.tokens, f.Name, strconv.FormatFloat(v, 'f', -1, 64))
	}
	return b
}

// String sets a string, path or enum flag, or adds one item to a list flag.
func (b *Builder) String(name, v string) *Builder {
	if f, ok := b.flag(name, String, Path, Enum); ok {
		b.tokens = append(b.tokens, f.Name, v)
	}
	return b
}

// List sets a list flag to the given items (one occurrence per item for aiperf, one
// occurrence with all items for argparse nargs="+" flags).
func (b *Builder) List(name string, items ...string) *Builder {
	f, ok := b.flag(name)
	if !ok {
		return b
	}
	if f.Type != List {
		b.probs.add(&Error{Kind: BadValue, Flag: f.Name, Spelling: name, Msg: fmt.Sprintf("is a %s flag, not a list", describe(f))})
		return b
	}
	if len(items) == 0 {
		b.probs.add(&Error{Kind: MissingValue, Flag: f.Name, Spelling: name, Msg: "list with no items"})
		return b
	}
	if f.Multi || b.s.Family == Argparse {
		b.tokens = append(append(b.tokens, f.Name), items...)
		return b
	}
	for _, it := range items {
		b.tokens = append(b.tokens, f.Name, it)
	}
	return b
}

// Sweep sets a sweepable numeric flag (aiperf --concurrency, --request-rate, ...) to a comma
// list, which makes aiperf run one benchmark per value.
func (b *Builder) Sweep(name string, values ...float64) *Builder {
	f, ok := b.flag(name, Int, Float)
	if !ok {
		return b
	}
	if !f.Sweep {
		b.probs.add(&Error{Kind: BadValue, Flag: f.Name, Spelling: name, Msg: "does not take a comma-list sweep"})
		return b
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	b.tokens = append(b.tokens, f.Name, strings.Join(parts, ","))
	return b
}

// JSON sets a JSON flag from a Go value (encoded compactly), or from a string or
// json.RawMessage holding JSON text (kept as written and checked when Argv parses it).
func (b *Builder) JSON(name string, v any) *Builder {
	f, ok := b.flag(name, JSON)
	if !ok {
		return b
	}
	var data []byte
	switch x := v.(type) {
	case json.RawMessage:
		data = x
	case string:
		data = []byte(x)
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			b.probs.add(&Error{Kind: BadValue, Flag: f.Name, Msg: fmt.Sprintf("cannot encode as JSON: %v", err)})
			return b
		}
	}
	b.tokens = append(b.tokens, f.Name, string(data))
	return b
}

// Unchecked passes a flag the schema does not know, with its value tokens, unverified. The
// reason is kept: Escapes lists every use so a plan can mark it for review.
func (b *Builder) Unchecked(name string, values []string, reason string) *Builder {
	if strings.TrimSpace(reason) == "" {
		b.probs.add(&Error{Kind: Unchecked, Spelling: name, Msg: "an unchecked flag needs a reason"})
		return b
	}
	if f, known := b.s.bySpell[name]; known {
		b.probs.add(&Error{Kind: Unchecked, Flag: f.Name, Spelling: name, Msg: "is in the schema; set it with a typed setter"})
		return b
	}
	b.escapes = append(b.escapes, Escape{Flag: name, Values: slices.Clone(values), Reason: reason})
	b.tokens = append(append(b.tokens, name), values...)
	return b
}

// Escapes returns the flags passed through Unchecked.
func (b *Builder) Escapes() []Escape { return slices.Clone(b.escapes) }

// Parsed checks the command and returns it parsed, with every problem joined in err.
func (b *Builder) Parsed() (*Parsed, error) {
	argv := slices.Concat(b.s.Command, b.positionalFirst(b.tokens))
	p, err := b.s.Parse(argv, AllowUnchecked(b.escapes...))
	if err == nil && p != nil && p.Help {
		// A built command never asks for help: --help here came from a
		// value that landed where an option stands.
		return p, fmt.Errorf("%s: a help token (--help or -h) in the built command would print help and run nothing; a value must not be a flag", b.s.Program)
	}
	if len(b.probs.list) > 0 {
		all := &problems{s: b.s, list: slices.Concat(b.probs.list, Problems(err))}
		return p, all.err()
	}
	return p, err
}

// Argv checks the command and returns it: the tool's subcommand (aiperf "profile", vLLM
// "serve"), then the flags in the order they were set. On error the argv is nil and err
// joins every problem (see Problems).
func (b *Builder) Argv() ([]string, error) {
	p, err := b.Parsed()
	if err != nil {
		return nil, err
	}
	return p.Args(), nil
}

// positionalFirst moves the positional flag (vLLM's model) to the front, without its name.
func (b *Builder) positionalFirst(toks []string) []string {
	pos := b.s.Positional
	if pos == nil {
		return slices.Clone(toks)
	}
	for i := 0; i+1 < len(toks); i++ {
		if toks[i] == pos.Flag && !slices.ContainsFunc(b.escapes, func(e Escape) bool { return e.Flag == pos.Flag }) {
			return slices.Concat([]string{toks[i+1]}, toks[:i], toks[i+2:])
		}
	}
	return slices.Clone(toks)
}
