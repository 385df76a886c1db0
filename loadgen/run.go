package loadgen

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"sweep/metrics/aiperf"
)

// minThresholdSample is how many profiling requests must have completed
// before the live failed-request threshold is evaluated.
const minThresholdSample = 10

// transportBackoff is how long a lane pauses after a transport error
// (connection refused, reset) before its next request, so a dead server
// is not hammered in a tight loop for the whole duration.
const transportBackoff = 100 * time.Millisecond

// Run replays the traces against the server as Options say, writes the
// aiperf artifacts into o.ArtifactDir and returns what happened. It is
// synchronous: every goroutine it starts (one per lane, the metrics
// poller, the progress printer, the grace-period timer) has exited when
// it returns. Cancelling ctx stops issuing, cancels in-flight requests
// (recorded as cancelled), writes the partial artifacts and returns
// ctx's error. progress receives human-readable progress lines.
func Run(ctx context.Context, o Options, progress io.Writer) (*Result, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("load generator options: %w", err)
	}
	if progress == nil {
		progress = io.Discard
	}
	r := &runner{o: o, progress: progress, counts: map[string]*Counts{aiperf.PhaseWarmup: {}, aiperf.PhaseProfiling: {}}}
	r.start = time.Now()
	r.clock = clock{t0: r.start, scale: o.TimeScale}
	if !o.ClockOrigin.IsZero() {
		r.clock.t0 = o.ClockOrigin
	}
	r.issueEnd, r.cancelAt = inf, inf
	r.benchID = r.uuid("benchmark")
	r.procID = "record_processor_" + r.benchID[:8]
	r.url = o.URL + o.Endpoint
	ds, err := resolveDataset(&o, func(msg string) { r.logf("warning: %s", msg) })
	if err != nil {
		return nil, err
	}
	r.ds = ds
	traces := ds.Traces
	if o.DatasetEntries > 0 && o.DatasetEntries < len(traces) {
		traces = traces[:o.DatasetEntries]
	}
	for i := range traces {
		c := traces[i].Conversation(o.IdleGapCap.Seconds())
		if len(c.Turns) > 0 {
			r.convs = append(r.convs, c)
		}
	}
	if len(r.convs) == 0 {
		return nil, fmt.Errorf("trace source %s: no replayable turns", ds.describe())
	}
	if o.MaxContext > 0 && !slices.ContainsFunc(r.convs, func(c *Conversation) bool {
		return slices.ContainsFunc(c.Turns, func(t Turn) bool { return t.In <= o.MaxContext })
	}) {
		return nil, fmt.Errorf("trace source %s: every turn exceeds --max-context-length %d", ds.describe(), o.MaxContext)
	}
	if err := prepareDir(o.ArtifactDir); err != nil {
		return nil, err
	}
	rt := o.Transport
	if rt == nil {
		tr := &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         countingDialer(), // http_req_data_*
			MaxIdleConns:        o.Concurrency*2 + 8,
			MaxIdleConnsPerHost: o.Concurrency*2 + 8,
			IdleConnTimeout:     90 * time.Second,
		}
		defer tr.CloseIdleConnections() // no keep-alive goroutine outlives Run
		rt = tr
	}
	r.hc = &http.Client{Transport: rt}
	if o.VirtualClock {
		r.vc = &vclock{hc: r.hc, base: strings.TrimRight(o.URL, "/")}
		if r.main, err = r.vc.joinFirst(ctx, "run", r.start); err != nil {
			return nil, err
		}
		defer func() { r.vc.leave(r.main) }()
		r.logf("virtual clock: the engine's simulated time is the timeline (starting at %gs)", r.main.now)
	}
	r.logf("replaying %d agentic sessions from %s against %s (model %s, concurrency %d)", len(r.convs), ds.describe(), r.url, o.Model, o.Concurrency)

	// Server metrics: a baseline before warm-up, then a poller until the
	// end of profiling plus the flush period.
	var scr *scraper
	var pollWG sync.WaitGroup
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer func() { stopPoll(); pollWG.Wait() }()
	if eps := metricsEndpoints(&o); len(eps) > 0 {
		scr = newScraper(r.hc, eps, r.clock)
		if r.vc != nil {
			scr.vc, scr.main = r.vc, r.main
			scr.record(ctx, o.ScrapeInterval) // the engine samples on the simulated timeline
		} else {
			scr.scrapeAll(ctx)
			pollWG.Go(func() { scr.poll(pollCtx, max(o.scaled(o.ScrapeInterval), time.Millisecond)) }) // exits on stopPoll
		}
	}

	lanes := r.warmup(ctx)
	var profStart int64
	if r.abort == nil && ctx.Err() == nil {
		if scr != nil && r.o.WarmupPerLane > 0 {
			scr.scrapeAll(ctx) // the counters' reference point: warm-up has drained
		}
		profStart = r.nowNs()
		r.profile(ctx, lanes)
	}
	profEnd := r.nowNs()
	r.phaseWindow = [2]int64{profStart, profEnd} // before the server metrics' flush

	if scr != nil && profStart > 0 {
		if ctx.Err() == nil { // let counters that move at request end settle
			if r.vc != nil {
				r.vc.sleep(ctx, r.main, r.main.now+o.ScrapeFlush.Seconds(), 0)
			} else {
				sleepCtx(ctx, o.scaled(o.ScrapeFlush))
			}
		}
		stopPoll()
		pollWG.Wait()
		fin, cancel := context.WithTimeout(context.WithoutCancel(ctx), scrapeTimeout)
		scr.scrapeAll(fin)
		scr.collect(fin)
		cancel()
		profEnd = r.nowNs()
	}
	if r.vc != nil {
		r.sortRecords() // lanes finish in wall order; the artifacts follow the timeline
	}
	res, werr := r.writeArtifacts(ctx, scr, profStart, profEnd)
	switch {
	case werr != nil:
		return res, werr
	case r.abort != nil:
		return res, r.abort
	case ctx.Err() != nil:
		return res, ctx.Err()
	case res.Profiling.OK == 0 && res.Profiling.Failed == 0 && res.Profiling.Cancelled > 0:
		return res, &RunError{Reason: "none_completed", Err: fmt.Errorf("no profiling request completed: all %d were still open when the grace period ended and were cancelled (aiperf records none of them)", res.Profiling.Cancelled)}
	case res.Profiling.OK == 0:
		n := res.Profiling.OK + res.Profiling.Failed
		return res, &RunError{Reason: "all_failed", Err: fmt.Errorf("all %d inference request(s) failed; no successful responses were collected", n)}
	}
	return res, nil
}

