package simengine

import (
	"context"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sweep/configs"
	"sweep/internal/simproto"
	"sync"
	"sync/atomic"
	"time"
)

// Phase is the lifecycle state of a Server.
type Phase int32

// The phases, in order.
const (
	PhaseLoading  Phase = iota // weights loading: the port is closed
	PhaseWarming               // port open, warm-up running: SGLang /health is 503
	PhaseReady                 // /health is 200
	PhaseStopping              // graceful shutdown: /health is 503
)

// String names the phase.
func (p Phase) String() string {
	switch p {
	case PhaseLoading:
		return "loading"
	case PhaseWarming:
		return "warming"
	case PhaseReady:
		return "ready"
	case PhaseStopping:
		return "stopping"
	}
	return "phase(" + strconv.Itoa(int(p)) + ")"
}

// Options are the process-level settings of a Server. The zero value
// listens on Config.Host:Port, discards the log and allows 5 s (wall
// clock) for graceful shutdown.
type Options struct {
	// Listen opens the listener once loading is over; tests pass one that
	// listens on 127.0.0.1:0 or an in-memory listener.
	Listen func(ctx context.Context, addr string) (net.Listener, error)
	// Log receives engine-style log lines (the server.log of a point).
	Log io.Writer
	// ShutdownGrace bounds the graceful shutdown (wall clock).
	ShutdownGrace time.Duration
}

// Server is one simulated engine process: the HTTP front end and one
// scheduler per DP rank. Create it with New, then call Run once; the
// accessors are safe for concurrent use.
type Server struct {
	cfg   Config
	capa  capacity
	opts  Options
	ranks []*rank
	seed  maphash.Seed
	base  time.Time // wall time of simulated t=0
	vc    *vclock   // the virtual clock; nil on the wall clock
	sims  simPrompts
	link  kvLink // a decode worker's inbound KV link

	phase     atomic.Int32
	ids       atomic.Uint64
	rr        atomic.Uint64
	finished  atomic.Int64
	lag       lagMeter // the wall clock's scheduler behind its schedule
	listening chan struct{}
	ready     chan struct{}
	stopping  chan struct{}
	crashed   chan struct{}
	hung      chan struct{}
	crashOnce sync.Once
	hangOnce  sync.Once
	addr      atomic.Pointer[string]
	logMu     sync.Mutex
}

// New checks cfg and builds a Server; nothing runs until Run.
func New(cfg Config, opts Options) (*Server, error) {
	cfg, err := cfg.Normalize()
	if err != nil {
		return nil, err
	}
	if opts.Listen == nil {
		opts.Listen = func(ctx context.Context, addr string) (net.Listener, error) {
			var lc net.ListenConfig
			return lc.Listen(ctx, "tcp", addr)
		}
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = 5 * time.Second
	}
	s := &Server{
		cfg:       cfg,
		capa:      newCapacity(cfg),
		opts:      opts,
		seed:      maphash.MakeSeed(),
		listening: make(chan struct{}),
		ready:     make(chan struct{}),
		stopping:  make(chan struct{}),
		crashed:   make(chan struct{}),
		hung:      make(chan struct{}),
	}
	if cfg.Virtual {
		s.vc = newVClock()
	}
	for i := range cfg.Ranks() {
		r := newRank(i, &s.cfg, s.capa)
		if s.vc != nil {
			r.onEnd = func(q *simRequest, now float64, reason string) { // called by the loop, which holds vc.mu
				s.vdone(q, now, reason != "abort")
			}
		}
		s.ranks = append(s.ranks, r)
	}
	return s, nil
}

// Config returns the normalized configuration.
func (s *Server) Config() Config { return s.cfg }

// Phase returns the current lifecycle phase.
func (s *Server) Phase() Phase { return Phase(s.phase.Load()) }

// Listening is closed once the port is open; Addr is then valid.
func (s *Server) Listening() <-chan struct{} { return s.listening }

// Ready is closed once /health answers 200.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addr is the listener address once Listening is closed, else "".
func (s *Server) Addr() string {
	if p := s.addr.Load(); p != nil {
		return *p
	}
	return ""
}

func (s *Server) logf(format string, a ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opts.Log, "[%s] "+format+"\n", append([]any{time.Now().UTC().Format("2006-01-02 15:04:05")}, a...)...)
}

// simNow is the simulated time in seconds since Run started.
func (s *Server) simNow() float64 { return time.Since(s.base).Seconds() * s.cfg.TimeScale }

// realUntil is the wall-clock time left until simulated time t.
func (s *Server) realUntil(t float64) time.Duration {
	return time.Until(s.base.Add(time.Duration(t / s.cfg.TimeScale * float64(time.Second))))
}

