package schema

import (
	"regexp"
	"slices"
	"strings"
)

// An argv read without checking it. Parse checks an argv against a
// schema; ReadArgv only finds things in one (a worker's --port to
// rewrite, the flags two commands differ in, the token a problem stands
// at), so an argv a schema would refuse, or one of a tool sweep has no
// schema for, reads too. It is the one home of the rule that tells a
// flag's value from the next flag (isFlagToken), which Parse shares.

// negNumber is a token argparse reads as a negative number, a value
// rather than a flag.
var negNumber = regexp.MustCompile(`^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$`)

// isFlagToken says whether a token starts a flag rather than being a
// value: it starts with "-" and is neither "-" nor a negative number
// (argparse reads "-1" as a value when no option looks like one; cyclopts
// does the same for numeric parameters).
func isFlagToken(tok string) bool {
	return strings.HasPrefix(tok, "-") && tok != "-" && !negNumber.MatchString(tok)
}

// resolveSpelling finds the flag a token's name spells under the tool's
// rules: one of its spellings, the same with '_' for '-' where the tool
// accepts underscores, or, when abbrev and the tool allows them, a unique
// argparse abbreviation. An ambiguous abbreviation gives no flag and the
// spellings it could be (hits).
func (s *Schema) resolveSpelling(name string, abbrev bool) (f *Flag, spelling string, hits []string) {
	if f, ok := s.bySpell[name]; ok {
		return f, name, nil
	}
	if s.Underscores && strings.HasPrefix(name, "--") {
		alt := "--" + strings.ReplaceAll(name[2:], "_", "-")
		if f, ok := s.bySpell[alt]; ok {
			return f, alt, nil
		}
	}
	if abbrev && s.AllowAbbrev && strings.HasPrefix(name, "--") && len(name) > 2 {
		for _, sp := range s.spelling {
			if strings.HasPrefix(sp, name) {
				hits = append(hits, sp)
			}
		}
		if len(hits) == 1 {
			return s.bySpell[hits[0]], hits[0], nil
		}
	}
	return nil, "", hits
}

// ArgvOptions says how ReadArgv reads an argv. The zero value is the
// reading for a caller that does not know the tool: every token that
// starts with "-" (but "-" and a negative number, "-1", "-0.5") is a flag,
// a flag given as FLAG=VALUE has that value, any other takes the next
// token as its value unless that token is a flag itself, and "--" ends
// the flags (what follows is positional). Find matches the spelling
// given, exactly.
type ArgvOptions struct {
	// Schema is the tool's flag schema, nil when the caller does not
	// know the tool. With it, a leading program (Schema.TrimProgram:
	// "python3 -m sglang.launch_server", "vllm") is positional, a flag
	// the schema knows by any spelling takes a value exactly when its
	// type does (a bool or bool-optional flag is bare: it never takes the
	// next token), a multi flag (vLLM's --served-model-name) takes every
	// token up to the next flag, and Find matches every spelling of the
	// flag it is asked for (aliases, the negative form, '_' for '-' where
	// the tool accepts it). A flag the schema does not know reads as
	// without one.
	Schema *Schema
	// Abbrev reads a flag given as an argparse abbreviation (a unique
	// prefix: "--max-model" for "--max-model-len") as the flag it
	// abbreviates: with a Schema only where the tool accepts them (its
	// allow_abbrev) and unique among its spellings; without one, Find
	// matches any prefix of the flag asked for longer than "--". It is
	// for finding what the tool read (the token a parse problem names,
	// the flags two commands differ in, a flag a caller may not give);
	// a caller that edits an argv names its flags exactly.
	Abbrev bool
}

// ArgvFlag is one flag of an argv as ReadArgv reads it.
type ArgvFlag struct {
	Spelling string // the flag as given, without an attached value
	At       int    // index of its token in the argv
	// Values are what it takes: its attached value (FLAG=VALUE), or the
	// tokens after it; none for a bare flag.
	Values   []string
	Attached bool  // Values[0] is attached to the flag's own token
	Flag     *Flag // the schema's flag it spells; nil without a schema or for a flag it does not know
	// Name is the flag as the tool reads it: Flag's canonical name (the
	// negative form's for a negative spelling, "--no-x"), so that an
	// alias, an abbreviation and '_' for '-' name it alike; Spelling when
	// Flag is nil.
	Name string
}