// nextConv returns the next conversation from the sampler: the corpus in
// trace order, wrapped (aiperf 0.12.0's sequential sampler, the weka
// loader's preferred strategy).
//
// On the virtual clock the order in which lanes ask depends on the
// machine, so each lane strides through the corpus on its own instead:
// lane i's k-th play is trace i + k*concurrency.
func (r *runner) nextConv(l *lane) *Conversation {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.sampleNext
	if r.vc != nil {
		i = l.idx + l.plays*r.o.Concurrency
	}
	l.plays++
	c := r.convs[i%len(r.convs)]
	r.sampleNext++
	return c
}

// newSession starts a play of conv; parent is nil for roots. key names
// the play uniquely within the run (its ids derive from it on the
// virtual clock).
func (r *runner) newSession(conv *Conversation, parent *session, key string) *session {
	r.mu.Lock()
	num := r.sessions
	r.sessions++
	r.mu.Unlock()
	s := &session{conv: conv, num: num, correlationID: r.uuid("session/" + key), sim: r.vc != nil}
	s.rootID = s.correlationID
	if parent != nil {
		s.rootID, s.parentID, s.marker = parent.rootID, parent.correlationID, parent.marker
	} else if r.o.CacheBust {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%s/%s", r.benchID, s.correlationID, conv.ID)
		s.marker = fmt.Sprintf("[rid:%012x]", h.Sum64()&0xffffffffffff)
	}
	return s
}

// uuid returns a random RFC 4122 version 4 UUID, or on the virtual clock
// one derived from the seed and key, so that the ids the engine routes
// by are the same in every run of a seed.
func (r *runner) uuid(key string) string {
	if !r.o.VirtualClock {
		return newUUID()
	}
	h := fnv.New128a()
	fmt.Fprintf(h, "%d/%s", r.o.Seed, key)
	return formatUUID([16]byte(h.Sum(nil)))
}

// startPoint is where a lane's first trajectory starts: main is the last
// main-agent turn before it (the one primed; -1 when none is), and
// block, when not -1, is the main turn whose subagents were spawned
// before it, with kidNext[j] the next turn of its j-th subagent there
// (0: not started, len(Turns): finished, else in flight: turn
// kidNext[j]-1 is primed and the trajectory goes on with kidNext[j]).
type startPoint struct {
	main, block int
	kidNext     []int
}

