package main

import (
	"context"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
)

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
