package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/internal/plural"
	"sweep/sweep/compare"
	"sweep/sweep/knee"
	"sweep/sweep/report"
	"sweep/sweep/run"
)

// reportOptions are the inputs of "sweep report".
type reportOptions struct {
	IO  *IOStreams
	Dir string
	Out string // default DIR/report
	knee.Options
	// Compare, when set, is HEAD's results directory: the report is
	// BASE's (Dir) with HEAD's curves and the comparison beside it.
	Compare   string
	Tolerance float64
}

// newReportCmd binds "sweep report" flags to a reportOptions and runs runF
// with it (reportRun when runF is nil).
func newReportCmd(ios *IOStreams, runF func(context.Context, *reportOptions) error) *Command {
	if runF == nil {
		runF = reportRun
	}
	return &Command{
		Name:  "report",
		Args:  "RESULTS_DIR",
		Short: "Draw charts, a Markdown summary and an HTML page from a directory of sweep results",
		Long:  helpText("report"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &reportOptions{IO: ios, Options: knee.Options{Metric: knee.MetricTotal}}
			fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
			fs.StringVar(&o.Out, "out", "", "directory to write the report to (default: DIR/report)")
			cli.FloatVar(fs, &o.Threshold, "threshold", 0.9, "knee threshold, a fraction of the arm's peak in (0, 1)", kneeThreshold)
			fs.Var(&o.Metric, "metric", "throughput per GPU to use: total or output")
			fs.StringVar(&o.Compare, "compare", "", "HEAD results directory to compare DIR with (sweep compare) and draw beside it")
			cli.FloatVar(fs, &o.Tolerance, "tolerance", compare.DefaultTolerance, "with --compare: tolerated loss in percent, in (0, 100)", lossPercent)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return flagErrorf("report takes one directory, got %d arguments", len(args))
				}
				o.Dir = args[0]
				if o.Compare == "" && fs.Changed("tolerance") {
					return flagErrorf("--tolerance goes with --compare")
				}
				if o.Out == "" {
					o.Out = filepath.Join(o.Dir, "report")
				}
				return runF(ctx, o)
			}
		},
	}
}

// reportRun builds and writes the report and prints where it went. A
// results directory that cannot be read or holds no result, DIR's or
// --compare's, exits 2 as sweep compare's do; DIR with no result but
// points its sweep's journal ends failed gets the report listing them
// (not with --compare: there is nothing to compare).
func reportRun(ctx context.Context, o *reportOptions) error {
	rep, err := report.Read(ctx, o.Dir, o.Options)
	if err != nil {
		return inputError(err)
	}
	rs := rep.Results
	switch {
	case rep.Empty():
		return inputError(errNoResults(o.Dir))
	case len(rs) == 0 && o.Compare != "":
		return inputError(fmt.Errorf("no result files under %s to compare with --compare's (%s failed before writing one; sweep report %s without --compare lists them)",
			o.Dir, plural.Count(len(rep.Failed), "point", "points"), o.Dir))
	}
	if o.Compare != "" {
		cmp, err := rep.CompareDir(ctx, o.Compare, o.Options, o.Tolerance)
		if err != nil && cmp == nil {
			return inputError(err) // HEAD could not be read
		}
		fmt.Fprintln(o.IO.ErrOut, compare.VerdictLine(cmp))
		if err != nil {
			return err
		}
	}
	page, err := rep.Write(o.Out)
	if err != nil {
		return o.writeError(err)
	}
	if len(rs) == 0 {
		fmt.Fprintf(o.IO.ErrOut, "no point has a result: the report lists the %s that failed before writing one\n", plural.Count(len(rep.Failed), "point", "points"))
	} else {
		fmt.Fprintf(o.IO.ErrOut, "%s, %s\n", plural.Count(len(rs), "arm", "arms"), plural.Count(len(rep.Charts), "chart", "charts"))
	}
	fmt.Fprintf(o.IO.Out, "%s\n%s\n", page, filepath.Join(o.Out, report.SummaryFile))
	return nil
}

// writeError is the report's write failure err: on a directory it may
// not write (a read-only disk, no permission, a file on its path) a
// refusal (exit 2, no --help hint) naming it and the fix,
// run.OutDirFix, as sweep discover's sweep directory says; any other
// failure as it is.
func (o *reportOptions) writeError(err error) error {
	if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) && !errors.Is(err, syscall.ENOTDIR) {
		return err
	}
	where := "--out " + o.Out
	if o.Out == filepath.Join(o.Dir, "report") {
		where = "the report's directory " + o.Out + " (RESULTS_DIR/report without --out)"
	}
	return cli.Refusef("%s: %v; %s", where, err, run.OutDirFix)
}
