// Package schema holds versioned command-line schemas for the tools sweep runs (aiperf, SGLang,
// vLLM, SMG's router in front of an A/B arm), a typed builder that turns a recipe's flag settings into an argv slice, a parser that
// reads an argv back into typed values, a reader that finds flags and their values in an argv
// without checking it (ReadArgv, with the tool's schema or without one), and a checker that
// compares a schema with a tool's --help output.
//
// A schema is one YAML file per tool and version under data/, embedded in the binary. Every
// command sweep runs is built from the schema of the exact version it targets, so a flag the
// tool does not have, a value of the wrong type, a bad choice, a repeated flag, a missing
// companion flag or a scenario violation is rejected before anything is dispatched.
//
// Typical use:
//
//	s, err := schema.Load("aiperf", "0.12.0") // "" picks the tool's default version
//	b := s.NewBuilder()
//	b.String("--model", "Qwen/Qwen3.5-397B-A17B-FP8")
//	b.Int("--concurrency", 32)
//	b.Bool("--streaming", true)
//	b.List("--server-metrics", "http://localhost:8888/metrics")
//	argv, err := b.Argv() // ["profile", "--model", ..., "--streaming", ...] or every problem
//	for _, pe := range schema.Problems(err) { fmt.Println(pe.Flag, pe.Msg) }
//
//	p, err := s.Parse(argv) // the same schema reads argv back
//	conc, _ := p.Int("--concurrency")
//
// Finding a flag in a command line (to rewrite it, compare it, point at it):
//
//	a := schema.ReadArgv(argv, schema.ArgvOptions{Schema: schema.OfProgram(argv)}) // nil schema: the fallback rule
//	f, ok := a.Find("--port") // f.Value(), f.ValueAt(); a.Without(flag), a.WithValue(flag, v), a.Values()
//
// Drift against an installed tool:
//
//	flags, err := schema.ParseHelp(s.Family, helpText)
//	d := s.Compare(flags) // d.Added, d.Removed, d.Changed
//
// Schemas are immutable after loading and safe for concurrent use; a Builder is not.
package schema

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

//go:embed data/*.yaml
var dataFS embed.FS

// Family is a command-line parsing convention shared by a group of tools.
type Family string

// Families of parsers.
const (
	// Cyclopts is aiperf's parser (cyclopts 4 over pydantic): `--x=false` booleans, only the
	// explicitly declared `--no-` forms, every scalar at most once, list flags accumulate.
	Cyclopts Family = "cyclopts"
	// Argparse is Python argparse as SGLang and vLLM use it: store_true booleans,
	// BooleanOptionalAction `--x/--no-x`, last occurrence wins.
	Argparse Family = "argparse"
)

// Type is the value type of a flag.
type Type string

// Flag value types.
const (
	Bool         Type = "bool"          // aiperf: present = true, `--x=false`; argparse: store_true (bare only)
	BoolOptional Type = "bool-optional" // argparse BooleanOptionalAction: `--x` or `--no-x`
	Int          Type = "int"
	Float        Type = "float"
	String       Type = "string"
	Path         Type = "path" // a string naming a file or directory the tool writes, unless Reads
	Enum         Type = "enum" // one of Choices
	List         Type = "list" // several values of Item type
	JSON         Type = "json" // a JSON document (vLLM config objects, SGLang JSON text)
)

var knownTypes = []Type{Bool, BoolOptional, Int, Float, String, Path, Enum, List, JSON}

