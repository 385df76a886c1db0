package main

import (
	"context"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
	"sweep/internal/cli"
)

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
		Long:  helpText("matrix_full_sweep"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &matrixFullSweepOptions{IO: ios}
			fs := pflag.NewFlagSet("full-sweep", pflag.ContinueOnError)
			lists := cli.NewLists()
			o.Inputs.bind(fs, lists)
			lists.Strings(fs, &o.ModelPrefixes, "model-prefix", "config keys starting with any of these")
			lists.Strings(fs, &o.Precisions, "precision", "precisions to include (e.g. fp4 fp8)")
			lists.Strings(fs, &o.Frameworks, "framework", "frameworks to include (e.g. sglang vllm)")
			lists.Strings(fs, &o.RunnerTypes, "runner-type", "runner labels to include (must exist in runners.yaml)")
			lists.Strings(fs, &o.SeqLens, "seq-lens", "fixed-seq-len shapes to include: 1k1k, 8k1k")
			fs.IntVar(&o.StepSize, "step-size", 2, "concurrency multiplier of conc-start..conc-end ranges (> 1)")
			fs.Var(cli.OptInt{P: &o.MinConc}, "min-conc", "drop concurrencies below this")
			fs.Var(cli.OptInt{P: &o.MaxConc}, "max-conc", "drop concurrencies above this")
			fs.Var(cli.OptInt{P: &o.MaxTP}, "max-tp", "skip fixed-seq-len single-node entries with a larger tp")
			fs.Var(cli.OptInt{P: &o.MaxEP}, "max-ep", "clamp fixed-seq-len single-node ep to this")
			fs.BoolVar(&o.SingleNode, "single-node", false, "single-node configs only (default: both node types)")
			fs.BoolVar(&o.MultiNode, "multi-node", false, "multi-node configs only (default: both node types)")
			lists.Strings(fs, &o.ScenarioTypes, "scenario-type", "keep only these scenarios: fixed-seq-len, agentic-coding (default both)")
			bindEvalFlags(fs, &o.EvalOptions)
			fs.StringVar(&o.RunnerNodeFilter, "runner-node-filter", "", "one row per runner name containing this substring; configs without a match are skipped")
			bindConfigKeyFlag(fs, &o.ConfigKey)
			lists.Finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.ParseRest(fs, args); err != nil {
					return err
				}
				if o.StepSize == 0 {
					// The library reads 0 as its default 2; given here it
					// is refused as 1 and below are.
					return flagErrorf("invalid options: --step-size must be greater than 1, got 0")
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
	return rows.WriteJSON(o.IO.Out, o.ConfigKey)
}
