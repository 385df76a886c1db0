package main

import (
	"context"
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
	// Load reads the files; nil means loadMatrixInputs. Tests substitute a
	// caching loader.
	Load func(files []string, runnerConfig string) (*configs.Masters, *configs.Runners, error)
}

// generator loads the inputs and returns a generator over them.
func (in *matrixInputs) generator() (*matrix.Generator, error) {
	load := in.Load
	if load == nil {
		load = loadMatrixInputs
	}
	m, r, err := load(in.ConfigFiles, in.RunnerConfig)
	if err != nil {
		return nil, err
	}
	return &matrix.Generator{Masters: m, Runners: r}, nil
}

// loadMatrixInputs reads and checks master configs and runners.yaml from
// disk, or the built-in copies for empty names.
func loadMatrixInputs(files []string, runnerConfig string) (*configs.Masters, *configs.Runners, error) {
	srcs, err := configs.ReadSources(files, configs.DefaultMasterFiles)
	if err != nil {
		return nil, nil, err
	}
	m, err := configs.ParseMasters(srcs...)
	if err != nil {
		return nil, nil, err
	}
	var runnerPaths []string
	if runnerConfig != "" {
		runnerPaths = []string{runnerConfig}
	}
	rs, err := configs.ReadSources(runnerPaths, []string{configs.DefaultRunnerFile})
	if err != nil {
		return nil, nil, err
	}
	r, err := configs.ParseRunners(rs[0])
	if err != nil {
		return nil, nil, err
	}
	return m, r, nil
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

// matrixTestConfigOptions are the inputs of "sweep matrix test-config".
type matrixTestConfigOptions struct {
	IO        *IOStreams
	Inputs    matrixInputs
	ConfigKey bool // print each row's "config-key" (not InferenceX's output)
	matrix.TestConfigOptions
}

func newMatrixTestConfigCmd(ios *IOStreams, runF func(context.Context, *matrixTestConfigOptions) error) *Command {
	if runF == nil {
		runF = matrixTestConfigRun
	}
	return &Command{
		Name:  "test-config",
		Short: "Print every point of the named config keys",
		Long: `Print the matrix rows of the named master config keys as a JSON array:
every search-space entry, every concurrency (conc-list as written,
conc-start..conc-end doubling with the last step clamped to conc-end).

Config keys may be fnmatch patterns (*, ?, [seq]); each must match. List
flags take several values after one flag, as InferenceX's generator does
(--config-keys a b c), or repeated flags, or comma-separated values.

Without --no-evals the default eval policy marks rows run-eval (8k1k
points at the highest and median concurrency >= 16; the highest
concurrency of multi-node topologies). --evals-only prints only those rows;
--all-evals selects every 8k1k and agentic point.

Examples:
  sweep matrix test-config --config-keys qwen3.5-fp8-mi325x-sglang-agentic-mtp --no-evals
  sweep matrix test-config --config-keys 'dsr1-fp4-*' --seq-lens 8k1k --conc 16 32
  sweep matrix test-config --config-keys dsv4-fp4-mi355x-vllm-agentic-mtp --runner-node-filter amds_0`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &matrixTestConfigOptions{IO: ios}
			fs := pflag.NewFlagSet("test-config", pflag.ContinueOnError)
			lists := newArgparseLists()
			lists.strings(fs, &o.ConfigKeys, "config-keys", "config keys or fnmatch patterns to expand (required)")
			o.Inputs.bind(fs, lists)
			lists.ints(fs, &o.Conc, "conc", "keep only these concurrencies")
			lists.strings(fs, &o.SeqLens, "seq-lens", "keep only these fixed-seq-len shapes: 1k1k, 8k1k")
			lists.strings(fs, &o.ScenarioTypes, "scenario-type", "keep only these scenarios: fixed-seq-len, agentic-coding (default both)")
			bindEvalFlags(fs, &o.EvalOptions)
			fs.StringVar(&o.RunnerNodeFilter, "runner-node-filter", "", "one row per runner name containing this substring (the label too, if it matches)")
			bindConfigKeyFlag(fs, &o.ConfigKey)
			lists.finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.parseRest(fs, args); err != nil {
					return err
				}
				if len(o.ConfigKeys) == 0 {
					return flagErrorf("--config-keys is required")
				}
				return runF(ctx, o)
			}
		},
	}
}

// matrixTestConfigRun prints the test-config matrix to o.IO.Out.
func matrixTestConfigRun(ctx context.Context, o *matrixTestConfigOptions) error {
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	rows, err := g.TestConfig(o.TestConfigOptions)
	if err != nil {
		return matrixError(err)
	}
	return printMatrix(o.IO, rows, o.ConfigKey)
}

