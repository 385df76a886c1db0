package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"sweep/internal/inputfile"
	"sweep/recipes/schema"
)

// newSchemaCmd groups the flag-schema commands: list, validate, check.
func newSchemaCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "schema",
		Short: "List, validate against and check the versioned flag schemas of aiperf, SGLang and vLLM",
		Long: `Every command sweep runs (aiperf profile, the SGLang server, vllm serve) is built
from the flag schema of the exact tool version it targets. These commands show
the schemas, check a command line against one, and compare a schema with the
installed tool's --help to catch version drift before a sweep starts.

A schema is named TOOL or TOOL@VERSION (for example aiperf, aiperf@0.12.0,
aiperf@sa-754356e9, sglang@v0.5.16, vllm@v0.27.1); TOOL alone means the
tool's default version.`,
		Sub: []*Command{
			newSchemaListCmd(ios, nil),
			newSchemaValidateCmd(ios, nil),
			newSchemaCheckCmd(ios, nil),
			newSchemaShowCmd(ios, nil),
		},
	}
}

// schemaListOptions are the inputs of "sweep schema list".
type schemaListOptions struct {
	IO   *IOStreams
	JSON bool
}

func newSchemaListCmd(ios *IOStreams, runF func(context.Context, *schemaListOptions) error) *Command {
	if runF == nil {
		runF = schemaListRun
	}
	return &Command{
		Name:  "list",
		Short: "List the embedded schemas: tool, version, flag counts, rules and scenarios",
		Long: `List every flag schema compiled into sweep.

Columns: TOOL, VERSION, DEFAULT (picked when no version is given), FLAGS
(options), SPELLINGS (names, aliases and negative forms accepted), RULES
(cross-flag rules), SCENARIOS, and COVERAGE: "complete" when every option of
the tool is listed, "partial" when the schema covers the flags sweep uses.`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &schemaListOptions{IO: ios}
			fs := pflag.NewFlagSet("schema list", pflag.ContinueOnError)
			fs.BoolVar(&o.JSON, "json", false, "print a JSON array instead of a table")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return flagErrorf("schema list takes no arguments, got %q", args)
				}
				return runF(ctx, o)
			}
		},
	}
}

type schemaListRow struct {
	Tool      string   `json:"tool"`
	Version   string   `json:"version"`
	Default   bool     `json:"default"`
	Complete  bool     `json:"complete"`
	Flags     int      `json:"flags"`
	Spellings int      `json:"spellings"`
	Rules     int      `json:"rules"`
	Scenarios []string `json:"scenarios"`
}

func schemaListRun(_ context.Context, o *schemaListOptions) error {
	cat, err := schema.Embedded()
	if err != nil {
		return err
	}
	var rows []schemaListRow
	for _, s := range cat.All() {
		r := schemaListRow{Tool: s.Tool, Version: s.Version, Default: s.Default, Complete: s.Complete, Flags: len(s.Flags), Rules: len(s.Rules), Scenarios: []string{}}
		for _, f := range s.Flags {
			r.Spellings += len(f.Spellings())
		}
		for _, sc := range s.Scenarios {
			r.Scenarios = append(r.Scenarios, sc.Name)
		}
		rows = append(rows, r)
	}
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
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

// schemaValidateOptions are the inputs of "sweep schema validate".
type schemaValidateOptions struct {
	IO     *IOStreams
	Schema string   // TOOL or TOOL@VERSION
	Args   []string // the command line after the program name
	JSON   bool
}

func newSchemaValidateCmd(ios *IOStreams, runF func(context.Context, *schemaValidateOptions) error) *Command {
	if runF == nil {
		runF = schemaValidateRun
	}
	return &Command{
		Name:  "validate",
		Args:  "TOOL[@VERSION] [--] COMMAND...",
		Short: "Check a command line against a tool's schema; print it normalised or list every problem",
		Long: `Check ARGS, the command line that follows the program name, against the schema
of TOOL[@VERSION]. For aiperf ARGS start with "profile", for vLLM with "serve";
for SGLang they are what follows "python3 -m sglang.launch_server". A leading
program name (aiperf, /venv/bin/aiperf, vllm, python3 -m sglang.launch_server)
is dropped, so a recorded command can be pasted whole.

Checked: unknown flags (with the closest known spelling), removed flags, value
types, choices (after the tool's own normalisation), numeric bounds, repeated
flags, missing values, stray tokens, the tool's cross-flag rules and, for
aiperf --scenario, the scenario's locked settings. For aiperf the verdict is
the one aiperf 0.12.0's own parser and config resolution give, except that
--input-file is not required to exist (aiperf checks that on the machine it
runs on) and plugin-provided choices are unknown.

sweep's own flags (--json) go before TOOL; everything after TOOL is checked.

Valid: exit 0, the normalised argv (canonical flag names) on stdout, warnings
on stderr. Invalid: exit 1, one line per problem on stdout.

Examples:
  sweep schema validate aiperf -- profile --model m --concurrency 8 --streaming
  sweep schema validate aiperf@sa-754356e9 -- aiperf profile --scenario inferencex-agentx-mvp ...
  sweep schema validate vllm -- serve Qwen/Qwen3-8B -tp 2 --no-enable-prefix-caching
  sweep schema validate sglang@v0.5.16 -- --model-path m --tp 8 --enable-metrics`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &schemaValidateOptions{IO: ios}
			fs := pflag.NewFlagSet("schema validate", pflag.ContinueOnError)
			fs.BoolVar(&o.JSON, "json", false, "print the normalised argv (or the problems) as JSON")
			// Everything after TOOL belongs to the checked command, flags included.
			fs.SetInterspersed(false)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("schema validate needs TOOL[@VERSION] and the command line after '--'")
				}
				o.Schema, o.Args = args[0], args[1:]
				if len(o.Args) > 0 && o.Args[0] == "--" {
					o.Args = o.Args[1:]
				}
				return runF(ctx, o)
			}
		},
	}
}

