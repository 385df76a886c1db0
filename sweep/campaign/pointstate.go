package campaign

import (
	"path/filepath"
	"strings"

	"sweep/internal/plural"
	"sweep/metrics/result"
)

// pointState is what the journal says about one point.
type pointState struct {
	status string // "", ok, failed, interrupted
	// open: the last attempt started and the journal has no end of it
	// (status interrupted): the sweep was killed, or the end's journal
	// write failed, while or after it ran (recoverFromDisk).
	open     bool
	failures int // failed attempts over every invocation
	// attempts are the attempts that ended, ok or failed, over every
	// invocation: one interrupted (Ctrl-C, a killed sweep) measured
	// nothing and is run again, so it does not count.
	attempts int
	result   string
	metrics  *Metrics
	err      string
	seconds  float64
	reused   bool
	// noServer: the last attempt got no server (Record.NoServer).
	noServer bool
	// diskFull: the last attempt failed for want of space on the sweep
	// directory's disk (Record.DiskFull), which stopped the sweep. It is
	// not the point's fault: it counts as no attempt (failures,
	// attempts), measured nothing, and a resume runs the point again as
	// one interrupted, its retries intact.
	diskFull bool
	probe    bool // the last attempt ran as an adaptive search's probe
	// why: the rule of the adaptive search that asked for the last
	// attempt (its point_start's Reason); "" without one.
	why string
	// inPass: the last attempt started in its arm's adaptive search pass
	// that has not recorded its end (search_end) yet.
	inPass bool
	// replaced: the last attempt is a full-length run that followed a
	// probe of the point ended (ok or failed) in the same pass.
	replaced bool
	// failHeld: the last attempt is a probe that failed, with no retry
	// left, the way a short window fails: its search may run it again at
	// the full length, so it counts as failed (Options.FailFast) only if
	// the search ends without doing so.
	failHeld bool
}

// start is what a point_start record r says of the point's attempts.
func (st *pointState) start(r Record) {
	st.replaced = !r.Probe && st.probe && st.inPass && (st.status == StatusOK || st.status == StatusFailed && !st.diskFull)
	st.status, st.open = StatusInterrupted, true // until its end record
	st.reused, st.noServer, st.probe, st.inPass, st.failHeld, st.diskFull = r.Reused, r.NoServer, r.Probe, true, false, false
	st.why = r.Reason
}

// end is what a point_end record r says of the point's attempts: one
// that ended ok or failed counts, one interrupted does not, nor one
// failed for want of space on the sweep directory's disk (diskFull).
func (st *pointState) end(r Record) {
	st.status, st.err, st.seconds, st.open = r.Status, r.Error, r.Seconds, false
	st.result, st.metrics = r.Result, r.Metrics
	st.diskFull = r.Status == StatusFailed && r.DiskFull != ""
	switch {
	case st.diskFull:
	case r.Status == StatusFailed:
		st.failures++
		st.attempts++
	case r.Status == StatusOK:
		st.attempts++
	}
}

// ended is how the point ended, for a resume's dry run (Left.Ended):
// "ok" ("ok (probe)": an adaptive search's probe), "skipped (adaptive
// discovery)", "failed (2 attempts)", "interrupted", else "not run".
func (st *pointState) ended() string {
	switch st.status {
	case StatusInterrupted:
		return StatusInterrupted
	case StatusOK:
		if st.probe {
			return "ok (probe)"
		}
		return "ok"
	case StatusSkipped:
		return "skipped (adaptive discovery)"
	case StatusFailed:
		return "failed (" + plural.Count(st.attempts, "attempt", "attempts") + ")"
	}
	return "not run"
}

// attempt is the number of the point's attempt under way: its attempts
// that counted, and this one. An interrupted attempt's number is given
// again to the attempt that redoes it.
func (st *pointState) attempt() int { return st.attempts + 1 }

// apply is what the journal record r of the point says of its state.
func (st *pointState) apply(r Record, retries int) {
	switch r.Event {
	case EventPointStart:
		st.start(r)
	case EventPointEnd:
		st.end(r)
	case EventPointRedo:
		st.status, st.result, st.open = "", "", false
	case EventPointSkip:
		st.skip(r.Reason, retries)
	}
}

// notNeededAgain is added to the error of a failed point that adaptive
// discovery did not ask for again.
const notNeededAgain = "not run again: adaptive discovery does not need it"

// skip records that adaptive discovery did not run the point (reason).
// A point that never ran is skipped. One whose last attempt failed (a
// probe over the error-rate limit, whose later points settled the knee
// without it) ran and failed: it stays failed, with why it did not run
// again, and is given up on (no more retries); "skipped" would say it
// never ran and hide the failure.
func (st *pointState) skip(reason string, retries int) {
	st.open = false
	if st.status != StatusFailed {
		st.status, st.err = StatusSkipped, reason
		return
	}
	if !strings.HasSuffix(st.err, notNeededAgain) {
		st.err += "; " + notNeededAgain
	}
	st.failures = max(st.failures, retries+1)
}

// lastRun is how the point's last attempt ran when it ended (ok or
// failed): as a probe or at the full length; none when it never ended
// (never run, skipped, interrupted or redone), its server did not
// start or the sweep directory's disk was full (it measured nothing).
func (st *pointState) lastRun() Ran {
	if st.status != StatusOK && st.status != StatusFailed || st.startFailed() || st.diskFull {
		return Ran{}
	}
	return Ran{Probe: st.probe, Full: !st.probe}
}

// startFailed reports whether the point's last attempt failed because
// its server did not start: it measured nothing, and an adaptive search
// reads it as never run.
func (st *pointState) startFailed() bool {
	return st.status == StatusFailed && strings.HasPrefix(st.err, serverStartFailed)
}

// failedForGood reports whether point id (at conc; st: its last run a
// probe) failed the way a full-length run fails too, which the search
// never runs again: the sample the search reads of it (runSample, from
// the result file its point_end names in dir, else the point's own) is a
// failure that is not a short window's (knee.Sample.FailedForGood). Not
// one that failed without a readable result: the search reads such a
// run as a failure a full-length run may pass.
func failedForGood(dir, id string, conc int, st *pointState) bool {
	if st.status != StatusFailed {
		return false
	}
	path := result.PointPath(dir, id)
	if st.result != "" {
		path = filepath.Join(dir, st.result)
	}
	smp, ok := runSample(path, conc, st.lastRun())
	return ok && smp.FailedForGood()
}

// searchState is what the journal says of each adaptive arm's search
// (by Record.Arm): true once it recorded its end (search_end), until
// the arm starts a point again.
type searchState map[int]bool

// apply is what record r says of its arm's search.
func (s searchState) apply(r Record) {
	switch {
	case r.Event == EventSearchEnd:
		s[r.Arm] = true
	case r.Event == EventPointStart && r.Arm != 0:
		s[r.Arm] = false
	}
}
