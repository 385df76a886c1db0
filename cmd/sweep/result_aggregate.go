package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"sweep/internal/atomicfile"
	"sweep/metrics"
	"sweep/metrics/result"
	"sweep/sweep/run"
)

type resultAggregateOptions struct {
	IO        *IOStreams
	ResultDir string
	EnvFile   string  // JSON object of InferenceX variables; "" = process environment
	Out       string  // file to write; "" = stdout (unless OutDir)
	OutDir    string  // write OutDir/$RESULT_FILENAME.json
	GoldenAL  float64 // 0 = none
	ALTol     float64
	HasGolden bool
	HasALTol  bool // --al-tolerance given (else run.json's, else the default)
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
			fs.Float64Var(&o.GoldenAL, "golden-al", 0, "the recipe's golden acceptance length; adds the AL verdict")
			fs.Float64Var(&o.ALTol, "al-tolerance", metrics.DefaultALTolerance, "absolute tolerance of the AL check")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return flagErrorf("result aggregate: want exactly one RESULT_DIR, got %d arguments", len(args))
				}
				if o.Out != "" && o.OutDir != "" {
					return flagErrorf("result aggregate: --out and --out-dir are exclusive")
				}
				o.HasGolden = fs.Changed("golden-al")
				o.HasALTol = fs.Changed("al-tolerance")
				if o.HasGolden && o.GoldenAL <= 0 {
					return flagErrorf("result aggregate: --golden-al %g: want a positive number", o.GoldenAL)
				}
				if o.ALTol <= 0 {
					return flagErrorf("result aggregate: --al-tolerance %g: want a positive number", o.ALTol)
				}
				o.ResultDir = args[0]
				return runF(ctx, o)
			}
		},
	}
}

func resultAggregateRun(_ context.Context, o *resultAggregateOptions) error {
	abs, err := filepath.Abs(o.ResultDir)
	if err != nil {
		return err
	}
	ao := run.AggregateOptions{EnvFile: o.EnvFile, OutDir: o.OutDir, ALTolerance: o.ALTol, ALToleranceGiven: o.HasALTol,
		Log: o.IO.ErrOut, Name: o.ResultDir}
	if ao.OutDir == "" && o.Out != "" {
		ao.OutDir = filepath.Dir(o.Out)
	}
	if o.HasGolden {
		ao.GoldenAL = &o.GoldenAL
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
	data, err := result.MarshalResult(res)
	if err != nil {
		return err
	}
	out := o.Out
	if o.OutDir != "" {
		if err := result.CheckResultFilename(agg.Facts.ResultFilename); err != nil {
			return fmt.Errorf("--out-dir: %w", err)
		}
		out = result.Path(o.OutDir, agg.Facts.ResultFilename)
	}
	if out == "" {
		_, err = o.IO.Out.Write(data)
		result.WriteSummary(o.IO.ErrOut, res)
		return errors.Join(err, powerErr)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(out, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "Saved aggregated agentic result to %s\n", out)
	result.WriteSummary(o.IO.ErrOut, res)
	return powerErr
}
