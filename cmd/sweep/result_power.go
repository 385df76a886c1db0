package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"sweep/metrics/power"
)

// resultPowerOptions are the inputs of "sweep result power": the
// adapter's options, the aggregate named by AggregateName (--agg-result).
type resultPowerOptions struct {
	IO *IOStreams
	power.Options
}

func newResultPowerCmd(ios *IOStreams, runF func(context.Context, *resultPowerOptions) error) *Command {
	if runF == nil {
		runF = resultPowerRun
	}
	return &Command{
		Name:  "power",
		Short: "Add GPU power and energy per token to an aggregate result (InferenceX's power_adapter)",
		Long:  helpText("result_power"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &resultPowerOptions{IO: ios}
			fs := pflag.NewFlagSet("power", pflag.ContinueOnError)
			var expected int
			fs.StringVar(&o.ResultDir, "result-dir", "", "the point's result directory (aiperf_artifacts/, gpu_metrics.csv)")
			fs.StringVar(&o.AggregateName, "agg-result", "", "the aggregate result JSON to patch in place")
			fs.IntVar(&expected, "expected-num-gpus", 0, "GPUs the telemetry must hold (TP*PP*PCP); not checked when not given")
			gpus := fs.String("power-gpus", "all", "GPU ids of the telemetry to integrate: all (InferenceX) or a list such as 0,1,2,3 (ours; the sidecar names it as gpu_filter)")
			fs.BoolVar(&o.RequirePower, "require-power", power.LaneFromEnv(os.LookupEnv, false).Require, "exit 1 when the telemetry is invalid (default from REQUIRE_POWER)")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 0 {
					return flagErrorf("result power: unexpected arguments %q", args)
				}
				if o.ResultDir == "" || o.AggregateName == "" {
					return flagErrorf("result power: --result-dir and --agg-result are required")
				}
				var err error
				if o.GPUs, err = power.ParseGPUFilter(*gpus); err != nil {
					return flagErrorf("result power: --power-gpus: %w", err)
				}
				if fs.Changed("expected-num-gpus") {
					o.ExpectedGPUs = &expected
				}
				return runF(ctx, o)
			}
		},
	}
}

func resultPowerRun(_ context.Context, o *resultPowerOptions) error {
	po := o.Options
	po.Aggregate, po.Stdout, po.Stderr = power.FilePatcher(o.AggregateName), o.IO.Out, o.IO.ErrOut
	out := power.Adapt(po)
	if out.ExitCode != 0 {
		return &exitCodeError{Code: out.ExitCode, Err: errors.New("power telemetry invalid (--require-power): " + strings.Join(out.Explained(), ", "))}
	}
	return nil
}
