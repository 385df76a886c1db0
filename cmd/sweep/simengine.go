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
	"sweep/internal/simproto"
	"sweep/recipes/schema"
	"sweep/simengine"
)

// simEngineOptions are the inputs of "sweep sim-engine".
type simEngineOptions struct {
	IO      *IOStreams
	Engine  string // engine for an argv without a program prefix
	Schema  string // TOOL@VERSION of the flag schema; "" = the engine's default
	Lenient bool   // problems with flags the simulator does not read are warnings
	// Unchecked are FLAG:N specs: flags the plan passes without a schema
	// check, each with its number of values.
	Unchecked []string
	Argv      []string          // the real engine command line, after "--"
	Env       map[string]string // the environment the engine would see
	// Overrides of the SWEEP_SIM_* environment, applied when set.
	TimeScale  string
	GPU        string
	Seed       string
	Fault      string
	LoadTime   string
	WarmupTime string
}

func newSimEngineCmd(ios *IOStreams, runF func(context.Context, *simEngineOptions) error) *Command {
	if runF == nil {
		runF = simEngineRun
	}
	return &Command{
		Name:  "sim-engine",
		Args:  "-- ENGINE_COMMAND...",
		Short: "Serve a simulated SGLang/vLLM engine from a real engine command line (internal: run --simulate)",
		Long: `Runs a simulated inference engine in place of SGLang or vLLM. The real engine
command line follows "--" unchanged and is checked with the engine's flag schema
(--schema; see sweep schema list), so it is accepted or rejected as the real
engine's argparse would (exit 2). The flags that shape behaviour are honoured
(port, served model name, TP/EP/DP, dp-attention, max running requests, memory
fraction, page size, chunked prefill, prefix caching, speculative decoding);
the rest are accepted and have no effect. For an engine newer than its schema,
--lenient turns the problems with flags the simulator does not read (unknown
flags, stray tokens, bad values of other flags) into warnings.

` + honouredFlags() + `

The synthetic acceptance length comes from SGLANG_SIMULATE_ACC_LEN or vLLM's
--speculative-config ("rejection_sample_method": "synthetic",
"synthetic_acceptance_length": AL).

It serves the engine's HTTP API: /v1/chat/completions (SSE streaming),
/v1/models, /health, /metrics with the engine's own metric names, and
/flush_cache (SGLang) or /reset_prefix_cache (vLLM). The port stays closed
while the model "loads"; SGLang's /health is 503 until warm-up is done.
It runs until SIGTERM or SIGINT and then shuts down gracefully.

Simulator settings come from these flags or, when a flag is not given, from the
environment: SWEEP_SIM_TIME_SCALE, SWEEP_SIM_GPU, SWEEP_SIM_SEED,
SWEEP_SIM_FAULT, SWEEP_SIM_LOAD_TIME, SWEEP_SIM_WARMUP_TIME (RUNNER_TYPE
also selects the GPU when it names one). Durations are simulated time; every
simulated duration passes --time-scale times faster on the wall clock, and
metrics report simulated seconds.

Faults (for tests): never-ready, crash:N (exit 1 after N finished requests),
hang:N (stop answering after N), slow-metrics:DURATION (wall clock),
malformed-metrics, ignore-sigterm; several separated by commas.

Examples:
  sweep sim-engine --time-scale 60 -- python3 -m sglang.launch_server \
      --model-path Qwen/Qwen3.5-397B-A17B-FP8 --port 8888 --tp 8 --ep-size 8 \
      --speculative-algorithm EAGLE --speculative-num-steps 3 \
      --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --enable-metrics
  SWEEP_SIM_FAULT=crash:20 sweep sim-engine -- vllm serve deepseek-ai/DeepSeek-V4 --port 8000`,
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

// parseUnchecked reads --unchecked FLAG:N specs.
func parseUnchecked(specs []string) ([]schema.Escape, error) {
	out := make([]schema.Escape, 0, len(specs))
	for _, spec := range specs {
		name, n, ok := strings.Cut(spec, ":")
		count, err := strconv.Atoi(n)
		if !ok || err != nil || count < 0 || !strings.HasPrefix(name, "-") {
			return nil, flagErrorf("--unchecked %q: want FLAG:N, e.g. --attention-config:1 (N values after the flag)", spec)
		}
		out = append(out, schema.Escape{Flag: name, Values: make([]string, count), Reason: "unchecked in the plan"})
	}
	return out, nil
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

// simEngineConfig turns the options into a simulator configuration.
func simEngineConfig(o *simEngineOptions) (simengine.Config, error) {
	unchecked, err := parseUnchecked(o.Unchecked)
	if err != nil {
		return simengine.Config{}, err
	}
	cmd, err := simengine.ParseCommand(o.Argv, simengine.ParseOptions{Engine: configs.Engine(o.Engine), Schema: o.Schema, Lenient: o.Lenient, Unchecked: unchecked})
	switch {
	case errors.Is(err, simengine.ErrNoProgram):
		return simengine.Config{}, flagErrorf("sim-engine: the engine command has no program, so --engine is required: %v", errors.Unwrap(err))
	case err != nil && !o.Lenient && len(schema.Problems(err)) > 0:
		// What the real engine's argparse would reject; argparse exits 2 too.
		return simengine.Config{}, flagErrorf("sim-engine: %v\n(--lenient ignores the problems with flags the simulator does not read)", err)
	case err != nil:
		return simengine.Config{}, flagErrorf("sim-engine: %v", err)
	}
	if o.IO != nil {
		for _, w := range cmd.Warnings {
			fmt.Fprintf(o.IO.ErrOut, "sim-engine: %s\n", w)
		}
		for _, e := range cmd.Ignored {
			fmt.Fprintf(o.IO.ErrOut, "sim-engine: warning: ignored (--lenient): %s\n", e)
		}
	}
	env := make(map[string]string, len(o.Env)+6)
	for k, v := range o.Env {
		env[k] = v
	}
	for _, ov := range []struct{ key, val string }{
		{simproto.EnvTimeScale, o.TimeScale}, {simproto.EnvGPU, o.GPU}, {simproto.EnvSeed, o.Seed},
		{simproto.EnvFault, o.Fault}, {simproto.EnvLoadTime, o.LoadTime}, {simproto.EnvWarmup, o.WarmupTime},
	} {
		if ov.val != "" {
			env[ov.key] = ov.val
		}
	}
	cfg, err := simengine.ConfigFromArgs(cmd.Engine, cmd.Flags, env)
	if err != nil {
		return cfg, flagErrorf("sim-engine: %v", err)
	}
	return cfg, nil
}

func simEngineRun(ctx context.Context, o *simEngineOptions) error {
	cfg, err := simEngineConfig(o)
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
		fmt.Fprintf(&b, "Honoured %s flags:\n%s\n", e.Facts().Display, wrapFlags(simengine.HonouredFlags(e)))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