// startPoint draws a lane's trajectory start as aiperf 0.12.0's agentic
// replay does (timing/trajectory_source.py, _build_timestamped_trajectory
// and _snapshot_for): an instant t* uniform in [min, max] of the span of
// the trace's request starts (main agent and subagents, in ms), drawn
// with np.random.default_rng seeded by the first 8 bytes (big-endian) of
// SHA-256("<seed>:<trace id>:<lane>"); each stream's next turn is its
// first one starting at or after t*, and a stream with a turn before t*
// is primed with its last one. On the reference c16 run (seed 42) that
// primes 17 requests: 16 main streams and synth_0010's subagent, in
// flight at its start.
//
// Two cases aiperf handles that the built-in does not model: a t* after
// the main agent's last turn (aiperf primes no main stream and skips a
// lane with nothing in flight; the built-in primes the last main turn)
// and a subagent still running past later main turns (aiperf primes it;
// the built-in joins every subagent before the next main turn).
func (r *runner) startPoint(conv *Conversation, laneIdx int) startPoint {
	first, last := math.Inf(1), math.Inf(-1)
	span := func(turns []Turn) {
		for _, t := range turns {
			first, last = min(first, t.At*1000), max(last, t.At*1000)
		}
	}
	span(conv.Turns)
	for _, kids := range conv.Children {
		for _, k := range kids {
			span(k.Turns)
		}
	}
	dur := last - first
	lo, hi := first+r.o.StartMinRatio*dur, first+r.o.StartMaxRatio*dur
	tStar := lo
	if hi > lo {
		sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s:%d", r.o.Seed, conv.ID, laneIdx))
		tStar = newNPRand(binary.BigEndian.Uint64(sum[:8])).uniform(lo, hi)
	}
	next := func(turns []Turn) int {
		i := slices.IndexFunc(turns, func(t Turn) bool { return t.At*1000 >= tStar })
		if i < 0 {
			return len(turns)
		}
		return i
	}
	rootNext := next(conv.Turns)
	sp := startPoint{main: rootNext - 1, block: -1}
	kids := conv.Children[rootNext]
	kidNext := make([]int, len(kids))
	for j, k := range kids {
		kidNext[j] = next(k.Turns)
		if kidNext[j] > 0 {
			sp.block, sp.kidNext = rootNext, kidNext
		}
	}
	return sp
}

// primeChildren makes the sessions of the subagents spawned before the
// lane's start (the block of main turn sp.block of its session) and
// brings each to its state there: those in flight send their last turn
// before the start as a warm-up request when warm is set, those finished
// are done without a request; the lane's profiling goes on with their
// next turns. It reports false when a warm-up request failed and the run
// must stop.
func (r *runner) primeChildren(ctx context.Context, l *lane, sp startPoint, warm bool) bool {
	if sp.block < 0 {
		return true
	}
	parent := l.sess
	kids := parent.conv.Children[sp.block]
	l.primed, l.primedAt = make([]*session, len(kids)), sp.block
	for j, child := range kids {
		cs := r.newSession(child, parent, fmt.Sprintf("%s/%d.%d", parent.correlationID, sp.block, j))
		cs.p = parent.p // primed one after another on the lane's stream
		l.primed[j] = cs
		n := sp.kidNext[j]
		silent := n - 1 // turns done without a request
		if n == len(child.Turns) || !warm {
			silent = n
		}
		for i := range silent {
			cs.prepare(i)
			cs.complete(i)
		}
		if silent == n {
			continue
		}
		if !r.issuing(ctx, cs.p) {
			return true
		}
		if rec := r.do(ctx, l, cs, n-1, aiperf.PhaseWarmup, 1, false, 0); rec.Error != nil && !rec.Metadata.WasCancelled {
			r.fail(&RunError{Reason: "warmup_failed", Err: fmt.Errorf("warm-up request for trace %s turn %d failed (%s: %s); aborting run early", child.ID, n-1, rec.Error.Type, truncate(rec.Error.Message, 200))})
			return false
		}
	}
	return true
}

