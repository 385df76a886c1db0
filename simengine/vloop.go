package simengine

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"sweep/internal/simproto"
)

// vloop is the event loop of the virtual clock: it runs until ctx is
// done. One goroutine owns every rank's scheduling.
func (s *Server) vloop(ctx context.Context) {
	vc := s.vc
	for n := 0; ; n++ {
		vc.mu.Lock()
		progressed := s.vadvance()
		if !progressed || n%wakeEvery == 0 {
			vc.wakeAll()
		}
		vc.mu.Unlock()
		if progressed && n%256 != 0 {
			continue
		}
		if progressed {
			select {
			case <-ctx.Done():
				return
			default:
				continue
			}
		}
		select {
		case <-vc.kick:
		case <-ctx.Done():
			return
		case <-s.hung:
			<-ctx.Done()
			return
		}
	}
}

// vadvance processes the next event, or releases barriers and sleepers
// once the clock has reached them; it reports whether anything changed.
// vc.mu is held.
func (s *Server) vadvance() bool {
	vc := s.vc
	select {
	case <-s.hung:
		return false
	default:
	}
	f := vc.floor()
	// The earliest pending event: an arrival, a sample tick, a rank step.
	a := inf
	if len(vc.arrivals) > 0 {
		slices.SortFunc(vc.arrivals, func(x, y *varrival) int {
			return cmp.Or(cmp.Compare(x.t, y.t), cmp.Compare(x.part.id, y.part.id), cmp.Compare(x.seq, y.seq))
		})
		a = vc.arrivals[0].t
	}
	var next *rank
	rt := inf
	for _, r := range s.ranks {
		if !r.idle() && r.now < rt {
			next, rt = r, r.now
		}
	}
	dl := inf
	for _, q := range vc.deadline {
		dl = min(dl, q.deadline)
	}
	tick := inf
	if vc.recording && (f < inf || vc.nextTick <= rt) {
		tick = vc.nextTick
	}
	e := min(a, tick, rt, dl)
	if e < f {
		switch {
		case a == e:
			s.varrive()
		case dl == e:
			s.vexpire(dl)
		case tick == e:
			s.vsample()
			vc.nextTick += vc.interval
		default:
			s.vstep(next)
		}
		vc.now = max(vc.now, e)
		return true
	}
	// Nothing can run before f: release what waits for the clock.
	changed := false
	vc.barriers = slices.DeleteFunc(vc.barriers, func(b *vbarrier) bool {
		if b.t <= f && b.t <= e {
			close(b.done)
			changed = true
			return true
		}
		return false
	})
	if f == inf {
		return changed
	}
	if s.vguard() {
		return true
	}
	for _, p := range vc.parts.list {
		if p.sleeping && p.until == f {
			p.sleeping, p.guard = false, 0
			switch v := p.early; {
			case v != nil && v.t == p.until: // its next request arrives now
				p.early = nil
				v.q.woke = math.NaN()
				vc.enqueue(v)
				close(v.q.verdict)
			case v != nil: // it woke earlier than it sent for
				p.early = nil
				v.q.woke = p.until
				close(v.q.verdict)
			case p.declared: // its next call learns the time
			default:
				p.wake <- p.until
			}
			vc.now = max(vc.now, f)
			changed = true
		}
	}
	return changed
}

// vguard applies the idle-gap cap (aiperf's --system-idle-gap-cap-seconds)
// on the virtual clock: when every participant sleeps, the guarded sleeps
// shift earlier together so that the first ends within the cap of the
// moment the system went idle. It reports whether it shifted.
func (s *Server) vguard() bool {
	vc := s.vc
	earliest, idleFrom, cap := inf, -inf, 0.0
	for _, p := range vc.parts.list {
		if !p.sleeping && p.floor == inf && p.inflight == 0 {
			continue // blocked: waiting for the others, not a stream of its own
		}
		if !p.sleeping {
			return false
		}
		idleFrom = max(idleFrom, p.from)
		if p.guard > 0 {
			earliest = min(earliest, p.until)
			cap = p.guard
		}
	}
	if earliest == inf {
		return false
	}
	excess := earliest - idleFrom - cap
	if excess <= 1e-9 {
		return false
	}
	for _, p := range vc.parts.list {
		if p.sleeping && p.guard > 0 { // a blocked participant keeps the guard of its last sleep
			p.until -= excess
			p.floor = p.until
		}
	}
	return true
}

