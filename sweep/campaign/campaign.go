package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/internal/plural"
	"sweep/internal/proc"
	"sweep/internal/usage"
	"sweep/metrics/result"
	"sweep/sweep/knee"
	"sweep/sweep/run"
)

// MaxRetries is the largest Options.Retries Run accepts: a point that
// fails every time is run at most MaxRetries+1 times, so a sweep ends.
const MaxRetries = 100

// ErrPointsFailed is returned by Run when points failed after their retries.
var ErrPointsFailed = errors.New("points failed")

// Options are the inputs of Run.
type Options struct {
	// Dir is the sweep directory (created if missing).
	Dir string
	// Identity is the sweep's command; its Points are filled from Schedule.
	Identity Identity
	Schedule *Schedule
	Executor Executor
	// Retries is how many times a failed point is run again (in total,
	// over every invocation on Dir), 0 to MaxRetries. With Choose, the
	// full-length run of a failed probe is one of them, and a failed
	// point is retried only after its arm's search pass ended (Adaptive).
	// A server that does not start fails its arm's points still to run in
	// that round (RunArm), so each round starts the arm's server at most
	// once more.
	Retries int
	// FailFast stops the sweep at the first point that failed for good
	// (no retry left); Run then returns ErrPointsFailed. An adaptive
	// search's probe that failed the way a short window fails counts once
	// its search ends without running it again at the full length.
	FailFast bool
	// Progress receives one line per event (nil: none).
	Progress io.Writer
	// Estimate is a point's predicted wall time, for the ETA before any
	// point finished (nil: no ETA until then).
	Estimate func(*Point) time.Duration
	// Parallel is how many arms run at once, for the first ETA (default 1).
	Parallel int
	// Work is a point's expected share of the sweep's time, relative to
	// the others' (nil: each the same): the ETA weighs the points left
	// by it against the runs done (a probe's run as its AsProbe).
	Work func(*Point) float64
	// Choose is the executor's ArmOptions.Choose when its arms choose
	// their points (adaptive discovery: Adaptive), nil otherwise. An arm
	// whose every point is done (or held: a point failed in a search pass
	// a resume goes on with) then still gets a job, holding no points,
	// while Choose asks for one of them (a probe that ended in an earlier
	// invocation, at the full length); an arm it asks nothing of gets
	// none.
	Choose func(Job, map[string]Ran) []*Point
	// Cost prices the summary's GPU-hours (Summary.Spent) and what is
	// left to run (Left.GPUHours); nil: PlannedCost(0).
	Cost *Cost
	// Begin, when set, is called once Run has read the directory, before
	// it runs anything, with what is left to run (a new sweep: every
	// point): the caller's header line.
	Begin func(Left)
}

// Left is what a sweep has left to run as Run begins (Options.Begin), or
// would begin (Preview).
type Left struct {
	// Resume says the directory held the sweep: Run goes on with it.
	Resume bool
	// Points are the points left to run: never run, interrupted, redone
	// or failed with a retry left, but for an arm whose search cannot go
	// on (its server did not start, no retry left); with Options.Choose
	// also the done ones it asks for again, and the search runs those of
	// them it asks for. ServerStarts are the server starts they need
	// when none fails (Point.Server).
	Points, ServerStarts int
	// Run are the IDs of those points, by arm in schedule order.
	Run []string
	// GPUHours is what they and their server starts cost on the
	// hardware as Options.Cost prices them (each point once at the full
	// length: with Options.Choose an upper bound).
	GPUHours float64
	// Status, on a resume, is how far the sweep got: "5 of 7 points
	// complete, 1 interrupted: 2 to run" (Run's "resuming" line).
	Status string
	// Ended, on a resume, says how each point left out of Run ended, by
	// ID: "ok" ("ok (probe)"), "skipped (adaptive discovery)", "failed (2
	// attempts)" (no retry left); in an adaptive arm whose search cannot
	// go on, its server not starting (no retry left), also "interrupted"
	// or "not run".
	Ended map[string]string
	// Fixed, on a resume, are what the directory's files settle that the
	// journal left open or got wrong, each a line: a completed point
	// whose result no longer counts (redone), a point whose end the
	// journal lacks that finished (recovered from disk). Run journals
	// them before it runs anything.
	Fixed []string
}

// sweep is one Run in progress.
type sweep struct {
	o      Options
	j      *Journal
	mu     sync.Mutex
	state  map[string]*pointState
	points map[string]*Point
	// searches says which adaptive arms' searches recorded their end.
	searches searchState
	started  time.Time
	jErr     error
	// stopErr is why the sweep stopped on its own before its points
	// were done (a point found the disk full); jErr, its journal's
	// failure while it runs them, stops it too, as Options.FailFast does.
	// halted is the cause it stopped with (halt): points that were to
	// start then do not run (unstarted).
	stopErr error
	halted  error
	cancel  context.CancelCauseFunc
	// unstarted holds the points whose start came after the sweep
	// stopped on its own, or whose start the journal could not record:
	// they do not run (RunArm), and their end says so.
	unstarted map[string]bool
	failed    bool // a point failed for good (fail-fast)
	servers   int
	// runs counts the points started, an adaptive search's progress (its
	// points are not run in grid order, nor all): on a resume from the
	// runs that ended (ok or failed) in earlier invocations (before), so
	// that a run redone is numbered as it would have been uninterrupted.
	runs int
	// before is what earlier invocations on the directory did, for a
	// resume's progress lines (resume): their runs that ended, ok or
	// failed, and their wall time (journalWall).
	before struct {
		runs int
		wall time.Duration
		// work is their runs' Work.
		work float64
	}
	// doneWork is the Work of this invocation's runs that ended.
	doneWork float64
	// unannounced holds, by point ID, the progress line of a point that
	// got no server (Record.NoServer) until its end says whether its
	// server failed to start or was interrupted.
	unannounced map[string]func(srv string)
	// recs are the directory's journal records and every record this
	// invocation journaled, also one whose write failed: what ran, for
	// the summary's GPU-hours, as its points' states say (recMu).
	recMu sync.Mutex
	recs  []Record
}

