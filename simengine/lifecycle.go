package simengine

import (
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"sweep/configs"
	"sweep/internal/pyjson"
	"sweep/internal/simproto"
)

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

// logEnginePool writes each rank's KV pool in the words its engine uses
// at start-up, so a simulated point's result reads its pool from the log
// as a real point's does (metrics/result.SGLangKVPoolFromLog and
// VLLMKVPoolFromLog): SGLang's scheduler line "max_total_num_tokens=N,
// ..." (the fields the simulator models) under each rank's tag; vLLM's
// "GPU KV cache size: N tokens" (N with thousands separators) and
// "Maximum concurrency for ..." from each engine core (vLLM V1 names them
// EngineCore_DPn, EngineCore_DP0 when there is one). The readers sum the
// ranks' lines: the total the engines' own metrics report.
func (s *Server) logEnginePool() {
	c := &s.cfg
	n := len(s.ranks)
	for i := range n {
		switch c.Engine {
		case configs.VLLM:
			tag := fmt.Sprintf("EngineCore_DP%d", i)
			s.engineLogf(tag, "kv_cache_utils.py", "GPU KV cache size: %s tokens", pyjson.Thousands(strconv.Itoa(s.capa.poolTokens)))
			s.engineLogf(tag, "kv_cache_utils.py", "Maximum concurrency for %s tokens per request: %.2fx",
				pyjson.Thousands(strconv.Itoa(c.ContextLength)), float64(s.capa.poolTokens)/float64(max(c.ContextLength, 1)))
		default:
			tag := "TP0"
			if n > 1 {
				tp := i * max(c.TP/n, 1)
				tag = fmt.Sprintf("DP%d TP%d EP%d", i, tp, tp)
			}
			chunk := c.ChunkSize
			if chunk >= 1<<30 {
				chunk = -1 // --chunked-prefill-size -1: no chunking
			}
			s.engineLogf(tag, "", "max_total_num_tokens=%d, chunked_prefill_size=%d, max_running_requests=%d, context_len=%d",
				s.capa.poolTokens, chunk, s.capa.maxRunning, c.ContextLength)
		}
	}
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
	s.logEnginePool()
	for _, line := range hostTierLog(*c, s.capa) {
		s.logf("%s", line)
	}
	if a := c.Calibration; a != nil {
		s.logf("calibrated (%s): step costs x%g, pool %d tokens per rank (0: the model's)", simproto.EnvCalibration, a.StepScale, a.PoolTokens)
	} else if c.CalibrationFile != "" {
		arm := c.CalibrationArm()
		s.logf("warning: calibration %s (%s) has no arm for %s: the model's step costs and KV pool stand", c.CalibrationFile, simproto.EnvCalibration, arm.Describe())
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
