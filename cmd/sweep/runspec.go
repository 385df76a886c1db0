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
	return o.runClaimed(ctx, spec.Name, out, started, func() (run.Spec, func(), error) { return spec, func() {}, nil })
}

// runClaimed is runSpec with the Spec made once out is claimed (build):
// a point whose roles need an allocation allocates it only then, and
// build's release runs after the point.
func (o *runOptions) runClaimed(ctx context.Context, name, out string, started time.Time, build func() (run.Spec, func(), error)) error {
	po := o.pointOptions(o.Point, o.stopGraceSet)
	po.OutDir = out
	po.Progress = func(line string) {
		fmt.Fprintf(o.IO.ErrOut, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
	}
	release, leftovers, err := run.ClaimOutDir(out, name, o.Force)
	if len(leftovers) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "stopped %d process(es) an earlier run left in %s: pids %v\n", len(leftovers), out, leftovers)
	}
	if errors.Is(err, run.ErrAlreadyDone) {
		fmt.Fprintf(o.IO.ErrOut, "point %s already completed in %s; nothing to do (use --force to run it again)\n", name, out)
		return nil
	}
	if err != nil {
		return &FlagError{Err: err}
	}
	defer release()
	spec, done, err := build()
	if err != nil {
		return err
	}
	defer done()
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