// wallOf converts a simulated duration to wall-clock time: none on the
// virtual clock.
func (s *Server) wallOf(d time.Duration) time.Duration {
	if s.vc != nil {
		return 0
	}
	return time.Duration(float64(max(d, 0)) / s.cfg.TimeScale)
}

// Run loads (the port stays closed for LoadTime), listens, warms up and
// serves until ctx is done, then shuts down gracefully and returns nil.
// With the crash fault it returns a *CrashError as soon as the fault
// fires, without draining. Every goroutine it starts has ended when it
// returns.
func (s *Server) Run(ctx context.Context) error {
	s.base = time.Now()
	c := &s.cfg
	s.logf("%s simulator: model %s served as %q, tp=%d ep=%d dp=%d dp_attention=%t, gpu=%s x%d, time scale %g",
		c.Engine, c.ModelPath, c.ServedModelName, c.TP, c.EP, c.DP, c.DPAttention, c.GPU, c.GPUs(), c.TimeScale)
	s.logf("KV pool: %d tokens per rank (%d ranks), max running requests %d, page size %d, prefix cache %t, speculative %q steps=%d draft_tokens=%d synthetic AL %g",
		s.capa.poolTokens, len(s.ranks), s.capa.maxRunning, c.PageSize, !c.NoPrefixCache, c.Spec.Algorithm, c.Spec.NumSteps, c.Spec.NumDraftTokens, c.Spec.AcceptLength)
	if c.HostKV.Enabled() {
		s.logf("host KV tier: %d tokens per rank beyond the device pool (write-back %t)", s.capa.hostTokens, c.HostKV.WriteBack)
	}
	if a := c.Calibration; a != nil {
		s.logf("calibrated (%s): step costs x%g, pool %d tokens per rank (0: the model's)", simproto.EnvCalibration, a.StepScale, a.PoolTokens)
	} else if c.CalibrationFile != "" {
		arm := c.CalibrationArm()
		s.logf("warning: calibration %s (%s) has no arm for %s: the model's step costs and KV pool stand", c.CalibrationFile, simproto.EnvCalibration, arm.Label())
	}
	if !s.capa.fits {
		s.logf("warning: the weights of %s do not fit in %d x %s at memory fraction %g; the KV pool is a token stand-in (a real engine would fail to start)", c.ModelPath, c.GPUs(), c.GPU, c.MemFraction)
	}
	for _, f := range c.Faults {
		s.logf("fault injection: %s", f)
	}
	_, neverReady := c.HasFault(FaultNeverReady)
	if neverReady && c.Engine == configs.VLLM {
		s.logf("fault never-ready: the engine never finishes loading")
		<-ctx.Done()
		return nil
	}
	if err := sleepCtx(ctx, s.wallOf(c.LoadTime)); err != nil {
		return nil // stopped while loading (no wall time on the virtual clock)
	}
	addr := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	ln, err := s.opts.Listen(ctx, addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	a := ln.Addr().String()
	s.addr.Store(&a)

	loopCtx, stopLoops := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLoops()
	var wg sync.WaitGroup
	if s.vc != nil {
		wg.Go(func() { s.vloop(loopCtx) })
	} else {
		for _, r := range s.ranks {
			wg.Go(func() { s.loop(loopCtx, r) })
		}
	}
	var unused unusedConns
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: time.Minute, ConnState: unused.track}
	serveErr := make(chan error, 1)
	wg.Go(func() { serveErr <- srv.Serve(ln) })

	if c.Engine == configs.SGLang {
		s.phase.Store(int32(PhaseWarming))
	}
	close(s.listening)
	s.logf("Uvicorn running on http://%s (Press CTRL+C to quit)", a)
	switch {
	case c.Engine == configs.VLLM:
		s.markReady()
	case neverReady:
		s.logf("fault never-ready: warm-up never completes")
	default:
		wg.Go(func() { s.warmup(loopCtx) })
	}

	var runErr error
	select {
	case <-ctx.Done():
		s.logf("Received shutdown signal, shutting down gracefully")
		s.phase.Store(int32(PhaseStopping))
		close(s.stopping)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownGrace)
		unused.closeAll()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		cancel()
	case <-s.crashed:
		f, _ := c.HasFault(FaultCrash)
		runErr = &CrashError{After: f.After}
		s.logf("fault crash: %v", runErr)
		close(s.stopping)
		_ = srv.Close()
	case err := <-serveErr:
		close(s.stopping)
		runErr = fmt.Errorf("serve %s: %w", a, err)
	}
	stopLoops()
	wg.Wait()
	return runErr
}

func (s *Server) markReady() {
	s.phase.Store(int32(PhaseReady))
	close(s.ready)
	if s.cfg.Engine == configs.SGLang {
		s.logf("The server is fired up and ready to roll!")
	} else {
		s.logf("Application startup complete.")
	}
	s.checkFaults(0)
}

