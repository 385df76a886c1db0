package main

import (
	"context"
	"errors"
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
		Long:  helpText("ab_calibrate"),
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

// abCalibrateRun runs the calibration and prints it; one that measures
// nothing for want of a usable --out or disk, or whose files cannot be
// written (printed then, on stdout only), exits 2 (abNoVerdict).
func abCalibrateRun(ctx context.Context, o *abRunOptions) (err error) {
	defer func() { err = abNoVerdict(err) }()
	r, err := prepareABLeg(o, "-aa")
	if err != nil {
		return err
	}
	l, p := r.Leg, r.Plan
	runs := o.Runs
	if runs == 0 {
		runs = max(2, 2*l.Replicates)
	}
	if l.Replicates*2 > runs {
		fmt.Fprintf(o.IO.ErrOut, "warning: %d runs cannot fill two sides of the leg's %d replicates: the false alarms are measured with %d per side\n", runs, l.Replicates, runs/2)
	}
	fmt.Fprintf(o.IO.ErrOut, "A/A calibration of leg %s (%s): arm a (%s: %s) against itself, %d identical runs, %d categories, tolerance %.2f points; %s\n  output: %s\n",
		l.Name, l.Model, p.Arms[0].Name, p.Arms[0].Point.Recipe, runs, len(p.Categories), l.Tolerance, r.Mode, r.Out)
	res, err := leg.Calibrate(ctx, p, r.Options, runs)
	if res == nil {
		return r.Err(ctx, "ab calibrate", err)
	}
	cal := res.Calibration
	rate := fmt.Sprintf("A/A flip rate %.2f %% over %d cases", 100*cal.Overall.FlipRate, cal.Overall.Cases)
	drawn := "ab calibrate " + l.Name + ": " + rate
	if len(cal.Problems) > 0 {
		drawn = fmt.Sprintf("ab calibrate %s: INCOMPLETE: %s; no flip rate is measured", l.Name, plural.Count(len(cal.Problems), "problem", "problems"))
	}
	if err := printLegOutput(o.IO, o.Format, "calibration", &res.Output, err, drawn); err != nil {
		return err
	}
	if len(cal.Problems) > 0 {
		return &exitCodeError{Code: exitABIncomplete, Err: errors.New(drawn)}
	}
	if fa := cal.FalseAlarm; fa != nil && fa.Regression > 0 {
		fmt.Fprintf(o.IO.ErrOut, "warning: %d of %d A-against-A gate runs were REGRESSION (false alarms; %.2f %% predicted per comparison)\n", fa.Regression, fa.Comparisons, 100*fa.PredictedRegression)
	}
	fmt.Fprintf(o.IO.ErrOut, "%s; use --calibration %s with sweep ab run or sweep ab compare\n", rate, res.JSON)
	return nil
}
