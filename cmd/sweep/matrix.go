package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/configs/matrix"
)

// matrixInputs names the config files a matrix command reads; empty names
// mean the configs built into sweep.
type matrixInputs struct {
	ConfigFiles  []string // master configs, in order
	RunnerConfig string   // runners.yaml
	// Load reads the files; nil means configs.Load. Tests substitute a
	// caching loader.
	Load func(files []string, runnerConfig string) (*configs.Masters, *configs.Runners, error)
}

// generator loads the inputs and returns a generator over them.
func (in *matrixInputs) generator() (*matrix.Generator, error) {
	load := in.Load
	if load == nil {
		load = configs.Load
	}
	m, r, err := load(in.ConfigFiles, in.RunnerConfig)
	if err != nil {
		return nil, err
	}
	return &matrix.Generator{Masters: m, Runners: r}, nil
}

func (in *matrixInputs) bind(fs *pflag.FlagSet, lists *argparseLists) {
	lists.strings(fs, &in.ConfigFiles, "config-files", "master config files, in order (default: the built-in amd and nvidia masters)")
	fs.StringVar(&in.RunnerConfig, "runner-config", "", "runners.yaml (default: the built-in one)")
}

// bindEvalFlags binds the flags shared by both generator commands.
func bindEvalFlags(fs *pflag.FlagSet, o *matrix.EvalOptions) {
	fs.BoolVar(&o.NoEvals, "no-evals", false, "throughput rows only; skip eval selection")
	fs.BoolVar(&o.EvalsOnly, "evals-only", false, "only the rows selected for evals, marked eval-only")
	fs.BoolVar(&o.AllEvals, "all-evals", false, "select every 8k1k and agentic point for evals (prints only eval rows)")
}

// newMatrixCmd groups the matrix generator commands.
func newMatrixCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "matrix",
		Batch: true,
		Short: "Generate the benchmark matrix from master configs, as InferenceX's generator does",
		Long: `Expand master config entries into matrix rows: one JSON object per benchmark
point, exactly what InferenceX's utils/matrix_logic/generate_sweep_configs.py
prints for the same arguments (same rows, order, keys and values).`,
		Sub: []*Command{
			newMatrixTestConfigCmd(ios, nil),
			newMatrixFullSweepCmd(ios, nil),
		},
	}
}

// matrixError turns invalid generator options into usage errors.
func matrixError(err error) error {
	if isInvalidOptions(err) {
		return &FlagError{Err: err}
	}
	return err
}

// bindConfigKeyFlag binds --with-config-key of the generator commands.
func bindConfigKeyFlag(fs *pflag.FlagSet, on *bool) {
	fs.BoolVar(on, "with-config-key", false, `add each row's master config key as "config-key" (no longer InferenceX's exact output)`)
}

// printMatrix writes the rows as InferenceX's generator prints them, with
// each row's config key when withKey is set.
func printMatrix(ios *IOStreams, rows matrix.Matrix, withKey bool) error {
	var opts []matrix.JSONOption
	if withKey {
		opts = append(opts, matrix.WithConfigKey())
	}
	b := rows.AppendJSON(make([]byte, 0, 600*len(rows)+2), opts...)
	b = append(b, '\n')
	_, err := ios.Out.Write(b)
	return err
}

// argparseLists lets list flags take several values after one flag, like
// argparse's nargs="+" in InferenceX's tools: "--config-keys a b c" is
// "--config-keys a --config-keys b --config-keys c". The flag set must
// stop at the first positional word (finish sets that up); parseRest then
// gives the words that follow a list flag to that flag and parses the
// flags after them.
type argparseLists struct {
	last  string // name of the flag parsed most recently
	lists map[string]pflag.Value
}

func newArgparseLists() *argparseLists {
	return &argparseLists{lists: map[string]pflag.Value{}}
}

func (l *argparseLists) strings(fs *pflag.FlagSet, p *[]string, name, usage string) {
	v := stringList{p}
	fs.Var(v, name, usage)
	l.lists[name] = v
}

func (l *argparseLists) ints(fs *pflag.FlagSet, p *[]int, name, usage string) {
	v := intList{p}
	fs.Var(v, name, usage)
	l.lists[name] = v
}

// stringList is a list flag: each value (comma-separated values count
// separately) is appended.
type stringList struct{ p *[]string }

func (v stringList) String() string { return strings.Join(*v.p, ",") }
func (v stringList) Type() string   { return "strings" }

func (v stringList) Set(s string) error {
	for x := range strings.SplitSeq(s, ",") {
		if x == "" {
			return fmt.Errorf("empty value in %q", s)
		}
		*v.p = append(*v.p, x)
	}
	return nil
}

// intList is an integer list flag.
type intList struct{ p *[]int }

func (v intList) Type() string { return "ints" }

func (v intList) String() string {
	parts := make([]string, len(*v.p))
	for i, x := range *v.p {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

func (v intList) Set(s string) error {
	for x := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return fmt.Errorf("%q is not an integer", x)
		}
		*v.p = append(*v.p, n)
	}
	return nil
}

// finish wraps every flag so the most recently parsed one is known, and
// stops parsing at the first positional word.
func (l *argparseLists) finish(fs *pflag.FlagSet) {
	fs.SetInterspersed(false)
	fs.VisitAll(func(f *pflag.Flag) {
		f.Value = &lastSetRecorder{Value: f.Value, name: f.Name, l: l}
	})
}

// lastSetRecorder is a flag value that records that its flag was set.
type lastSetRecorder struct {
	pflag.Value
	name string
	l    *argparseLists
}

func (r *lastSetRecorder) Set(s string) error {
	r.l.last = r.name
	return r.Value.Set(s)
}

// parseRest consumes the words left after parsing stopped.
func (l *argparseLists) parseRest(fs *pflag.FlagSet, args []string) error {
	for len(args) > 0 {
		list, ok := l.lists[l.last]
		for len(args) > 0 && !isFlagWord(args[0]) {
			if !ok {
				if l.last == "" {
					return flagErrorf("unexpected argument %q", args[0])
				}
				return flagErrorf("unexpected argument %q after --%s, which takes one value", args[0], l.last)
			}
			if err := list.Set(args[0]); err != nil {
				return flagErrorf("invalid argument %q for --%s: %v", args[0], l.last, err)
			}
			args = args[1:]
		}
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			return flagErrorf("unexpected arguments after --: %q", args[1:])
		}
		if err := fs.Parse(args); err != nil {
			return flagParseError(fs, "sweep "+fs.Name(), err)
		}
		args = fs.Args()
	}
	return nil
}

// isFlagWord reports whether a command-line word is a flag rather than a
// value; negative numbers are values.
func isFlagWord(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	if s == "--" {
		return true
	}
	if c := s[1]; c >= '0' && c <= '9' {
		return false
	}
	return true
}

// isInvalidOptions reports whether err is a bad generator option.
func isInvalidOptions(err error) bool { return errors.Is(err, matrix.ErrInvalidOptions) }
