package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/internal/plural"
	"sweep/sweep/abgate/leg"
)

// newABCalibrateCmd binds "sweep ab calibrate" flags to an abRunOptions
// and runs runF with it (abCalibrateRun when runF is nil).
func newABCalibrateCmd(ios *IOStreams, runF func(context.Context, *abRunOptions) error) *Command {
	if runF == nil {
		runF = abCalibrateRun
	}
	return &Command{
		Name:  "calibrate",
		Short: "A/A calibration of a leg: arm A against itself, the flip rate between identical runs and the gate's false alarms",
		Long: `Run arm A of an A/B leg against itself (bfcl-ab.md §5.3): start its
server once, run bfcl generate and bfcl evaluate --runs times in fresh
BFCL_PROJECT_ROOTs (each with the registry entry written and verified, as
sweep ab run does), stop the server, then measure:

  - per category and pooled, the flip rate between identical runs: the
    share of (case, pair of runs) whose verdicts differ;
  - the replicates per arm the weighted Δ needs to detect a drop of the
    leg's tolerance with a one-sided 5 % test and 80 % power;
  - the false-alarm rate: the gate run on A-against-A comparisons (every
    ordered split of the runs into two disjoint sides of the leg's
    replicates, at most 20), where a REGRESSION is a false alarm, and the
    rates the measured flips predict for one comparison.

It writes calibration.json (give it to sweep ab run --calibration or sweep
ab compare --calibration: an INCONCLUSIVE verdict's replicate advice then
uses these A/A-measured rates) and calibration.md, and prints one of them.

--runs defaults to twice the leg's replicates (at least 2). --simulate runs
the simulated engine and "sweep sim-bfcl": the runs differ by the seeded
per-case model's noise, so the flip rate is the model's.

Exit codes: 0 measured, 4 INCOMPLETE (a run failed or files are missing or
inconsistent: no rate is measured), 2 usage, 130 interrupted.

Examples:
  sweep ab calibrate minimaxm3-mi325x-smg --simulate --runs 4 --out ab-runs/aa
  sweep ab run minimaxm3-mi325x-smg --simulate --calibration ab-runs/aa/calibration.json`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &abRunOptions{IO: ios}
			fs := pflag.NewFlagSet("ab calibrate", pflag.ContinueOnError)
			o.bindLegFlags(fs)
			fs.IntVar(&o.Runs, "runs", 0, "identical runs of arm A (default twice the leg's replicates, at least 2)")
			return fs, func(ctx context.Context, args []string) error {
				if err := o.checkLegFlags(fs, "ab calibrate", args); err != nil {
					return err
				}
				if fs.Changed("runs") && o.Runs < 2 {
					return flagErrorf("--runs %d: an A/A calibration needs at least 2 identical runs", o.Runs)
				}
				if o.Runs > 2*configs.MaxABReplicates {
					return flagErrorf("--runs %d: at most %d (twice the most replicates a leg may have)", o.Runs, 2*configs.MaxABReplicates)
				}
				return runF(ctx, o)
			}
		},
	}
}

// abCalibrateRun runs the calibration and prints it.
func abCalibrateRun(ctx context.Context, o *abRunOptions) error {
	r, err := prepareABLeg(o, "-aa")
	if err != nil {
		return err
	}
	l, p := r.leg, r.plan
	runs := o.Runs
	if runs == 0 {
		runs = max(2, 2*l.Replicates)
	}
	if l.Replicates*2 > runs {
		fmt.Fprintf(o.IO.ErrOut, "warning: %d runs cannot fill two sides of the leg's %d replicates: the false alarms are measured with %d per side\n", runs, l.Replicates, runs/2)
	}
	fmt.Fprintf(o.IO.ErrOut, "A/A calibration of leg %s (%s): arm a (%s: %s) against itself, %d identical runs, %d categories, tolerance %.2f points; %s\n  output: %s\n",
		l.Name, l.Model, p.Arms[0].Name, p.Arms[0].Point.Recipe, runs, len(p.Categories), l.Tolerance, r.mode, r.out)
	res, err := leg.Calibrate(ctx, p, r.opts, runs)
	if err != nil {
		return r.legError(ctx, "ab calibrate", err)
	}
	if err := printLegOutput(o.IO, o.Format, "calibration", res.Table, res.JSON); err != nil {
		return err
	}
	cal := res.Calibration
	if len(cal.Problems) > 0 {
		return &exitCodeError{Code: exitABIncomplete, Err: fmt.Errorf("ab calibrate %s: INCOMPLETE: %s; no flip rate is measured", l.Name, plural.Count(len(cal.Problems), "problem", "problems"))}
	}
	if fa := cal.FalseAlarm; fa != nil && fa.Regression > 0 {
		fmt.Fprintf(o.IO.ErrOut, "warning: %d of %d A-against-A gate runs were REGRESSION (false alarms; %.2f %% predicted per comparison)\n", fa.Regression, fa.Comparisons, 100*fa.PredictedRegression)
	}
	fmt.Fprintf(o.IO.ErrOut, "A/A flip rate %.2f %% over %d cases; use --calibration %s with sweep ab run or sweep ab compare\n",
		100*cal.Overall.FlipRate, cal.Overall.Cases, res.JSON)
	return nil
}
