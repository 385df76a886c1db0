package schema

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Summary is one schema as `sweep schema list` shows it.
type Summary struct {
	Tool      string   `json:"tool"`
	Version   string   `json:"version"`
	Default   bool     `json:"default"`
	Complete  bool     `json:"complete"`
	Flags     int      `json:"flags"`
	Spellings int      `json:"spellings"`
	Rules     int      `json:"rules"`
	Scenarios []string `json:"scenarios"`
}

// Summaries are the catalog's schemas, sorted by tool and version.
func (c *Catalog) Summaries() []Summary {
	var rows []Summary
	for _, s := range c.schemas {
		r := Summary{Tool: s.Tool, Version: s.Version, Default: s.Default, Complete: s.Complete, Flags: len(s.Flags), Rules: len(s.Rules), Scenarios: []string{}}
		for _, f := range s.Flags {
			r.Spellings += len(f.Spellings())
		}
		for _, sc := range s.Scenarios {
			r.Scenarios = append(r.Scenarios, sc.Name)
		}
		rows = append(rows, r)
	}
	return rows
}

// WriteSummaries prints rows as a table, one schema a line.
func WriteSummaries(w io.Writer, rows []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tVERSION\tDEFAULT\tFLAGS\tSPELLINGS\tRULES\tSCENARIOS\tCOVERAGE")
	for _, r := range rows {
		def, cov, scen := "", "partial", "-"
		if r.Default {
			def = "yes"
		}
		if r.Complete {
			cov = "complete"
		}
		if len(r.Scenarios) > 0 {
			scen = strings.Join(r.Scenarios, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Tool, r.Version, def, r.Flags, r.Spellings, r.Rules, scen, cov)
	}
	return tw.Flush()
}

// Problem is one *Error as `sweep schema validate --json` prints it.
type Problem struct {
	Kind       string `json:"kind"`
	Severity   string `json:"severity"`
	Flag       string `json:"flag,omitempty"` // as spelled on the command line
	Value      string `json:"value,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
	Rule       string `json:"rule,omitempty"`
	Message    string `json:"message"`
}

// ProblemsOf turns errs into Problems (an empty list for none).
func ProblemsOf(errs []*Error) []Problem {
	out := []Problem{}
	for _, e := range errs {
		flag := e.Spelling
		if flag == "" {
			flag = e.Flag
		}
		out = append(out, Problem{Kind: string(e.Kind), Severity: string(e.Severity), Flag: flag, Value: e.Value, Suggestion: e.Suggestion, Rule: e.Rule, Message: e.Error()})
	}
	return out
}

// ShellJoin renders argv for display, quoting the words a POSIX shell
// would split or expand.
func ShellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// Validation is a command line checked against a schema as `sweep schema
// validate --json` prints it.
type Validation struct {
	Schema   string    `json:"schema"`
	Valid    bool      `json:"valid"`
	Argv     []string  `json:"argv,omitempty"` // normalised, when valid
	Problems []Problem `json:"problems"`
	Warnings []Problem `json:"warnings"`
}

// NewValidation is the Validation of what s.Parse returned (p, err).
func (s *Schema) NewValidation(p *Parsed, err error) Validation {
	v := Validation{Schema: s.ID(), Valid: err == nil, Problems: ProblemsOf(Problems(err)), Warnings: ProblemsOf(p.Warnings)}
	if err == nil {
		v.Argv = p.Args()
	}
	return v
}

// WriteFlags writes everything known about the flags names (spellings),
// a blank line between two, and a line naming each one s does not have
// (with the closest spelling); it returns those.
func (s *Schema) WriteFlags(w io.Writer, names []string) (missing []string) {
	for i, name := range names {
		f, ok := s.Lookup(name)
		if !ok {
			line := fmt.Sprintf("%s has no flag %s", s.ID(), name)
			if sug := s.Suggest(name); sug != "" {
				line += fmt.Sprintf(" (did you mean %s?)", sug)
			}
			fmt.Fprintln(w, line)
			missing = append(missing, name)
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		s.WriteFlag(w, f)
	}
	return missing
}