// Flag describes one option of a tool.
type Flag struct {
	Name     string   `yaml:"name"`     // canonical long name, e.g. "--concurrency"
	Aliases  []string `yaml:"aliases"`  // other accepted spellings
	Negative string   `yaml:"negative"` // explicit false form of a cyclopts bool ("--no-auto-plot")
	Type     Type     `yaml:"type"`
	Item     Type     `yaml:"item"` // element type of a List
	Choices  []string `yaml:"choices"`
	// Exact means choices compare verbatim (aiperf Literal options); otherwise aiperf compares
	// case-insensitively with '-' and '_' equal. Argparse choices always compare exactly.
	Exact bool `yaml:"exact"`
	// OpenChoices means Choices are known examples, not a closed set (parser registries,
	// enum-or-path options); any value is accepted.
	OpenChoices bool `yaml:"open_choices"`
	// Registry means Choices are a closed parser registry the tool checks at startup, not
	// argparse choices (vLLM's validate_api_server_args): a value outside them is refused
	// here all the same, but --help does not list them, so they are not compared with it.
	Registry bool `yaml:"registry"`
	Default  any  `yaml:"default"`
	// Reads marks a Path flag naming a file the tool only reads (an input);
	// every other Path flag names where the tool writes (Parsed.Writes).
	Reads      bool `yaml:"reads"`
	Repeatable bool `yaml:"repeatable"` // a list that accumulates over repeated occurrences
	Multi      bool `yaml:"multi"`      // several values may follow one occurrence
	Comma      bool `yaml:"comma"`      // a value may hold a comma-separated list
	Sweep      bool `yaml:"sweep"`      // a comma list of numbers turns the run into a sweep
	Object     bool `yaml:"object"`     // a JSON flag whose value must be an object
	Dotted     bool `yaml:"dotted"`     // a JSON flag that also takes --flag.key value
	// Numeric bounds (pydantic gt/ge/lt/le) and the minimum list length.
	Gt       *float64 `yaml:"gt"`
	Ge       *float64 `yaml:"ge"`
	Lt       *float64 `yaml:"lt"`
	Le       *float64 `yaml:"le"`
	MinItems int      `yaml:"min_items"`
	// Format names a grammar every value (list item) must follow, checked in Go
	// (see formats.go): "search_space" is aiperf's --search-space "path:lo,hi[:kind]".
	Format string `yaml:"format"`
	Group  string `yaml:"group"`
	// Deprecated flags still parse and produce a warning; Removed flags are a parse error
	// carrying this message.
	Deprecated string `yaml:"deprecated"`
	Removed    string `yaml:"removed"`
	Hidden     bool   `yaml:"hidden"` // accepted but not shown in --help (argparse SUPPRESS)
	// Curated marks a flag that is not in the schema's recorded Provenance source: kept from
	// hand-written notes (a newer or older release than the source read, or a removed
	// spelling kept for its error message).
	Curated bool   `yaml:"curated"`
	Note    string `yaml:"note"`

	pos string // file:line:col of its entry in the data file
}

// Spellings returns every accepted spelling of the flag: name, aliases, negative forms.
func (f *Flag) Spellings() []string {
	out := append([]string{f.Name}, f.Aliases...)
	for _, n := range f.negatives() {
		out = append(out, n)
	}
	return out
}

// negatives lists the false forms: the declared one (cyclopts) or --no-NAME (argparse
// BooleanOptionalAction, long name only).
func (f *Flag) negatives() []string {
	if f.Negative != "" {
		return []string{f.Negative}
	}
	if f.Type == BoolOptional {
		return []string{"--no-" + strings.TrimPrefix(f.Name, "--")}
	}
	return nil
}

// isBool reports whether the flag takes no separate value token.
func (f *Flag) isBool() bool { return f.Type == Bool || f.Type == BoolOptional }

// elemType is the type of one value: Item for lists, Type otherwise.
func (f *Flag) elemType() Type {
	if f.Type == List {
		if f.Item == "" {
			return String
		}
		return f.Item
	}
	return f.Type
}

// RuleKind names a cross-flag rule.
type RuleKind string

// Cross-flag rule kinds. A trigger flag counts when it is given at all (aiperf checks the
// fields the user set, so a bool given as false counts); a needed flag counts when it is set
// (a bool must be true).
const (
	Required         RuleKind = "required"           // one of Flags must be set, unless one of Unless is
	Requires         RuleKind = "requires"           // if any of Flags is set, one of Needs must be
	RequiresAll      RuleKind = "requires_all"       // if any of Flags is set, all of Needs must be
	RequiresVal      RuleKind = "requires_value"     // if any of Flags is set, Needs[0] must equal Value
	RequiresGt       RuleKind = "requires_gt"        // if any of Flags is set, Needs[0] must be > Value
	Conflicts        RuleKind = "conflicts"          // at most one of Flags may be set
	Excludes         RuleKind = "excludes"           // none of Flags may be given (gate it with When)
	LessOrEqual      RuleKind = "le"                 // Flags[0] <= Flags[1] when both are set (an absent Flags[1] counts as Value when given)
	RequiresContains RuleKind = "requires_contains"  // if any of Flags is set, Needs[0]'s value must contain Value (any case)
	RequiresNotVal   RuleKind = "requires_not_value" // if any of Flags is set, Needs[0] (its default when absent) must not equal Value
	NoSweep          RuleKind = "no_sweep"           // when one of When is set, no flag may be a comma sweep
)