type validateProblem struct {
	Kind       string `json:"kind"`
	Severity   string `json:"severity"`
	Flag       string `json:"flag,omitempty"`
	Value      string `json:"value,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
	Rule       string `json:"rule,omitempty"`
	Message    string `json:"message"`
}

func toProblems(errs []*schema.Error) []validateProblem {
	out := []validateProblem{}
	for _, e := range errs {
		flag := e.Spelling
		if flag == "" {
			flag = e.Flag
		}
		out = append(out, validateProblem{Kind: string(e.Kind), Severity: string(e.Severity), Flag: flag, Value: e.Value, Suggestion: e.Suggestion, Rule: e.Rule, Message: e.Error()})
	}
	return out
}

func schemaValidateRun(_ context.Context, o *schemaValidateOptions) error {
	s, err := resolveSchema(o.Schema)
	if err != nil {
		return err
	}
	p, perr := s.Parse(s.TrimProgram(o.Args))
	probs := schema.Problems(perr)
	if o.JSON {
		res := struct {
			Schema   string            `json:"schema"`
			Valid    bool              `json:"valid"`
			Argv     []string          `json:"argv,omitempty"`
			Problems []validateProblem `json:"problems"`
			Warnings []validateProblem `json:"warnings"`
		}{Schema: s.ID(), Valid: perr == nil, Problems: toProblems(probs), Warnings: toProblems(p.Warnings)}
		if perr == nil {
			res.Argv = p.Args()
		}
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		for _, w := range p.Warnings {
			fmt.Fprintln(o.IO.ErrOut, w.Error())
		}
		if perr == nil {
			if p.Help {
				fmt.Fprintf(o.IO.ErrOut, "%s: --help requested; the tool prints its help and exits 0\n", s.ID())
			}
			fmt.Fprintln(o.IO.Out, shellJoin(p.Args()))
			return nil
		}
		for _, e := range probs {
			fmt.Fprintln(o.IO.Out, e.Error())
		}
	}
	if perr != nil {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("%s: %d problem(s) in the command line", s.ID(), len(probs))}
	}
	return nil
}

// shellJoin renders argv for display, quoting the words a POSIX shell would split.
func shellJoin(argv []string) string {
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

// schemaCheckOptions are the inputs of "sweep schema check".
type schemaCheckOptions struct {
	IO       *IOStreams
	Schema   string
	HelpFile string        // a recorded --help output
	Exec     string        // a program to run with --help
	ExecArgs []string      // arguments between the program and the help request
	Timeout  time.Duration // for Exec
	Columns  int           // terminal width given to Exec (COLUMNS)
	Verbose  bool
}

func newSchemaCheckCmd(ios *IOStreams, runF func(context.Context, *schemaCheckOptions) error) *Command {
	if runF == nil {
		runF = schemaCheckRun
	}
	return &Command{
		Name:  "check",
		Args:  "TOOL[@VERSION]",
		Short: "Compare a schema with a tool's --help and list flags added, removed or changed",
		Long: `Compare the schema TOOL[@VERSION] with the --help output of the installed tool,
so a version drift is caught in seconds instead of after hours of cluster time.

The help comes from --help-file FILE (a recorded output) or from --exec PATH,
which runs PATH [ARGS...] plus the tool's subcommand and --help, without a
shell: "aiperf profile --help", "vllm serve --help", or for SGLang
"python3 -m sglang.launch_server --help" given as
--exec python3 -- -m sglang.launch_server. aiperf's cyclopts panels are read
at any terminal width; SGLang and vLLM print argparse help.

Reported: flags the help shows that the schema lacks (for a complete schema;
a partial one only counts them), schema flags the help no longer shows, and
flags whose names, aliases, negative forms, value kind, choices or (aiperf)
shown defaults differ. Choices and defaults compare after folding case and
punctuation, since cyclopts shows a display form (round-robin for
round_robin), and numbers compare by value.

Exit 0 when there is no drift, 1 when there is, 2 on usage errors.

Examples:
  sweep schema check aiperf@0.12.0 --help-file aiperf-profile-help.txt
  sweep schema check aiperf --exec /venv/bin/aiperf
  sweep schema check vllm --exec vllm
  sweep schema check sglang@v0.5.16 --exec python3 -- -m sglang.launch_server`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &schemaCheckOptions{IO: ios}
			fs := pflag.NewFlagSet("schema check", pflag.ContinueOnError)
			fs.StringVar(&o.HelpFile, "help-file", "", "read the help text from `FILE` (\"-\" for stdin)")
			fs.StringVar(&o.Exec, "exec", "", "run `PATH` [ARGS after --] with the tool's subcommand and --help")
			fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "time limit for --exec")
			fs.IntVar(&o.Columns, "columns", 250, "terminal width (COLUMNS) given to --exec; wide output keeps one row per option")
			fs.BoolVarP(&o.Verbose, "verbose", "v", false, "also list help rows a partial schema does not cover")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("schema check needs TOOL[@VERSION]")
				}
				o.Schema = args[0]
				o.ExecArgs = args[1:]
				if (o.HelpFile == "") == (o.Exec == "") {
					return flagErrorf("schema check needs exactly one of --help-file or --exec")
				}
				if o.HelpFile != "" && len(o.ExecArgs) > 0 {
					return flagErrorf("arguments after TOOL are only for --exec, got %q", o.ExecArgs)
				}
				return runF(ctx, o)
			}
		},
	}
}

func schemaCheckRun(ctx context.Context, o *schemaCheckOptions) error {
	s, err := resolveSchema(o.Schema)
	if err != nil {
		return err
	}
	var text []byte
	source := o.HelpFile
	switch {
	case o.HelpFile == "-":
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(io.LimitReader(o.IO.In, inputfile.Text.Bytes+1)); err != nil {
			return fmt.Errorf("read help from stdin: %w", err)
		}
		if int64(buf.Len()) > inputfile.Text.Bytes {
			return fmt.Errorf("read help from stdin: %w", &inputfile.TooLargeError{Path: "stdin", Size: int64(buf.Len()), Limit: inputfile.Text, Read: true})
		}
		text, source = buf.Bytes(), "stdin"
	case o.HelpFile != "":
		if text, err = inputfile.Read(o.HelpFile, inputfile.Text); err != nil {
			return err
		}
	default:
		argv := append(append(append([]string{}, o.ExecArgs...), s.Command...), "--help")
		source = strings.Join(append([]string{o.Exec}, argv...), " ")
		if text, err = runHelp(ctx, o.Exec, argv, o.Timeout, o.Columns); err != nil {
			return err
		}
	}
	rows, err := schema.ParseHelp(s.Family, string(text))
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	d := s.Compare(rows)
	for _, l := range d.Lines() {
		fmt.Fprintln(o.IO.Out, l)
	}
	if d.Uncovered > 0 && o.Verbose {
		for _, h := range rows {
			if _, ok := s.Lookup(h.Names[0]); !ok && !anyKnown(s, h.Names) {
				fmt.Fprintf(o.IO.Out, "not covered: %s (help line %d)\n", strings.Join(h.Names, " "), h.Line)
			}
		}
	}
	summary := fmt.Sprintf("%s vs %s: %d help rows, %d matched", s.ID(), source, len(rows), d.Matched)
	if d.Uncovered > 0 {
		summary += fmt.Sprintf(", %d not covered by this partial schema", d.Uncovered)
	}
	if d.Empty() {
		fmt.Fprintln(o.IO.ErrOut, summary+", no drift")
		return nil
	}
	return &exitCodeError{Code: exitError, Err: fmt.Errorf("%s: drift: %d added, %d removed, %d changed", summary, len(d.Added), len(d.Removed), len(d.Changed))}
}

func anyKnown(s *schema.Schema, names []string) bool {
	for _, n := range names {
		if _, ok := s.Lookup(n); ok {
			return true
		}
	}
	return false
}

// runHelp runs a tool's --help without a shell and returns its standard output.
func runHelp(ctx context.Context, prog string, argv []string, timeout time.Duration, columns int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, argv...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("COLUMNS=%d", columns), "NO_COLOR=1", "TERM=dumb")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s --help: %w", prog, ctx.Err())
		}
		var ee *exec.ExitError
		msg := strings.TrimSpace(stderr.String())
		if errors.As(err, &ee) && msg != "" {
			return nil, fmt.Errorf("%s --help: %w: %s", prog, err, lastLines(msg, 5))
		}
		return nil, fmt.Errorf("%s --help: %w", prog, err)
	}
	return stdout.Bytes(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// schemaShowOptions are the inputs of "sweep schema show".
type schemaShowOptions struct {
	IO     *IOStreams
	Schema string
	Flags  []string // empty: every flag
}

func newSchemaShowCmd(ios *IOStreams, runF func(context.Context, *schemaShowOptions) error) *Command {
	if runF == nil {
		runF = schemaShowRun
	}
	return &Command{
		Name:  "show",
		Args:  "TOOL[@VERSION] [FLAG...]",
		Short: "Show a schema's flags, or everything known about some of them",
		Long: `Without FLAG, list every flag of TOOL[@VERSION]: canonical name, type, default
and the other spellings (aliases, negative forms). With one or more FLAG
(any spelling), show each in full: spellings, type, choices, default, bounds,
list behaviour, deprecation, the cross-flag rules that name it and the
scenario locks on it. An unknown FLAG exits 1 with the closest spelling.

Examples:
  sweep schema show aiperf
  sweep schema show aiperf --concurrency --public-dataset
  sweep schema show vllm@v0.27.1 -tp`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &schemaShowOptions{IO: ios}
			fs := pflag.NewFlagSet("schema show", pflag.ContinueOnError)
			fs.SetInterspersed(false) // FLAG arguments look like flags
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("schema show needs TOOL[@VERSION]")
				}
				o.Schema, o.Flags = args[0], args[1:]
				if len(o.Flags) > 0 && o.Flags[0] == "--" {
					o.Flags = o.Flags[1:]
				}
				return runF(ctx, o)
			}
		},
	}
}

func schemaShowRun(_ context.Context, o *schemaShowOptions) error {
	s, err := resolveSchema(o.Schema)
	if err != nil {
		return err
	}
	if len(o.Flags) == 0 {
		tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FLAG\tTYPE\tDEFAULT\tALSO")
		for _, f := range s.Flags {
			also := strings.Join(f.Spellings()[1:], " ")
			typ := flagTypeText(&f)
			if f.Removed != "" {
				typ += " (removed)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, typ, defaultText(f.Default), also)
		}
		return tw.Flush()
	}
	var missing []string
	for i, name := range o.Flags {
		f, ok := s.Lookup(name)
		if !ok {
			line := fmt.Sprintf("%s has no flag %s", s.ID(), name)
			if sug := s.Suggest(name); sug != "" {
				line += fmt.Sprintf(" (did you mean %s?)", sug)
			}
			fmt.Fprintln(o.IO.Out, line)
			missing = append(missing, name)
			continue
		}
		if i > 0 {
			fmt.Fprintln(o.IO.Out)
		}
		showFlag(o.IO, s, f)
	}
	if len(missing) > 0 {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("%s: unknown flag(s) %s", s.ID(), strings.Join(missing, ", "))}
	}
	return nil
}

func flagTypeText(f *schema.Flag) string {
	switch {
	case f.Type == schema.List:
		item := f.Item
		if item == "" {
			item = schema.String
		}
		return "list[" + string(item) + "]"
	case f.Sweep:
		return string(f.Type) + " or comma sweep"
	}
	return string(f.Type)
}

func defaultText(d any) string {
	if d == nil {
		return "-"
	}
	if b, err := json.Marshal(d); err == nil {
		return strings.Trim(string(b), `"`)
	}
	return fmt.Sprint(d)
}

