package report

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"sweep/internal/plural"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
)

// WriteSweep prints the knee table of a sweep directory to w (each arm's
// knee at 90 % of its peak total throughput per GPU, and the points the
// sweep has not finished: campaign.Knees.WriteTable) and writes its
// report under DIR/report, as a sweep does when its points are done
// (with only failed points, a report that lists them; with nothing at
// all, the error "no results in DIR yet"). It runs
// after the sweep's results are written, so a panic in it is an error,
// never a crash. Cancelled (Ctrl-C) before the report is written, it
// writes none and returns an *InterruptedError.
func WriteSweep(ctx context.Context, w io.Writer, dir string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error (the sweep's results are complete; please report this): %v", v)
		}
	}()
	k, err := campaign.ReadKnees(ctx, dir, knee.Options{Threshold: 0.9, Metric: knee.MetricTotal})
	if ctx.Err() != nil {
		return &InterruptedError{Dir: dir, Err: context.Cause(ctx)}
	}
	if err != nil {
		return err
	}
	rep, err := fromKnees(k, dir, knee.MetricTotal)
	if err != nil {
		return err
	}
	if rep.Empty() {
		return fmt.Errorf("no results in %s yet", dir)
	}
	fmt.Fprintln(w, "\nknees:")
	if len(k.Results) == 0 {
		fmt.Fprintf(w, "none: no point has a result, %s failed before writing one\n", plural.Count(len(k.Failed), "point", "points"))
		err = k.WriteLeftOut(w)
	} else {
		err = k.WriteTable(w)
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return &InterruptedError{Dir: dir, Err: context.Cause(ctx)}
	}
	page, err := rep.Write(filepath.Join(dir, "report"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "report: %s\n", page)
	return nil
}

// InterruptedError is a sweep's report that WriteSweep did not write,
// cancelled (Ctrl-C): the results are complete, and sweep report makes
// the report from them. It wraps the context's cause.
type InterruptedError struct {
	Dir string
	Err error
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted: the sweep's results in %s are complete, but its report was not written (make it with: sweep report %s)", e.Dir, e.Dir)
}

func (e *InterruptedError) Unwrap() error { return e.Err }
