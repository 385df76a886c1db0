package simengine

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/internal/simproto"
	"sweep/internal/usage"
	"sweep/recipes"
	"sweep/recipes/schema"
)

// CommandLine is how `sweep sim-engine` is started: the real engine
// command line and the simulator settings given beside it.
type CommandLine struct {
	Argv    []string // the real engine command line
	Engine  string   // engine for an argv without a program prefix
	Schema  string   // TOOL@VERSION of the flag schema; "" = the engine's default
	Lenient bool     // problems with flags the simulator does not read are warnings
	// Unchecked are FLAG:N specs: flags the plan passes without a schema
	// check, each with its number of values.
	Unchecked []string
	Env       map[string]string // the environment the engine would see
	// Files are files the engine's point writes before it starts (its
	// sidecars' recipes.Sidecar.Files: the Mooncake store's config),
	// read at their paths before the disk: a planned point's engine is
	// read before its files are written (PlannedCommandLine).
	Files []recipes.File
	// Overrides of the SWEEP_SIM_* environment, applied when set.
	TimeScale  string
	GPU        string
	Seed       string
	Fault      string
	LoadTime   string
	WarmupTime string
}

// Config reads the command line as the real engine's argparse would (a
// rejected command line is a *usage.Error, as argparse exits 2) and turns
// it into the simulator's configuration; the schema's warnings and the
// problems Lenient let through go to log (nil: nowhere).
func (c *CommandLine) Config(log io.Writer) (Config, error) {
	unchecked, err := parseUnchecked(c.Unchecked)
	if err != nil {
		return Config{}, err
	}
	cmd, err := ParseCommand(c.Argv, ParseOptions{Engine: configs.Engine(c.Engine), Schema: c.Schema, Lenient: c.Lenient, Unchecked: unchecked})
	switch {
	case errors.Is(err, ErrNoProgram):
		// ParseCommand's error joins ErrNoProgram and the engine's: say why
		// the engine given (or none) is not one.
		var e configs.Engine
		return Config{}, usage.Errorf("sim-engine: the engine command has no program, so --engine is required: %v", e.Set(c.Engine))
	case err != nil && !c.Lenient && len(schema.Problems(err)) > 0:
		// What the real engine's argparse would reject; argparse exits 2 too.
		return Config{}, usage.Errorf("sim-engine: %v\n(--lenient ignores the problems with flags the simulator does not read)", err)
	case err != nil:
		return Config{}, usage.Errorf("sim-engine: %v", err)
	}
	if log != nil {
		for _, w := range cmd.Warnings {
			fmt.Fprintf(log, "sim-engine: %s\n", w)
		}
		for _, e := range cmd.Ignored {
			fmt.Fprintf(log, "sim-engine: warning: ignored (--lenient): %s\n", e)
		}
	}
	env := make(map[string]string, len(c.Env)+6)
	for k, v := range c.Env {
		env[k] = v
	}
	for _, ov := range []struct{ key, val string }{
		{simproto.EnvTimeScale, c.TimeScale}, {simproto.EnvGPU, c.GPU}, {simproto.EnvSeed, c.Seed},
		{simproto.EnvFault, c.Fault}, {simproto.EnvLoadTime, c.LoadTime}, {simproto.EnvWarmup, c.WarmupTime},
	} {
		if ov.val != "" {
			env[ov.key] = ov.val
		}
	}
	cfg, err := configFromArgs(cmd.Engine, cmd.Flags, env, c.Files)
	if err != nil {
		return cfg, usage.Errorf("sim-engine: %v", err)
	}
	return cfg, nil
}

// parseUnchecked reads FLAG:N specs.
func parseUnchecked(specs []string) ([]schema.Escape, error) {
	out := make([]schema.Escape, 0, len(specs))
	for _, spec := range specs {
		name, n, ok := strings.Cut(spec, ":")
		count, err := strconv.Atoi(n)
		if !ok || err != nil || count < 0 || !strings.HasPrefix(name, "-") {
			return nil, usage.Errorf("--unchecked %q: want FLAG:N, e.g. --attention-config:1 (N values after the flag)", spec)
		}
		out = append(out, schema.Escape{Flag: name, Values: make([]string, count), Reason: "unchecked in the plan"})
	}
	return out, nil
}
