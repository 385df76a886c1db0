package schema

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// HelpFlag is one option row read from a tool's --help output.
type HelpFlag struct {
	Names []string // every option string of the row, negative forms included
	// Choices as the help shows them (cyclopts shows a display form: lower case, '-' for
	// '_'); nil when the row lists none.
	Choices []string
	// Kind is what the help says about the value: "value", "bool" (no value),
	// "bool-optional" (--x/--no-x) or "" when the format does not show it (cyclopts).
	Kind  string
	Multi bool // argparse nargs="+" ("X [X ...]")
	// Default is the "[default: ...]" text of a cyclopts row, in display form; HasDefault
	// says whether the row shows one.
	Default    string
	HasDefault bool
	Line       int // 1-based line of the row's first line
}

// ParseHelp reads the option rows of a --help text: cyclopts/rich panels (aiperf, at any
// terminal width) or Python argparse (SGLang, vLLM).
func ParseHelp(family Family, text string) ([]HelpFlag, error) {
	var out []HelpFlag
	var err error
	switch family {
	case Cyclopts:
		out = parseCycloptsHelp(text)
	case Argparse:
		out = parseArgparseHelp(text)
	default:
		return nil, fmt.Errorf("no help parser for family %q", family)
	}
	if len(out) == 0 {
		err = fmt.Errorf("no option rows found in the %s help text", family)
	}
	return out, err
}

var choicesRe = regexp.MustCompile(`\[choices: ([^\]]*)\]`)

func parseCycloptsHelp(text string) []HelpFlag {
	var out []HelpFlag
	var desc []string
	flush := func() {
		if len(out) == 0 {
			return
		}
		joined := strings.Join(desc, " ")
		if m := choicesRe.FindStringSubmatch(joined); m != nil {
			for _, c := range strings.Split(m[1], ",") {
				if c = strings.TrimSpace(c); c != "" {
					out[len(out)-1].Choices = append(out[len(out)-1].Choices, c)
				}
			}
		}
		if d, ok := bracketValue(joined, "[default: "); ok {
			out[len(out)-1].Default, out[len(out)-1].HasDefault = d, true
		}
		desc = nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRightFunc(sc.Text(), unicode.IsSpace)
		if !strings.HasPrefix(line, "│") {
			if strings.HasPrefix(line, "╰") || strings.HasPrefix(line, "╭") {
				flush()
			}
			continue
		}
		body := strings.TrimPrefix(line, "│")
		body = strings.TrimSuffix(body, "│")
		body = strings.TrimPrefix(body, " ")
		switch {
		case strings.HasPrefix(body, "-"):
			flush()
			names, rest := splitNameColumn(body)
			out = append(out, HelpFlag{Names: names, Line: n})
			desc = append(desc, rest)
		case strings.HasPrefix(body, "  ") && len(body) > 2 && body[2] != ' ':
			// Name-column continuation: more aliases, or the tail of a name that rich
			// folded because it was wider than the column ("--rankings-...-me" / "an").
			if len(out) > 0 {
				names, rest := splitNameColumn(body[2:])
				row := &out[len(out)-1]
				if len(names) > 0 && !strings.HasPrefix(names[0], "-") && len(row.Names) > 0 {
					row.Names[len(row.Names)-1] += names[0]
					names = names[1:]
				}
				row.Names = append(row.Names, names...)
				desc = append(desc, rest)
			}
		default:
			desc = append(desc, strings.TrimSpace(body))
		}
	}
	flush()
	return out
}

// bracketValue returns the text after marker up to its matching ']' (the value may hold
// brackets itself: "[default: ['http://localhost:8000']]").
func bracketValue(s, marker string) (string, bool) {
	i := strings.LastIndex(s, marker)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(marker):]
	depth := 0
	for j, r := range rest {
		switch r {
		case '[':
			depth++
		case ']':
			if depth == 0 {
				return rest[:j], true
			}
			depth--
		}
	}
	return "", false
}

