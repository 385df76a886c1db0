package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

type parser struct {
	s     *Schema
	cfg   parseConfig
	probs *problems
	p     *Parsed
	args  []string
	i     int
}

func (ps *parser) run(argv []string) {
	s := ps.s
	for _, c := range s.Command {
		if len(argv) == 0 || argv[0] != c {
			got := "nothing"
			if len(argv) > 0 {
				got = fmt.Sprintf("%q", argv[0])
			}
			ps.probs.errorf(BadCommand, "", "expected %q as the first argument (%s %s ...), got %s", c, s.Program, c, got)
			break
		}
		argv = argv[1:]
	}
	ps.args = argv
	var stray []string
	for ps.i = 0; ps.i < len(ps.args); {
		tok := ps.args[ps.i]
		ps.i++
		if tok == "--" {
			stray = append(stray, ps.positionals(ps.args[ps.i:])...)
			break
		}
		// A help request is a help token where an option may stand; the
		// value of an option (model "--help") is consumed with its
		// option and never reaches here.
		if tok == "--help" || tok == "-h" {
			ps.p.Help = true
			return
		}
		if !isFlagToken(tok) {
			stray = append(stray, ps.positionals([]string{tok})...)
			continue
		}
		ps.option(tok)
	}
	if len(stray) > 0 {
		msg := fmt.Sprintf("unused tokens %q (no flag takes them)", stray)
		if s.Family == Argparse {
			msg = fmt.Sprintf("unrecognized arguments: %s", strings.Join(stray, " "))
		}
		e := ps.probs.errorf(StrayToken, "", "%s", msg)
		e.Value = strings.Join(stray, " ")
	}
}

// positionals assigns tokens to the schema's positional, returning the ones left over.
func (ps *parser) positionals(toks []string) []string {
	pos := ps.s.Positional
	var left []string
	for _, t := range toks {
		if pos != nil {
			if _, set := ps.p.values[pos.Flag]; !set {
				f, _ := ps.s.Lookup(pos.Flag)
				ps.record(f, pos.Flag, []string{t}, false)
				continue
			}
		}
		left = append(left, t)
	}
	return left
}

// resolve finds the flag for a spelling, applying the family's spelling rules. An ambiguous
// abbreviation is reported here and returns ok=false with reported=true.
func (ps *parser) resolve(name string) (f *Flag, spelling string, ok bool) {
	f, spelling, ok, _ = ps.resolveReport(name)
	return f, spelling, ok
}

func (ps *parser) resolveReport(name string) (f *Flag, spelling string, ok, reported bool) {
	f, spelling, hits := ps.s.resolveSpelling(name, true)
	if f != nil {
		return f, spelling, true, false
	}
	if len(hits) > 1 {
		ps.probs.add(&Error{Kind: UnknownFlag, Spelling: name, Msg: fmt.Sprintf("ambiguous option: %s could match %s", name, strings.Join(hits, ", "))})
		return nil, "", false, true
	}
	return nil, "", false, false
}

func (ps *parser) option(tok string) {
	name, attached, hasAttached := tok, "", false
	if i := strings.IndexByte(tok, '='); i > 0 {
		name, attached, hasAttached = tok[:i], tok[i+1:], true
	}
	if ps.escape(name, attached, hasAttached) {
		return
	}
	// vLLM dotted keys: --compilation-config.mode 3
	if base, key, dotted := strings.Cut(name, "."); dotted && strings.HasPrefix(name, "--") {
		if f, sp, ok := ps.resolve(base); ok && f.Type == JSON && f.Dotted {
			val, ok := ps.takeValue(f, sp, attached, hasAttached)
			if ok {
				ps.dotted(f, sp, key, val)
			}
			return
		}
	}
	f, spelling, ok, reported := ps.resolveReport(name)
	if !ok && !reported && ps.s.Family == Argparse && !strings.HasPrefix(tok, "--") && len(tok) > 2 {
		// argparse short option with an attached value: -O3
		if g, ok2 := ps.s.bySpell[tok[:2]]; ok2 && !g.isBool() {
			f, spelling, ok, attached, hasAttached = g, tok[:2], true, tok[2:], true
		}
	}
	if !ok {
		if reported {
			return // ambiguous abbreviation
		}
		ps.probs.add(&Error{Kind: UnknownFlag, Spelling: name, Suggestion: ps.s.Suggest(name)})
		// Skip what is most likely its value so one typo is one problem.
		if !hasAttached && ps.i < len(ps.args) && !isFlagToken(ps.args[ps.i]) {
			ps.i++
		}
		return
	}
	if f.Removed != "" {
		ps.probs.add(&Error{Kind: RemovedFlag, Flag: f.Name, Spelling: spelling, Msg: "removed in this version: " + f.Removed})
		if !f.isBool() && !hasAttached && ps.i < len(ps.args) && !isFlagToken(ps.args[ps.i]) {
			ps.i++
		}
		return
	}
	if f.Deprecated != "" {
		ps.probs.add(&Error{Kind: Deprecated, Severity: SevWarning, Flag: f.Name, Spelling: spelling, Msg: "deprecated: " + f.Deprecated})
	}
	if f.isBool() {
		ps.boolOption(f, spelling, attached, hasAttached)
		return
	}
	val, ok := ps.takeValue(f, spelling, attached, hasAttached)
	if !ok {
		return
	}
	vals := []string{val}
	if f.Multi && !hasAttached {
		for ps.i < len(ps.args) && !isFlagToken(ps.args[ps.i]) && ps.args[ps.i] != "--" {
			vals = append(vals, ps.args[ps.i])
			ps.i++
		}
	}
	ps.record(f, spelling, vals, false)
}