// warmup builds every lane's first trajectory and sends its warm-up
// turns (the W turns ending at k, max_tokens=1, with the full history).
// All lanes finish warm-up before profiling starts. It returns the lanes
// ready to profile from k+1.
func (r *runner) warmup(ctx context.Context) []*lane {
	lanes := make([]*lane, r.o.Concurrency)
	for i := range lanes {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s/%d", r.benchID, i)
		lanes[i] = &lane{idx: i, worker: fmt.Sprintf("worker_%08x", h.Sum32())}
		conv := r.nextConv(lanes[i])
		lanes[i].sess = r.newSession(conv, nil, fmt.Sprintf("lane%d/play0", i))
	}
	if r.vc != nil {
		if err := r.vjoin(ctx, lanes); err != nil {
			r.fail(&RunError{Reason: "virtual_clock", Err: err})
			return lanes
		}
	}
	w := r.o.WarmupPerLane
	if w == 0 {
		for _, l := range lanes {
			sp := r.startPoint(l.sess.conv, l.idx)
			for i := 0; i <= sp.main; i++ {
				l.sess.prepare(i)
				l.sess.complete(i)
			}
			r.primeChildren(ctx, l, sp, false)
		}
		return lanes
	}
	r.logf("warm-up: %d request(s) per lane on %d lanes", w, len(lanes))
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	grace := r.o.warmupBound()
	var g *vgroup
	switch {
	case r.vc != nil:
		// Every lane warms up from the run's time; profiling starts at the
		// simulated time the last warm-up request ended.
		if grace > 0 {
			r.issueEnd = r.main.now + grace.Seconds()
			r.cancelAt = r.issueEnd
		}
		g = r.vwait(ctx, len(lanes), r.main)
	case grace > 0:
		var cancelTimer context.CancelFunc
		wctx, cancelTimer = context.WithTimeoutCause(wctx, r.o.scaled(grace), errCancelled)
		defer cancelTimer()
	}
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() { // exits after its lane's warm-up turns or on wctx
			if g != nil {
				defer g.arrive(ctx, l.p, false)
			}
			s := l.sess
			sp := r.startPoint(s.conv, l.idx)
			k := sp.main
			first := max(0, k-w+1)
			for i := 0; i < first; i++ {
				s.prepare(i)
				s.complete(i)
			}
			for i := first; i <= k; i++ {
				if !r.issuing(wctx, s.p) {
					return
				}
				rec := r.do(wctx, l, s, i, aiperf.PhaseWarmup, 1, false, 0)
				if rec.Error != nil && !rec.Metadata.WasCancelled && s.parentID == "" {
					r.fail(&RunError{Reason: "warmup_failed", Err: fmt.Errorf("warm-up request for trace %s turn %d failed (%s: %s); aborting run early", s.conv.ID, i, rec.Error.Type, truncate(rec.Error.Message, 200))})
					cancel(errCancelled)
					return
				}
			}
			if !r.primeChildren(wctx, l, sp, true) {
				cancel(errCancelled)
			}
		})
	}
	wg.Wait()
	if g != nil {
		g.wait()
		r.issueEnd, r.cancelAt = inf, inf
	}
	c := r.counts[aiperf.PhaseWarmup]
	r.logf("warm-up done: %d ok, %d failed, %d cancelled (no record), %s", c.OK, c.Failed, c.Cancelled, time.Since(r.start).Round(time.Millisecond))
	return lanes
}

// fail records the first abort reason and stops the run.
func (r *runner) fail(e *RunError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.abort == nil {
		r.abort = e // Run returns it; the caller prints it
	}
	if r.cancelIss != nil {
		r.cancelIss()
	}
	if r.cancelReq != nil {
		r.cancelReq(errCancelled)
	}
}

// profile runs the lanes until the stop condition, then drains in-flight
// requests for the grace period and cancels the rest.
func (r *runner) profile(ctx context.Context, lanes []*lane) {
	o := &r.o
	issueCtx, cancelIss := context.WithCancel(ctx)
	var g *vgroup
	switch {
	case r.vc != nil:
		// The window and the grace period are simulated times: lanes stop
		// issuing at issueEnd, the engine cancels what is open at cancelAt.
		if o.BenchmarkDuration > 0 {
			r.issueEnd = r.main.now + o.BenchmarkDuration.Seconds()
			r.cancelAt = r.issueEnd + o.GracePeriod.Seconds()
		}
		g = r.vwait(ctx, len(lanes), r.main)
	case o.BenchmarkDuration > 0:
		issueCtx, cancelIss = context.WithTimeout(ctx, o.scaled(o.BenchmarkDuration))
	}
	reqCtx, cancelReq := context.WithCancelCause(ctx)
	r.mu.Lock()
	r.cancelIss, r.cancelReq = cancelIss, cancelReq
	r.mu.Unlock()
	defer cancelIss()
	defer cancelReq(nil)
	r.logf("profiling: %s", r.stopDescription())

	lanesDone := make(chan struct{})
	var aux sync.WaitGroup
	aux.Go(func() { // grace timer: exits when the lanes are done or the grace period ends
		if r.vc != nil {
			return // the engine applies the grace period on the simulated timeline
		}
		select {
		case <-issueCtx.Done():
		case <-lanesDone:
			return
		}
		t := time.NewTimer(o.scaled(o.GracePeriod))
		defer t.Stop()
		select {
		case <-t.C:
			cancelReq(errCancelled)
		case <-lanesDone:
		}
	})
	profStart := time.Now()
	var simStart float64
	if r.vc != nil {
		simStart = r.main.now
		r.mu.Lock()
		r.simStart = r.vc.ns(simStart)
		r.mu.Unlock()
	}
	aux.Go(func() { r.printProgress(lanesDone, profStart) }) // exits when the lanes are done

	r.idle = newIdleGuard(o.scaled(o.SystemIdleCap), len(lanes))
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() { // exits when issueCtx is done and its request returned
			defer r.idle.leave()
			if g != nil {
				defer g.arrive(ctx, l.p, true)
			}
			r.runLane(issueCtx, reqCtx, l)
		})
	}
	wg.Wait()
	if g != nil {
		g.wait()
	}
	close(lanesDone)
	if r.idle.jumps > 0 {
		r.logf("system idle guard: shifted the pending idle gaps %d time(s) (cap %s)", r.idle.jumps, o.SystemIdleCap)
	}
	aux.Wait()
	c := r.counts[aiperf.PhaseProfiling]
	if r.vc != nil {
		r.logf("profiling done: %d ok, %d failed, %d cancelled (no record), %s simulated in %s", c.OK, c.Failed, c.Cancelled, time.Duration(float64(time.Second)*(r.main.now-simStart)).Round(time.Millisecond), time.Since(profStart).Round(time.Millisecond))
		if r.ahead > 0 {
			r.logf("virtual clock: %d turns sent ahead of their wake-up, %d sent again (the idle-gap cap woke them earlier)", r.ahead, r.again)
		}
		r.mu.Lock()
		limitHit := r.limitHit
		r.mu.Unlock()
		if err := r.vc.lostErr(); err != nil && r.main.now < r.issueEnd && !limitHit && ctx.Err() == nil {
			r.fail(&RunError{Reason: "virtual_clock", Err: fmt.Errorf("the load was cut short: the engine stopped answering %s into the %s profiling window (%w)",
				time.Duration(float64(time.Second)*(r.main.now-simStart)).Round(time.Second), o.BenchmarkDuration, err)})
		}
		return
	}
	r.logf("profiling done: %d ok, %d failed, %d cancelled (no record) in %s", c.OK, c.Failed, c.Cancelled, time.Since(profStart).Round(time.Millisecond))
}