// Value is the flag's first value, "" for a bare flag.
func (f ArgvFlag) Value() string {
	if len(f.Values) == 0 {
		return ""
	}
	return f.Values[0]
}

// ValueAt is the index of the token that holds the flag's first value
// (At when attached, else the token after it); -1 for a bare flag.
func (f ArgvFlag) ValueAt() int {
	switch {
	case f.Attached:
		return f.At
	case len(f.Values) > 0:
		return f.At + 1
	}
	return -1
}

// end is the index after the flag's last token.
func (f ArgvFlag) end() int {
	if f.Attached {
		return f.At + 1
	}
	return f.At + 1 + len(f.Values)
}

// Argv is an argv as ReadArgv reads it: its flags in order and the
// positional tokens (the program, subcommands, a model tag, whatever no
// flag takes, what follows "--"). "--" itself is neither.
type Argv struct {
	Tokens      []string
	Flags       []ArgvFlag
	Positionals []int // indices in Tokens
	opts        ArgvOptions
}

// ReadArgv reads argv's flags and their values as o says. It never
// fails: every token is a flag, a flag's value or a positional.
func ReadArgv(argv []string, o ArgvOptions) Argv {
	a := Argv{Tokens: argv, opts: o}
	i := 0
	if o.Schema != nil {
		for ; i < len(argv)-len(o.Schema.TrimProgram(argv)); i++ {
			a.Positionals = append(a.Positionals, i)
		}
	}
	for i < len(argv) {
		tok := argv[i]
		switch {
		case tok == "--":
			for i++; i < len(argv); i++ {
				a.Positionals = append(a.Positionals, i)
			}
			continue
		case !isFlagToken(tok):
			a.Positionals = append(a.Positionals, i)
			i++
			continue
		}
		f := a.flagAt(i)
		a.Flags = append(a.Flags, f)
		i = f.end()
	}
	return a
}

// flagAt reads the flag whose token is Tokens[i] and the values it takes.
func (a Argv) flagAt(i int) ArgvFlag {
	tok := a.Tokens[i]
	f := ArgvFlag{Spelling: tok, At: i}
	if name, value, ok := strings.Cut(tok, "="); ok {
		f.Spelling, f.Values, f.Attached = name, []string{value}, true
	}
	f.Name = f.Spelling
	if s := a.opts.Schema; s != nil {
		var spelling string
		f.Flag, spelling, _ = s.resolveSpelling(f.Spelling, a.opts.Abbrev)
		switch {
		case f.Flag == nil:
		case slices.Contains(f.Flag.negatives(), spelling):
			f.Name = spelling
		default:
			f.Name = f.Flag.Name
		}
	}
	if f.Attached {
		return f
	}
	takes := 1 // a value, unless the next token is a flag
	switch {
	case f.Flag == nil:
	case f.Flag.isBool():
		takes = 0
	case f.Flag.Multi:
		takes = len(a.Tokens)
	}
	for j := i + 1; j < len(a.Tokens) && len(f.Values) < takes && a.Tokens[j] != "--" && !isFlagToken(a.Tokens[j]); j++ {
		f.Values = append(f.Values, a.Tokens[j])
	}
	return f
}

// names says whether f is the flag called name: with a schema that
// knows name, any spelling of the same flag; else the same spelling, or
// with Abbrev and no schema a prefix of name longer than "--".
func (a Argv) names(f ArgvFlag, name string) bool {
	if s := a.opts.Schema; s != nil {
		if want, _, _ := s.resolveSpelling(name, false); want != nil {
			return f.Flag == want
		}
	}
	if f.Spelling == name {
		return true
	}
	return a.opts.Abbrev && a.opts.Schema == nil && len(f.Spelling) > 2 && strings.HasPrefix(f.Spelling, "--") && strings.HasPrefix(name, f.Spelling)
}