// varrive enqueues the earliest arrival on its rank.
func (s *Server) varrive() {
	vc := s.vc
	v := vc.arrivals[0]
	vc.arrivals = vc.arrivals[1:]
	r := s.route(v.key)
	r.mu.Lock()
	if r.idle() {
		r.now = max(r.now, v.t)
	}
	r.enqueue(v.q, v.t)
	r.mu.Unlock()
}

// vexpire aborts the requests whose deadline is t: their streams end
// with finish reason "abort" at t, as a client cancelling at t sees.
func (s *Server) vexpire(t float64) {
	vc := s.vc
	var due []*simRequest
	for _, q := range vc.deadline {
		if q.deadline == t {
			due = append(due, q)
		}
	}
	for _, q := range due { // vdone edits vc.deadline: not while ranging over it
		q.aborted.Store(true)
		for _, r := range s.ranks {
			r.mu.Lock()
			r.dropAborted(t)
			r.mu.Unlock()
		}
		s.vdone(q, t, false)
	}
}

// vstep runs one scheduler step of r and delivers its tokens at the
// step's end time.
func (s *Server) vstep(r *rank) {
	r.mu.Lock()
	start := r.now
	dur, out := r.step(start)
	if dur > 0 {
		r.now = start + dur
	}
	r.mu.Unlock()
	end := start + dur
	for _, d := range out {
		q := d.req
		if q.sink != nil && q.sink.record(d.tokens, d.done, q.reason, q.cached, end) {
			if d.done {
				q.sink.wake() // its client's next call is what the clock soon waits for
			} else {
				s.vc.wakeLater(q.sink)
			}
		}
		if d.done {
			s.vdone(q, end, !q.aborted.Load())
			if q.external {
				s.checkFaults(s.finished.Add(1))
			}
		}
	}
}

// vdone ends q's claim on its participant: the participant may act
// again from t on, or, when q ended normally and declared what comes
// next (X-Sim-Then), sleeps from t as it would have asked.
func (s *Server) vdone(q *simRequest, t float64, normal bool) {
	vc := s.vc
	vc.deadline = slices.DeleteFunc(vc.deadline, func(x *simRequest) bool { return x == q })
	p := vc.owners[q]
	if p == nil {
		return
	}
	delete(vc.owners, q)
	p.inflight--
	if p.inflight == 0 && vc.parts.byID[p.id] == p {
		p.floor = t
		if th := q.then; normal && th != nil && th.sleep > 0 && t+th.sleep < th.before {
			until := t + th.sleep
			p.sleeping, p.from, p.until, p.floor, p.guard = true, t, until, until, th.cap
			p.declared, p.thenFrom, p.then = true, t, until
		}
	}
}

// route picks the rank of a request: by session key, else least loaded
// (ties to the lowest index), as submit does on the wall clock.
func (s *Server) route(key string) *rank {
	if len(s.ranks) == 1 {
		return s.ranks[0]
	}
	if key != "" {
		h := fnv.New64a()
		_, _ = h.Write([]byte(key))
		return s.ranks[h.Sum64()%uint64(len(s.ranks))]
	}
	best := s.ranks[0]
	for _, r := range s.ranks[1:] {
		if len(r.running)+len(r.waiting) < len(best.running)+len(best.waiting) {
			best = r
		}
	}
	return best
}

