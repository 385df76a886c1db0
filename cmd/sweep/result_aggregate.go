package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"sweep/internal/atomicfile"
	"sweep/internal/cli"
	"sweep/metrics"
	"sweep/metrics/result"
	"sweep/sweep/run"
)

// resultAggregateOptions are the inputs of "sweep result aggregate": the
// aggregation's options (EnvFile "": the process environment; OutDir:
// write OutDir/$RESULT_FILENAME.json) and Out, the file to write ("":
// stdout, unless OutDir).
type resultAggregateOptions struct {
	IO        *IOStreams
	ResultDir string
	Out       string
	run.AggregateOptions
}

func newResultAggregateCmd(ios *IOStreams, runF func(context.Context, *resultAggregateOptions) error) *Command {
	if runF == nil {
		runF = resultAggregateRun
	}
	return &Command{
		Name:  "aggregate",
		Args:  "RESULT_DIR",
		Short: "Write the aggregate result JSON of RESULT_DIR (InferenceX's schema and maths)",
		Long:  helpText("result_aggregate"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &resultAggregateOptions{IO: ios}
			fs := pflag.NewFlagSet("aggregate", pflag.ContinueOnError)
			fs.StringVar(&o.EnvFile, "env-file", "", "JSON object of InferenceX variables (default: the process environment)")
			fs.StringVar(&o.Out, "out", "", "write the JSON to this file (atomically) instead of stdout")
			fs.StringVar(&o.OutDir, "out-dir", "", "write the JSON to DIR/$RESULT_FILENAME.json, where InferenceX puts it")
			golden := new(float64)
			cli.FloatVar(fs, golden, "golden-al", 0, "the recipe's golden acceptance length; adds the AL verdict", goldenAL)
			cli.FloatVar(fs, &o.ALTolerance, "al-tolerance", metrics.DefaultALTolerance, "absolute tolerance of the AL check", alTolerance)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return flagErrorf("result aggregate: want exactly one RESULT_DIR, got %d arguments", len(args))
				}
				if o.Out != "" && o.OutDir != "" {
					return flagErrorf("result aggregate: --out and --out-dir are exclusive")
				}
				if fs.Changed("golden-al") {
					o.GoldenAL = golden
				}
				o.ALToleranceGiven = fs.Changed("al-tolerance")
				o.ResultDir = args[0]
				return runF(ctx, o)
			}
		},
	}
}

// resultOut is the kind of file --out and --out-dir may replace: a
// result an aggregation wrote before.
var resultOut = atomicfile.Own{Kind: "result file", Writer: "sweep result aggregate", Example: "result.json", Is: result.IsFile}

func resultAggregateRun(_ context.Context, o *resultAggregateOptions) error {
	abs, err := filepath.Abs(o.ResultDir)
	if err != nil {
		return err
	}
	ao := o.AggregateOptions
	ao.Log, ao.Name = o.IO.ErrOut, o.ResultDir
	if ao.OutDir == "" && o.Out != "" {
		ao.OutDir = filepath.Dir(o.Out)
	}
	// Where the result goes is checked before anything is written: the
	// power lane writes its sidecars into RESULT_DIR.
	out := o.Out
	switch {
	case o.Out != "":
		ao.OutName = o.Out
	case o.OutDir == "":
		ao.OutName = "stdout"
	}
	ao.CheckOut = func(facts result.RunFacts) error {
		if o.OutDir != "" {
			if err := result.CheckResultFilename(facts.ResultFilename); err != nil {
				return fmt.Errorf("--out-dir: %w", err)
			}
			out = result.Path(o.OutDir, facts.ResultFilename)
		}
		if out == "" {
			return nil
		}
		if err := atomicfile.CheckReplace(out, resultOut); err != nil {
			return flagErrorf("%w", err)
		}
		return nil
	}
	agg, err := run.Aggregate(abs, ao)
	if err != nil {
		return err
	}
	var powerErr error
	if agg.PowerErr != nil {
		powerErr = &exitCodeError{Code: agg.PowerExit, Err: agg.PowerErr}
	}
	res := agg.Result
	if out == "" {
		data, err := result.MarshalResult(res)
		if err != nil {
			return err
		}
		_, err = o.IO.Out.Write(data)
		result.WriteSummary(o.IO.ErrOut, res)
		return errors.Join(err, powerErr, agg.InputErr)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := result.WriteResult(out, res); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "Saved aggregated agentic result to %s\n", out)
	result.WriteSummary(o.IO.ErrOut, res)
	return errors.Join(powerErr, agg.InputErr)
}