func (r *runner) stopDescription() string {
	o := &r.o
	var s string
	if o.BenchmarkDuration > 0 {
		s = o.BenchmarkDuration.String()
		if o.TimeScale != 1 {
			s += fmt.Sprintf(" at time scale %g (%s wall)", o.TimeScale, o.scaled(o.BenchmarkDuration).Round(time.Millisecond))
		}
	}
	if o.RequestCount > 0 {
		s = strings.TrimSpace(s + fmt.Sprintf(" up to %d requests", o.RequestCount))
	}
	if o.MaxSessions > 0 {
		s = strings.TrimSpace(s + fmt.Sprintf(" up to %d sessions", o.MaxSessions))
	}
	return s
}

// printProgress writes a progress line every stats interval.
func (r *runner) printProgress(done <-chan struct{}, start time.Time) {
	every := r.o.StatsInterval
	if every <= 0 {
		every = 10 * time.Second
	}
	every = max(r.o.scaled(every), time.Second) // a wait like any other, but not spam
	t := time.NewTicker(every)
	defer t.Stop()
	total := r.o.scaled(r.o.BenchmarkDuration)
	for {
		select {
		case <-done:
			return
		case <-t.C:
			r.mu.Lock()
			c := *r.counts[aiperf.PhaseProfiling]
			sim := time.Duration(max(r.simFront-r.simStart, 0))
			r.mu.Unlock()
			el := time.Since(start)
			if r.vc != nil {
				// The window is simulated time: say how far the timeline got,
				// and estimate the rest at the wall rate so far.
				eta := "unknown"
				if d := r.o.BenchmarkDuration; d > 0 && sim > 0 {
					eta = time.Duration(float64(el) * float64(max(d-sim, 0)) / float64(sim)).Round(time.Second).String()
				}
				r.logf("profiling: %d requests done (%d failed), %s of %s simulated in %s, ETA %s", c.OK+c.Failed, c.Failed,
					sim.Round(time.Second), r.o.BenchmarkDuration, el.Round(time.Second), eta)
				continue
			}
			eta := "unknown"
			if total > 0 {
				eta = max(total-el, 0).Round(time.Second).String()
			}
			r.logf("profiling: %d requests done (%d failed), %s elapsed, ETA %s", c.OK+c.Failed, c.Failed, el.Round(time.Second), eta)
		}
	}
}

// takeIssue reserves one profiling request slot; false when a count
// limit is reached.
func (r *runner) takeIssue() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.o.RequestCount > 0 && r.issued >= r.o.RequestCount {
		return false
	}
	r.issued++
	if r.o.RequestCount > 0 && r.issued == r.o.RequestCount {
		r.limitHit = true
		r.cancelIss() // wake lanes waiting out idle gaps: nothing more to issue
	}
	return true
}

// runLane replays sessions on one lane until issueCtx is done.
func (r *runner) runLane(issueCtx, reqCtx context.Context, l *lane) {
	for r.issuing(issueCtx, l.p) {
		s := l.sess
		if s == nil || s.next >= len(s.conv.Turns) {
			r.mu.Lock()
			over := r.o.MaxSessions > 0 && r.profPlays >= r.o.MaxSessions
			if !over {
				r.profPlays++
			} else {
				r.limitHit = true
				r.cancelIss() // the other lanes finish their current session only
			}
			r.mu.Unlock()
			if over {
				return
			}
			conv := r.nextConv(l)
			s = r.newSession(conv, nil, fmt.Sprintf("lane%d/play%d", l.idx, l.plays)) // recycled plays start at turn 0
			s.p = l.p
			l.sess = s
		}
		i := s.next
		if !r.children(issueCtx, reqCtx, l, s, i) {
			return
		}
		if !r.turn(issueCtx, reqCtx, l, s, i) {
			return
		}
	}
}