// vsubmit queues q as an arrival of the participant named by the
// request's headers; without them q arrives at the clock's current time
// on behalf of nobody (a client that does not take part in the clock).
// A request sent at its participant's declared wake-up while it still
// sleeps waits (q.verdict) until the clock wakes the participant; one
// sent at that time after it woke earlier fails with a *wokeError.
func (s *Server) vsubmit(h http.Header, q *simRequest, key string) error {
	vc := s.vc
	vc.mu.Lock()
	defer vc.mu.Unlock()
	t := vc.now
	var p *vpart
	early := false
	if id := h.Get(simproto.HeaderParticipant); id != "" {
		p = vc.parts.byID[id]
		if p == nil {
			return fmt.Errorf("participant %q has not joined the virtual clock", id)
		}
		at, err := strconv.ParseFloat(h.Get(simproto.HeaderTime), 64)
		if err != nil {
			return fmt.Errorf("participant %q: %s %q: want simulated seconds", id, simproto.HeaderTime, h.Get(simproto.HeaderTime))
		}
		if v := h.Get(simproto.HeaderThen); v != "" {
			if q.then, err = parseThen(v); err != nil {
				return err
			}
		}
		switch {
		case p.early != nil:
			return fmt.Errorf("participant %q: a request of it already waits for its wake-up at %g", id, p.early.t)
		case p.declared && p.sleeping:
			if at != p.then {
				return fmt.Errorf("participant %q: %s %q, but it declared it sleeps until %g", id, simproto.HeaderTime, h.Get(simproto.HeaderTime), p.then)
			}
			early = true
		case p.declared && at != p.floor:
			p.declared = false
			return &wokeError{at: p.floor}
		case at < p.floor-1e-9:
			return fmt.Errorf("participant %q: %s %q before its floor %g", id, simproto.HeaderTime, h.Get(simproto.HeaderTime), p.floor)
		}
		p.declared = false
		t = at
	}
	q.dl = inf
	if d := h.Get(simproto.HeaderDeadline); d != "" {
		dl, err := strconv.ParseFloat(d, 64)
		if err != nil {
			return fmt.Errorf("%s %q: want simulated seconds", simproto.HeaderDeadline, d)
		}
		q.dl = max(dl, t)
	}
	q.sink.timed = true
	if p == nil {
		p = &vpart{}
	}
	v := &varrival{t: t, part: p, q: q, key: key}
	if early {
		q.verdict = make(chan struct{})
		p.early = v
		return nil
	}
	vc.enqueue(v)
	return nil
}

// vawait waits until the request q, sent before its participant woke,
// arrives (nil) or must come again (*wokeError); an error also when the
// client went away (q is abandoned) or the engine stops.
func (s *Server) vawait(r *http.Request, q *simRequest) error {
	select {
	case <-q.verdict:
	case <-r.Context().Done():
		s.abandon(q)
		return r.Context().Err()
	case <-s.stopping:
		s.abandon(q)
		return errors.New("the engine is shutting down")
	}
	if !math.IsNaN(q.woke) {
		return &wokeError{at: q.woke}
	}
	return nil
}

// vabandon is called when the client of q went away: its participant no
// longer waits for it (the request itself is dropped at the next step).
func (s *Server) vabandon(q *simRequest) {
	vc := s.vc
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if p := vc.owners[q]; p != nil {
		delete(vc.owners, q)
		p.inflight--
	}
	for _, p := range vc.parts.list {
		if p.early != nil && p.early.q == q { // it waited for the wake-up: back to the declared sleep
			p.early, p.declared = nil, true
		}
	}
	vc.poke()
}

// simHandlers serves the participant side of the protocol.
func (s *Server) simHandlers(mux *http.ServeMux) {
	mux.HandleFunc("POST /sim/join", s.simJoin)
	mux.HandleFunc("POST /sim/leave", s.simLeave)
	mux.HandleFunc("POST /sim/block", s.simBlock)
	mux.HandleFunc("POST /sim/set", s.simSet)
	mux.HandleFunc("POST /sim/sleep", s.simSleep)
	mux.HandleFunc("POST /sim/record", s.simRecord)
	mux.HandleFunc("POST /sim/sample", s.simSample)
	mux.HandleFunc("GET /sim/log", s.simLog)
	mux.HandleFunc("GET /sim/state", s.simState)
	mux.HandleFunc("GET /sim/power", s.simPower)
}