// newSweep is the sweep o describes, with no point run (j: its journal,
// nil for Preview, which writes nothing).
func newSweep(o Options, j *Journal) *sweep {
	s := &sweep{o: o, j: j, state: map[string]*pointState{}, points: map[string]*Point{}, searches: searchState{}, started: time.Now(),
		unannounced: map[string]func(string){}, unstarted: map[string]bool{}}
	for _, p := range o.Schedule.Points {
		s.state[p.ID] = &pointState{}
		s.points[p.ID] = p
	}
	return s
}

// identity is the sweep's Identity with its points.
func (s *sweep) identity() Identity {
	id := s.o.Identity
	id.Points = make([]string, len(s.o.Schedule.Points))
	for i, p := range s.o.Schedule.Points {
		id.Points[i] = p.ID
	}
	return id
}

// append journals r and keeps it among the sweep's records, also when
// its write fails.
func (s *sweep) append(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	s.recMu.Lock()
	s.recs = append(s.recs, r)
	s.recMu.Unlock()
	return s.j.Append(r)
}

// records are the sweep's records (sweep.recs).
func (s *sweep) records() []Record {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	return slices.Clone(s.recs)
}

// Run runs the sweep in o.Dir, resuming what an earlier invocation left:
// points whose result is complete and valid are skipped, failed points are
// run again while they have retries left, interrupted ones are redone, a
// point the journal started and never ended whose directory says it
// finished is recovered (its end journaled, Record.Recovered; never run
// again), a directory holding a different sweep is refused
// (*DifferenceError; Identity.Diff), and so is one holding no sweep (no
// journal record) that is not empty (a *usage.Error naming what it
// holds: checkNewDir), before anything is written there.
// Leftover servers of a killed invocation (recorded in the journal) are
// stopped first. Run writes summary.json and summary.txt before it returns
// (Summary.Written; a write that failed is joined to its error) and
// returns ctx's error when cancelled, a *DiskFullError when a point found
// the disk full (the sweep stopped there), ErrPointsFailed when points
// failed for good. A directory it cannot make or lock (not writable, a
// file on its path, in use by another sweep) is a *usage.Error: the
// caller gave a directory it cannot use (a refusal naming the fix:
// usage.Refusef).
func Run(ctx context.Context, o Options) (*Summary, error) {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	if o.Retries < 0 || o.Retries > MaxRetries {
		return nil, fmt.Errorf("retries %d: want 0 to %d", o.Retries, MaxRetries)
	}
	if err := checkNewDir(o.Dir); err != nil {
		return nil, err
	}
	if err := run.MakeOutDir(o.Dir, "sweep directory"); err != nil {
		return nil, usage.Refuse(err)
	}
	unlock, err := lockDir(o.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	j, recs, err := OpenJournal(o.Dir)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	s := newSweep(o, j)
	s.recs = recs
	if len(recs) == 0 {
		id := s.identity()
		if err := s.append(Record{Event: EventSweepStart, Identity: &id, Format: JournalFormat, Arms: planOf(o.Schedule)}); err != nil {
			return nil, err
		}
		s.begin(false)
	} else {
		fixes, err := s.resume(recs)
		if err != nil {
			return nil, err
		}
		for _, f := range fixes {
			s.progress("%s", f.line)
			s.journal(f.rec)
		}
		s.begin(true)
		s.stopLeftovers(recs)
		s.progress("resuming %s: %s", o.Dir, s.resumeLine())
		if err := s.append(Record{Event: EventSweepStart, Reason: "resume", Format: JournalFormat}); err != nil {
			return nil, err
		}
	}
	runErr := s.rounds(ctx)
	sum := s.summary()
	if err := sum.Write(o.Dir); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("summary: %w", run.CheckDiskFull(o.Dir, err)))
	}
	end := Record{Event: EventSweepEnd, Reason: sum.counts()}
	if runErr != nil {
		end.Error = runErr.Error()
	}
	if err := s.append(end); err != nil && s.jErr == nil {
		runErr = errors.Join(runErr, fmt.Errorf("the journal does not record the sweep's end: %w", run.CheckDiskFull(o.Dir, err)))
	}
	if runErr == nil && sum.Failed > 0 {
		runErr = fmt.Errorf("%d of %d points: %w (see %s)", sum.Failed, len(sum.Points), ErrPointsFailed, filepath.Join(o.Dir, SummaryText))
	}
	return sum, runErr
}

// Preview is what Run would find in o.Dir, read without writing,
// creating or locking anything (a dry run's): what is left to run of the
// sweep, the directory's (Left.Resume, with its Status and what its
// files settle: Left.Fixed) or a new one (every point); a
// *DifferenceError when the directory holds a different sweep, a
// *usage.Error when it holds no sweep and is not empty (checkNewDir),
// or an error when its journal cannot be read, as Run would return them.
func Preview(o Options) (Left, error) {
	if o.Retries < 0 || o.Retries > MaxRetries {
		return Left{}, fmt.Errorf("retries %d: want 0 to %d", o.Retries, MaxRetries)
	}
	var recs []Record
	var err error
	if o.Dir != "" { // no directory: nothing ran
		recs, err = ReadJournal(o.Dir)
	}
	if errors.Is(err, fs.ErrNotExist) {
		recs, err = nil, nil
	}
	if err != nil {
		return Left{}, err
	}
	s := newSweep(o, nil)
	if len(recs) == 0 {
		if o.Dir != "" {
			if err := checkNewDir(o.Dir); err != nil {
				return Left{}, err
			}
		}
		return s.left(), nil
	}
	fixes, err := s.resume(recs)
	if err != nil {
		return Left{}, err
	}
	l := s.left()
	l.Resume, l.Status = true, s.resumeLine()
	for _, f := range fixes {
		l.Fixed = append(l.Fixed, f.line)
	}
	return l, nil
}