// children replays the subagents spawned before a parent turn, all at
// once (aiperf's SPAWN branch: concurrency is per session tree, so a
// lane may have several requests in flight here), and returns when all
// have finished (SPAWN_JOIN). It returns false when the lane must stop.
func (r *runner) children(issueCtx, reqCtx context.Context, l *lane, parent *session, turn int) bool {
	kids := parent.conv.Children[turn]
	// The subagents' sessions are made here, in order, so their
	// session_num follow the spawn order whichever stream starts first.
	sessions := make([]*session, len(kids))
	if l.primed != nil && l.sess == parent && l.primedAt == turn {
		sessions, l.primed = l.primed, nil // in flight at the start: they go on
		if !slices.ContainsFunc(sessions, func(s *session) bool { return s.next < len(s.conv.Turns) }) {
			return true // all done before the start: aiperf replays no branch
		}
	} else {
		for j, child := range kids {
			sessions[j] = r.newSession(child, parent, fmt.Sprintf("%s/%d.%d", parent.correlationID, turn, j))
		}
	}
	if len(kids) == 0 {
		return true
	}
	r.mu.Lock()
	r.branches.spawned += len(kids)
	r.branches.suspended++ // the parent waits for the join
	r.mu.Unlock()
	play := func(j int, p *vpart) (ok bool) {
		child, cs := kids[j], sessions[j]
		cs.p = p
		failed := false
		defer func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			switch {
			case !ok:
				r.branches.truncated++
			case failed:
				r.branches.errored++
			default:
				r.branches.completed++
			}
		}()
		for j := cs.next; j < len(child.Turns); j++ {
			if !r.turn(issueCtx, reqCtx, l, cs, j) {
				return false
			}
			failed = failed || cs.failed
		}
		return true
	}
	resumed := func(ok bool) bool {
		if ok {
			r.mu.Lock()
			r.branches.resumed++
			r.mu.Unlock()
		}
		return ok
	}
	if len(kids) == 1 {
		return resumed(play(0, parent.p)) // one subagent runs in the parent's stream
	}
	// On the virtual clock each subagent is a participant of its own,
	// starting at the parent's time; the parent continues at the time the
	// last one finished.
	parts := make([]*vpart, len(kids))
	var g *vgroup
	if parent.p != nil {
		ids := make([]string, len(kids))
		for j := range kids {
			ids[j] = fmt.Sprintf("%s/%d.%d", parent.p.id, turn, j)
		}
		var err error
		if parts, err = r.vc.join(issueCtx, parent.p, ids...); err != nil {
			return false
		}
		g = r.vwait(issueCtx, len(kids), parent.p)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := true
	for j := range kids {
		r.idle.join()  // each stream is a participant of the idle guard
		wg.Go(func() { // exits when its subagent's turns are done or issueCtx is
			defer r.idle.leave()
			if g != nil {
				defer g.arrive(issueCtx, parts[j], true)
			}
			if !play(j, parts[j]) {
				mu.Lock()
				ok = false
				mu.Unlock()
			}
		})
	}
	wg.Wait() // the parent stays busy for the idle guard: its tree is live
	if g != nil {
		g.wait()
	}
	return resumed(ok)
}

// turn waits the recorded idle gap, then sends turn i of s in the
// profiling phase. It returns false when the lane must stop.
func (r *runner) turn(issueCtx, reqCtx context.Context, l *lane, s *session, i int) bool {
	t := s.conv.Turns[i]
	skip := r.o.MaxContext > 0 && t.In > r.o.MaxContext
	early := false
	if i > 0 && t.Delay > 0 {
		if p := s.p; p != nil {
			// The engine put p to sleep when its last request ended (that
			// request's X-Sim-Then): the turn goes now and arrives when p
			// wakes, so the engine need not wait for it.
			early = p.declared && p.now+t.Delay == p.then && p.then < r.issueEnd && !skip && issueCtx.Err() == nil
			if !early && !r.vsleep(issueCtx, p, t.Delay, r.o.SystemIdleCap) {
				return false
			}
		} else if !r.idle.sleep(issueCtx, r.o.scaled(time.Duration(t.Delay*float64(time.Second)))) {
			return false
		}
	}
	if !early && !r.issuing(issueCtx, s.p) {
		return false
	}
	if skip {
		s.prepare(i)
		s.complete(i)
		return true
	}
	if !r.takeIssue() {
		return false
	}
	rec := r.do(reqCtx, l, s, i, aiperf.PhaseProfiling, max(1, t.Out), early, r.thenSleep(s, i))
	if rec == nil { // an early turn cancelled before it arrived: the lane stops as in its sleep
		return false
	}
	if rec.Error != nil && rec.Metadata.RequestAckNs == 0 && !rec.Metadata.WasCancelled {
		if s.p != nil {
			return r.vsleep(issueCtx, s.p, transportBackoff.Seconds(), 0)
		}
		sleepCtx(issueCtx, transportBackoff)
	}
	return true
}