// simState describes the clock for diagnosis: its time, every
// participant (floor, in-flight requests, sleep) and the pending events.
func (s *Server) simState(w http.ResponseWriter, _ *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	defer vc.mu.Unlock()
	fmt.Fprintf(w, "now %g floor %g arrivals %d barriers %d deadlines %d recording %t next tick %g\n",
		vc.now, vc.floor(), len(vc.arrivals), len(vc.barriers), len(vc.deadline), vc.recording, vc.nextTick)
	ids := slices.Sorted(maps.Keys(vc.parts.byID))
	for _, id := range ids {
		p := vc.parts.byID[id]
		fmt.Fprintf(w, "participant %s: floor %g inflight %d sleeping %t from %g until %g cap %g", id, p.floor, p.inflight, p.sleeping, p.from, p.until, p.guard)
		if p.declared {
			fmt.Fprintf(w, " declared %g-%g", p.thenFrom, p.then)
		}
		if p.early != nil {
			fmt.Fprintf(w, " early request at %g", p.early.t)
		}
		fmt.Fprintln(w)
	}
	for _, r := range s.ranks {
		r.mu.Lock()
		fmt.Fprintf(w, "rank %d: now %g running %d waiting %d\n", r.idx, r.now, len(r.running), len(r.waiting))
		r.mu.Unlock()
	}
}

func simError(w http.ResponseWriter, code int, format string, a ...any) {
	http.Error(w, fmt.Sprintf(format, a...), code)
}

func floatParam(r *http.Request, name string) (float64, bool) {
	v, err := strconv.ParseFloat(r.URL.Query().Get(name), 64)
	return v, err == nil && !math.IsNaN(v)
}

// part returns the running participant of the request (?p=) and its
// time (?at=), checked against its floor; vc.mu is held.
func (s *Server) part(w http.ResponseWriter, r *http.Request) (*vpart, float64, bool) {
	id := r.URL.Query().Get("p")
	p := s.vc.parts.byID[id]
	if p == nil {
		simError(w, http.StatusNotFound, "participant %q has not joined the virtual clock", id)
		return nil, 0, false
	}
	at, ok := floatParam(r, "at")
	if !ok || at < p.floor-1e-9 {
		simError(w, http.StatusConflict, "participant %q: at=%q is before its floor %g", id, r.URL.Query().Get("at"), p.floor)
		return nil, 0, false
	}
	return p, at, true
}

func writeTime(w http.ResponseWriter, t float64) {
	fmt.Fprint(w, strconv.FormatFloat(t, 'g', -1, 64))
}

// simJoin registers the participants ?ids= (comma-separated) at ?at=,
// on behalf of the running participant ?p=; the first participant joins
// without p and at, at the clock's current time, which it is answered.
// With ?reset=1 the first participant starts a new session of the clock:
// participants left over by an earlier load generator that went away
// without leaving (killed) are dropped, and sampling stops.
func (s *Server) simJoin(w http.ResponseWriter, r *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	defer vc.mu.Unlock()
	at := vc.now
	if r.URL.Query().Get("p") != "" {
		var ok bool
		if _, at, ok = s.part(w, r); !ok {
			return
		}
	} else if r.URL.Query().Get("reset") == "1" {
		if wall, err := strconv.ParseInt(r.URL.Query().Get("wall"), 10, 64); err == nil {
			vc.wallSec, vc.wallFracNs, vc.joinedAt, vc.anchorSet = wall/1e9, wall%1e9, at, true
			vc.anchorGen++
		}
		vc.parts.reset()
		clear(vc.owners)
		vc.recording = false
		vc.poke()
	} else if len(vc.parts.list) > 0 {
		simError(w, http.StatusConflict, "the clock has participants: join new ones on behalf of one (p, at)")
		return
	}
	for id := range strings.SplitSeq(r.URL.Query().Get("ids"), ",") {
		if id == "" || vc.parts.byID[id] != nil {
			simError(w, http.StatusConflict, "participant %q: empty or already joined", id)
			return
		}
	}
	for id := range strings.SplitSeq(r.URL.Query().Get("ids"), ",") {
		vc.parts.add(&vpart{id: id, floor: at, wake: make(chan float64, 1)})
	}
	writeTime(w, at)
}