// warmup sends SGLang's warm-up generation through the scheduler (it is
// counted in the metrics, as in SGLang) and turns /health green once it has
// finished and WarmupTime has passed.
func (s *Server) warmup(ctx context.Context) {
	t0 := time.Now()
	if !s.cfg.SkipWarmup {
		q := &simRequest{id: s.ids.Add(1), prompt: 6, target: 8, maxTokens: 8, reason: "length", logged: true, sink: newSink(1 << 30)}
		s.submit(q, "")
		for {
			select {
			case <-ctx.Done():
				return
			case <-q.sink.notify:
			}
			if _, done, _, _ := q.sink.take(); done {
				break
			}
		}
	}
	if err := sleepCtx(ctx, s.wallOf(s.cfg.WarmupTime)-time.Since(t0)); err != nil {
		return
	}
	for _, rk := range s.ranks { // the first point draws as one after a flush
		rk.mu.Lock()
		rk.restartStream()
		rk.mu.Unlock()
	}
	s.markReady()
}

// submit routes q to a rank and wakes its scheduler. Requests with a
// session key stick to one rank (as behind a consistent-hashing router);
// others go to the least loaded rank.
func (s *Server) submit(q *simRequest, key string) {
	if s.vc != nil {
		_ = s.vsubmit(nil, q, key) // internal requests (warm-up) arrive now, for nobody
		return
	}
	r := s.ranks[0]
	if n := len(s.ranks); n > 1 {
		if key != "" {
			h := fnv.New64a() // stable across processes, unlike maphash
			_, _ = h.Write([]byte(key))
			r = s.ranks[h.Sum64()%uint64(n)]
		} else {
			best, bestLoad := int(s.rr.Add(1)%uint64(n)), -1
			for i := range n {
				j := (best + i) % n
				s.ranks[j].mu.Lock()
				load := len(s.ranks[j].running) + len(s.ranks[j].waiting)
				s.ranks[j].mu.Unlock()
				if bestLoad < 0 || load < bestLoad {
					r, bestLoad = s.ranks[j], load
				}
			}
		}
	}
	r.mu.Lock()
	r.enqueue(q, s.simNow())
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// minSleep is the shortest wait worth a timer; shorter waits are skipped
// and the simulated clock catches up on the next longer one.
const minSleep = 200 * time.Microsecond

// loop runs one rank's scheduler in (scaled) real time until ctx is done.
func (s *Server) loop(ctx context.Context, r *rank) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-s.hung:
			<-ctx.Done()
			return
		case <-ctx.Done():
			return
		default:
		}
		r.mu.Lock()
		start := r.now
		if !r.busy {
			start = max(r.now, s.simNow())
		}
		for _, q := range r.waiting {
			q.arrival = min(q.arrival, start) // the loop may lag the wall clock
		}
		dur, out := r.step(start)
		if dur > 0 {
			r.now = start + dur
		}
		r.mu.Unlock()
		if dur == 0 {
			select {
			case <-r.wake:
			case <-ctx.Done():
				return
			case <-s.hung:
			}
			continue
		}
		d := s.realUntil(start + dur)
		if f, ok := s.cfg.HasFault(FaultLateSteps); ok {
			d += f.Delay // a loaded host, planted: the step ends late
		}
		if d > minSleep {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			case <-s.hung:
				continue
			}
		}
		s.lag.step(dur, s.simNow()-(start+dur))
		for _, d := range out {
			q := d.req
			q.sink.push(d.tokens, d.done, q.reason, q.cached)
			if d.done && q.external {
				s.checkFaults(s.finished.Add(1))
			}
		}
	}
}

// checkFaults fires the crash and hang faults once n requests finished.
func (s *Server) checkFaults(n int64) {
	if f, ok := s.cfg.HasFault(FaultCrash); ok && n >= int64(f.After) && s.Phase() == PhaseReady {
		s.crashOnce.Do(func() { close(s.crashed) })
	}
	if f, ok := s.cfg.HasFault(FaultHang); ok && n >= int64(f.After) && s.Phase() == PhaseReady {
		s.hangOnce.Do(func() {
			s.logf("fault hang: the engine stops responding after %d requests", f.After)
			close(s.hung)
		})
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newRequestRNG is the random stream of one request's output text.
func (s *Server) newRequestRNG(id uint64) *rand.Rand {
	return rand.New(rand.NewPCG(s.cfg.Seed^0x5bd1e995, id))
}

// receiveKV waits (on the scaled wall clock) until a decode worker has
// received a prompt's KV from the prefill worker; it reports false when
// ctx ends first.
func (s *Server) receiveKV(ctx context.Context, prompt int) bool {
	end := s.link.reserve(s.simNow(), float64(prompt)*s.capa.kvBytes, s.cfg.GPUs())
	return sleepCtx(ctx, s.realUntil(end)) == nil
}
