package campaign

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"sweep/sweep/run"
)

// Backend starts the servers of arms on the GPUs an executor gives it.
// sweep/run's StartServer fits behind it; a backend that can only run a
// point whole (start, load, stop) returns servers whose outcomes say
// ServerGone.
type Backend interface {
	StartServer(ctx context.Context, arm *Arm, first *Point, gpus []int) (Server, error)
}

// Server is a running server of an arm.
type Server interface {
	// RunLoad runs p's load against the server (flushing its caches
	// first) and reports how it went.
	RunLoad(ctx context.Context, p *Point) Outcome
	// Healthy reports whether the server still answers; a server that
	// died between two points is restarted before the next one.
	Healthy(ctx context.Context) bool
	// PIDs are the server's process ids (process group leaders).
	PIDs() []int
	// Tags are the process tags (proc.TagEnv) its processes carry, by
	// which a later invocation finds them if this one is killed; nil
	// when it has no processes on this machine.
	Tags() []string
	// Stop stops every process of the server; it is idempotent.
	Stop(ctx context.Context) error
}

// Outcome is how one point's load went. Err is nil when the load produced
// a result; the campaign still checks the result file before it counts.
type Outcome struct {
	Err error
	// Result is the path of the point's aggregate result JSON.
	Result  string
	Metrics *Metrics
	// ServerGone says the server cannot serve another point (it was
	// stopped with the load, or died during it).
	ServerGone bool
}

// Observer receives the events of running arms, in order per arm; calls
// for different arms may come from different goroutines at once.
type Observer func(Record)

// Job is one arm's points to run, in order, as an executor gets it.
type Job struct {
	Arm    *Arm
	Points []*Point
	// Earlier says, by point ID, how each point of the arm whose last
	// attempt before this job ended (ok or failed) ran: as a probe or at
	// the full length (Run's replay of the journal: earlier invocations
	// on the directory and earlier rounds of this one); for a point whose
	// last attempt, a full-length run that followed its ended probe in
	// the same search pass, was interrupted, a probe. ArmOptions.Choose
	// reads a point this job does not run by it as it reads one this
	// invocation ran by its Ran (Adaptive: a run that left no result is
	// a failed one of that kind), and an interrupted one as the probe
	// its full-length run replaced; nil without a journal.
	Earlier map[string]Ran
}

// Executor runs jobs: the local one packs arms onto this node's GPUs; a
// Slurm or GitHub Actions one submits one job per arm. Execute returns
// when every job has ended or ctx is cancelled, and reports every server
// start, point start and point end through obs. A point that never
// started has no record.
type Executor interface {
	Execute(ctx context.Context, jobs []Job, obs Observer) error
}

// ArmOptions tune RunArm.
type ArmOptions struct {
	// PointTimeout is the watchdog of one point's load: a load still
	// running after it is stopped and the point fails (0: none).
	PointTimeout func(*Point) time.Duration
	// StopTimeout bounds a server's stop (default 2 min).
	StopTimeout time.Duration
	// Choose, when set, picks the points to run next from job.Points
	// (adaptive discovery): it is called at the start and whenever the
	// chosen points have run, with how each point ran so far (by ID); nil
	// or empty ends the arm: the points never chosen are recorded as
	// skipped, then the search's end (search_end), unless ctx is
	// cancelled. A point runs once, but a point that ran as a probe may
	// run once more at the full length (a failed probe measured again).
	Choose func(job Job, ran map[string]Ran) []*Point
	// Ended, with Choose, says why Choose, asking for nothing more, needs
	// none of the points not run (AdaptiveEnd): their point_skip records
	// and the search_end give it. Nil: "not needed to find the knee".
	Ended func(job Job, ran map[string]Ran) SearchEnd
}

// SearchEnd is how an adaptive arm's search ends, when it asks for no
// more points (ArmOptions.Ended, e.g. AdaptiveEnd): why it needs none of
// the points it did not measure, by point ID ("between c16 and c64,
// measured: the knee c32 (ok) is bounded by c16 and c64, both
// measured"; knee.Step.Skipped), and the verdict it ends on ("knee c32
// (ok)"; knee.Step.Done).
type SearchEnd struct {
	Skipped map[string]string
	Verdict string
}

// Ran is how a point ran in this invocation of an arm: as a probe, at
// the full length, or both (a probe, then the full length).
type Ran struct{ Probe, Full bool }

// Any reports whether the point ran at all.
func (r Ran) Any() bool { return r.Probe || r.Full }

// allows reports whether p may run after what ran: once, and at the full
// length after a probe.
func (r Ran) allows(p *Point) bool { return !r.Any() || r.Probe && !r.Full && !p.Probe }

