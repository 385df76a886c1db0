package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/recipes"
	"sweep/sweep/abgate"
	"sweep/sweep/abgate/leg"
	"sweep/sweep/run"
)

// abRunOptions are the inputs of "sweep ab run".
type abRunOptions struct {
	IO     *IOStreams
	Inputs matrixInputs
	// Leg is a shipped leg's name or a leg file.
	Leg    string
	Out    string
	Format string

	// simFlags hold --simulate and --time-scale; a leg's simulated engine
	// runs on the compressed wall clock and its client is bfcl (no load
	// generator).
	simFlags
	BFCL string
	Port int

	RunTimeout time.Duration
	Point      run.Options
	// Calibration is the A/A calibration file of ab run.
	Calibration string
	// Runs is the number of identical runs of ab calibrate.
	Runs int
	// stopGraceSet is --stop-grace given (0s then means no grace).
	stopGraceSet bool
	// Categories, when set, replace the leg's categories.
	Categories []string
}

// bindLegFlags binds the flags "ab run" and "ab calibrate" share.
func (o *abRunOptions) bindLegFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Out, "out", "", "output directory (default ./ab-runs/LEG-<UTC time>; must not exist or be empty)")
	fs.BoolVar(&o.Simulate, "simulate", false, "simulated engine, router and bfcl (the leg's simulate section)")
	fs.Float64Var(&o.TimeScale, "time-scale", defaultSimTimeScale, "with --simulate: simulated seconds per wall second")
	fs.StringVar(&o.BFCL, "bfcl", "bfcl", "the bfcl program (bfcl-eval, pinned to the same version for both arms)")
	fs.IntVar(&o.Port, "port", 0, "public port of each arm, one after the other (default 8888; with --simulate a free port per arm)")
	fs.DurationVar(&o.RunTimeout, "run-timeout", 0, "stop a bfcl generate that runs longer (0: the leg's timeouts.run, else no limit); the replicate is then incomplete")
	fs.DurationVar(&o.Point.ReadyTimeout, "ready-timeout", 30*time.Minute, "how long to wait for a server's health URL (default: the leg's timeouts.startup, else 30m)")
	fs.DurationVar(&o.Point.StopGrace, "stop-grace", 60*time.Second, "wait between SIGTERM and SIGKILL when stopping processes")
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
	o.stopGraceSet = fs.Changed("stop-grace")
	if !fs.Changed("ready-timeout") {
		o.Point.ReadyTimeout = 0 // the leg's timeouts.startup, else the runner's default
	}
	switch {
	case o.Format != "table" && o.Format != "json":
		return flagErrorf("--format %q: want table or json", o.Format)
	case checkTimeScale(o.TimeScale) != nil:
		return checkTimeScale(o.TimeScale)
	case !o.Simulate && fs.Changed("time-scale"):
		return flagErrorf("--time-scale needs --simulate")
	case o.Simulate && fs.Changed("bfcl"):
		return flagErrorf("--bfcl cannot be combined with --simulate (sweep sim-bfcl stands in for bfcl)")
	case o.RunTimeout < 0:
		return flagErrorf("--run-timeout %s: want 0 (no limit) or a positive duration", o.RunTimeout)
	case o.Point.StopGrace < 0:
		return flagErrorf("--stop-grace %s: want 0 (kill at once) or a positive duration", o.Point.StopGrace)
	case o.stopGraceSet && o.Point.StopGrace == 0:
		o.Point.StopGrace = run.NoGrace
	}
	return nil
}

// loadABLeg reads a leg by file path or shipped name.
func loadABLeg(arg string) (*configs.ABLeg, error) {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.ContainsRune(arg, os.PathSeparator) {
		return configs.LoadABLeg(arg)
	}
	return configs.DefaultABLeg(arg)
}

// abLegRun is a leg planned and ready to run.
type abLegRun struct {
	leg     *configs.ABLeg
	plan    *leg.Plan
	opts    leg.Options
	out     string
	started time.Time
	// mode describes the engines and bfcl for the header.
	mode string
}

// prepareABLeg loads and plans the leg of o, prints its warnings and
// returns the leg runner's options; the default output directory is
// ./ab-runs/<leg><suffix>-<UTC time>.
func prepareABLeg(o *abRunOptions, suffix string) (*abLegRun, error) {
	started := time.Now()
	l, err := loadABLeg(o.Leg)
	if err != nil {
		return nil, &FlagError{Err: err}
	}
	if len(o.Categories) > 0 {
		l.Categories, l.CategoriesPos = o.Categories, make([]configs.Pos, len(o.Categories))
		for i := range o.Categories {
			l.CategoriesPos[i] = configs.Pos{File: "--categories", Line: 1, Col: i + 1}
		}
	}
	g, err := o.Inputs.generator()
	if err != nil {
		return nil, err
	}
	out := o.Out
	if out == "" {
		out = filepath.Join("ab-runs", l.Name+suffix+"-"+started.UTC().Format("20060102T150405Z"))
	}
	if out, err = filepath.Abs(out); err != nil {
		return nil, err
	}
	port := func() (int, error) {
		if o.Port != 0 {
			return o.Port, nil
		}
		if o.Simulate {
			return freePortPair()
		}
		return recipes.DefaultPort, nil
	}
	p, err := leg.NewPlan(l, leg.PlanOptions{Generator: g, Port: port, Dir: out, Simulate: o.Simulate})
	if err != nil {
		return nil, &FlagError{Err: err}
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(o.IO.ErrOut, "warning: %s\n", w)
	}
	o.SimClock, o.Builtin = simClockWall, true
	setup, err := o.setup(recipes.DefaultAiperfVersion, false)
	if err != nil {
		return nil, err
	}
	so := o.pointOptions(o.Point, o.stopGraceSet)
	progress := func(line string) {
		fmt.Fprintf(o.IO.ErrOut, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
	}
	so.Progress = progress
	mode := "real engines, " + o.BFCL
	if o.Simulate {
		mode = fmt.Sprintf("simulated engines and bfcl, time scale %gx", o.TimeScale)
	}
	lo := leg.Options{Dir: out, Setup: setup, Server: so, RunTimeout: o.RunTimeout, Progress: progress}
	if !o.Simulate {
		lo.BFCL = []string{o.BFCL}
	}
	if o.Point.StopGrace > 0 {
		lo.StopGrace = min(o.Point.StopGrace, 30*time.Second)
	}
	return &abLegRun{leg: l, plan: p, opts: lo, out: out, started: started, mode: mode}, nil
}

// legError maps an error of leg.Run or leg.Calibrate to the command's.
func (r *abLegRun) legError(ctx context.Context, cmd string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %v: %w", cmd, err, context.Canceled)
	}
	if errors.Is(err, abgate.ErrRootNotEmpty) {
		return &FlagError{Err: fmt.Errorf("--out %s: %w", r.out, err)}
	}
	return err
}

// printLegOutput prints a leg's table, or its JSON with --format json, on
// stdout, and names both files (what) on stderr.
func printLegOutput(ios *IOStreams, format, what, table, js string) error {
	file := table
	if format == "json" {
		file = js
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if _, err := ios.Out.Write(data); err != nil {
		return err
	}
	fmt.Fprintf(ios.ErrOut, "%s: %s, %s\n", what, table, js)
	return nil
}
