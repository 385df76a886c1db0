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
	"sweep/internal/plural"
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

	// sim holds --simulate and --time-scale; a leg's simulated engine
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
}

// newABRunCmd binds "sweep ab run" flags to an abRunOptions and runs runF
// with it (abRunRun when runF is nil).
func newABRunCmd(ios *IOStreams, runF func(context.Context, *abRunOptions) error) *Command {
	if runF == nil {
		runF = abRunRun
	}
	return &Command{
		Name:  "run",
		Short: "Run an A/B leg: both arms' servers, bfcl per replicate in fresh roots, then compare",
		Long: `Run one accuracy A/B leg declared in configs/ab/<LEG>.yaml (a shipped leg by
name, or any leg file by path): for arm a, then arm b, start the arm's server
(the recipe point of its config key, its parsers, and the router in front if
it declares one), run "bfcl generate" and "bfcl evaluate" once per replicate
in a fresh BFCL_PROJECT_ROOT against the server, stop the server; then
compare the roots as "sweep ab compare" does and print the report.

bfcl runs with the leg's temperature (0 by default: vLLM clamps positive
temperatures below 0.01 up to 0.01, which is warned about) and always with
--num-threads. The registry entry is written, then verified: per replicate, a
static sitecustomize.py goes into <arm>/bfcl-r<k>-python/, first on the
PYTHONPATH of the bfcl processes, and adds the leg's model (read from
SWEEP_BFCL_REGISTRY_NAME, never written into code) to bfcl_eval's
MODEL_CONFIG_MAPPING with OpenAICompletionsHandler and underscore_to_dot=True;
then "bfcl models" must list it. Nothing is edited in the installed bfcl-eval.
A server that does not start, an entry not written or not listed, bfcl
exiting non-zero or running past --run-timeout is a run-failed problem: the
leg is INCOMPLETE.

--simulate runs the recipes' own commands against sweep's simulated engine
and router, and "sweep sim-bfcl" in place of bfcl: it asks each arm's server
one request per category and writes BFCL's real files from the seeded
per-case model of the leg's simulate section (a per-arm accuracy offset
plants a regression).

Everything lands in --out (default ./ab-runs/<LEG>-<UTC time>; it must not
exist or be empty): <arm>/server/ (logs, server.json), <arm>/bfcl-r<k>/ (the
roots), <arm>/bfcl-r<k>-python/ (the registration), <arm>/bfcl-r<k>-
{models,generate,evaluate}.log, report.md and report.json.

--calibration FILE takes the leg's A/A calibration (the calibration.json of
"sweep ab calibrate LEG"): when the verdict is INCONCLUSIVE, the replicates
it advises come from the flip rates measured between identical runs of arm
A rather than from the differences between the arms, and the note says so.

Exit codes: 0 PASS, 1 REGRESSION, 3 INCONCLUSIVE, 4 INCOMPLETE, 2 usage
(a leg file error names file:line:col and the key), 130 interrupted.

Examples:
  sweep ab run minimaxm3-mi325x-smg --simulate
  sweep ab run minimaxm3-mi325x-smg --simulate --calibration ab-runs/aa/calibration.json
  sweep ab run configs/ab/minimaxm3-mi325x-smg.yaml --out /tmp/ab --run-timeout 5h`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &abRunOptions{IO: ios}
			fs := pflag.NewFlagSet("ab run", pflag.ContinueOnError)
			o.bindLegFlags(fs)
			fs.StringVar(&o.Calibration, "calibration", "", "A/A calibration of the leg (calibration.json of sweep ab calibrate): an INCONCLUSIVE verdict's replicate advice uses its flip rates")
			return fs, func(ctx context.Context, args []string) error {
				if err := o.checkLegFlags(fs, "ab run", args); err != nil {
					return err
				}
				return runF(ctx, o)
			}
		},
	}
}

// bindLegFlags binds the flags "ab run" and "ab calibrate" share.
func (o *abRunOptions) bindLegFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Out, "out", "", "output directory (default ./ab-runs/LEG-<UTC time>; must not exist or be empty)")
	fs.BoolVar(&o.Simulate, "simulate", false, "simulated engine, router and bfcl (the leg's simulate section)")
	fs.Float64Var(&o.TimeScale, "time-scale", defaultSimTimeScale, "with --simulate: simulated seconds per wall second")
	fs.StringVar(&o.BFCL, "bfcl", "bfcl", "the bfcl program (bfcl-eval, pinned to the same version for both arms)")
	fs.IntVar(&o.Port, "port", 0, "public port of each arm, one after the other (default 8888; with --simulate a free port per arm)")
	fs.DurationVar(&o.RunTimeout, "run-timeout", 0, "stop a bfcl generate that runs longer (0: no limit); the replicate is then incomplete")
	fs.DurationVar(&o.Point.ReadyTimeout, "ready-timeout", 30*time.Minute, "how long to wait for a server's health URL")
	fs.DurationVar(&o.Point.StopGrace, "stop-grace", 60*time.Second, "wait between SIGTERM and SIGKILL when stopping processes")
	fs.StringVar(&o.Format, "format", "table", "report on stdout: table (Markdown) or json")
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
	setup, err := o.setup(recipes.DefaultAiperfVersion)
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

// abRunRun runs the leg, prints the report and maps the verdict to the
// exit code.
func abRunRun(ctx context.Context, o *abRunOptions) error {
	var cal *abgate.Calibration
	if o.Calibration != "" {
		var err error
		if cal, err = abgate.ReadCalibration(o.Calibration); err != nil {
			return &FlagError{Err: fmt.Errorf("--calibration: %w", err)}
		}
	}
	r, err := prepareABLeg(o, "")
	if err != nil {
		return err
	}
	l, p := r.leg, r.plan
	if cal != nil && cal.Model != l.Model {
		return &FlagError{Err: fmt.Errorf("--calibration %s is of model %q, the leg's is %q: calibrate this leg with sweep ab calibrate %s", o.Calibration, cal.Model, l.Model, o.Leg)}
	}
	r.opts.Calibration = cal
	fmt.Fprintf(o.IO.ErrOut, "leg %s (%s): %s, %s per arm, tolerance %.2f points; %s\n  A %s: %s\n  B %s: %s\n  output: %s\n",
		l.Name, l.Model, plural.Count(len(p.Categories), "category", "categories"), plural.Count(l.Replicates, "replicate", "replicates"), l.Tolerance, r.mode,
		p.Arms[0].Name, p.Arms[0].Point.Recipe, p.Arms[1].Name, armDesc(p.Arms[1]), r.out)
	if cal != nil {
		fmt.Fprintf(o.IO.ErrOut, "  A/A calibration: %s\n", cal.Source())
	}
	res, err := leg.Run(ctx, p, r.opts)
	if err != nil {
		return r.legError(ctx, "ab run", err)
	}
	if err := printLegOutput(o.IO, o.Format, "report", res.Table, res.JSON); err != nil {
		return err
	}
	return abVerdictError(o.IO, "ab run "+l.Name, o.Format, res.Report)
}

func armDesc(a leg.Arm) string {
	if a.Point.Router != nil {
		return a.Point.Recipe + " behind " + a.Point.Router.Argv[0] + " " + strings.Join(a.Point.Router.Argv[1:min(3, len(a.Point.Router.Argv))], " ")
	}
	return a.Point.Recipe
}
