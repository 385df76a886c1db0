package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/internal/simproto"
	"sweep/loadgen"
)

type loadgenOptions struct {
	IO        *IOStreams
	Schema    string  // aiperf schema ref the argv is checked against
	TimeScale float64 // 0: from $SWEEP_LOADGEN_TIME_SCALE, else 1
	Clock     string  // "wall" or "virtual"; "": from $SWEEP_LOADGEN_CLOCK, else wall
	// RequireTraces: a named trace set missing from the hub cache is an
	// error, not a replay of the built-in synthetic set.
	RequireTraces bool
	Argv          []string // "profile" and the aiperf flags
}

func newLoadgenCmd(ios *IOStreams, runF func(context.Context, *loadgenOptions) error) *Command {
	if runF == nil {
		runF = loadgenRun
	}
	return &Command{
		Name:  "loadgen",
		Args:  "-- profile AIPERF_FLAGS...",
		Short: "Built-in load generator: run an `aiperf profile` command without aiperf",
		Long:  strings.Replace(helpText("loadgen"), "SUPPORTED_FLAGS", cli.WrapWords(loadgen.SupportedFlags()), 1),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &loadgenOptions{IO: ios}
			fs := pflag.NewFlagSet("loadgen", pflag.ContinueOnError)
			fs.SetInterspersed(false) // everything from "profile" on is aiperf's
			fs.StringVar(&o.Schema, "aiperf-schema", loadgen.DefaultSchema, "aiperf flag schema (tool@version) the argv is checked against")
			fs.StringVar(&o.Clock, "clock", "", "wall: real (or --time-scale compressed) time; virtual: the simulated engine's virtual clock, where every wait and timestamp is simulated time advanced by events, deterministic whatever the machine load (default $"+simproto.EnvLoadgenClock+", else wall)")
			fs.BoolVar(&o.RequireTraces, "require-traces", false, "a trace set --public-dataset or --hf-weka-dataset names that is not in the local Hugging Face cache is an error naming where it looked (exit 1, before any request), not a replay of the built-in synthetic trace set; sweep run sets it against a real engine")
			cli.FloatVar(fs, &o.TimeScale, "time-scale", 0, "divide every wait (duration, grace periods, recorded idle gaps) by this factor, for an engine on a compressed clock (default $"+simproto.EnvLoadgenTimeScale+", else $"+simproto.EnvTimeScale+", else 1); reported times are multiplied back", timeScale)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("loadgen: want an aiperf command after --, e.g. sweep loadgen -- profile --url http://localhost:8000 --model M --concurrency 8 --benchmark-duration 60 --streaming")
				}
				if o.Clock == "" {
					o.Clock = os.Getenv(simproto.EnvLoadgenClock)
				}
				if o.Clock != "" && o.Clock != "wall" && o.Clock != "virtual" {
					return flagErrorf("loadgen: --clock %q (or $%s): want wall or virtual", o.Clock, simproto.EnvLoadgenClock)
				}
				o.Argv = args
				return runF(ctx, o)
			}
		},
	}
}

// loadgenArgError is a rejected command line: exit 1, as aiperf.
func loadgenArgError(err error) error {
	return &exitCodeError{Code: exitError, Err: fmt.Errorf("loadgen: %w", err)}
}

func loadgenRun(ctx context.Context, o *loadgenOptions) error {
	c := loadgen.CommandLine{Argv: o.Argv, Schema: o.Schema, TimeScale: o.TimeScale, VirtualClock: o.Clock == "virtual", RequireTraces: o.RequireTraces}
	opts, err := c.Options(o.IO.ErrOut)
	if err != nil {
		return loadgenArgError(err)
	}
	raiseGCPercent()
	res, err := loadgen.Run(ctx, opts, o.IO.ErrOut)
	if res != nil {
		for _, f := range res.Files {
			fmt.Fprintf(o.IO.Out, "%s/%s\n", strings.TrimRight(res.Dir, "/"), f)
		}
		fmt.Fprintf(o.IO.ErrOut, "loadgen: warm-up %d ok / %d failed, profiling %d ok / %d failed, %d cancelled at the end (not recorded)\n",
			res.Warmup.OK, res.Warmup.Failed, res.Profiling.OK, res.Profiling.Failed, res.Warmup.Cancelled+res.Profiling.Cancelled)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return err // main maps it to exit 130
		}
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("loadgen: %w", err)}
	}
	return nil
}