// simLeave removes the participant ?p= for good.
func (s *Server) simLeave(w http.ResponseWriter, r *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	defer vc.mu.Unlock()
	vc.parts.remove(r.URL.Query().Get("p"))
	vc.poke()
}

// simBlock marks ?p= as waiting for other participants: it holds the
// clock back no more until one of them sets its time (/sim/set).
func (s *Server) simBlock(w http.ResponseWriter, r *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	defer vc.mu.Unlock()
	p, _, ok := s.part(w, r)
	if !ok {
		return
	}
	p.retract()
	p.floor = inf
	vc.poke()
}

// simSet sets the time of the participants ?ids= to ?at=, on behalf of
// the running participant ?p= (whose own time at is at most that).
func (s *Server) simSet(w http.ResponseWriter, r *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	defer vc.mu.Unlock()
	p, at, ok := s.part(w, r)
	if !ok {
		return
	}
	to, ok := floatParam(r, "to")
	if !ok || to < at {
		simError(w, http.StatusBadRequest, "to=%q: want a time at or after at=%g", r.URL.Query().Get("to"), at)
		return
	}
	if p.declared {
		p.retract()
		p.floor = at
	}
	for id := range strings.SplitSeq(r.URL.Query().Get("ids"), ",") {
		if q := vc.parts.byID[id]; q != nil {
			q.retract()
			q.floor, q.sleeping = to, false
		}
	}
	vc.poke()
}

// simSleep blocks the participant ?p= (now at ?at=) until the clock
// reaches ?until= and answers the time it woke at: until, or earlier
// when ?cap= (the idle-gap cap) shortened an idle stretch.
//
// A participant the engine put to sleep itself (X-Sim-Then) confirms that
// sleep with the same at and until; it is answered at once if the clock
// has woken it already.
func (s *Server) simSleep(w http.ResponseWriter, r *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	var p *vpart
	var at float64
	ok := true
	if p = vc.parts.byID[r.URL.Query().Get("p")]; p != nil && p.declared {
		at, ok = floatParam(r, "at")
		if ok && at != p.thenFrom {
			ok = false
		}
	} else {
		p, at, ok = s.part(w, r)
		if !ok {
			vc.mu.Unlock()
			return
		}
	}
	until, ok2 := floatParam(r, "until")
	switch {
	case p.declared && (!ok || !ok2 || until != p.then):
		vc.mu.Unlock()
		simError(w, http.StatusConflict, "participant %q: at=%q until=%q, but it declared it sleeps from %g until %g", p.id, r.URL.Query().Get("at"), r.URL.Query().Get("until"), p.thenFrom, p.then)
		return
	case !ok2 || until < at:
		vc.mu.Unlock()
		simError(w, http.StatusBadRequest, "until=%q: want a time at or after at=%g", r.URL.Query().Get("until"), at)
		return
	case p.declared && !p.sleeping: // woken already, at its floor
		p.declared = false
		t := p.floor
		vc.mu.Unlock()
		writeTime(w, t)
		return
	case p.declared:
		p.declared = false
	default:
		p.guard, _ = floatParam(r, "cap")
		p.sleeping, p.from, p.until, p.floor = true, at, until, until
		vc.poke()
	}
	vc.mu.Unlock()
	select {
	case t := <-p.wake:
		writeTime(w, t)
	case <-r.Context().Done():
		vc.mu.Lock()
		if vc.parts.byID[p.id] == p {
			vc.parts.remove(p.id) // a participant that went away holds nothing back
		}
		vc.poke()
		vc.mu.Unlock()
	case <-s.stopping:
		simError(w, http.StatusServiceUnavailable, "the engine is shutting down")
	}
}

