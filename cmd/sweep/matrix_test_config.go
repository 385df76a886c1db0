package main

import (
	"context"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
	"sweep/internal/cli"
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
		Long:  helpText("matrix_test_config"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &matrixTestConfigOptions{IO: ios}
			fs := pflag.NewFlagSet("test-config", pflag.ContinueOnError)
			lists := cli.NewLists()
			lists.Strings(fs, &o.ConfigKeys, "config-keys", "config keys or fnmatch patterns to expand (required)")
			o.Inputs.bind(fs, lists)
			lists.Ints(fs, &o.Conc, "conc", "keep only these concurrencies")
			lists.Strings(fs, &o.SeqLens, "seq-lens", "keep only these fixed-seq-len shapes: 1k1k, 8k1k")
			lists.Strings(fs, &o.ScenarioTypes, "scenario-type", "keep only these scenarios: fixed-seq-len, agentic-coding (default both)")
			bindEvalFlags(fs, &o.EvalOptions)
			fs.StringVar(&o.RunnerNodeFilter, "runner-node-filter", "", "one row per runner name containing this substring (the label too, if it matches)")
			bindConfigKeyFlag(fs, &o.ConfigKey)
			lists.Finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.ParseRest(fs, args); err != nil {
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
	return rows.WriteJSON(o.IO.Out, o.ConfigKey)
}