// escape records name as an escaped flag (passed without a schema check,
// with as many values as the escape declares) when the configuration
// escapes it.
func (ps *parser) escape(name, attached string, hasAttached bool) bool {
	for _, esc := range ps.cfg.escapes {
		if esc.Flag != name {
			continue
		}
		vals := []string{}
		if hasAttached {
			vals = append(vals, attached)
		}
		for len(vals) < len(esc.Values) && ps.i < len(ps.args) {
			vals = append(vals, ps.args[ps.i])
			ps.i++
		}
		e := Escape{Flag: esc.Flag, Values: vals, Reason: esc.Reason}
		ps.p.Escapes = append(ps.p.Escapes, e)
		ps.p.items = append(ps.p.items, item{escape: &ps.p.Escapes[len(ps.p.Escapes)-1]})
		ps.probs.add(&Error{Kind: Unchecked, Severity: SevWarning, Spelling: name, Msg: "passed without a schema check: " + esc.Reason})
		return true
	}
	return false
}

// boolOption records a boolean flag: true, false for a negative spelling
// (--no-x), or an attached word where the family allows one.
func (ps *parser) boolOption(f *Flag, spelling, attached string, hasAttached bool) {
	neg := slices.Contains(f.negatives(), spelling)
	val := !neg
	if hasAttached {
		if ps.s.Family == Argparse || neg {
			ps.probs.add(&Error{Kind: BadValue, Flag: f.Name, Spelling: spelling, Value: attached, Msg: fmt.Sprintf("takes no value (ignored explicit argument %q)", attached)})
			return
		}
		b, ok := parseBoolWord(attached)
		if !ok {
			ps.probs.add(&Error{Kind: BadValue, Flag: f.Name, Spelling: spelling, Value: attached, Msg: fmt.Sprintf("unable to convert %q into bool (use true/false, yes/no, 1/0)", attached)})
			return
		}
		val = b
	}
	ps.record(f, spelling, []string{strconv.FormatBool(val)}, true)
}

// takeValue returns the attached value or consumes the next token.
func (ps *parser) takeValue(f *Flag, spelling, attached string, hasAttached bool) (string, bool) {
	if hasAttached {
		return attached, true
	}
	if ps.i >= len(ps.args) || isFlagToken(ps.args[ps.i]) || ps.args[ps.i] == "--" {
		ps.probs.add(&Error{Kind: MissingValue, Flag: f.Name, Spelling: spelling, Msg: "requires an argument"})
		return "", false
	}
	v := ps.args[ps.i]
	ps.i++
	return v, true
}

// record stores one occurrence after converting its values.
func (ps *parser) record(f *Flag, spelling string, raw []string, isBool bool) {
	v, seen := ps.p.values[f.Name]
	if seen && f.Type != List {
		if ps.s.Family == Cyclopts {
			ps.probs.add(&Error{Kind: Repeated, Flag: f.Name, Spelling: spelling, Msg: fmt.Sprintf("specified multiple times (%s takes one value; use a comma list for a sweep)", f.Name)})
			return
		}
		ps.probs.add(&Error{Kind: Repeated, Severity: SevWarning, Flag: f.Name, Spelling: spelling, Msg: "given more than once; the last value wins"})
		*v = Value{Flag: f}
	}
	if !seen {
		v = &Value{Flag: f}
		ps.p.values[f.Name] = v
		ps.p.order = append(ps.p.order, f.Name)
		ps.p.items = append(ps.p.items, item{flag: f.Name})
	}
	v.Spelling = spelling
	v.Occurrences = append(v.Occurrences, raw)
	if isBool {
		v.Bool = raw[0] == "true"
		return
	}
	ps.convert(f, spelling, v, raw)
}