// splitNameColumn splits "--a --b -c      description" at the first run of two spaces.
func splitNameColumn(s string) (names []string, rest string) {
	col := s
	if i := strings.Index(s, "  "); i >= 0 {
		col, rest = s[:i], strings.TrimSpace(s[i:])
	}
	return strings.Fields(col), rest
}

var (
	argparseEntry = regexp.MustCompile(`^  (-[^\s].*)$`)
	braceRe       = regexp.MustCompile(`^\{(.*)\}$`)
)

func parseArgparseHelp(text string) []HelpFlag {
	var out []HelpFlag
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		m := argparseEntry.FindStringSubmatch(strings.TrimRightFunc(sc.Text(), unicode.IsSpace))
		if m == nil {
			continue
		}
		inv := m[1]
		if i := strings.Index(inv, "  "); i >= 0 {
			inv = inv[:i] // help text on the same line
		}
		hf := HelpFlag{Line: n, Kind: "bool"}
		for _, part := range strings.Split(inv, ", ") {
			fields := strings.Fields(part)
			if len(fields) == 0 {
				continue
			}
			hf.Names = append(hf.Names, fields[0])
			if len(fields) > 1 {
				hf.Kind = "value"
				if bm := braceRe.FindStringSubmatch(fields[1]); bm != nil && hf.Choices == nil {
					hf.Choices = strings.Split(bm[1], ",")
				}
				if strings.Contains(part, "...]") {
					hf.Multi = true
				}
			}
		}
		if slices.Contains(hf.Names, "-h") || slices.Contains(hf.Names, "--help") {
			continue
		}
		if hf.Kind == "bool" {
			for _, nm := range hf.Names {
				if strings.HasPrefix(nm, "--no-") && slices.Contains(hf.Names, "--"+strings.TrimPrefix(nm, "--no-")) {
					hf.Kind = "bool-optional"
				}
			}
		}
		out = append(out, hf)
	}
	return out
}

// Change is one difference between a schema flag and the help row of the same flag.
type Change struct {
	Flag   string // canonical name in the schema
	What   string // "names", "kind", "choices", "removed-flag-present"
	Schema string // the schema's view
	Help   string // the help's view
}

// Drift is the difference between a schema and a tool's --help.
type Drift struct {
	Schema string
	// Added lists help rows the schema does not know. For a partial schema these are not
	// drift (the schema covers only the flags sweep uses); they are listed in Uncovered.
	Added     []HelpFlag
	Uncovered []HelpFlag
	Removed   []string // schema flags the help no longer shows
	Changed   []Change
	Matched   int // help rows matched to a schema flag
}

// Empty reports whether the schema and the help agree.
func (d *Drift) Empty() bool { return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0 }

// Compare lists the flags added, removed or changed in a help text relative to the schema.
func (s *Schema) Compare(help []HelpFlag) *Drift {
	d := &Drift{Schema: s.ID()}
	seen := map[string]bool{}
	for _, h := range help {
		var f *Flag
		for _, nm := range h.Names {
			if g, ok := s.bySpell[nm]; ok {
				f = g
				break
			}
		}
		if f == nil {
			if s.Complete {
				d.Added = append(d.Added, h)
			} else {
				d.Uncovered = append(d.Uncovered, h)
			}
			continue
		}
		d.Matched++
		seen[f.Name] = true
		if f.Removed != "" {
			d.Changed = append(d.Changed, Change{Flag: f.Name, What: "removed-flag-present", Schema: "removed: " + f.Removed, Help: strings.Join(h.Names, " ")})
		}
		want, got := sortedCopy(f.Spellings()), sortedCopy(h.Names)
		if !slices.Equal(want, got) {
			d.Changed = append(d.Changed, Change{Flag: f.Name, What: "names", Schema: strings.Join(want, " "), Help: strings.Join(got, " ")})
		}
		if h.Kind != "" {
			kind := "value"
			if f.isBool() {
				kind = string(f.Type)
			}
			if kind != h.Kind {
				d.Changed = append(d.Changed, Change{Flag: f.Name, What: "kind", Schema: kind, Help: h.Kind})
			}
		}
		if ch := compareChoices(s.Family, f, h); ch != nil {
			d.Changed = append(d.Changed, *ch)
		}
		if h.HasDefault && f.Default != nil && !sameDefault(f.Default, h.Default) {
			d.Changed = append(d.Changed, Change{Flag: f.Name, What: "default", Schema: fmt.Sprint(f.Default), Help: h.Default})
		}
	}
	for _, f := range s.Flags {
		if !seen[f.Name] && f.Removed == "" && !f.Hidden {
			d.Removed = append(d.Removed, f.Name)
		}
	}
	return d
}