// fix is a record a resume journals before it runs anything, with its
// progress line (sweep.resume).
type fix struct {
	rec  Record
	line string
}

// resume reads the directory's journal records recs (not empty) as the
// sweep's: refused (*DifferenceError) when they are of another sweep,
// else replayed, and what the point directories settle applied to the
// points' states (verifyResults, recoverFromDisk): the records to
// journal for it are returned, not written.
func (s *sweep) resume(recs []Record) ([]fix, error) {
	if recs[0].Event != EventSweepStart || recs[0].Identity == nil {
		return nil, fmt.Errorf("%s: the journal does not start with a sweep_start record", filepath.Join(s.o.Dir, JournalFile))
	}
	id := s.identity()
	if d := recs[0].Identity.Diff(&id); len(d) > 0 {
		return nil, &DifferenceError{Dir: s.o.Dir, Diffs: d}
	}
	s.replay(recs)
	fixes := append(s.verifyResults(), s.recoverFromDisk()...)
	for id, st := range s.state {
		s.before.runs += st.attempts
		if p := s.points[id]; p != nil {
			s.before.work += float64(st.attempts) * s.work(p, false)
		}
	}
	s.before.wall, s.runs = journalWall(recs), s.before.runs
	return fixes, nil
}

// journalWall is the wall time of the invocations whose journal records
// are recs: per invocation, from its sweep_start to its last record.
func journalWall(recs []Record) time.Duration {
	var wall time.Duration
	var start, last time.Time
	for _, r := range recs {
		if r.Event == EventSweepStart {
			wall += last.Sub(start)
			start, last = r.Time, r.Time
		}
		if r.Time.After(last) {
			last = r.Time
		}
	}
	return wall + last.Sub(start)
}

// begin calls Options.Begin with what is left to run (resume: the
// directory held the sweep).
func (s *sweep) begin(resume bool) {
	if s.o.Begin == nil {
		return
	}
	s.mu.Lock()
	l := s.left()
	s.mu.Unlock()
	l.Resume = resume
	s.o.Begin(l)
}

// left is what the sweep has left to run (Left): the points of todo's
// jobs, with Options.Choose also those held until their search pass
// ends, and the server starts they need.
func (s *sweep) left() Left {
	l := Left{Ended: map[string]string{}}
	c := s.o.Cost
	if c == nil {
		c = PlannedCost(0)
	}
	for _, a := range s.o.Schedule.Arms {
		if s.unstartable(a) {
			for _, p := range a.Points {
				l.Ended[p.ID] = s.state[p.ID].ended()
			}
			continue
		}
		job := s.job(a)
		points := append(slices.Clone(job.Points), s.again(job)...)
		for _, p := range a.Points {
			if s.held(s.state[p.ID]) {
				points = append(points, p)
			}
		}
		ids, servers := map[string]bool{}, map[int]bool{}
		for _, p := range points {
			ids[p.ID], servers[p.Server] = true, true
		}
		gpus := float64(a.GPUs * max(a.Nodes, 1))
		for _, p := range a.Points {
			if !ids[p.ID] {
				l.Ended[p.ID] = s.state[p.ID].ended()
				continue
			}
			l.Run = append(l.Run, p.ID)
			l.GPUHours += gpus * c.Point(p) / 3600
		}
		l.Points += len(ids)
		l.ServerStarts += len(servers)
		l.GPUHours += gpus * float64(len(servers)) * c.StartSeconds / 3600
	}
	return l
}

// replay rebuilds every point's state and every arm's search's from
// the journal.
func (s *sweep) replay(recs []Record) {
	for _, r := range recs {
		s.searches.apply(r)
		s.endPass(r)
		if st := s.state[r.Point]; st != nil {
			st.apply(r, s.o.Retries)
		}
	}
}

// endPass is what record r says of the search passes of its arm's
// points: a search_end ends the pass every point of the arm last ran in.
// It returns those points' states (none for another record).
func (s *sweep) endPass(r Record) []*pointState {
	if r.Event != EventSearchEnd || r.Arm < 1 || r.Arm > len(s.o.Schedule.Arms) {
		return nil
	}
	var ended []*pointState
	for _, p := range s.o.Schedule.Arms[r.Arm-1].Points {
		st := s.state[p.ID]
		st.inPass, st.replaced = false, false
		ended = append(ended, st)
	}
	return ended
}