// maxFailedStarts is how many server starts in a row, each for its own
// engine command, may fail before RunArm stops starting the arm's
// servers in a round.
const maxFailedStarts = 2

// RunArm runs a job's points in order on gpus against servers from b:
// a server is started for the first point, reused while the next point
// shares it (Point.Server) and it is healthy, and restarted when it died,
// hung or the engine command changes. The last server is stopped before
// RunArm returns, also when ctx is cancelled (the interrupted point is
// recorded as interrupted, later points are not started).
//
// A server that does not start (not ready before the runner's ready
// timeout, exited while starting) fails the point it was started for.
// Without Choose the job's later points that server would serve then
// fail too, with that start's failure and no start of their own (each
// would wait out the ready timeout again on the arm's GPUs); a point
// with another engine command (a restart per point) still gets its own
// start, unless two starts in a row have failed (maxFailedStarts: the
// node, the engine or the model, not one command). Their failures count
// against Options.Retries as any other, so each of Run's retry rounds
// starts the arm's server once more, and once that start fails with no
// retry left the points have failed for good and the arm stops. With
// Choose the arm stops at once, its other points not run, for a retry
// or a resume to search it.
func RunArm(ctx context.Context, job Job, gpus []int, b Backend, obs Observer, o ArmOptions) {
	if o.StopTimeout <= 0 {
		o.StopTimeout = 2 * time.Minute
	}
	arm := job.Arm
	var srv Server
	srvFor := -1
	stop := func(reason string) {
		if srv == nil {
			return
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.StopTimeout)
		start := time.Now()
		err := srv.Stop(sctx)
		cancel()
		r := Record{Event: EventServerStop, Arm: arm.Index + 1, Reason: reason, Seconds: since(start)}
		if err != nil {
			r.Error = err.Error()
		}
		obs(r)
		srv, srvFor = nil, -1
	}
	defer stop("arm done")
	first := true
	// down, without Choose, is the failure of the job's server that did
	// not start (downFor, its Point.Server): the points that server would
	// serve fail with it, unstarted, and every later point once
	// failedStarts in a row reach maxFailedStarts.
	down, downFor, failedStarts := "", -1, 0
	ran := map[string]Ran{}
	queue := job.Points
	abandoned := false // with Choose: a server did not start, the search stopped
	if o.Choose != nil {
		queue = o.Choose(job, ran)
		defer func() {
			if ctx.Err() != nil || abandoned {
				return // interrupted or abandoned: the rest is decided on resume
			}
			var end SearchEnd
			if o.Ended != nil {
				end = o.Ended(job, ran)
			}
			for _, p := range job.Points {
				if !ran[p.ID].Any() {
					obs(Record{Event: EventPointSkip, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(),
						Reason: notNeeded + whyNot(end.Skipped[p.ID])})
				}
			}
			obs(Record{Event: EventSearchEnd, Arm: arm.Index + 1, Reason: searchDone + whyNot(end.Verdict)})
		}()
	}
	next := func() *Point {
		for {
			if len(queue) == 0 && o.Choose != nil {
				queue = o.Choose(job, ran)
				if len(queue) == 0 {
					return nil
				}
			}
			if len(queue) == 0 {
				return nil
			}
			p := queue[0]
			queue = queue[1:]
			if r := ran[p.ID]; r.allows(p) { // never a point twice, but for a probe's full-length run
				if p.Probe {
					r.Probe = true
				} else {
					r.Full = true
				}
				ran[p.ID] = r
				return p
			}
		}
	}
	for p := next(); p != nil; p = next() {
		if ctx.Err() != nil {
			stop(interruption(ctx, "", "interrupted"))
			return
		}
		if down != "" && (p.Server == downFor || failedStarts >= maxFailedStarts) {
			obs(Record{Event: EventPointStart, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(), GPUs: gpus, Probe: p.Probe, NoServer: true, Reason: p.Why})
			obs(Record{Event: EventPointEnd, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(),
				Status: StatusFailed, Error: down, Probe: p.Probe})
			continue
		}
		reason := ""
		switch {
		case first:
			reason = "first point of the arm"
		case srv == nil:
			reason = "the previous point's server is gone"
		case p.Server != srvFor:
			reason = "the engine command changes (restart per point)"
		case !srv.Healthy(ctx):
			reason = "the server died or stopped answering"
		}
		first = false
		if reason != "" {
			stop(reason)
			obs(Record{Event: EventServerStart, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, GPUs: gpus, Reason: reason})
			start := time.Now()
			s, err := b.StartServer(ctx, arm, p, gpus)
			if err != nil {
				status := StatusFailed
				if ctx.Err() != nil {
					status = StatusInterrupted
				}
				obs(Record{Event: EventPointStart, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(), GPUs: gpus, Probe: p.Probe, NoServer: true, Reason: p.Why})
				obs(Record{Event: EventPointEnd, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(),
					Status: status, Error: serverStartFailed + err.Error(), Seconds: since(start), Probe: p.Probe}.withDiskFull(err))
				if o.Choose != nil {
					// The search reads measurements, and a server that
					// did not start measured nothing (an engine not
					// installed, no GPU): the arm stops here, neither its
					// search's end nor a point it did not need recorded,
					// and the point runs again as one never run
					// (pointState.startFailed) in a retry or a resume.
					abandoned = true
					return
				}
				// The job's other points would each wait out the ready
				// timeout again on a server that most likely fails the
				// same way (the node, the engine, the model): they fail
				// unstarted, and a retry round tries once more.
				why, _, _ := strings.Cut(err.Error(), "\n") // the log tail is the point's own
				down = fmt.Sprintf("%s%s, the arm's server did not start for c%d: %s", serverStartFailed, notTried, p.Conc(), why)
				downFor = p.Server
				failedStarts++
				continue
			}
			srv, srvFor, failedStarts = s, p.Server, 0
			obs(Record{Event: EventServerReady, Arm: arm.Index + 1, Point: p.ID, PIDs: s.PIDs(), Tags: s.Tags(), Seconds: since(start)})
		}
		obs(Record{Event: EventPointStart, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(), GPUs: gpus, Reused: reason == "", Probe: p.Probe, Reason: p.Why})
		if ctx.Err() != nil {
			// The sweep stopped as the point was to start (its journal
			// could not record the start, another arm's point found the
			// disk full, Ctrl-C): it does not run, and its directory,
			// an earlier attempt's, is left as it is.
			obs(Record{Event: EventPointEnd, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(),
				Status: StatusInterrupted, Error: interruption(ctx, "not run: ", "interrupted before it started"), Probe: p.Probe})
			continue // the loop's check stops the server
		}
		start := time.Now()
		pctx, cancel := ctx, context.CancelFunc(func() {})
		var limit time.Duration
		if o.PointTimeout != nil {
			if limit = o.PointTimeout(p); limit > 0 {
				pctx, cancel = context.WithTimeout(ctx, limit)
			}
		}
		out := srv.RunLoad(pctx, p)
		hung := ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded)
		cancel()
		end := Record{Event: EventPointEnd, Arm: arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(),
			Status: StatusOK, Seconds: since(start), Result: out.Result, Metrics: out.Metrics, Probe: p.Probe}
		switch {
		case ctx.Err() != nil:
			end.Status, end.Error = StatusInterrupted, interruption(ctx, "interrupted: ", "interrupted")
		case hung:
			end.Status, end.Error = StatusFailed, fmt.Sprintf("watchdog: no result after %s; the load was stopped", limit)
		case out.Err != nil:
			end.Status, end.Error = StatusFailed, out.Err.Error()
			end = end.withDiskFull(out.Err)
		}
		obs(end)
		switch {
		case out.ServerGone:
			stop("the server ended with the load")
		case hung:
			stop("the point hung")
		}
	}
}

