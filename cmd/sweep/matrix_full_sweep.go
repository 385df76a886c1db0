package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
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