// thenSleep is what s's participant does after turn i on the virtual
// clock when that is a plain sleep: its seconds (0: something else, or
// not known when the request is sent). After the session's last turn a
// lane starts another play or stops, before a root turn with subagents it
// spawns them, and with a request or session limit another lane may stop
// it: none of those is declared.
func (r *runner) thenSleep(s *session, i int) float64 {
	if !virtualLookahead || s.p == nil || r.o.RequestCount > 0 || r.o.MaxSessions > 0 || i+1 >= len(s.conv.Turns) {
		return 0
	}
	if s.parentID == "" && len(s.conv.Children[i+1]) > 0 {
		return 0
	}
	return max(s.conv.Turns[i+1].Delay, 0)
}

// virtualLookahead turns on X-Sim-Then and the turns sent ahead of their
// wake-up (off only in the test that shows they change no number).
var virtualLookahead = true

// do sends turn i of s, records it and advances the session. On the
// virtual clock, early sends it at its participant's declared wake-up
// (again at the time the engine answers when the participant woke
// earlier), and then declares the plain sleep that follows it (see
// thenSleep). do returns nil, recording nothing, for an early turn
// cancelled before it arrived.
func (r *runner) do(ctx context.Context, l *lane, s *session, i int, phase string, maxTokens int, early bool, then float64) *record {
	msgs := s.prepare(i)
	isl := s.tokens
	req := &chatRequest{
		url: r.url, model: r.o.Model, messages: msgs, maxTokens: maxTokens, streaming: r.o.Streaming,
		extra: r.o.ExtraInputs, apiKey: r.o.APIKey, headers: r.o.Headers,
		xRequestID: r.uuid(fmt.Sprintf("request/%s/%s/%d", s.correlationID, phase, i)), xCorrelationID: s.correlationID,
		useServerCount: r.o.ServerTokens, clientISL: isl,
	}
	var rctx context.Context
	var cancel context.CancelFunc
	var credit int64
	p := s.p
	last := i == len(s.conv.Turns)-1
	at := func() {
		reuse := min(s.kept, len(s.ids)/8)
		req.sim = &simCall{part: p.id, at: p.now, timeoutAt: p.now + r.o.RequestTimeout.Seconds(), cancelAt: r.cancelAt,
			prompt: &simPrompt{Tokens: s.tokens, BlockTokens: simBlockTokens, Blocks: s.ids[reuse*8:], Key: s.correlationID, Reuse: reuse, Forget: last},
			then:   then, thenCap: r.o.SystemIdleCap.Seconds(), before: r.issueEnd}
		credit = r.vc.ns(p.now)
	}
	// kept follows what the engine keeps: the prompt's ids once it
	// answered (or woke the participant earlier), nothing after any other
	// failure, so that a prompt never reuses ids the engine may not have.
	keep := func(tm *timing, rerr *aiperf.RecordError) {
		switch {
		case last || rerr != nil && tm.woke == 0 && (tm.ackNs == 0 || rerr.Code >= 400):
			s.kept = 0
		default:
			s.kept = len(s.ids) / 8
		}
	}
	if p != nil {
		if early {
			p.now = p.then
		}
		p.declared = false
		at()
		rctx, cancel = context.WithCancel(ctx) // the engine applies the deadlines
	} else {
		rctx, cancel = context.WithTimeout(ctx, r.o.scaled(r.o.RequestTimeout))
		credit = r.clock.ns(time.Now())
	}
	if early {
		r.mu.Lock()
		r.ahead++
		r.mu.Unlock()
	}
	start, tm, rerr := send(rctx, r.hc, req)
	for p != nil && rerr != nil && (tm.woke > 0 || tm.promptUnknown) && rctx.Err() == nil {
		keep(&tm, rerr)
		if tm.woke > 0 {
			p.now = tm.woke // the idle-gap cap woke it earlier than declared
			r.mu.Lock()
			r.again++
			r.mu.Unlock()
		}
		at()
		start, tm, rerr = send(rctx, r.hc, req)
	}
	if p != nil {
		keep(&tm, rerr)
	}
	if early && rerr != nil && tm.ackNs == 0 && rctx.Err() != nil {
		cancel()
		return nil
	}
	if rerr != nil && (errors.Is(context.Cause(rctx), errCancelled) || ctx.Err() != nil) {
		rerr = transportError(errCancelled) // stopped by us or by the caller, not a request timeout
	}
	cancel()
	startNs := credit
	if s.p != nil {
		s.p.now = max(s.p.now, tm.simT) // the engine resumed the participant at the response's end
		if then > 0 && tm.finish != "" && tm.finish != "abort" && s.p.now+then < req.sim.before {
			s.p.declared, s.p.then = true, s.p.now+then // the engine put it to sleep (X-Sim-Then)
		}
	} else {
		tm.scale(r.o.TimeScale)
		startNs = r.clock.ns(start)
	}
	t := s.conv.Turns[i]
	endNs := startNs + tm.endNs
	if tm.endNs == 0 && s.p == nil {
		endNs = r.clock.ns(time.Now())
	}
	md := aiperf.RecordMetadata{
		SessionNum: s.num, XRequestID: req.xRequestID, XCorrelationID: s.correlationID,
		ConversationID: s.conv.ID, TurnIndex: new(float64(i)), SourceTraceID: s.conv.TraceID, SourceOuterIdx: t.OuterIndex,
		SourceKind: s.conv.Kind, CreditIssuedNs: credit, RequestStartNs: aiperf.IntScalar(startNs),
		RequestEndNs: aiperf.IntScalar(endNs), WorkerID: l.worker, RecordProcessorID: r.procID,
		BenchmarkPhase: aiperf.StringScalar(phase), AgentDepth: s.conv.Depth,
		ParentCorrelationID: s.parentID, RootCorrelationID: s.rootID,
	}
	if t.InnerIndex >= 0 {
		inner := t.InnerIndex
		md.SourceInnerIdx = &inner
	}
	if tm.ackNs > 0 {
		md.RequestAckNs = startNs + tm.ackNs
	}
	if phase == aiperf.PhaseProfiling { // aiperf 0.12.0 writes no phase_* on warm-up records
		zero, index := 0, 0
		if r.o.WarmupPerLane > 0 {
			index = 1
		}
		md.ProfilingIndex, md.PhaseIndex, md.PhaseName, md.PhaseKind = &zero, &index, phase, phase
	}
	rec := &record{Record: aiperf.Record{Metadata: md, Error: rerr}}
	if rerr != nil {
		s.failed = true
		if selfCancelled(rerr) {
			rec.Metadata.WasCancelled = true
			rec.Metadata.CancellationTimeNs = endNs
		}
		rec.Metrics = aiperf.RecordMetrics{}
		if tm.ackNs > 0 {
			rec.Metrics = aiperf.RecordMetrics{{Tag: "error_isl", Value: aiperf.FloatScalar(float64(isl)), Unit: "tokens"}}
		}
	} else {
		rec.Metrics = recordMetrics(&tm, r.o.Streaming, maxTokens)
	}
	rec.blocks, rec.hits = s.complete(i)
	if rec.Metadata.WasCancelled {
		r.dropCancelled(rec)
		return rec
	}
	r.add(rec)
	return rec
}

