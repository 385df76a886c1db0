package simengine

import (
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sweep/configs"
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

// engineLogf writes one line shaped as the real engine's logger shapes
// it: SGLang's "[2026-08-14 03:14:02 DP0 TP0 EP0] msg" (tag the process's
// rank tag), vLLM's "(EngineCore pid=N) INFO 08-14 03:14:02 [file] msg"
// (tag the process name, file the module that logs the line).
func (s *Server) engineLogf(tag, file, format string, a ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	now := time.Now().UTC()
	msg := fmt.Sprintf(format, a...)
	if s.cfg.Engine == configs.VLLM {
		fmt.Fprintf(s.opts.Log, "(%s pid=%d) INFO %s [%s] %s\n", tag, os.Getpid(), now.Format("01-02 15:04:05"), file, msg)
		return
	}
	fmt.Fprintf(s.opts.Log, "[%s %s] %s\n", now.Format("2006-01-02 15:04:05"), tag, msg)
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
