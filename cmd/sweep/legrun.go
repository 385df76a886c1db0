package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/internal/cli"
	"sweep/recipes"
	"sweep/sweep/abgate/leg"
	"sweep/sweep/run"
)

// abRunOptions are the inputs of "sweep ab run" and "sweep ab calibrate".
type abRunOptions struct {
	IO     *IOStreams
	Inputs matrixInputs
	Format string
	// Calibration is the A/A calibration file of ab run.
	Calibration string
	// Runs is the number of identical runs of ab calibrate.
	Runs int
	// Request is the leg and how to run it (sweep/abgate/leg).
	leg.Request
}

// bindLegFlags binds the flags "ab run" and "ab calibrate" share.
func (o *abRunOptions) bindLegFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Out, "out", "", "output directory (default ./ab-runs/LEG-<UTC time>; must not exist or be empty, but ab run resumes its own earlier run of the same leg there)")
	fs.BoolVar(&o.Simulate, "simulate", false, "simulated engine, router and bfcl (the leg's simulate section)")
	cli.FloatVar(fs, &o.TimeScale, "time-scale", leg.DefaultTimeScale, "with --simulate: simulated seconds per wall second", timeScale)
	fs.StringVar(&o.BFCL, "bfcl", "bfcl", "the bfcl program (bfcl-eval, pinned to the same version for both arms)")
	fs.IntVar(&o.Port, "port", 0, "public port of each arm, one after the other (default 8888; with --simulate a free port per arm)")
	fs.DurationVar(&o.RunTimeout, "run-timeout", 0, "stop a bfcl generate that runs longer (0: the leg's timeouts.run, else no limit); the replicate is then incomplete")
	fs.DurationVar(&o.Server.ReadyTimeout, "ready-timeout", run.DefaultReadyTimeout, "how long to wait for a server's health URL (default: the leg's timeouts.startup, else 30m)")
	fs.DurationVar(&o.Server.StopGrace, "stop-grace", 60*time.Second, "wait between SIGTERM and SIGKILL when stopping processes")
	fs.StringVar(&o.Format, "format", "table", "report on stdout: table (Markdown) or json")
	fs.StringSliceVar(&o.Categories, "categories", nil, "BFCL categories or collections replacing the leg's, comma separated (e.g. simple_python,irrelevance or non_live)")
	fs.StringSliceVar(&o.Inputs.ConfigFiles, "config-files", nil, "master config files, comma separated (default: the built-in amd and nvidia masters)")
	fs.StringVar(&o.Inputs.RunnerConfig, "runner-config", "", "runners.yaml (default: the built-in one)")
}

// checkLegFlags takes the leg argument and checks the shared flags.
func (o *abRunOptions) checkLegFlags(fs *pflag.FlagSet, cmd string, args []string) error {
	if len(args) != 1 {
		return flagErrorf("%s takes one leg (a name in configs/ab: %s, or a leg file), got %d arguments", cmd, strings.Join(configs.ABLegNames(), ", "), len(args))
	}
	o.Leg = args[0]
	o.StopGraceSet = fs.Changed("stop-grace")
	if !fs.Changed("ready-timeout") {
		o.Server.ReadyTimeout = 0 // the leg's timeouts.startup, else the runner's default
	}
	switch {
	case o.Format != "table" && o.Format != "json":
		return flagErrorf("--format %q: want table or json", o.Format)
	case !o.Simulate && fs.Changed("time-scale"):
		return flagErrorf("--time-scale needs --simulate")
	case o.Simulate && fs.Changed("bfcl"):
		return flagErrorf("--bfcl cannot be combined with --simulate (sweep sim-bfcl stands in for bfcl)")
	case o.RunTimeout < 0:
		return flagErrorf("--run-timeout %s: want 0 (no limit) or a positive duration", o.RunTimeout)
	case o.Server.StopGrace < 0:
		return flagErrorf("--stop-grace %s: want 0 (kill at once) or a positive duration", o.Server.StopGrace)
	case o.StopGraceSet && o.Server.StopGrace == 0:
		o.Server.StopGrace = run.NoGrace
	}
	return nil
}

// prepareABLeg loads and plans the leg of o (leg.Prepare); the default
// output directory is ./ab-runs/<leg><suffix>-<UTC time>.
func prepareABLeg(o *abRunOptions, suffix string) (*leg.Prepared, error) {
	o.Suffix, o.Generator, o.FreePort, o.Stderr = suffix, o.Inputs.generator, recipes.FreeRouterPort, o.IO.ErrOut
	return leg.Prepare(&o.Request)
}

// printLegOutput prints a leg's table, or its JSON with --format json, on
// stdout from memory, and names both files (what) on stderr. When a file
// could not be written (notWritten: leg.Run's and leg.Calibrate's error
// beside their output), stdout still gets the output and the error,
// what the command drew (drawn) and why the output is on stdout only, is
// returned.
func printLegOutput(ios *IOStreams, format, what string, out *leg.Output, notWritten error, drawn string) error {
	data := out.TableText
	if format == "json" {
		data = out.JSONText
	}
	if _, err := ios.Out.Write(data); err != nil {
		return errors.Join(err, notWritten)
	}
	if notWritten != nil {
		return fmt.Errorf("%s, but the %s was not written whole (stdout holds it): %w", drawn, what, notWritten)
	}
	fmt.Fprintf(ios.ErrOut, "%s: %s, %s\n", what, out.Table, out.JSON)
	return nil
}
