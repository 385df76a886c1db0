package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"sweep/internal/plural"
	"sweep/sweep/abgate"
	"sweep/sweep/abgate/leg"
)

// newABRunCmd binds "sweep ab run" flags to an abRunOptions and runs runF
// with it (abRunRun when runF is nil).
func newABRunCmd(ios *IOStreams, runF func(context.Context, *abRunOptions) error) *Command {
	if runF == nil {
		runF = abRunRun
	}
	return &Command{
		Name:  "run",
		Short: "Run an A/B leg: both arms' servers, bfcl per replicate in fresh roots, then compare",
		Long:  helpText("ab_run"),
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

// abRunRun runs the leg, prints the report and maps the verdict to the
// exit code; a leg that draws no verdict, or whose report cannot be
// written (printed then, on stdout only), exits 2 (abNoVerdict). An
// interrupted leg prints its INCOMPLETE report (leg.Run wrote it) and
// exits as an interrupt does (130).
func abRunRun(ctx context.Context, o *abRunOptions) (err error) {
	defer func() { err = abNoVerdict(err) }()
	var cal *abgate.Calibration
	if o.Calibration != "" {
		var err error
		if cal, err = abgate.ReadCalibration(o.Calibration); err != nil {
			return &FlagError{Err: fmt.Errorf("--calibration: %w", err)}
		}
	}
	o.Resume = true
	r, err := prepareABLeg(o, "")
	if err != nil {
		return err
	}
	l, p := r.Leg, r.Plan
	if cal != nil && cal.Model != l.Model {
		return &FlagError{Err: fmt.Errorf("--calibration %s is of model %q, the leg's is %q: calibrate this leg with sweep ab calibrate %s", o.Calibration, cal.Model, l.Model, o.Leg)}
	}
	if cal != nil {
		warning, err := cal.CheckFor(o.Simulate)
		if err != nil {
			return &FlagError{Err: fmt.Errorf("--calibration: %w", err)}
		}
		if warning != "" {
			fmt.Fprintf(o.IO.ErrOut, "warning: --calibration: %s\n", warning)
		}
	}
	r.Options.Calibration = cal
	fmt.Fprintf(o.IO.ErrOut, "leg %s (%s): %s, %s per arm, tolerance %.2f points; %s\n  A %s: %s\n  B %s: %s\n  output: %s\n",
		l.Name, l.Model, plural.Count(len(p.Categories), "category", "categories"), plural.Count(l.Replicates, "replicate", "replicates"), l.Tolerance, r.Mode,
		p.Arms[0].Name, p.Arms[0].Point.Recipe, p.Arms[1].Name, armDesc(p.Arms[1]), r.Out)
	if cal != nil {
		fmt.Fprintf(o.IO.ErrOut, "  A/A calibration: %s\n", cal.Source())
	}
	res, err := leg.Run(ctx, p, r.Options)
	if ie, ok := errors.AsType[*leg.InterruptedError](err); ok {
		if res != nil {
			var notWritten error
			if nw, ok := errors.AsType[*leg.NotWrittenError](err); ok {
				notWritten = nw
			}
			if err := printLegOutput(o.IO, o.Format, "report", &res.Output, notWritten, "ab run "+l.Name+": "+abgate.VerdictLine(res.Report)); err != nil {
				fmt.Fprintf(o.IO.ErrOut, "warning: %v\n", err)
			}
		}
		fmt.Fprintf(o.IO.ErrOut, "ab run %s: %v\n", l.Name, ie)
		return r.Err(ctx, "ab run", ie)
	}
	if res == nil {
		return r.Err(ctx, "ab run", err)
	}
	if err := printLegOutput(o.IO, o.Format, "report", &res.Output, err, "ab run "+l.Name+": "+abgate.VerdictLine(res.Report)); err != nil {
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