// All lists every occurrence of the flag called name, in order.
func (a Argv) All(name string) []ArgvFlag {
	var out []ArgvFlag
	for _, f := range a.Flags {
		if a.names(f, name) {
			out = append(out, f)
		}
	}
	return out
}

// Find is the last occurrence of the flag called name (the one argparse
// keeps); ok is false when the argv does not give it.
func (a Argv) Find(name string) (f ArgvFlag, ok bool) {
	all := a.All(name)
	if len(all) == 0 {
		return ArgvFlag{}, false
	}
	return all[len(all)-1], true
}

// Without is a copy of the argv without any occurrence of the flag
// called name and the values it takes.
func (a Argv) Without(name string) []string {
	out := make([]string, 0, len(a.Tokens))
	next := 0
	for _, f := range a.All(name) {
		out = append(out, a.Tokens[next:f.At]...)
		next = f.end()
	}
	return append(out, a.Tokens[next:]...)
}

// WithValue is a copy of the argv with the value of the flag called
// name (its last occurrence) replaced by value, in the form it was given
// (FLAG=VALUE or FLAG VALUE); ok is false when the argv does not give the
// flag with a value.
func (a Argv) WithValue(name, value string) (argv []string, ok bool) {
	f, found := a.Find(name)
	if !found || f.ValueAt() < 0 {
		return nil, false
	}
	out := slices.Clone(a.Tokens)
	if f.Attached {
		out[f.At] = f.Spelling + "=" + value
	} else {
		out[f.At+1] = value
	}
	return out, true
}

// TokenAt is the index of the token a problem stands at (a parse
// problem's flag, by Spelling or Flag, and Value): of the flag called
// flag, the token that gives it value (FLAG=VALUE, or VALUE among the
// tokens it takes) in the first occurrence that has it, else its first
// occurrence's flag token (value "": the flag's); with no flag, value is
// stray tokens (a StrayToken problem's, joined by spaces) and the index
// is the first of them among the positional tokens after the program.
// -1 when the argv has none.
func (a Argv) TokenAt(flag, value string) int {
	if flag == "" {
		if value == "" {
			return -1
		}
		program := 0
		if a.opts.Schema != nil {
			program = len(a.Tokens) - len(a.opts.Schema.TrimProgram(a.Tokens))
		}
		for _, i := range a.Positionals {
			if tok := a.Tokens[i]; i >= program && (value == tok || strings.HasPrefix(value, tok+" ")) {
				return i
			}
		}
		return -1
	}
	all := a.All(flag)
	for _, f := range all {
		switch {
		case value == "":
		case f.Attached && f.Value() == value:
			return f.At
		case !f.Attached:
			if j := slices.Index(f.Values, value); j >= 0 {
				return f.At + 1 + j
			}
		}
	}
	if len(all) == 0 {
		return -1
	}
	return all[0].At
}

// Values maps each flag, by its Name (as the tool reads it with a
// schema that knows it, else as spelt), to its first value ("" for a
// bare flag); a flag given more than once, in any spelling, has its last
// occurrence's.
func (a Argv) Values() map[string]string {
	out := make(map[string]string, len(a.Flags))
	for _, f := range a.Flags {
		out[f.Name] = f.Value()
	}
	return out
}

// OfProgram is the default schema of the tool whose program argv starts
// with (TrimProgram removes it: "python3 -m sglang.launch_server",
// "vllm", "aiperf", "python3 -m smg.launch_router"), for reading a whole
// command line whose tool the caller does not know otherwise; nil when
// argv starts with no tool's program. The default version reads as well
// as any: versions differ in the flags they accept, hardly in which of
// them take values.
func (c *Catalog) OfProgram(argv []string) *Schema {
	for _, s := range c.schemas {
		if s.Default && s.Program != "" && len(argv) > 0 && len(s.TrimProgram(argv)) < len(argv) {
			return s
		}
	}
	return nil
}

// OfProgram is the embedded catalog's Catalog.OfProgram.
func OfProgram(argv []string) *Schema {
	c, err := Embedded()
	if err != nil {
		return nil
	}
	return c.OfProgram(argv)
}