var knownRuleKinds = []RuleKind{Required, Requires, RequiresAll, RequiresVal, RequiresGt, RequiresContains, RequiresNotVal, Conflicts, Excludes, LessOrEqual, NoSweep}

// Rule is a relation between flags that the tool checks after parsing.
type Rule struct {
	ID     string   `yaml:"id"`
	Kind   RuleKind `yaml:"kind"`
	Flags  []string `yaml:"flags"`
	Needs  []string `yaml:"needs"`
	Unless []string `yaml:"unless"` // the rule does not apply when one of these is set
	When   []string `yaml:"when"`   // the rule applies only when one of these is set
	Value  string   `yaml:"value"`
	// NonDefault makes a requires_* rule trigger only on a flag given with a value other
	// than its default (aiperf tolerates an explicit default: wait_for_model_mode "inference").
	NonDefault bool     `yaml:"non_default"`
	Severity   Severity `yaml:"severity"` // "" means error
	Message    string   `yaml:"message"`
	Source     string   `yaml:"source"` // where in the tool's source the rule was read

	pos string
}

// LockKind names a scenario lock.
type LockKind string

// Scenario lock kinds.
const (
	LockForbid   LockKind = "forbid"   // the flag must not be set
	LockEqual    LockKind = "equal"    // if set, the flag must equal Value
	LockMin      LockKind = "min"      // if set, the flag must be >= Value
	LockOneOf    LockKind = "one_of"   // if set, the flag must be one of Values
	LockRequired LockKind = "required" // the flag must be set, unless one of Unless is
	LockImplies  LockKind = "implies"  // if the flag equals Value, Needs must equal NeedsValue
	LockKeyTrue  LockKind = "key_true" // a key:value list flag must not set key Value to false
	LockSingle   LockKind = "single"   // the flag (every sweepable flag when Flag is empty) must not be a sweep
)

var knownLockKinds = []LockKind{LockForbid, LockEqual, LockMin, LockOneOf, LockRequired, LockImplies, LockKeyTrue, LockSingle}

// Lock is one invariant a scenario enforces.
type Lock struct {
	Flag       string   `yaml:"flag"`
	Kind       LockKind `yaml:"kind"`
	Value      string   `yaml:"value"`
	Values     []string `yaml:"values"`
	Needs      string   `yaml:"needs"`
	NeedsValue string   `yaml:"needs_value"`
	Unless     []string `yaml:"unless"`
	When       []string `yaml:"when"`
	Hard       bool     `yaml:"hard"` // the override flag cannot bypass it
	Message    string   `yaml:"message"`
}

// Scenario is a named set of locked settings (aiperf --scenario).
type Scenario struct {
	Name   string `yaml:"name"`
	Source string `yaml:"source"`
	Locks  []Lock `yaml:"locks"`
}

// Positional maps a tool's leading positional argument to a flag (vLLM's model tag).
type Positional struct {
	Flag string `yaml:"flag"`
	Name string `yaml:"name"`
}

// Provenance records where a schema's flag table was read: the repository, the ref and commit
// of the files, and how many flags were derived from them (every flag not marked Curated).
type Provenance struct {
	Repository string   `yaml:"repository"`
	Ref        string   `yaml:"ref"`    // the tag read, or what was read instead and why
	Commit     string   `yaml:"commit"` // commit of the files read
	Files      []string `yaml:"files"`  // "path (what was read there)"
	Flags      int      `yaml:"flags"`  // flags derived from Files
	Note       string   `yaml:"note"`
}

