package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sweep/internal/simproto"
	"sweep/loadgen"
)

type loadgenOptions struct {
	IO        *IOStreams
	Schema    string   // aiperf schema ref the argv is checked against
	TimeScale float64  // 0: from $SWEEP_LOADGEN_TIME_SCALE, else 1
	Clock     string   // "wall" or "virtual"; "": from $SWEEP_LOADGEN_CLOCK, else wall
	Argv      []string // "profile" and the aiperf flags
}

func newLoadgenCmd(ios *IOStreams, runF func(context.Context, *loadgenOptions) error) *Command {
	if runF == nil {
		runF = loadgenRun
	}
	return &Command{
		Name:  "loadgen",
		Args:  "-- profile AIPERF_FLAGS...",
		Short: "Built-in load generator: run an `aiperf profile` command without aiperf",
		Long: `Runs an aiperf profile command line with sweep's built-in load generator, so a
point runner can swap only the program: "aiperf profile ARGS" becomes
"sweep loadgen -- profile ARGS". It replays multi-turn agentic coding sessions
(WEKA cc-traces format) at --concurrency lanes for --benchmark-duration, with
per-lane warm-up, SSE streaming and per-request TTFT/ITL, scrapes the
Prometheus endpoints, and writes aiperf 0.12's profile_export.jsonl,
profile_export_aiperf.json and server_metrics_export.json into
--output-artifact-dir. Progress goes to stderr; the files written to stdout.

The argv is checked with the aiperf flag schema first (the same messages as
the real parser), then every flag must be one the load generator implements:
` + wrapFlags(loadgen.SupportedFlags()) + `

Traces: --input-file (JSONL, JSON or a directory); else the --public-dataset
repo from the local Hugging Face cache (never downloaded); else the built-in
synthetic trace set (a warning says so).

Exit codes follow aiperf: 0 on success; 1 for a bad command line, when every
request failed (server unreachable), when a warm-up request failed, or when
the live --failed-request-threshold cancelled the run; 130 when interrupted.`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &loadgenOptions{IO: ios}
			fs := pflag.NewFlagSet("loadgen", pflag.ContinueOnError)
			fs.SetInterspersed(false) // everything from "profile" on is aiperf's
			fs.StringVar(&o.Schema, "aiperf-schema", loadgen.DefaultSchema, "aiperf flag schema (tool@version) the argv is checked against")
			fs.StringVar(&o.Clock, "clock", "", "wall: real (or --time-scale compressed) time; virtual: the simulated engine's virtual clock, where every wait and timestamp is simulated time advanced by events, deterministic whatever the machine load (default $"+simproto.EnvLoadgenClock+", else wall)")
			fs.Float64Var(&o.TimeScale, "time-scale", 0, "divide every wait (duration, grace periods, recorded idle gaps) by this factor, for an engine on a compressed clock (default $"+simproto.EnvLoadgenTimeScale+", else $"+simproto.EnvTimeScale+", else 1); reported times are multiplied back")
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
				if fs.Changed("time-scale") && o.TimeScale <= 0 {
					return flagErrorf("loadgen: --time-scale %g: want a positive number", o.TimeScale)
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
	flags, warnings, err := loadgen.ParseCommand(o.Argv, o.Schema)
	if err != nil {
		return loadgenArgError(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(o.IO.ErrOut, "loadgen: %s\n", w) // the schema's text starts with "warning:"
	}
	opts, err := loadgen.OptionsFromFlags(flags)
	if err != nil {
		return loadgenArgError(err)
	}
	raiseGCPercent()
	opts.TimeScale = o.TimeScale
	if opts.TimeScale == 0 {
		opts.TimeScale = 1
		for _, env := range []string{simproto.EnvLoadgenTimeScale, simproto.EnvTimeScale} {
			v := os.Getenv(env)
			if v == "" {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 {
				return loadgenArgError(fmt.Errorf("$%s=%q: want a positive number", env, v))
			}
			opts.TimeScale = f
			break
		}
	}
	if v := os.Getenv(simproto.EnvLoadgenClockOrigin); v != "" {
		ns, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ns <= 0 {
			return loadgenArgError(fmt.Errorf("$%s=%q: want Unix nanoseconds", simproto.EnvLoadgenClockOrigin, v))
		}
		opts.ClockOrigin = time.Unix(0, ns)
	}
	opts.VirtualClock = o.Clock == "virtual"
	opts.CLICommand = "sweep loadgen -- " + strings.Join(o.Argv, " ")
	res, err := loadgen.Run(ctx, opts, o.IO.ErrOut)
	if res != nil {
		for _, f := range res.Files {
			fmt.Fprintf(o.IO.Out, "%s/%s\n", strings.TrimRight(res.Dir, "/"), f)
		}
		fmt.Fprintf(o.IO.ErrOut, "loadgen: warm-up %d ok / %d failed, profiling %d ok / %d failed\n",
			res.Warmup.OK, res.Warmup.Failed, res.Profiling.OK, res.Profiling.Failed)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return err // main maps it to exit 130
		}
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("loadgen: %w", err)}
	}
	return nil
}