// matrixFullSweepOptions are the inputs of "sweep matrix full-sweep".
type matrixFullSweepOptions struct {
	IO        *IOStreams
	Inputs    matrixInputs
	ConfigKey bool // print each row's "config-key" (not InferenceX's output)
	matrix.FullSweepOptions
}

func newMatrixFullSweepCmd(ios *IOStreams, runF func(context.Context, *matrixFullSweepOptions) error) *Command {
	if runF == nil {
		runF = matrixFullSweepRun
	}
	return &Command{
		Name:  "full-sweep",
		Short: "Print the points of every config, filtered",
		Long: `Print the matrix rows of every master config that passes the filters, as a
JSON array. Filters of the same flag are alternatives; different flags must
all match. --model-prefix matches the start of the config key.

Concurrency ranges step by --step-size (default 2). --min-conc/--max-conc
trim each entry's concurrencies; an entry whose list falls entirely above
--max-conc runs at --max-conc instead. --max-tp skips and --max-ep clamps
fixed-seq-len single-node entries.

Examples:
  sweep matrix full-sweep --model-prefix qwen3.5 --no-evals
  sweep matrix full-sweep --framework sglang --runner-type mi355x --seq-lens 8k1k
  sweep matrix full-sweep --model-prefix glm5.2 --step-size 4 --max-conc 64 --single-node`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &matrixFullSweepOptions{IO: ios}
			fs := pflag.NewFlagSet("full-sweep", pflag.ContinueOnError)
			lists := newArgparseLists()
			o.Inputs.bind(fs, lists)
			lists.strings(fs, &o.ModelPrefixes, "model-prefix", "config keys starting with any of these")
			lists.strings(fs, &o.Precisions, "precision", "precisions to include (e.g. fp4 fp8)")
			lists.strings(fs, &o.Frameworks, "framework", "frameworks to include (e.g. sglang vllm)")
			lists.strings(fs, &o.RunnerTypes, "runner-type", "runner labels to include (must exist in runners.yaml)")
			lists.strings(fs, &o.SeqLens, "seq-lens", "fixed-seq-len shapes to include: 1k1k, 8k1k")
			fs.IntVar(&o.StepSize, "step-size", 2, "concurrency multiplier of conc-start..conc-end ranges (> 1)")
			fs.Var(optInt{&o.MinConc}, "min-conc", "drop concurrencies below this")
			fs.Var(optInt{&o.MaxConc}, "max-conc", "drop concurrencies above this")
			fs.Var(optInt{&o.MaxTP}, "max-tp", "skip fixed-seq-len single-node entries with a larger tp")
			fs.Var(optInt{&o.MaxEP}, "max-ep", "clamp fixed-seq-len single-node ep to this")
			fs.BoolVar(&o.SingleNode, "single-node", false, "single-node configs only (default: both node types)")
			fs.BoolVar(&o.MultiNode, "multi-node", false, "multi-node configs only (default: both node types)")
			lists.strings(fs, &o.ScenarioTypes, "scenario-type", "keep only these scenarios: fixed-seq-len, agentic-coding (default both)")
			bindEvalFlags(fs, &o.EvalOptions)
			fs.StringVar(&o.RunnerNodeFilter, "runner-node-filter", "", "one row per runner name containing this substring; configs without a match are skipped")
			bindConfigKeyFlag(fs, &o.ConfigKey)
			lists.finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.parseRest(fs, args); err != nil {
					return err
				}
				return runF(ctx, o)
			}
		},
	}
}

// matrixFullSweepRun prints the full-sweep matrix to o.IO.Out.
func matrixFullSweepRun(ctx context.Context, o *matrixFullSweepOptions) error {
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	rows, err := g.FullSweep(o.FullSweepOptions)
	if err != nil {
		return matrixError(err)
	}
	return printMatrix(o.IO, rows, o.ConfigKey)
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

// optInt is an int flag whose absence is kept: nil until set.
type optInt struct{ p **int }

func (o optInt) String() string {
	if *o.p == nil {
		return ""
	}
	return strconv.Itoa(**o.p)
}

func (o optInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	*o.p = &v
	return nil
}

func (o optInt) Type() string { return "int" }

// isInvalidOptions reports whether err is a bad generator option.
func isInvalidOptions(err error) bool { return errors.Is(err, matrix.ErrInvalidOptions) }
