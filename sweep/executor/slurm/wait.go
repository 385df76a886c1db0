package slurm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// WaitOptions bound Wait.
type WaitOptions struct {
	// Poll is the time between two looks (default 2 s).
	Poll time.Duration
	// StartTimeout is how long the job may stay pending; past it Wait
	// cancels the job and returns a *NotStartedError (0: no bound).
	StartTimeout time.Duration
	// Outage is how long Slurm may not answer in a row (slurmctld
	// restarting) before Wait gives up (default 5 min).
	Outage time.Duration
	// OnChange is called with every new state (may be nil).
	OnChange func(JobStatus)
}

// NotStartedError is a job that did not start within its bound.
type NotStartedError struct {
	ID     JobID
	Waited time.Duration
	Reason string // Slurm's pending reason
}

func (e *NotStartedError) Error() string {
	waited := e.Waited.Round(time.Second)
	if waited == 0 {
		waited = e.Waited.Round(time.Millisecond)
	}
	return fmt.Sprintf("slurm job %s did not start within %s (pending reason: %s); cancelled", e.ID, waited, e.Reason)
}

// Wait polls until the job ends and returns its last status. When ctx
// ends first it returns ctx's error; the caller decides whether to cancel.
// Its other errors name the job.
// Slurm commands that fail (slurmctld down or restarting) are retried
// until Outage passes; state is recovered from squeue or sacct after.
func (c *Client) Wait(ctx context.Context, id JobID, o WaitOptions) (JobStatus, error) {
	poll := o.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	outage := o.Outage
	if outage <= 0 {
		outage = 5 * time.Minute
	}
	began := time.Now()
	var last JobStatus
	var failingSince time.Time
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		st, err := c.Status(ctx, id)
		switch {
		case ctx.Err() != nil:
			return last, ctx.Err()
		case errors.Is(err, ErrUnknownJob):
			return last, err
		case err != nil:
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) > outage {
				return last, fmt.Errorf("slurm job %s: no answer from Slurm for %s: %w", id, outage, err)
			}
		default:
			failingSince = time.Time{}
			if st.State != last.State && o.OnChange != nil {
				o.OnChange(st)
			}
			last = st
			if st.State.Done() {
				return st, nil
			}
			if st.State == "PENDING" && o.StartTimeout > 0 && time.Since(began) > o.StartTimeout {
				cerr := c.Cancel(context.WithoutCancel(ctx), id)
				return st, errors.Join(&NotStartedError{ID: id, Waited: time.Since(began), Reason: st.Reason}, cerr)
			}
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-t.C:
		}
	}
}