// resumeLine is "5 of 7 points complete, 1 failed to retry, 1
// interrupted: 2 to run" (complete: ok; the points adaptive discovery
// skipped are counted apart), and with Options.Choose the points it holds
// ("1 failed in a search under way") and the points that ran it asks
// for first ("; adaptive discovery asks again for points that ran: arm 1
// c64 at the full length").
func (s *sweep) resumeLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ok, skipped, failed, gaveUp, held, interrupted, diskFull, todo int
	for _, p := range s.o.Schedule.Points {
		st := s.state[p.ID]
		switch {
		case st.status == StatusOK:
			ok++
			continue
		case st.status == StatusSkipped:
			skipped++
			continue
		case st.diskFull:
			diskFull++
		case st.status == StatusFailed && st.failures > s.o.Retries:
			gaveUp++
			continue
		case s.held(st):
			held++
			continue
		case st.status == StatusFailed:
			failed++
		case st.status == StatusInterrupted:
			interrupted++
		}
		todo++
	}
	line := fmt.Sprintf("%d of %d points complete", ok, len(s.o.Schedule.Points))
	if skipped > 0 {
		line += fmt.Sprintf(", %d skipped by adaptive discovery", skipped)
	}
	if failed > 0 {
		line += fmt.Sprintf(", %d failed to retry", failed)
	}
	if gaveUp > 0 {
		line += fmt.Sprintf(", %d failed with no retry left (--retries %d)", gaveUp, s.o.Retries)
	}
	if held > 0 {
		line += fmt.Sprintf(", %d failed in a search under way (retried when it ends, if it asks)", held)
	}
	if interrupted > 0 {
		line += fmt.Sprintf(", %d interrupted", interrupted)
	}
	if diskFull > 0 {
		line += fmt.Sprintf(", %d stopped by a full disk (not counted against --retries)", diskFull)
	}
	line = fmt.Sprintf("%s: %d to run", line, todo)
	var again []string
	for _, a := range s.o.Schedule.Arms {
		for _, p := range s.again(s.job(a)) {
			how := "at the full length"
			if p.Probe {
				how = "as a probe"
			}
			again = append(again, fmt.Sprintf("arm %d c%d %s", a.Index+1, p.Conc(), how))
		}
	}
	if len(again) > 0 {
		line += "; adaptive discovery asks again for points that ran: " + strings.Join(again, ", ")
	}
	return line
}

// verifyResults re-checks the result of every completed point: a missing,
// unreadable or invalid result, or one that is another point's, means the
// point is redone (its point_redo returned).
func (s *sweep) verifyResults() []fix {
	var fixes []fix
	for _, p := range s.o.Schedule.Points {
		st := s.state[p.ID]
		if st.status != StatusOK {
			continue
		}
		if err := CheckResult(filepath.Join(s.o.Dir, st.result), p); err != nil {
			fixes = append(fixes, fix{Record{Event: EventPointRedo, Point: p.ID, Index: p.Index + 1, Reason: err.Error()},
				fmt.Sprintf("point %s: %v: redone", p.ID, err)})
			st.status, st.result = "", ""
		}
	}
	return fixes
}

// recoverFromDisk ends, ok, every point whose last attempt the journal
// started and never ended while its directory says the attempt finished
// (finished): the sweep was killed between the result's write and its
// end's journal record, or that record's write failed (a full disk). Its
// point_end, marked Recovered, is returned; the point is not run again.
// A point whose files are incomplete stays interrupted and is redone.
func (s *sweep) recoverFromDisk() []fix {
	var fixes []fix
	for _, p := range s.o.Schedule.Points {
		st := s.state[p.ID]
		if !st.open {
			continue
		}
		r, ok := finished(s.o.Dir, p, st.probe)
		if !ok {
			continue
		}
		r.Attempt = st.attempt()
		st.end(r)
		fixes = append(fixes, fix{r, fmt.Sprintf("point %s: %s: not run again", p.ID, r.Reason)})
	}
	return fixes
}

// recoveredReason is the Reason of a point_end recoverFromDisk writes.
const recoveredReason = "recovered from disk: its result is complete and valid and its run.json says it finished ok; the journal lacked its end (the sweep was killed, or the end's write failed)"

// finished returns the point_end of point p's attempt, a probe or not as
// its start said (probe), when p's directory in the sweep directory dir
// says the attempt finished: its run.json (run.Record) says the run
// ended ok with p's result file, and that file is complete, valid, p's
// own (checkResult) and a probe's exactly when the attempt was one. A
// directory the attempt had not cleared yet (ClearPointDir) holds an
// earlier attempt's files: one that failed, or ended its run.json
// unfinished, is not taken; a probe's, for a full-length attempt, not
// either.
func finished(dir string, p *Point, probe bool) (Record, bool) {
	// A run.json that does not read says nothing finished: redone.
	rec, err := run.ReadRecordFile(result.PointDir(dir, p.ID))
	path := result.PointPath(dir, p.ID)
	if err != nil || rec == nil || !rec.OK || rec.Finished.IsZero() || filepath.Base(rec.ResultFile) != filepath.Base(path) {
		return Record{}, false
	}
	smp, m, err := checkSample(path, p)
	if err != nil || smp.Probe != probe {
		return Record{}, false
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return Record{}, false
	}
	return Record{Event: EventPointEnd, Arm: p.Arm + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(), Status: StatusOK,
		Seconds: max(rec.Finished.Sub(rec.Started).Seconds(), 0), Result: rel, Metrics: m,
		Probe: probe, Recovered: true, Reason: recoveredReason}, true
}

// CheckResult reads an aggregate result file and says whether it can be
// trusted as point p's result: a complete result (as sweep/knee reads
// it) that is not marked invalid, has successful requests and is p's
// own: its concurrency, recipe fingerprint, model and arm identity
// (result.IdentityKeys) are those p's facts give (a nil p skips that).
func CheckResult(path string, p *Point) error {
	_, err := checkResult(path, p)
	return err
}

// checkResult is CheckResult that also returns the result's headline
// numbers, so a finished point's file is read once.
func checkResult(path string, p *Point) (*Metrics, error) {
	_, m, err := checkSample(path, p)
	return m, err
}

// checkSample is checkResult that also returns the result as the knee
// reads it.
func checkSample(path string, p *Point) (knee.Sample, *Metrics, error) {
	smp, ok, err := knee.ReadFile(path)
	switch {
	case err != nil:
		return smp, nil, fmt.Errorf("result %s: %w", filepath.Base(path), err)
	case !ok:
		return smp, nil, fmt.Errorf("result %s is corrupt or not an aggregate result", filepath.Base(path))
	case smp.Excluded != "":
		return smp, nil, fmt.Errorf("result %s does not count: %s", filepath.Base(path), smp.Excluded)
	}
	if p != nil {
		if err := resultOf(path, p); err != nil {
			return smp, nil, err
		}
	}
	m := &Metrics{TputPerGPU: smp.TotalTPS, CacheHitRate: smp.CacheHit}
	if p := smp.Intvty.P50; p != nil {
		v := float64(*p)
		m.Interactivity = &v
	}
	if smp.AL != nil && smp.AL.Measured != nil {
		v := float64(*smp.AL.Measured)
		m.AL = &v
	}
	return smp, m, nil
}