// convert turns raw tokens into typed elements and checks choices and bounds.
func (ps *parser) convert(f *Flag, spelling string, v *Value, raw []string) {
	bad := func(kind Kind, val, format string, a ...any) {
		ps.probs.add(&Error{Kind: kind, Flag: f.Name, Spelling: spelling, Value: val, Msg: fmt.Sprintf(format, a...)})
	}
	badChoice := func(val string) {
		e := &Error{Kind: BadChoice, Flag: f.Name, Spelling: spelling, Value: val, Suggestion: closest(val, f.Choices),
			Msg: fmt.Sprintf("%q is not one of: %s", val, strings.Join(f.Choices, ", "))}
		if e.Suggestion != "" {
			e.Msg += fmt.Sprintf(" (did you mean %s?)", e.Suggestion)
		}
		ps.probs.add(e)
	}
	if f.Type == JSON {
		var doc any
		if err := json.Unmarshal([]byte(raw[0]), &doc); err != nil {
			bad(BadValue, raw[0], "not valid JSON: %v", err)
			return
		}
		if _, isObj := doc.(map[string]any); f.Object && !isObj {
			bad(BadValue, raw[0], "must be a JSON object")
			return
		}
		v.JSON = doc
		v.Strs = []string{raw[0]}
		return
	}
	var elems []string
	split := f.Comma && (f.Type == List || f.Sweep)
	for _, r := range raw {
		if split {
			elems = append(elems, strings.Split(r, ",")...)
		} else {
			elems = append(elems, r)
		}
	}
	et := f.elemType()
	for _, el := range elems {
		switch et {
		case Int:
			n, ok := parseIntWord(el)
			if !ok {
				bad(BadValue, el, "invalid literal for int: %q", el)
				continue
			}
			if msg := checkBounds(f, float64(n)); msg != "" {
				bad(OutOfBounds, el, "%s", msg)
				continue
			}
			v.Ints = append(v.Ints, n)
			v.Floats = append(v.Floats, float64(n))
			v.Strs = append(v.Strs, el)
		case Float:
			x, ok := parseFloatWord(el)
			if !ok {
				bad(BadValue, el, "could not convert string to float: %q", el)
				continue
			}
			if msg := checkBounds(f, x); msg != "" {
				bad(OutOfBounds, el, "%s", msg)
				continue
			}
			v.Floats = append(v.Floats, x)
			v.Strs = append(v.Strs, el)
		case Enum:
			c, ok := ps.choice(f, el)
			if !ok {
				badChoice(el)
				continue
			}
			v.Strs = append(v.Strs, c)
		default:
			if len(f.Choices) > 0 && !f.OpenChoices {
				c, ok := ps.choice(f, el)
				if !ok {
					badChoice(el)
					continue
				}
				el = c
			}
			if check := valueFormats[f.Format]; check != nil {
				if msg := check(el); msg != "" {
					bad(BadValue, el, "%s", msg)
					continue
				}
			}
			v.Strs = append(v.Strs, el)
		}
	}
	if f.Type == List && f.MinItems > 0 && len(v.Strs) < f.MinItems {
		bad(OutOfBounds, "", "needs at least %d item(s)", f.MinItems)
	}
}

// choice matches a value against the flag's choices with the family's normalisation and
// returns the canonical choice.
func (ps *parser) choice(f *Flag, val string) (string, bool) {
	if slices.Contains(f.Choices, val) {
		return val, true
	}
	if ps.s.Family == Cyclopts && !f.Exact {
		n := normChoice(val)
		for _, c := range f.Choices {
			if normChoice(c) == n {
				return c, true
			}
		}
	}
	return "", false
}

// normChoice is aiperf's enum comparison: case-insensitive, '-' equal to '_'.
func normChoice(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }

func checkBounds(f *Flag, x float64) string {
	switch {
	case f.Gt != nil && !(x > *f.Gt):
		return fmt.Sprintf("must be greater than %s", fmtNum(*f.Gt))
	case f.Ge != nil && !(x >= *f.Ge):
		return fmt.Sprintf("must be greater than or equal to %s", fmtNum(*f.Ge))
	case f.Lt != nil && !(x < *f.Lt):
		return fmt.Sprintf("must be less than %s", fmtNum(*f.Lt))
	case f.Le != nil && !(x <= *f.Le):
		return fmt.Sprintf("must be less than or equal to %s", fmtNum(*f.Le))
	}
	return ""
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// dotted merges --flag.key value into the flag's JSON object.
func (ps *parser) dotted(f *Flag, spelling, key, val string) {
	v, seen := ps.p.values[f.Name]
	if !seen {
		v = &Value{Flag: f, JSON: map[string]any{}}
		ps.p.values[f.Name] = v
		ps.p.order = append(ps.p.order, f.Name)
		ps.p.items = append(ps.p.items, item{flag: f.Name})
	}
	obj, ok := v.JSON.(map[string]any)
	if !ok {
		obj = map[string]any{}
		v.JSON = obj
	}
	var x any
	if err := json.Unmarshal([]byte(val), &x); err != nil {
		x = val
	}
	parts := strings.Split(key, ".")
	for _, k := range parts[:len(parts)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[parts[len(parts)-1]] = x
	v.merged = true
	v.Spelling = spelling
	v.Occurrences = append(v.Occurrences, []string{key + "=" + val})
	b, _ := json.Marshal(v.JSON)
	v.Strs = []string{string(b)}
}
