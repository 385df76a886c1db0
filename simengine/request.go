package simengine

import (
	"sync"
	"sync/atomic"
)

// simRequest is one generation request inside a rank. Times are simulated
// seconds on the engine clock; -1 means "not yet".
type simRequest struct {
	id        uint64
	prompt    int      // prompt tokens
	blocks    []uint64 // chained hashes of the prompt's full cache blocks
	target    int      // completion tokens to produce
	reason    string   // finish reason once target is reached: "stop" or "length"
	maxTokens int      // the request's max_tokens (histogram only)
	logged    bool     // false for internal health probes (not in metrics)
	external  bool     // an API request (counts for the crash and hang faults)
	// transferred: the prompt's KV came from a prefill worker (a decode
	// worker's request), so admitting it computes nothing.
	transferred bool

	cached int // prompt tokens served from the prefix cache (first admission)
	// fromHost is the part of cached loaded from the host tier (a KV
	// connector's transfer in vLLM's terms).
	fromHost  int
	prefillTo int // tokens to compute before decoding (prompt, or prompt+output after retraction)
	computed  int // of prefillTo, tokens already present (cached or computed)
	nodes     []*cacheNode
	private   int     // KV tokens held outside cache nodes
	loading   float64 // seconds of host-tier loads its next prefill chunk waits for
	inserted  bool
	generated int
	verifies  int

	arrival, admitted, firstToken, lastToken float64
	deadline                                 float64 // virtual clock: aborted at this time (0: none)

	aborted atomic.Bool
	sink    *sink

	// On the virtual clock: then is what the request's participant does
	// when it ends (X-Sim-Then; nil: unknown), dl its X-Sim-Deadline (+Inf:
	// none), and verdict, for a request sent before its participant woke
	// (early), is closed when the clock reaches the wake-up: woke is then
	// NaN (it arrived) or the time the participant woke instead (it must
	// be sent again at that time).
	then    *vthen
	dl      float64
	verdict chan struct{}
	woke    float64
}

// sink hands tokens from a rank to the HTTP handler waiting on a request.
// The rank never blocks on it.
type sink struct {
	notify   chan struct{} // capacity 1: "something changed"
	interval int           // release tokens in chunks of at least this many

	mu       sync.Mutex
	total    int // generated so far
	released int // visible to the handler
	taken    int // consumed by the handler
	done     bool
	reason   string
	cached   int
	// rel, on the virtual clock only (timed), are the releases not yet
	// taken, each with its simulated emission time, so that every SSE
	// event carries its own time whatever the handler's wall-clock lag.
	timed bool
	rel   []chunkRelease
	lastT float64 // the time of the latest release
}

// chunkRelease is one chunk of tokens made visible at simulated time t.
type chunkRelease struct {
	n int
	t float64
}

func newSink(interval int) *sink {
	return &sink{notify: make(chan struct{}, 1), interval: max(interval, 1)}
}

func (s *sink) push(n int, done bool, reason string, cached int) {
	s.pushAt(n, done, reason, cached, 0)
}

// pushAt is push at simulated time t (recorded when the sink is timed).
func (s *sink) pushAt(n int, done bool, reason string, cached int, t float64) {
	if s.record(n, done, reason, cached, t) {
		s.wake()
	}
}

// wake tells the handler that something changed.
func (s *sink) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// record is pushAt without waking the handler; it reports whether tokens
// were released (so the handler should be woken).
func (s *sink) record(n int, done bool, reason string, cached int, t float64) bool {
	s.mu.Lock()
	s.total += n
	if done {
		s.done, s.reason = true, reason
	}
	s.cached = cached
	release := s.done || s.released == 0 || s.total-s.released >= s.interval
	if release {
		if s.timed {
			s.rel = append(s.rel, chunkRelease{s.total - s.released, t})
			s.lastT = t
		}
		s.released = s.total
	}
	s.mu.Unlock()
	return release
}

// take returns the tokens released since the last call and whether the
// request is complete (all tokens taken).
func (s *sink) take() (n int, done bool, reason string, cached int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = s.released - s.taken
	s.taken = s.released
	return n, s.done && s.taken == s.total, s.reason, s.cached
}

// takeTimed returns the releases since the last call (timed sinks) and
// whether the request is complete.
func (s *sink) takeTimed() (rel []chunkRelease, done bool, reason string, cached int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rel, s.rel = s.rel, nil
	s.taken = s.released
	return rel, s.done && s.taken == s.total, s.reason, s.cached
}

// vthen is a request's X-Sim-Then: sleep seconds with the idle-gap cap,
// if the end plus sleep is before the end of the participant's window.
type vthen struct {
	sleep, cap, before float64
}