func compareChoices(family Family, f *Flag, h HelpFlag) *Change {
	if f.OpenChoices || f.Registry || f.isBool() {
		return nil
	}
	if h.Choices == nil && family == Cyclopts {
		return nil // cyclopts does not show choices for every enum (e.g. optional enums)
	}
	schemaHas := len(f.Choices) > 0
	if !schemaHas && h.Choices == nil {
		return nil
	}
	norm := func(xs []string) []string {
		out := make([]string, 0, len(xs))
		for _, x := range xs {
			out = append(out, normDisplay(x))
		}
		sort.Strings(out)
		return out
	}
	if slices.Equal(norm(f.Choices), norm(h.Choices)) {
		return nil
	}
	return &Change{Flag: f.Name, What: "choices", Schema: strings.Join(f.Choices, ","), Help: strings.Join(h.Choices, ",")}
}

// sameDefault compares a schema default with cyclopts' display of it: booleans and enums
// after folding case and punctuation, numbers by value, lists element by element.
func sameDefault(schema any, help string) bool {
	if list, ok := schema.([]any); ok {
		inner := strings.TrimSpace(help)
		if !strings.HasPrefix(inner, "[") || !strings.HasSuffix(inner, "]") {
			return false
		}
		inner = strings.TrimSpace(inner[1 : len(inner)-1])
		var items []string
		if inner != "" {
			items = strings.Split(inner, ",")
		}
		if len(items) != len(list) {
			return false
		}
		for i, it := range items {
			if !sameDefault(list[i], strings.Trim(strings.TrimSpace(it), `'"`)) {
				return false
			}
		}
		return true
	}
	want := fmt.Sprint(schema)
	if a, aok := parseFloatWord(want); aok {
		b, bok := parseFloatWord(help)
		return bok && a == b
	}
	return normDisplay(want) == normDisplay(help)
}

// normDisplay folds cyclopts' display form and raw values together: lower case, letters and
// digits only ("semianalysis-cc-traces-weka-062126-256-k" == "..._062126_256k").
func normDisplay(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func sortedCopy(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return out
}

// Summary says what was compared and what matched: the schema, source
// (where the help came from), its rows and, for a partial schema, the
// rows it does not cover.
func (d *Drift) Summary(source string, rows int) string {
	summary := fmt.Sprintf("%s vs %s: %d help rows, %d matched", d.Schema, source, rows, d.Matched)
	if len(d.Uncovered) > 0 {
		summary += fmt.Sprintf(", %d not covered by this partial schema", len(d.Uncovered))
	}
	return summary
}

// Lines renders the drift one problem per line, for the CLI.
func (d *Drift) Lines() []string {
	var out []string
	for _, h := range d.Added {
		out = append(out, fmt.Sprintf("added: %s (help line %d; not in %s)", strings.Join(h.Names, " "), h.Line, d.Schema))
	}
	for _, n := range d.Removed {
		out = append(out, fmt.Sprintf("removed: %s (in %s, not in the help)", n, d.Schema))
	}
	for _, c := range d.Changed {
		out = append(out, fmt.Sprintf("changed: %s %s: schema %q, help %q", c.Flag, c.What, c.Schema, c.Help))
	}
	return out
}