// todo returns the jobs of the points still to run, by arm in schedule
// order, but for arms whose server does not start (unstartable). With
// Options.Choose, an arm with no point to run gets a job (with no points)
// while Choose asks for one of its done points (again): a sweep killed
// after its last probe, before the full-length run of a probe the search
// asked for, would otherwise end without that run.
func (s *sweep) todo() []Job {
	var jobs []Job
	for _, a := range s.o.Schedule.Arms {
		if s.unstartable(a) {
			continue
		}
		job := s.job(a)
		if len(job.Points) > 0 || len(s.again(job)) > 0 {
			jobs = append(jobs, job)
		}
	}
	return jobs
}

// job is arm a's job: its points still to run, and how each of its
// points last ran (Job.Earlier). A point its arm's search pass failed
// and has not ended (held) is not to run yet.
func (s *sweep) job(a *Arm) Job {
	job := Job{Arm: a, Earlier: map[string]Ran{}}
	for _, p := range a.Points {
		st := s.state[p.ID]
		if !s.finished(st) && !s.held(st) {
			job.Points = append(job.Points, p)
		}
		if r := st.lastRun(); r.Any() {
			job.Earlier[p.ID] = r
		} else if (st.status == StatusInterrupted || st.diskFull) && st.replaced {
			job.Earlier[p.ID] = Ran{Probe: true}
		}
	}
	return job
}

// finished reports whether a point's state needs no more runs: complete,
// skipped, or failed with no retry left.
func (s *sweep) finished(st *pointState) bool {
	return st.status == StatusOK || st.status == StatusSkipped || st.status == StatusFailed && st.failures > s.o.Retries
}

// held reports whether a point failed with a retry left is held out of
// its arm's job, with Options.Choose: it failed in its arm's search pass
// and that pass has not recorded its end (a sweep killed during it).
// The uninterrupted search reads such a point as it failed (a probe a
// short window explains: its full length next) until the pass ends, and
// only then is it retried, in the next round; a resume goes on with
// that pass, reading the point from Job.Earlier, and retries it after.
func (s *sweep) held(st *pointState) bool {
	return s.o.Choose != nil && st.status == StatusFailed && st.failures <= s.o.Retries && st.inPass && !st.startFailed() && !st.diskFull
}

// again returns the points Options.Choose asks for first in job that the
// job does not hold (done points: a completed probe at the full length);
// none without Choose. Choose depends only on the results on disk, so
// this is what RunArm will run first.
func (s *sweep) again(job Job) []*Point {
	if s.o.Choose == nil {
		return nil
	}
	var out []*Point
	for _, p := range s.o.Choose(job, map[string]Ran{}) {
		if !slices.Contains(job.Points, s.points[p.ID]) {
			out = append(out, p)
		}
	}
	return out
}

// unstartable reports whether arm a's adaptive search cannot go on: a
// point of it failed for good because its server did not start (no
// retry left). Its search is not ended and its other points are left to
// run, not skipped: a resume with more --retries, once the engine
// starts, goes on with it.
func (s *sweep) unstartable(a *Arm) bool {
	return s.o.Choose != nil && slices.ContainsFunc(a.Points, func(p *Point) bool {
		st := s.state[p.ID]
		return st.startFailed() && s.finished(st)
	})
}

// endSearches records the end of the search (search_end) of each arm
// that jobs leave out, with Options.Choose, whose search has not
// recorded it: every point finished or held and the search asks for
// none again (a sweep killed after the arm's last point and before
// RunArm recorded the end, resumed). It reports whether it recorded
// one: the arm's held points are then to retry.
func (s *sweep) endSearches(jobs []Job) bool {
	if s.o.Choose == nil {
		return false
	}
	ended := false
	for _, a := range s.o.Schedule.Arms {
		if s.searches[a.Index+1] || s.unstartable(a) || slices.ContainsFunc(jobs, func(j Job) bool { return j.Arm == a }) {
			continue
		}
		s.observe(Record{Event: EventSearchEnd, Arm: a.Index + 1, Reason: searchDone})
		ended = true
	}
	return ended
}