// Schema is the command-line surface of one version of one tool.
type Schema struct {
	Tool    string `yaml:"tool"`
	Version string `yaml:"version"`
	// Default marks the version picked when none is given.
	Default bool `yaml:"default"`
	// Complete means every option of the tool is listed; a partial schema covers the flags
	// sweep uses, so flags a --help shows beyond it are not drift.
	Complete bool   `yaml:"complete"`
	Family   Family `yaml:"family"`
	// Command holds the subcommand tokens that precede the flags ("profile", "serve").
	Command []string `yaml:"command"`
	// Program is how the tool is started, for messages and --help checks.
	Program     string      `yaml:"program"`
	Positional  *Positional `yaml:"positional"`
	AllowAbbrev bool        `yaml:"allow_abbrev"` // argparse unique-prefix abbreviations
	Underscores bool        `yaml:"underscores"`  // vLLM: --max_num_seqs == --max-num-seqs
	Extends     string      `yaml:"extends"`      // TOOL@VERSION this file adds to
	// Provenance lists the sources the flag table was derived from (several for a schema
	// assembled from more than one file set).
	Provenance []Provenance `yaml:"provenance"`
	Flags      []Flag       `yaml:"flags"`
	Rules      []Rule       `yaml:"rules"`
	// ScenarioFlag and OverrideFlag name the scenario selector and its bypass.
	ScenarioFlag string     `yaml:"scenario_flag"`
	OverrideFlag string     `yaml:"override_flag"`
	Scenarios    []Scenario `yaml:"scenarios"`

	file     string           // data file it was read from
	bySpell  map[string]*Flag // every spelling -> flag
	spelling []string         // every spelling, sorted, for suggestions and prefixes
}

// ID is "tool@version".
func (s *Schema) ID() string { return s.Tool + "@" + s.Version }

// Lookup finds a flag by any spelling (name, alias or negative form).
func (s *Schema) Lookup(spelling string) (*Flag, bool) {
	f, ok := s.bySpell[spelling]
	return f, ok
}

// Catalog is a set of loaded schemas, keyed by tool and version.
type Catalog struct {
	schemas []*Schema // sorted by tool, then version
}

// All returns every schema, sorted by tool and version.
func (c *Catalog) All() []*Schema { return slices.Clone(c.schemas) }

// Get returns the schema for tool and version; an empty version picks the tool's default.
func (c *Catalog) Get(tool, version string) (*Schema, error) {
	var versions []string
	for _, s := range c.schemas {
		if s.Tool != tool {
			continue
		}
		if version == "" && s.Default || version != "" && strings.TrimPrefix(s.Version, "v") == strings.TrimPrefix(version, "v") {
			return s, nil
		}
		versions = append(versions, s.Version)
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("no schema for tool %q (known: %s)", tool, strings.Join(c.tools(), ", "))
	}
	if version == "" {
		return nil, fmt.Errorf("tool %q has no default schema version (known: %s)", tool, strings.Join(versions, ", "))
	}
	return nil, fmt.Errorf("no schema for %s@%s (known versions: %s)", tool, version, strings.Join(versions, ", "))
}

// Resolve accepts "tool" or "tool@version".
func (c *Catalog) Resolve(ref string) (*Schema, error) {
	tool, version, _ := strings.Cut(ref, "@")
	return c.Get(tool, version)
}

func (c *Catalog) tools() []string {
	var out []string
	for _, s := range c.schemas {
		if !slices.Contains(out, s.Tool) {
			out = append(out, s.Tool)
		}
	}
	return out
}

var embedded = sync.OnceValues(func() (*Catalog, error) { return LoadFS(dataFS, "data") })

// Embedded returns the schemas compiled into the binary. The catalog is read once and is
// immutable.
func Embedded() (*Catalog, error) { return embedded() }

// Load returns the embedded schema of tool at version ("" for the default version).
func Load(tool, version string) (*Schema, error) {
	c, err := Embedded()
	if err != nil {
		return nil, err
	}
	return c.Get(tool, version)
}

// MustLoad is Load for schemas known to be embedded; it panics on error.
func MustLoad(tool, version string) *Schema {
	s, err := Load(tool, version)
	if err != nil {
		panic(err)
	}
	return s
}

