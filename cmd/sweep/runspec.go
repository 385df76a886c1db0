package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sweep/sweep/run"
)

// runSpec runs one point's Spec into out as `sweep run` does (single-node
// or a disaggregated point on this host): claim the directory (a point
// completed there already is a no-op without --force), run it with the
// runner's progress on stderr, print the summary.
func (o *runOptions) runSpec(ctx context.Context, spec run.Spec, out string, started time.Time) error {
	po := o.pointOptions(o.Point, o.stopGraceSet)
	po.OutDir = out
	po.Progress = func(line string) {
		fmt.Fprintf(o.IO.ErrOut, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
	}
	release, leftovers, err := run.ClaimOutDir(out, spec.Name, o.Force)
	if len(leftovers) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "stopped %d process(es) an earlier run left in %s: pids %v\n", len(leftovers), out, leftovers)
	}
	if errors.Is(err, run.ErrAlreadyDone) {
		fmt.Fprintf(o.IO.ErrOut, "point %s already completed in %s; nothing to do (use --force to run it again)\n", spec.Name, out)
		return nil
	}
	if err != nil {
		return &FlagError{Err: err}
	}
	defer release()
	rec, runErr := run.Run(ctx, spec, po)
	printRunSummary(o.IO, rec, time.Since(started))
	if runErr != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%v: %w", runErr, context.Canceled)
		}
		return &exitCodeError{Code: exitError, Err: runErr}
	}
	return nil
}
