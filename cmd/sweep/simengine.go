package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/internal/cli"
	"sweep/simengine"
)

// simEngineOptions are the inputs of "sweep sim-engine".
type simEngineOptions struct {
	IO *IOStreams
	simengine.CommandLine
}

func newSimEngineCmd(ios *IOStreams, runF func(context.Context, *simEngineOptions) error) *Command {
	if runF == nil {
		runF = simEngineRun
	}
	return &Command{
		Name:  "sim-engine",
		Args:  "-- ENGINE_COMMAND...",
		Short: "Serve a simulated SGLang/vLLM engine from a real engine command line (internal: run --simulate)",
		Long:  strings.Replace(helpText("simengine"), "HONOURED_FLAGS", honouredFlags(), 1),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &simEngineOptions{IO: ios}
			fs := pflag.NewFlagSet("sim-engine", pflag.ContinueOnError)
			fs.StringVar(&o.Engine, "engine", "", "engine of an argv given without its program (sglang|vllm)")
			fs.StringVar(&o.Schema, "schema", "", "flag schema that checks the engine argv, TOOL@VERSION (default: the engine's default schema, see sweep schema list)")
			fs.StringArrayVar(&o.Unchecked, "unchecked", nil, "FLAG:N, a flag the plan passes without a schema check and its number of values (repeatable; sweep run --simulate passes the plan's engine escapes)")
			fs.BoolVar(&o.Lenient, "lenient", false, "for an engine newer than its schema: unknown flags, stray tokens and bad values of flags the simulator does not read are warnings, not errors")
			fs.StringVar(&o.TimeScale, "time-scale", "", "simulated seconds per wall-clock second (env SWEEP_SIM_TIME_SCALE; default 1)")
			fs.StringVar(&o.GPU, "gpu", "", "GPU model: mi300x, mi325x, mi355x, h100, h200, b200, b300, gb200 (env SWEEP_SIM_GPU; default mi300x)")
			fs.StringVar(&o.Seed, "seed", "", "seed of the noise and output lengths (env SWEEP_SIM_SEED; default 0)")
			fs.StringVar(&o.Fault, "fault", "", "faults to inject, comma-separated (env SWEEP_SIM_FAULT)")
			fs.StringVar(&o.LoadTime, "load-time", "", "simulated model loading time before the port opens (env SWEEP_SIM_LOAD_TIME; default 90s)")
			fs.StringVar(&o.WarmupTime, "warmup-time", "", "simulated warm-up time before /health is 200, SGLang (env SWEEP_SIM_WARMUP_TIME; default 10s)")
			return fs, func(ctx context.Context, args []string) error {
				if fs.ArgsLenAtDash() < 0 && len(args) > 0 {
					return flagErrorf("sim-engine: put the engine command after --, e.g. sweep sim-engine -- vllm serve MODEL")
				}
				if len(args) == 0 {
					return flagErrorf("sim-engine: missing engine command after --")
				}
				o.Argv = args
				o.Env = environMap(os.Environ())
				return runF(ctx, o)
			}
		},
	}
}

func environMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func simEngineRun(ctx context.Context, o *simEngineOptions) error {
	cfg, err := o.Config(o.IO.ErrOut)
	if err != nil {
		return err
	}
	if _, ok := cfg.HasFault(simengine.FaultIgnoreSIGTERM); ok {
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(o.IO.ErrOut, "sim-engine: fault ignore-sigterm: SIGTERM is ignored, only SIGKILL or SIGINT stop this process")
	}
	srv, err := simengine.New(cfg, simengine.Options{Log: o.IO.ErrOut, ShutdownGrace: 10 * time.Second})
	if err != nil {
		return err
	}
	raiseGCPercent()
	err = srv.Run(ctx)
	if ce, ok := errors.AsType[*simengine.CrashError](err); ok {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("sim-engine: %w", ce)}
	}
	if err != nil {
		return fmt.Errorf("sim-engine: %w", err)
	}
	// A graceful stop on SIGTERM/SIGINT is a clean exit for an engine.
	fmt.Fprintf(o.IO.ErrOut, "sim-engine: stopped (%s)\n", strconv.Quote(srv.Phase().String()))
	return nil
}

// honouredFlags lists, for each engine sweep runs, the flags the simulator
// reads.
func honouredFlags() string {
	var b strings.Builder
	for _, e := range configs.Runnable() {
		fmt.Fprintf(&b, "Honoured %s flags:\n%s\n", e.Facts().Display, cli.WrapWords(simengine.HonouredFlags(e)))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