// rounds runs the pending points, then the failed ones again while they
// have retries left. With Options.Choose a round is one search pass per
// arm; a point it failed is retried in a later round (held).
func (s *sweep) rounds(parent context.Context) error {
	// Options.FailFast cancels ctx (halt): a sweep it stopped ends as its
	// failed points say (ErrPointsFailed), not as an interrupted one. A
	// full disk (stopErr) and the journal (jErr) cancel it too, with the
	// error Run returns. The cause names it to the points it stops
	// (RunArm).
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	s.cancel = cancel
	for round := 0; ; round++ {
		jobs := s.todo()
		if ctx.Err() != nil {
			break
		}
		if s.endSearches(jobs) {
			jobs = s.todo()
		}
		if len(jobs) == 0 {
			break
		}
		if round > 0 {
			s.progress("%s", s.retryLine(jobs))
		}
		if err := s.o.Executor.Execute(ctx, jobs, s.observe); err != nil && ctx.Err() == nil {
			return err
		}
		if s.failed && s.o.FailFast {
			break
		}
		// A bound on the rounds, not the retry budget (each point's
		// failures count against Retries: finished): the two rounds past
		// Retries+1 run the points a remote arm's job never reached (it
		// ended from outside after its first point: pending, not
		// failed), which still get their retries. round-1, not
		// Retries+1: the sum overflows near the int limit.
		if round-1 > s.o.Retries {
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stoppedOnItsOwn(); err != nil {
		return err
	}
	if s.jErr != nil {
		return s.jErr
	}
	return parent.Err()
}

// stoppedOnItsOwn is why the sweep stopped before its points were done,
// on its own: a full disk (stopErr), its journal while it ran them
// (jErr); nil when it did not (Options.FailFast: ErrPointsFailed says
// it).
func (s *sweep) stoppedOnItsOwn() error {
	switch {
	case s.stopErr != nil:
		return s.stopErr
	case s.jErr == nil || s.halted != s.jErr:
		return nil
	}
	if _, ok := errors.AsType[*run.DiskFullError](s.jErr); ok {
		return fmt.Errorf("the sweep stopped: %w; %s", s.jErr, freeSpaceAndResume)
	}
	return fmt.Errorf("the sweep stopped: %w", s.jErr)
}

func (s *sweep) summary() *Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := &Summary{Dir: s.o.Dir, Command: s.o.Identity.Command, ServerStarts: s.servers, WallSeconds: since(s.started)}
	if err := s.stoppedOnItsOwn(); err != nil {
		sum.Stopped = err.Error()
	}
	for _, p := range s.o.Schedule.Points {
		st := s.state[p.ID]
		ps := PointSummary{Index: p.Index + 1, ID: p.ID, Arm: s.o.Schedule.Arms[p.Arm].Name, Conc: p.Conc(),
			Status: st.status, Attempts: st.attempts, Error: st.err, Result: st.result, Seconds: st.seconds, Reused: st.reused, DiskFull: st.diskFull, Probe: st.probe, Why: st.why, Metrics: st.metrics,
			StartFailed: st.noServer || st.startFailed()} // startFailed: a journal without no_server
		switch st.status {
		case StatusOK:
			sum.OK++
			ps.Error = ""
		case StatusFailed:
			sum.Failed++
		case StatusSkipped:
			sum.Skipped++
		case StatusInterrupted:
			sum.Interrupted++
		default:
			sum.Pending++
		}
		if ps.Attempts > 0 && !ps.StartFailed && ps.Status != "" && ps.Status != StatusSkipped {
			ps.Warnings = pointWarnings(s.o.Dir, p.ID) // a load of the last attempt ran
		}
		sum.Points = append(sum.Points, ps)
	}
	// What the sweep knows ran, as its points' states do: the records
	// whose journal write failed count too.
	c := s.o.Cost
	if c == nil {
		c = PlannedCost(0)
	}
	sp := c.Spent(s.o.Schedule, s.records(), s.o.Identity.Simulated())
	sum.Spent = &sp
	return sum
}

// retryLine is the progress line of a retry round over jobs: the arms
// whose failed points run again, or, with Options.Choose, that their
// searches ask for none of them again (the verdicts do not hang on
// them: the summary gives each such point's failure, "not run again").
func (s *sweep) retryLine(jobs []Job) string {
	arms := plural.Count(len(jobs), "arm", "arms")
	asks := func(j Job) bool { return len(s.o.Choose(j, map[string]Ran{})) > 0 }
	if s.o.Choose != nil && !slices.ContainsFunc(jobs, asks) {
		return fmt.Sprintf("%s with failed points: %s for none of them again (the verdicts do not hang on them)",
			arms, plural.Word(len(jobs), "its search asks", "their searches ask"))
	}
	return fmt.Sprintf("retrying %s with failed points", arms)
}

// failedPoint records that a point failed for good in this invocation,
// and with Options.FailFast stops the sweep.
func (s *sweep) failedPoint() {
	s.failed = true
	if s.o.FailFast {
		s.halt(errFailFast)
	}
}

// errFailFast is why Options.FailFast stopped a sweep, as the points it
// stops say.
var errFailFast = errors.New("a point failed with no retry left (--fail-fast)")

// DiskFullError is a sweep that stopped because a point failed for want
// of space on the disk of its directory, or on another disk that stays
// full, such as /dev/shm or an engine's cache (Record.DiskFull,
// DiskElsewhere): every later point and retry would fail the same way,
// after a server start each on the GPUs. Run returns it; the journal's
// sweep_end and the summary (Summary.Stopped) say it.
type DiskFullError struct {
	// Disk is "the disk holding DIR is full (4.1 MB free)".
	Disk string
	// Elsewhere says the disk is not the sweep directory's.
	Elsewhere bool
	// Point is the point that failed (its arm and concurrency).
	Point string
}

func (e *DiskFullError) Error() string {
	advice := freeSpaceAndResume
	if e.Elsewhere {
		advice = freeSpaceElsewhereAndResume
	}
	return fmt.Sprintf("the sweep stopped: %s: point %s failed for want of space there, and so would every point and retry after it; %s", e.Disk, e.Point, advice)
}

// freeSpaceAndResume is what to do about a sweep stopped by a full disk.
const freeSpaceAndResume = "free space on it (or move the sweep directory to a larger disk) and rerun the same command to resume"

// freeSpaceElsewhereAndResume is what to do about a sweep stopped by a
// full disk other than its directory's (/dev/shm, a cache).
const freeSpaceElsewhereAndResume = "free space on it and rerun the same command to resume"

// stop stops the sweep on its own with err (the first one stays): the
// points under way are interrupted, none starts (RunArm), and Run
// returns err. cause is what the points it stops say of it.
func (s *sweep) stop(err, cause error) {
	if s.stopErr == nil {
		s.stopErr = err
		s.halt(cause)
	}
}

// halt stops the sweep on its own, cancelling its context with cause
// (the first one stays).
func (s *sweep) halt(cause error) {
	if s.halted == nil {
		s.halted = cause
		s.cancel(cause)
	}
}

// journalFailed records that the journal could not append a record: the
// sweep stops, as it cannot record what it runs.
func (s *sweep) journalFailed(err error) {
	switch {
	case s.halted == nil:
		s.jErr = run.CheckDiskFull(s.o.Dir, err)
		s.halt(s.jErr)
	case s.jErr == nil:
		s.jErr = run.CheckDiskFull(s.o.Dir, err)
	}
}

// observe records an executor event: journal, state, progress.
func (s *sweep) observe(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.searches.apply(r)
	ended := s.endPass(r)
	st := s.state[r.Point]
	switch r.Event {
	case EventServerStart:
		s.servers++
		where := fmt.Sprintf("on GPUs %v", r.GPUs)
		if len(r.GPUs) == 0 {
			where = "on the job's GPUs"
		}
		s.linef("  arm %d: starting a server %s (%s)", r.Arm, where, r.Reason)
	case EventPointStart:
		if st != nil {
			s.pointStarted(r, st)
			return // journalled there, or not at all
		}
	case EventPointEnd:
		if st != nil && !s.pointEnded(&r, st) {
			return // it never ran: the journal has no start of it, nor an end
		}
	case EventPointSkip:
		if st != nil {
			st.skip(r.Reason, s.o.Retries)
		}
	case EventSearchEnd:
		// The verdict it ends on (an ambiguous knee: the replicates that
		// would settle it, which the search does not run).
		s.linef("  arm %d: %s", r.Arm, strings.TrimPrefix(r.Reason, "adaptive discovery: "))
		for _, held := range ended {
			if held.failHeld && held.status == StatusFailed {
				s.failedPoint()
			}
		}
	case EventServerReady:
		s.linef("  server ready for arm %d in %.1fs (pids %v)", r.Arm, r.Seconds, r.PIDs)
	}
	if err := s.append(r); err != nil {
		s.journalFailed(err)
	}
}

// pointStarted records the start r of a point (its state st): in the
// journal first, then its state and progress line. A point whose start
// comes after the sweep stopped on its own, or that the journal cannot
// record, does not start (unstarted): RunArm ends it at once, unrun.
func (s *sweep) pointStarted(r Record, st *pointState) {
	r.Attempt = st.attempt()
	if s.halted != nil {
		s.unstarted[r.Point] = true
		return
	}
	if err := s.append(r); err != nil {
		s.journalFailed(err)
		s.unstarted[r.Point] = true
		return
	}
	probe := ""
	switch {
	case r.Probe:
		probe = " (probe)"
	case st.probe, st.replaced:
		// The last attempt, in this invocation or an earlier one, was
		// its probe, or the full-length run after it that was
		// interrupted (or stopped by a full disk): this one redoes it.
		probe = " (full length after its probe)"
	}
	st.start(r)
	s.runs++
	run := "" // an adaptive search runs some points, in its order: count them
	if s.o.Choose != nil {
		run = fmt.Sprintf("run %d, ", s.runs)
	}
	why := "" // with adaptive discovery, the rule that asked for it
	if r.Reason != "" {
		why = "  why: " + r.Reason
	}
	announce := func(srv string) {
		s.linef("%spoint %d/%d  arm %d/%d %s  conc %d%s  server %s  %s%s", run, r.Index, len(s.o.Schedule.Points), r.Arm, len(s.o.Schedule.Arms),
			s.o.Schedule.Arms[r.Arm-1].Name, r.Conc, probe, srv, s.eta(), why)
	}
	if r.NoServer {
		// Its end follows at once: the server failed to start,
		// or the start was interrupted.
		s.unannounced[r.Point] = announce
	} else {
		announce(serverWord(false, r.Reused, StatusOK))
	}
}

// pointEnded records the end r of a point (its state st) and completes
// r for the journal: the result checked, its path relative. It reports
// false for a point that never started (pointStarted): its state stays
// as its last attempt left it, with why it did not run when it never
// did, and r is not for the journal.
func (s *sweep) pointEnded(r *Record, st *pointState) bool {
	if s.unstarted[r.Point] {
		delete(s.unstarted, r.Point)
		delete(s.unannounced, r.Point)
		if st.status == "" {
			st.err = r.Error
		}
		s.linef("  %s %s", r.Point, r.Error)
		return false
	}
	var warnings []string
	if r.Status == StatusOK && r.Result != "" {
		// The executor's word is not enough: the file must count.
		m, err := checkResult(r.Result, s.points[r.Point])
		if err != nil {
			r.Status, r.Error = StatusFailed, err.Error()
		} else if r.Metrics == nil {
			r.Metrics = m
		}
		if err == nil {
			warnings = pointWarnings(s.o.Dir, r.Point)
		}
	}
	if r.Result != "" {
		if rel, err := filepath.Rel(s.o.Dir, r.Result); err == nil && !strings.HasPrefix(rel, "..") {
			r.Result = rel
		}
	}
	if r.Status == StatusOK && r.Result == "" {
		r.Status, r.Error = StatusFailed, "no result file"
	}
	r.Attempt = st.attempt()
	st.end(*r)
	if announce := s.unannounced[r.Point]; announce != nil {
		delete(s.unannounced, r.Point)
		announce(serverWord(true, false, r.Status))
	}
	if p := s.points[r.Point]; p != nil && r.Status != StatusInterrupted {
		s.doneWork += s.work(p, r.Probe)
	}
	if r.Status == StatusFailed {
		s.pointFailed(*r, st)
	}
	// The time before the error: after it, it read as the end of
	// the log line the error quotes ("... 50 finished requests in 200ms").
	took := (time.Duration(r.Seconds * float64(time.Second))).Round(100 * time.Millisecond)
	if r.Error != "" {
		s.linef("  %s %s in %s: %s%s", r.Point, r.Status, took, r.Error, r.Metrics.String())
	} else {
		s.linef("  %s %s in %s%s", r.Point, r.Status, took, r.Metrics.String())
	}
	for _, w := range warnings {
		s.linef("    warning: %s", w)
	}
	return true
}

// pointFailed is what the failed end r of a point (its state st) does
// to the sweep: a full disk stops it, and the point, whose fault it is
// not, counts no failure (pointState.diskFull); a point failed for good
// counts (failedPoint), but for a probe its search may run again.
func (s *sweep) pointFailed(r Record, st *pointState) {
	if st.diskFull {
		s.stop(&DiskFullError{Disk: r.DiskFull, Elsewhere: r.DiskElsewhere, Point: fmt.Sprintf("%s c%d", s.o.Schedule.Arms[s.points[r.Point].Arm].Name, r.Conc)},
			errors.New(r.DiskFull))
		return
	}
	switch {
	case st.failures <= s.o.Retries:
	case st.startFailed():
		s.failedPoint()
	case st.probe && !failedForGood(s.o.Dir, r.Point, s.points[r.Point].Conc(), st):
		// A step of the search, which may run it again at the
		// full length: it counts if its search ends with it so.
		st.failHeld = true
	default:
		s.failedPoint()
	}
}

func (s *sweep) journal(r Record) {
	if err := s.append(r); err != nil {
		s.mu.Lock()
		if s.jErr == nil {
			s.jErr = run.CheckDiskFull(s.o.Dir, err)
		}
		s.mu.Unlock()
	}
}

// eta is "elapsed 1m5s, ETA 2m10s" for the whole sweep; on a resume
// "elapsed 20s in this invocation, 1m25s in all, ETA 2m10s", its rate
// that of every invocation's runs (sweep.before): the time spent per
// Work of the runs done, times the Work of the points left.
func (s *sweep) eta() string {
	elapsed := time.Since(s.started)
	spent := elapsed + s.before.wall
	doneWork := s.doneWork + s.before.work
	left := 0.0
	var est time.Duration
	for _, p := range s.o.Schedule.Points {
		st := s.state[p.ID]
		if !s.finished(st) {
			left += s.work(p, false)
			if s.o.Estimate != nil {
				est += s.o.Estimate(p)
			}
		}
	}
	took := fmt.Sprintf("elapsed %s", elapsed.Round(time.Second))
	if s.before.wall > 0 {
		took = fmt.Sprintf("elapsed %s in this invocation, %s in all", elapsed.Round(time.Second), spent.Round(time.Second))
	}
	var eta time.Duration
	switch {
	case doneWork > 0:
		eta = time.Duration(float64(spent) / doneWork * left)
	case est > 0: // Estimate's; none on the virtual clock
		eta = est / time.Duration(s.o.Parallel)
	default:
		return took
	}
	return fmt.Sprintf("%s, ETA %s", took, eta.Round(time.Second))
}

// work is point p's Work (1 without one), run as a probe when probe.
func (s *sweep) work(p *Point, probe bool) float64 {
	if s.o.Work == nil {
		return 1
	}
	if probe {
		p = p.AsProbe()
	}
	return s.o.Work(p)
}

func (s *sweep) linef(format string, a ...any) {
	if s.o.Progress == nil {
		return
	}
	fmt.Fprintf(s.o.Progress, "[%7s] %s\n", time.Since(s.started).Round(time.Second), fmt.Sprintf(format, a...))
}

func (s *sweep) progress(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.linef(format, a...)
}

// String is " (12.3 tok/s/GPU, 45.6 tok/s/user, AL 3.38)" or "".
func (m *Metrics) String() string {
	if m == nil {
		return ""
	}
	var parts []string
	if m.TputPerGPU != nil {
		parts = append(parts, strconv.FormatFloat(*m.TputPerGPU, 'f', 1, 64)+" tok/s/GPU")
	}
	if m.Interactivity != nil {
		parts = append(parts, strconv.FormatFloat(*m.Interactivity, 'f', 1, 64)+" tok/s/user")
	}
	if m.AL != nil {
		parts = append(parts, "AL "+strconv.FormatFloat(*m.AL, 'f', 2, 64))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// stopLeftovers stops servers a killed invocation left running: the
// processes carrying the tags of a server_ready record without a later
// server_stop of the arm. The record's pids are not signalled: after a
// reboot, or with the directory resumed on another node, they may belong
// to anyone; a record without tags (an older journal) stops nothing.
func (s *sweep) stopLeftovers(recs []Record) {
	open := map[int]Record{}
	for _, r := range recs {
		switch r.Event {
		case EventServerReady:
			open[r.Arm] = r
		case EventServerStop:
			delete(open, r.Arm)
		}
	}
	arms := slices.Sorted(maps.Keys(open))
	for _, arm := range arms {
		r := open[arm]
		if len(r.Tags) == 0 && len(r.PIDs) > 0 {
			s.progress("arm %d: not stopping pids %v from an earlier run: its journal record does not say which processes are the server's (stop them yourself if they are)", arm, r.PIDs)
			continue
		}
		var pids []int
		for _, tag := range r.Tags {
			pids = append(pids, proc.KillTagged(tag, 10*time.Second)...)
		}
		if len(pids) == 0 {
			continue
		}
		s.progress("stopped leftover server processes %v of arm %d from an earlier run", pids, arm)
		s.journal(Record{Event: EventLeftover, Arm: arm, PIDs: pids})
	}
}

// lockDir takes an exclusive lock on dir, so two sweeps never write one
// directory; a lock it cannot take is a *usage.Error.
func lockDir(dir string) (func(), error) {
	path := filepath.Join(dir, lockFile)
	f, err := atomicfile.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, usage.Refusef("sweep directory %s: cannot write its lock file: %w; %s", dir, err, run.OutDirFix)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		holder, _ := inputfile.Read(path, inputfile.Text)
		return nil, usage.Refusef("%s is in use by another sweep (pid %s): wait for it or stop it", dir, strings.TrimSpace(string(holder)))
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
