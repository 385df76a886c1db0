package report

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"sweep/sweep/campaign"
	"sweep/sweep/knee"
)

// WriteSweep prints the knee table of a sweep directory to w (each arm's
// knee at 90 % of its peak total throughput per GPU, and the points the
// sweep has not finished: campaign.Knees.WriteTable) and writes its
// report under DIR/report, as a sweep does when its points are done. It runs
// after the sweep's results are written, so a panic in it is an error,
// never a crash.
func WriteSweep(ctx context.Context, w io.Writer, dir string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error (the sweep's results are complete; please report this): %v", v)
		}
	}()
	k, err := campaign.ReadKnees(ctx, dir, knee.Options{Threshold: 0.9, Metric: knee.MetricTotal})
	if err != nil {
		return err
	}
	if len(k.Results) == 0 {
		return fmt.Errorf("no results in %s yet", dir)
	}
	fmt.Fprintln(w, "\nknees:")
	if err := k.WriteTable(w); err != nil {
		return err
	}
	rep, err := fromKnees(k, dir, knee.MetricTotal)
	if err != nil {
		return err
	}
	page, err := rep.Write(filepath.Join(dir, "report"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "report: %s\n", page)
	return nil
}