func showFlag(ios *IOStreams, s *schema.Schema, f *schema.Flag) {
	w := ios.Out
	fmt.Fprintf(w, "%s  (%s)\n", f.Name, s.ID())
	if sp := f.Spellings(); len(sp) > 1 {
		fmt.Fprintf(w, "  spellings: %s\n", strings.Join(sp, ", "))
	}
	fmt.Fprintf(w, "  type:      %s\n", flagTypeText(f))
	if len(f.Choices) > 0 {
		how := "exact match"
		switch {
		case f.OpenChoices:
			how = "examples; any value is accepted"
		case s.Family == schema.Cyclopts && !f.Exact:
			how = "any case, '-' and '_' equal"
		}
		fmt.Fprintf(w, "  choices:   %s (%s)\n", strings.Join(f.Choices, ", "), how)
	}
	fmt.Fprintf(w, "  default:   %s\n", defaultText(f.Default))
	var bounds []string
	for _, b := range []struct {
		op string
		v  *float64
	}{{">", f.Gt}, {">=", f.Ge}, {"<", f.Lt}, {"<=", f.Le}} {
		if b.v != nil {
			bounds = append(bounds, fmt.Sprintf("%s %g", b.op, *b.v))
		}
	}
	if f.MinItems > 0 {
		bounds = append(bounds, fmt.Sprintf("at least %d item(s)", f.MinItems))
	}
	if len(bounds) > 0 {
		fmt.Fprintf(w, "  bounds:    %s\n", strings.Join(bounds, ", "))
	}
	var traits []string
	if f.Repeatable {
		traits = append(traits, "repeat to add items")
	}
	if f.Multi {
		traits = append(traits, "several values per occurrence")
	}
	if f.Comma {
		traits = append(traits, "comma-separated values")
	}
	if f.Sweep {
		traits = append(traits, "a comma list runs a sweep")
	}
	if f.Dotted {
		traits = append(traits, "also --flag.key value")
	}
	if len(traits) > 0 {
		fmt.Fprintf(w, "  values:    %s\n", strings.Join(traits, "; "))
	}
	if f.Group != "" {
		fmt.Fprintf(w, "  group:     %s\n", f.Group)
	}
	if f.Deprecated != "" {
		fmt.Fprintf(w, "  deprecated: %s\n", f.Deprecated)
	}
	if f.Removed != "" {
		fmt.Fprintf(w, "  removed:   %s\n", f.Removed)
	}
	if f.Note != "" {
		fmt.Fprintf(w, "  note:      %s\n", f.Note)
	}
	for _, r := range s.Rules {
		if slices.Contains(r.Flags, f.Name) || slices.Contains(r.Needs, f.Name) {
			fmt.Fprintf(w, "  rule %s (%s): %s\n", r.ID, r.Kind, r.Message)
		}
	}
	for _, sc := range s.Scenarios {
		for _, l := range sc.Locks {
			if l.Flag == f.Name || l.Flag == "" && l.Kind == schema.LockSingle && f.Sweep {
				fmt.Fprintf(w, "  scenario %s (%s): %s\n", sc.Name, l.Kind, l.Message)
			}
		}
	}
}

// resolveSchema finds TOOL[@VERSION] among the embedded schemas; an
// unknown one is a usage error.
func resolveSchema(ref string) (*schema.Schema, error) {
	cat, err := schema.Embedded()
	if err != nil {
		return nil, err
	}
	s, err := cat.Resolve(ref)
	if err != nil {
		return nil, &FlagError{Err: err}
	}
	return s, nil
}