// LoadFS reads every *.yaml file in dir of fsys as a schema, resolves "extends" and checks
// each schema. Errors name the file, line and column.
func LoadFS(fsys fs.FS, dir string) (*Catalog, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	raw := map[string]*Schema{}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		file := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := decode(file, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if want := strings.TrimSuffix(e.Name(), ".yaml"); s.ID() != want {
			errs = append(errs, fmt.Errorf("%s: declares %s; the file must be named %s.yaml", file, s.ID(), s.ID()))
			continue
		}
		raw[s.ID()] = s
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c := &Catalog{}
	for id := range raw {
		s, err := resolveExtends(raw, id, nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.index(); err != nil {
			errs = append(errs, err)
			continue
		}
		c.schemas = append(c.schemas, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Slice(c.schemas, func(i, j int) bool {
		a, b := c.schemas[i], c.schemas[j]
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		return a.Version < b.Version
	})
	defaults := map[string]int{}
	for _, s := range c.schemas {
		if s.Default {
			defaults[s.Tool]++
		}
	}
	for tool, n := range defaults {
		if n > 1 {
			errs = append(errs, fmt.Errorf("tool %s has %d default versions; mark exactly one", tool, n))
		}
	}
	return c, errors.Join(errs...)
}

// decode reads one schema file strictly (unknown keys are errors with their position).
func decode(file string, data []byte) (*Schema, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	s := &Schema{file: file}
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if s.Tool == "" || s.Version == "" {
		return nil, fmt.Errorf("%s:1:1: tool and version are required", file)
	}
	// Remember where each flag and rule is, for the consistency errors of index.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil && len(root.Content) == 1 {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			seq := m.Content[i+1]
			for j, n := range seq.Content {
				at := fmt.Sprintf("%s:%d:%d", file, n.Line, n.Column)
				switch {
				case m.Content[i].Value == "flags" && j < len(s.Flags):
					s.Flags[j].pos = at
				case m.Content[i].Value == "rules" && j < len(s.Rules):
					s.Rules[j].pos = at
				}
			}
		}
	}
	return s, nil
}

// resolveExtends merges a schema over its base: the base's flags, with the file's flags
// added or replacing by name; the base's rules plus the file's; scenarios replaced by name.
func resolveExtends(raw map[string]*Schema, id string, seen []string) (*Schema, error) {
	s := raw[id]
	if s.Extends == "" {
		return s, nil
	}
	if slices.Contains(seen, id) {
		return nil, fmt.Errorf("%s: extends cycle %s", s.file, strings.Join(append(seen, id), " -> "))
	}
	if _, ok := raw[s.Extends]; !ok {
		return nil, fmt.Errorf("%s: extends unknown schema %s", s.file, s.Extends)
	}
	base, err := resolveExtends(raw, s.Extends, append(seen, id))
	if err != nil {
		return nil, err
	}
	m := *base
	m.Tool, m.Version, m.Default, m.Complete, m.Extends, m.file = s.Tool, s.Version, s.Default, s.Complete, "", s.file
	m.bySpell, m.spelling = nil, nil
	m.Flags = slices.Clone(base.Flags)
	for _, f := range s.Flags {
		if i := slices.IndexFunc(m.Flags, func(b Flag) bool { return b.Name == f.Name }); i >= 0 {
			m.Flags[i] = f
		} else {
			m.Flags = append(m.Flags, f)
		}
	}
	m.Rules = append(slices.Clone(base.Rules), s.Rules...)
	m.Provenance = append(slices.Clone(base.Provenance), s.Provenance...)
	m.Scenarios = slices.Clone(base.Scenarios)
	for _, sc := range s.Scenarios {
		if i := slices.IndexFunc(m.Scenarios, func(b Scenario) bool { return b.Name == sc.Name }); i >= 0 {
			m.Scenarios[i] = sc
		} else {
			m.Scenarios = append(m.Scenarios, sc)
		}
	}
	return &m, nil
}

// index builds the spelling table and checks the schema's own consistency.
// checkValueTraits reports (bad) what of the flag's type and value traits
// does not hold together.
func (f *Flag) checkValueTraits(bad func(format string, a ...any)) {
	if !slices.Contains(knownTypes, f.Type) {
		bad("flag %s: type %q: want one of %v", f.Name, f.Type, knownTypes)
	}
	if f.Type == Enum && len(f.Choices) == 0 {
		bad("flag %s: enum without choices", f.Name)
	}
	if f.Format != "" && valueFormats[f.Format] == nil {
		bad("flag %s: format %q: want one of %v", f.Name, f.Format, slices.Sorted(maps.Keys(valueFormats)))
	}
	if f.Reads && f.elemType() != Path {
		bad("flag %s: only a path flag reads (reads: true)", f.Name)
	}
	if f.Negative != "" && f.Type != Bool {
		bad("flag %s: only a bool has a negative form", f.Name)
	}
}

func (s *Schema) index() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{s.file}, a...)...))
	}
	if s.Family != Cyclopts && s.Family != Argparse {
		bad("family %q: want cyclopts or argparse", s.Family)
	}
	s.bySpell = map[string]*Flag{}
	for i := range s.Flags {
		f := &s.Flags[i]
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s: "+format, append([]any{cmp.Or(f.pos, s.file)}, a...)...))
		}
		f.checkValueTraits(bad)
		for _, sp := range f.Spellings() {
			if !strings.HasPrefix(sp, "-") {
				bad("flag %s: spelling %q does not start with '-'", f.Name, sp)
			}
			if o, dup := s.bySpell[sp]; dup {
				bad("spelling %s belongs to both %s and %s", sp, o.Name, f.Name)
			}
			s.bySpell[sp] = f
		}
	}
	s.spelling = make([]string, 0, len(s.bySpell))
	for sp := range s.bySpell {
		s.spelling = append(s.spelling, sp)
	}
	sort.Strings(s.spelling)
	known := func(where, name string) {
		if _, ok := s.bySpell[name]; !ok {
			bad("%s names unknown flag %s", where, name)
		}
	}
	for _, r := range s.Rules {
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s: "+format, append([]any{cmp.Or(r.pos, s.file)}, a...)...))
		}
		known := func(where, name string) {
			if _, ok := s.bySpell[name]; !ok {
				bad("%s names unknown flag %s", where, name)
			}
		}
		if !slices.Contains(knownRuleKinds, r.Kind) {
			bad("rule %s: kind %q: want one of %v", r.ID, r.Kind, knownRuleKinds)
		}
		for _, n := range slices.Concat(r.Flags, r.Needs, r.Unless, r.When) {
			known("rule "+r.ID, n)
		}
		if (r.Kind == RequiresVal || r.Kind == RequiresGt || r.Kind == RequiresContains || r.Kind == RequiresNotVal) && len(r.Needs) != 1 {
			bad("rule %s: %s needs exactly one flag in needs", r.ID, r.Kind)
		}
		if r.NonDefault && !slices.Contains([]RuleKind{Requires, RequiresAll, RequiresVal, RequiresGt, RequiresContains, RequiresNotVal}, r.Kind) {
			bad("rule %s: non_default applies only to requires_* rules", r.ID)
		}
		if r.Kind == LessOrEqual && len(r.Flags) != 2 {
			bad("rule %s: le needs exactly two flags", r.ID)
		}
	}
	if s.ScenarioFlag != "" {
		known("scenario_flag", s.ScenarioFlag)
	}
	if s.OverrideFlag != "" {
		known("override_flag", s.OverrideFlag)
	}
	for _, sc := range s.Scenarios {
		for _, l := range sc.Locks {
			if !slices.Contains(knownLockKinds, l.Kind) {
				bad("scenario %s: lock kind %q: want one of %v", sc.Name, l.Kind, knownLockKinds)
			}
			if l.Flag != "" || l.Kind != LockSingle {
				known("scenario "+sc.Name, l.Flag)
			}
			for _, n := range slices.Concat(l.Unless, l.When) {
				known("scenario "+sc.Name, n)
			}
			if l.Needs != "" {
				known("scenario "+sc.Name, l.Needs)
			}
		}
	}
	if s.Positional != nil {
		known("positional", s.Positional.Flag)
	}
	return errors.Join(errs...)
}

// TrimProgram removes a leading program invocation from argv ("aiperf", "/venv/bin/aiperf",
// "vllm", "python3 -m sglang.launch_server", "sglang serve"), so a whole recorded command
// line can be parsed. An argv without one is returned unchanged.
func (s *Schema) TrimProgram(argv []string) []string {
	prog := strings.Fields(s.Program)
	if len(prog) == 0 || len(argv) == 0 {
		return argv
	}
	base := func(x string) string { return path.Base(strings.ReplaceAll(x, `\`, "/")) }
	if len(prog) > 1 && strings.HasPrefix(prog[0], "python") {
		// python3 -m module: any python interpreter, then "-m module".
		if len(argv) >= 3 && strings.HasPrefix(base(argv[0]), "python") && argv[1] == "-m" && argv[2] == prog[2] {
			return argv[3:]
		}
		if tool := s.Tool; len(argv) >= 2 && base(argv[0]) == tool && argv[1] == "serve" {
			return argv[2:] // "sglang serve", the 2026 entry point
		}
		return argv
	}
	if base(argv[0]) == prog[0] {
		return argv[1:]
	}
	return argv
}
