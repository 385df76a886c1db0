package simengine

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"sync"

	"sweep/internal/simproto"
)

var inf = math.Inf(1)

// vclock is the virtual clock of a Server: the event loop's view of the
// participants (the load generator's streams) and the pending events.
// mu guards every field and, while held by the loop, orders it before
// the ranks' own locks.
type vclock struct {
	mu       sync.Mutex
	kick     chan struct{} // capacity 1: "something changed"
	now      float64       // the latest processed event time
	parts    partSet
	arrivals []*varrival // sorted by (t, participant, seq) when taken
	seq      uint64
	barriers []*vbarrier
	owners   map[*simRequest]*vpart
	deadline []*simRequest // requests with a deadline, still open

	// The load generator's first join's wall= (Unix ns, as whole seconds
	// and the rest) and simulated time map simulated time to its artifact
	// timestamps (anchorTime).
	wallSec, wallFracNs int64
	joinedAt            float64
	anchorSet           bool
	anchorGen           int // counts the joins that set the anchor

	// metric sampling on the virtual timeline
	recording bool
	interval  float64
	nextTick  float64
	schema    []byte // the text page of the first sample
	log       []byte // delta-encoded samples
	last      []float64
	samples   int

	// woken are the sinks with releases whose handlers have not been
	// woken yet: the loop wakes them in bunches (every wakeEvery events,
	// and whenever it has to wait), so that a handler streams several
	// steps' chunks in one write instead of one syscall per step. It
	// changes only when the bytes leave, never their simulated times.
	woken []*sink
}

// wakeEvery is how many events the loop processes between waking handlers.
const wakeEvery = 64

// wakeLater queues a sink's handler to be woken. vc.mu is held.
func (vc *vclock) wakeLater(k *sink) {
	vc.woken = append(vc.woken, k)
}

// wakeAll wakes the queued handlers. vc.mu is held.
func (vc *vclock) wakeAll() {
	for _, k := range vc.woken {
		k.wake()
	}
	clear(vc.woken)
	vc.woken = vc.woken[:0]
}

// vpart is one participant: a sequential stream of the load generator.
// Its floor is the earliest simulated time at which it may still send
// anything; the engine processes only events strictly before the lowest
// floor.
type vpart struct {
	id       string
	floor    float64
	inflight int
	sleeping bool
	from     float64      // the participant's time when it went to sleep
	until    float64      // wake-up time while sleeping
	guard    float64      // idle-gap cap of this sleep (0: none)
	wake     chan float64 // capacity 1

	// declared: the engine put the participant to sleep itself, from
	// thenFrom (its last request's end) until then, as that request's
	// X-Sim-Then said; the participant's next call (the same sleep, or
	// its next request at the wake-up) confirms it. early is that next
	// request while the participant still sleeps: it arrives when the
	// participant wakes.
	declared       bool
	thenFrom, then float64
	early          *varrival
}

func parseThen(v string) (*vthen, error) {
	q, err := url.ParseQuery(v)
	th := &vthen{before: inf}
	for _, f := range []struct {
		name string
		dst  *float64
		need bool
	}{{"sleep", &th.sleep, true}, {"cap", &th.cap, false}, {"before", &th.before, false}} {
		x := q.Get(f.name)
		if x == "" && !f.need {
			continue
		}
		n, perr := strconv.ParseFloat(x, 64)
		if err == nil && (perr != nil || math.IsNaN(n) || n < 0) {
			err = fmt.Errorf("%s=%q", f.name, x)
		}
		*f.dst = n
	}
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w (want sleep=SECONDS&cap=SECONDS&before=TIME)", simproto.HeaderThen, v, err)
	}
	return th, nil
}

// wokeError is a request sent at its participant's declared wake-up
// after the participant woke earlier, at: it must come again at at.
type wokeError struct{ at float64 }

func (e *wokeError) Error() string {
	return fmt.Sprintf("the participant woke at %g, before its declared wake-up (the idle-gap cap shortened its sleep): send the request at that time", e.at)
}

type varrival struct {
	t    float64
	part *vpart
	seq  uint64
	q    *simRequest
	key  string
}

// vbarrier is a handler waiting until every event before t is processed.
type vbarrier struct {
	t    float64
	done chan struct{}
}

func newVClock() *vclock {
	return &vclock{kick: make(chan struct{}, 1), parts: partSet{byID: map[string]*vpart{}}, owners: map[*simRequest]*vpart{}}
}

func (vc *vclock) poke() {
	select {
	case vc.kick <- struct{}{}:
	default:
	}
}

// floor is the lowest participant floor (+Inf without participants).
func (vc *vclock) floor() float64 {
	f := inf
	for _, p := range vc.parts.list {
		f = min(f, p.floor)
	}
	return f
}

// partSet is the clock's participants by id, and in a slice in the order
// they joined: the event loop scans them at every event (the earliest
// floor), which over a map's iterator was a tenth of the engine's CPU at
// conc 256.
type partSet struct {
	byID map[string]*vpart
	list []*vpart
}

func (ps *partSet) add(p *vpart) {
	ps.byID[p.id] = p
	ps.list = append(ps.list, p)
}

func (ps *partSet) remove(id string) {
	if p := ps.byID[id]; p != nil {
		delete(ps.byID, id)
		ps.list = slices.DeleteFunc(ps.list, func(q *vpart) bool { return q == p })
	}
}

func (ps *partSet) reset() {
	clear(ps.byID)
	clear(ps.list)
	ps.list = ps.list[:0]
}

// enqueue makes v a pending arrival, its participant (if any) waiting
// for it. vc.mu is held.
func (vc *vclock) enqueue(v *varrival) {
	q, p := v.q, v.part
	if p.id != "" {
		p.inflight++
		p.floor = inf
		p.sleeping = false
		vc.owners[q] = p
	}
	if !math.IsInf(q.dl, 1) {
		q.deadline = q.dl
		vc.deadline = append(vc.deadline, q)
	}
	vc.seq++
	v.seq = vc.seq
	vc.arrivals = append(vc.arrivals, v)
	vc.poke()
}

// retract ends a declared sleep the participant did not take up: it does
// something else from the time it says, at or after the sleep's floor.
func (p *vpart) retract() {
	if p.declared {
		p.declared, p.sleeping, p.guard = false, false, 0
	}
}
