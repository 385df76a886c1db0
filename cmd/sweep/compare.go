package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/internal/plural"
	"sweep/sweep/compare"
)

// compareOptions are the inputs of "sweep compare".
type compareOptions struct {
	IO         *IOStreams
	Base, Head string
	Format     string // text, json or markdown
	// Calibrate lists A/A run directories: write a calibration instead of
	// comparing.
	Calibrate []string
	Out       string // the calibration file (stdout when "")
	compare.Options
}

// newCompareCmd binds "sweep compare" flags to a compareOptions and runs
// runF with it (compareRun when runF is nil).
func newCompareCmd(ios *IOStreams, runF func(context.Context, *compareOptions) error) *Command {
	if runF == nil {
		runF = compareRun
	}
	return &Command{
		Name:  "compare",
		Args:  "BASE HEAD | --calibrate DIR...",
		Short: "Decide whether HEAD's results regress against BASE's: PASS, REGRESSION, INCONCLUSIVE or INCOMPLETE",
		Long:  helpText("compare"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &compareOptions{IO: ios, Options: compare.Options{Metric: compare.MetricTotal}}
			var calibration string
			var calibrate bool
			fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
			cli.FloatVar(fs, &o.Tolerance, "tolerance", compare.DefaultTolerance, "tolerated loss in percent, in (0, 100)", lossPercent)
			fs.StringVar(&o.Format, "format", "text", "output format: text, json or markdown")
			fs.Var(&o.Metric, "metric", "what to compare: throughput per GPU (total, output), interactivity (intvty), latency percentiles, or energy per output token (energy, from power-valid results)")
			fs.StringVar(&calibration, "calibration", "", "noise file of sweep compare --calibrate, for arms without replicates")
			fs.BoolVar(&calibrate, "calibrate", false, "read the directories given as repeated runs of the same points and write their noise")
			fs.StringVar(&o.Out, "out", "", "with --calibrate: the file to write (default: standard output)")
			return fs, func(ctx context.Context, args []string) error {
				if calibrate {
					if len(args) < 1 {
						return flagErrorf("--calibrate takes one or more run directories")
					}
					if calibration != "" {
						return flagErrorf("--calibration goes with a comparison, not with --calibrate")
					}
					if o.Out != "" {
						if err := compare.CheckCalibrationOut(o.Out); err != nil {
							return err
						}
					}
					o.Calibrate = args
					return runF(ctx, o)
				}
				if o.Out != "" {
					return flagErrorf("--out goes with --calibrate")
				}
				if len(args) != 2 {
					return flagErrorf("compare takes BASE and HEAD directories, got %d arguments", len(args))
				}
				o.Base, o.Head = args[0], args[1]
				if !slices.Contains(compare.Formats, o.Format) {
					return flagErrorf("--format %q: want text, json or markdown", o.Format)
				}
				if calibration != "" {
					var err error
					if o.Calibration, err = compare.ReadCalibration(calibration); err != nil {
						return flagErrorf("--calibration: %v", err)
					}
					if o.Calibration.Metric != o.Metric {
						return flagErrorf("--calibration %s measured %s, not --metric %s", calibration, o.Calibration.Metric, o.Metric)
					}
				}
				return runF(ctx, o)
			}
		},
	}
}

// compareRun reads both sides, prints the report and maps the verdict to
// the exit code. Exit 1 is REGRESSION's alone (the PR workflow reads it
// so): a comparison that cannot be made (a side or a result file that
// cannot be read, a side without results, a report that cannot be
// written) exits 2, as a usage mistake does.
func compareRun(ctx context.Context, o *compareOptions) error {
	if len(o.Calibrate) > 0 {
		return inputError(calibrateRun(ctx, o))
	}
	base, head, err := compare.ReadSides(ctx, o.Base, o.Head)
	if err != nil {
		return inputError(err)
	}
	rep := compare.Compare(base, head, o.Options)
	if err := compare.Write(o.IO.Out, rep, o.Format); err != nil {
		return inputError(err)
	}
	code := map[compare.Decision]int{
		compare.Pass:         exitOK,
		compare.Regression:   exitABRegression,
		compare.Inconclusive: exitABInconclusive,
		compare.Incomplete:   exitABIncomplete,
	}[rep.Verdict]
	if code == exitOK {
		if o.Format != "text" {
			fmt.Fprintln(o.IO.ErrOut, compare.VerdictLine(rep))
		}
		return nil
	}
	return &exitCodeError{Code: code, Err: fmt.Errorf("compare: %s", compare.VerdictLine(rep))}
}

// calibrateRun reads the A/A runs and writes their noise.
func calibrateRun(ctx context.Context, o *compareOptions) error {
	cal, err := compare.CalibrateDirs(ctx, o.Calibrate, o.Metric)
	if err != nil {
		return err
	}
	if o.Out == "" {
		return compare.WriteCalibration(o.IO.Out, cal)
	}
	if err := compare.WriteCalibrationFile(o.Out, cal); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "wrote the noise of %s to %s\n", plural.Count(len(cal.Arms), "arm", "arms"), o.Out)
	return nil
}