// barrier waits until every event before t is processed (vc.mu not held).
func (s *Server) barrier(r *http.Request, t float64) bool {
	vc := s.vc
	b := &vbarrier{t: t, done: make(chan struct{})}
	vc.mu.Lock()
	vc.barriers = append(vc.barriers, b)
	vc.poke()
	vc.mu.Unlock()
	select {
	case <-b.done:
		return true
	case <-r.Context().Done():
	case <-s.stopping:
	}
	return false
}

// simRecord starts sampling the metrics every ?interval= simulated
// seconds from ?at= on (the first sample is taken at at), on behalf of
// the running participant ?p=.
func (s *Server) simRecord(w http.ResponseWriter, r *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	_, at, ok := s.part(w, r)
	iv, ok2 := floatParam(r, "interval")
	if ok && (!ok2 || iv <= 0) {
		simError(w, http.StatusBadRequest, "interval=%q: want a positive number of seconds", r.URL.Query().Get("interval"))
		ok = false
	}
	vc.mu.Unlock()
	if !ok || !s.barrier(r, at) {
		return
	}
	vc.mu.Lock()
	defer vc.mu.Unlock()
	vc.recording, vc.interval, vc.nextTick = true, iv, at
	vc.log, vc.last, vc.samples, vc.schema = nil, nil, 0, nil
}

// simSample takes one extra sample at ?at= (a reference scrape), once
// every event before at is processed.
func (s *Server) simSample(w http.ResponseWriter, r *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	_, at, ok := s.part(w, r)
	vc.mu.Unlock()
	if !ok || !s.barrier(r, at) {
		return
	}
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if !vc.recording {
		simError(w, http.StatusConflict, "not recording: POST /sim/record first")
		return
	}
	saved := vc.nextTick
	vc.nextTick = at
	s.vsample()
	vc.nextTick = saved
}

// vsample appends the metrics at vc.nextTick to the log: the text page
// the first time (the schema, each sample's value replaced by the index
// of its line among the sample lines), then per sample the changed values
// (the first record has them all). Record layout (little endian): time
// float64, count uint32, then count times (index uint32, value float64).
func (s *Server) vsample() {
	vc := s.vc
	var e expo
	e.values = vc.schema != nil
	e.index = vc.schema == nil
	e.vals = make([]float64, 0, len(vc.last))
	vals := s.renderInto(&e)
	if vc.schema == nil {
		vc.schema = e.b.Bytes()
	}
	var head [12]byte
	binary.LittleEndian.PutUint64(head[:8], math.Float64bits(vc.nextTick))
	at := len(vc.log)
	vc.log = append(vc.log, head[:]...)
	n := 0
	var rec [12]byte
	for i, v := range vals {
		if i < len(vc.last) && math.Float64bits(vc.last[i]) == math.Float64bits(v) {
			continue
		}
		binary.LittleEndian.PutUint32(rec[:4], uint32(i))
		binary.LittleEndian.PutUint64(rec[4:], math.Float64bits(v))
		vc.log = append(vc.log, rec[:]...)
		n++
	}
	binary.LittleEndian.PutUint32(vc.log[at+8:at+12], uint32(n))
	vc.last = vals
	vc.samples++
}

// simLog answers the sample log and stops recording: the schema page
// length (uint32), the page, then the records.
func (s *Server) simLog(w http.ResponseWriter, r *http.Request) {
	vc := s.vc
	vc.mu.Lock()
	defer vc.mu.Unlock()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(simproto.HeaderSamples, strconv.Itoa(vc.samples))
	schema := vc.schema
	if page := s.malformedPage(); page != nil {
		schema = page
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(schema)))
	_, _ = w.Write(n[:])
	_, _ = w.Write(schema)
	_, _ = w.Write(vc.log)
	vc.recording = false
}

// abandon drops q because its client went away or the server stops.
func (s *Server) abandon(q *simRequest) {
	q.aborted.Store(true)
	if s.vc != nil {
		s.vabandon(q)
	}
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