// dropCancelled counts a request the load generator cancelled itself and
// keeps no record of it, as aiperf 0.12.0 does: its phase runner cancels
// the credits still open when the grace period ends (or the run stops),
// the worker's task is cancelled before it emits a record, and the
// credit returns as cancelled, outside the records (workers/worker.py:
// "Cancelled credits are excluded from the barrier target, so they need
// no record"). Such a request is neither a success nor an error: it is
// not in profile_export.jsonl, request_count or error_request_count, and
// so not in the error rate InferenceX validates (validate_agentic_result:
// error_request_count / (request_count + error_request_count)), nor in
// the live --failed-request-threshold.
func (r *runner) dropCancelled(rec *record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[rec.phase()].Cancelled++
}

// add stores a record and applies the live failed-request threshold.
func (r *runner) add(rec *record) {
	r.mu.Lock()
	r.records = append(r.records, rec)
	if rec.phase() == aiperf.PhaseProfiling {
		r.simFront = max(r.simFront, rec.endNs())
	}
	c := r.counts[rec.phase()]
	if rec.Error != nil {
		c.Failed++
	} else {
		c.OK++
	}
	exceeded := false
	if rec.phase() == aiperf.PhaseProfiling && r.o.FailThreshold >= 0 {
		n := c.OK + c.Failed
		exceeded = n >= minThresholdSample && float64(c.Failed)/float64(n) > r.o.FailThreshold
	}
	failed, n := c.Failed, c.OK+c.Failed
	r.mu.Unlock()
	if exceeded {
		r.fail(&RunError{Reason: "failed_request_threshold", Err: fmt.Errorf("failed-request threshold exceeded: %d of %d profiling requests failed (%.1f%% > %.1f%%); run cancelled", failed, n, 100*float64(failed)/float64(n), 100*r.o.FailThreshold)})
	}
}

// newUUID returns a random RFC 4122 version 4 UUID string.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	return formatUUID(b)
}

// formatUUID formats 16 bytes as a version 4 UUID.
func formatUUID(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
