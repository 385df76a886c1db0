package point

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"sweep/internal/usage"
	"sweep/metrics/result"
	"sweep/sweep/run"
)

// runSpec runs one point's Spec into out (single-node or a disaggregated
// point on this host): claim the directory (a point completed there
// already is a no-op without Force), run it with the runner's progress on
// Stderr, print the summary.
func (r *Request) runSpec(ctx context.Context, spec run.Spec, out string, started time.Time) error {
	made := run.SpecMade(spec)
	return r.runClaimed(ctx, run.PointClaim{Dir: out, Name: spec.Name, Made: &made}, started, func() (run.Spec, func(), error) { return spec, func() {}, nil })
}

// runClaimed is runSpec with the Spec made once pc.Dir is claimed
// (build): a point whose roles need an allocation allocates it only then,
// and build's release runs after the point. pc.Made is how the point
// called pc.Name is made, as far as it is known before build.
func (r *Request) runClaimed(ctx context.Context, pc run.PointClaim, started time.Time, build func() (run.Spec, func(), error)) error {
	po := r.PointOptions(r.Point, r.StopGraceSet)
	po.OutDir = pc.Dir
	po.Progress = r.progress(started)
	release, err := r.claim(pc)
	if release == nil {
		return err
	}
	defer release()
	spec, done, err := build()
	if err != nil {
		return err
	}
	defer done()
	rec, runErr := run.Run(ctx, spec, po)
	r.printSummary(rec, time.Since(started))
	if runErr != nil && ctx.Err() != nil {
		return fmt.Errorf("%v: %w", runErr, context.Canceled)
	}
	if df, ok := errors.AsType[*run.DiskFullError](runErr); ok {
		if df.Elsewhere {
			return fmt.Errorf("%w; free space on it and run the point again", runErr)
		}
		return fmt.Errorf("%w; free space on it, or give --out a directory on another disk, and run the point again", runErr)
	}
	return runErr
}

// claim claims pc.Dir for the point pc.Name (run.PointClaim, with
// r.Force), and says what it found there: the processes an earlier run
// left, the same point completed (release nil, err nil: nothing to do), an
// unfinished run of it, a failed launch or an allocation that ended before
// the run began (redone).
func (r *Request) claim(pc run.PointClaim) (release func(), err error) {
	pc.Force = r.Force
	out, name := pc.Dir, pc.Name
	c, err := pc.Claim()
	if len(c.Leftovers) > 0 {
		fmt.Fprintf(r.Stderr, "stopped %d process(es) an earlier run left in %s: pids %v\n", len(c.Leftovers), out, c.Leftovers)
	}
	if errors.Is(err, run.ErrAlreadyDone) {
		fmt.Fprintf(r.Stderr, "point %s already completed in %s; nothing to do (use --force to run it again)\n", name, out)
		return nil, nil
	}
	if err != nil {
		return nil, usage.Refuse(err) // run.OutDirError names the fix
	}
	if rec := c.Replaced; rec != nil {
		fmt.Fprintf(r.Stderr, "--force: deleted point %s (%s) from %s to run point %s there\n", rec.Name, rec.Held(), out, name)
	}
	if c.RedoneLaunch {
		fmt.Fprintf(r.Stderr, "point %s: its earlier launch in %s failed before its run began; launching it again\n", name, out)
	}
	if c.RedoneAllocation {
		fmt.Fprintf(r.Stderr, "point %s: its earlier Slurm allocation in %s ended before the run began; allocating again\n", name, out)
	}
	if rec := c.Redone; rec != nil {
		how := "did not end"
		if f := rec.Failed(); f != nil {
			how = fmt.Sprintf("failed at stage %s", f.Name)
			if f.Outcome != "failed" {
				how = fmt.Sprintf("was interrupted at stage %s", f.Name)
			}
		}
		fmt.Fprintf(r.Stderr, "point %s: its earlier run in %s %s; running it again\n", name, out, how)
	}
	return c.Release, nil
}

// printSummary prints where the results are and the headline numbers.
func (r *Request) printSummary(rec *run.Record, elapsed time.Duration) {
	if rec == nil {
		return
	}
	w := r.Stdout
	status := "ok"
	if f := rec.Failed(); f != nil {
		status = fmt.Sprintf("FAILED at stage %s: %s", f.Name, f.Error)
		if len(f.LogTail) > 0 {
			fmt.Fprintf(r.Stderr, "last lines of the log:\n  %s\n", strings.Join(f.LogTail, "\n  "))
		}
	}
	fmt.Fprintf(w, "point %s: %s (%s)\n", rec.Name, status, elapsed.Round(time.Second))
	summary, err := run.Summarize(rec.ResultFile)
	haveResult := rec.ResultFile != "" && err == nil
	if rec.ResultFile != "" {
		fmt.Fprintf(w, "  result:     %s\n", rec.ResultFile)
	}
	if s := summary; haveResult {
		if s.Simulated != "" {
			fmt.Fprintf(w, "  engine:     %s: the simulated engine's numbers, not a measurement\n", s.Simulated)
		}
		fmt.Fprintf(w, "  client:     %s\n", s.Client)
		fmt.Fprintf(w, "  requests:   %s\n", s.Requests)
		fmt.Fprintf(w, "  throughput: %.1f tok/s/GPU total, %.1f output\n", s.TotalPerGPU, s.OutputPerGPU)
		fmt.Fprintf(w, "  latency:    TTFT p50 %.3f s, p90 %.3f s; interactivity p50 %.1f tok/s\n", s.TTFTP50, s.TTFTP90, s.IntvtyP50)
	}
	if haveResult {
		if res, err := result.ReadFile(rec.ResultFile); err == nil && res.MultiNodeShape != nil {
			m := res.MultiNodeShape
			fmt.Fprintf(w, "  layout:     prefill %d x tp%d ep%d, decode %d x tp%d ep%d, %d GPUs\n",
				m.PrefillNumWorkers, m.PrefillTP, m.PrefillEP, m.DecodeNumWorkers, m.DecodeTP, m.DecodeEP, m.NumPrefillGPU+m.NumDecodeGPU)
		}
	}
	if a := rec.Acceptance; a != nil {
		fmt.Fprintf(w, "  accept len: %s\n", a)
	}
	for _, warning := range rec.Warnings {
		fmt.Fprintf(w, "  warning:    %s\n", warning)
	}
	if s := summary; haveResult {
		verdict := "valid"
		if !s.Valid {
			verdict = "invalid: " + strings.Join(s.InvalidReasons, "; ")
		}
		fmt.Fprintf(w, "  validation: %s\n", verdict)
		if s.Submission != "" {
			fmt.Fprintf(w, "  scenario:   %s\n", s.Submission)
		}
	} else if v := rec.Validation; v != nil {
		verdict := "valid"
		if !v.Valid {
			verdict = "invalid: " + v.Reason
		}
		fmt.Fprintf(w, "  validation: %s\n", verdict)
	}
	fmt.Fprintf(w, "  run record: %s\n", filepath.Join(filepath.Dir(rec.ArtifactDir), run.RecordFile))
}