// interruption is the error of a point that ctx, cancelled, stopped:
// prefix and why Run stopped the sweep on its own ("the sweep stopped:
// CAUSE": Options.FailFast, a full disk, its journal; context.Cause),
// else (Ctrl-C) user.
func interruption(ctx context.Context, prefix, user string) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return prefix + "the sweep stopped: " + cause.Error()
	}
	return user
}

// withDiskFull is the point_end r of a point that failed with err, with
// Record.DiskFull and DiskElsewhere the full disk of a *run.DiskFullError
// (none for any other failure).
func (r Record) withDiskFull(err error) Record {
	if df, ok := errors.AsType[*run.DiskFullError](err); ok {
		r.DiskFull, r.DiskElsewhere = df.Disk(), df.Elsewhere
	}
	return r
}

// searchDone is the reason of a search_end record (then ": " and the
// verdict it ends on, SearchEnd.Verdict), notNeeded of a point_skip's
// (then ": " and why, SearchEnd.Skipped).
const (
	searchDone = "adaptive discovery: the knee search needs no more points"
	notNeeded  = "adaptive discovery: not needed to find the knee"
)

// notNeededWhy is why a point_skip's reason says the point is not
// needed, without its notNeeded prefix (the whole reason when it has
// none: an older binary's).
func notNeededWhy(reason string) string { return strings.TrimPrefix(reason, notNeeded+": ") }

// whyNot is ": why", or nothing when why is empty.
func whyNot(why string) string {
	if why == "" {
		return ""
	}
	return ": " + why
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }
