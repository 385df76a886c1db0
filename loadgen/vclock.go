package loadgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"sweep/metrics"

	dto "github.com/prometheus/client_model/go"
)

// simBlockTokens is the tokens per block id of a prompt sent by blocks.
const simBlockTokens = 64

// vclock is the load generator's side of the simulated engine's virtual
// clock (Options.VirtualClock; the protocol is described in "go doc
// sweep/simengine"). Every stream of requests (the run itself, each lane,
// each subagent stream) is a participant with its own simulated time; a
// participant tells the engine whenever it sleeps, waits for others or
// leaves, so the engine never advances past a moment at which a
// participant could still send something. A turn followed by a plain
// sleep declares it (X-Sim-Then), and the next turn then goes at once and
// waits in the engine for its wake-up (see runner.turn), so the engine
// runs on through think times. Timestamps in the artifacts are
// wall0 plus the simulated time since t0, so every duration is simulated.
type vclock struct {
	hc    *http.Client
	base  string // the engine (or router) base URL
	t0    float64
	wall0 int64

	mu   sync.Mutex
	lost error // the first call the engine did not answer (transport error)
}

// lostErr is the first clock call the engine did not answer, nil while
// every call got an answer: lanes read a clock that stops answering as
// the end of their time, so a load it cuts short ends like a full one.
func (c *vclock) lostErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// vpart is one participant and its current simulated time. declared
// says the engine put it to sleep until then when its last request ended
// (the request's X-Sim-Then): until its next call confirms that sleep,
// it must send nothing before then.
type vpart struct {
	id       string
	now      float64
	declared bool
	then     float64
}

func fmtSim(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ns maps a simulated time to an artifact timestamp.
func (c *vclock) ns(t float64) int64 { return c.wall0 + int64(math.Round((t-c.t0)*1e9)) }

// call posts to a /sim/ endpoint of base and returns the body.
func (c *vclock) call(ctx context.Context, base, method, path string, q url.Values) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, base+path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		err = fmt.Errorf("virtual clock %s: %w", path, err)
		if ctx.Err() == nil {
			c.mu.Lock()
			if c.lost == nil {
				c.lost = err
			}
			c.mu.Unlock()
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("virtual clock %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &vclockError{path: path, code: resp.StatusCode, msg: strings.TrimSpace(string(body))}
	}
	return body, nil
}

type vclockError struct {
	path string
	code int
	msg  string
}

func (e *vclockError) Error() string {
	return fmt.Sprintf("virtual clock %s: HTTP %d: %s", e.path, e.code, e.msg)
}

func (c *vclock) post(ctx context.Context, path string, q url.Values) ([]byte, error) {
	return c.call(ctx, c.base, http.MethodPost, path, q)
}

// joinFirst registers the first participant at the engine's current time.
func (c *vclock) joinFirst(ctx context.Context, id string, wall time.Time) (*vpart, error) {
	// The artifact clock starts on a whole second, and the engine learns
	// it (wall=) to stamp the simulated GPU telemetry on it: its one-second
	// samples then fall at the same simulated times in every run.
	wall = wall.Truncate(time.Second)
	b, err := c.post(ctx, "/sim/join", url.Values{"ids": {id}, "reset": {"1"}, "wall": {strconv.FormatInt(wall.UnixNano(), 10)}})
	if err != nil {
		return nil, fmt.Errorf("%w (is the engine a sweep sim-engine on the virtual clock?)", err)
	}
	t, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return nil, fmt.Errorf("virtual clock /sim/join: %q: %w", b, err)
	}
	c.t0, c.wall0 = t, wall.UnixNano()
	return &vpart{id: id, now: t}, nil
}

func at(p *vpart) url.Values { return url.Values{"p": {p.id}, "at": {fmtSim(p.now)}} }

// join registers new participants at by's time, on its behalf.
func (c *vclock) join(ctx context.Context, by *vpart, ids ...string) ([]*vpart, error) {
	q := at(by)
	q.Set("ids", strings.Join(ids, ","))
	if _, err := c.post(ctx, "/sim/join", q); err != nil {
		return nil, err
	}
	out := make([]*vpart, len(ids))
	for i, id := range ids {
		out[i] = &vpart{id: id, now: by.now}
	}
	return out, nil
}

// leave removes p; it never fails the run (a gone engine is reported by
// the requests).
func (c *vclock) leave(p *vpart) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	_, _ = c.post(ctx, "/sim/leave", url.Values{"p": {p.id}})
}

// block says p waits for other participants (they set its time).
func (c *vclock) block(ctx context.Context, p *vpart) error {
	_, err := c.post(ctx, "/sim/block", at(p))
	return err
}

// set moves the participants ids to time to, on behalf of by.
func (c *vclock) set(ctx context.Context, by *vpart, to float64, ids ...string) error {
	q := at(by)
	q.Set("to", fmtSim(to))
	q.Set("ids", strings.Join(ids, ","))
	_, err := c.post(ctx, "/sim/set", q)
	return err
}

// sleep waits until simulated time until (earlier when the idle-gap cap
// shortens an idle stretch) and advances p to it. It reports false when
// ctx ended the wait or the engine failed.
func (c *vclock) sleep(ctx context.Context, p *vpart, until float64, cap time.Duration) bool {
	if until <= p.now {
		return ctx.Err() == nil
	}
	q := at(p)
	q.Set("until", fmtSim(until))
	if cap > 0 {
		q.Set("cap", fmtSim(cap.Seconds()))
	}
	b, err := c.post(ctx, "/sim/sleep", q)
	if err != nil {
		return false
	}
	t, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return false
	}
	p.now, p.declared = t, false
	return ctx.Err() == nil
}

// cleanupTimeout bounds the clock calls that end a participant's part
// after the run was cancelled.
const cleanupTimeout = scrapeTimeout

// cleanupCtx is ctx without its cancellation, bounded from now: a
// participant must still leave the clock (or hand its time on) when the
// run is cancelled, or a reused engine would wait for it forever.
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}

// vgroup is a set of participants another one (the waiter) waits for:
// the last member to arrive sets the waiter, and the members that stay,
// to the latest member time, so nothing runs before that time is known.
type vgroup struct {
	c      *vclock
	mu     sync.Mutex
	left   int
	latest float64
	stay   []string
	waiter *vpart
	done   chan struct{}
	warn   func(error) // reports a clock call that failed (nil: ignored)
}

// newVGroup makes a group of n members; the waiter must block (or be
// blocked by the caller) before any member can arrive.
func newVGroup(c *vclock, n int, waiter *vpart) *vgroup {
	return &vgroup{c: c, left: n, latest: waiter.now, waiter: waiter, done: make(chan struct{})}
}

// arrive ends p's part at p.now. With leave, p leaves the clock;
// otherwise it waits for the others and continues at the group's time.
// The clock calls run even when ctx is cancelled (bounded by
// cleanupTimeout from now): a waiter left blocked would hold a reused
// engine's clock for good.
func (g *vgroup) arrive(ctx context.Context, p *vpart, leave bool) {
	ctx, cancel := cleanupCtx(ctx)
	defer cancel()
	if p.declared { // it stops instead of taking up its declared sleep: not before its end
		p.now, p.declared = max(p.now, p.then), false
	}
	report := func(err error) {
		if err != nil && g.warn != nil {
			g.warn(err)
		}
	}
	g.mu.Lock()
	g.latest = max(g.latest, p.now)
	g.left--
	if g.left > 0 {
		if leave {
			g.c.leave(p)
		} else {
			g.stay = append(g.stay, p.id)
			report(g.c.block(ctx, p)) // under mu: before the last member sets it
		}
		g.mu.Unlock()
		if !leave {
			<-g.done
			p.now = g.latest
		}
		return
	}
	ids := append(g.stay, g.waiter.id)
	if !leave {
		ids = append(ids, p.id)
	}
	report(g.c.set(ctx, p, g.latest, ids...))
	if leave {
		g.c.leave(p)
	}
	p.now = g.latest
	g.mu.Unlock()
	close(g.done)
}

// wait blocks until the group is complete and advances the waiter.
func (g *vgroup) wait() {
	<-g.done
	g.waiter.now = g.latest
}

// record starts the engine's metric sampling at p's time (the baseline
// sample) every interval, at the endpoint's base; ok is false when that
// endpoint is not a virtual-clock engine.
func (c *vclock) record(ctx context.Context, endpoint string, p *vpart, interval time.Duration) (bool, error) {
	q := at(p)
	q.Set("interval", fmtSim(interval.Seconds()))
	_, err := c.call(ctx, endpointBase(endpoint), http.MethodPost, "/sim/record", q)
	if ve, ok := errors.AsType[*vclockError](err); ok && ve.code == http.StatusNotFound && !strings.Contains(ve.msg, "participant") {
		return false, nil
	}
	return err == nil, err
}

// sample takes a reference sample at p's time.
func (c *vclock) sample(ctx context.Context, endpoint string, p *vpart) error {
	_, err := c.call(ctx, endpointBase(endpoint), http.MethodPost, "/sim/sample", at(p))
	return err
}

func endpointBase(endpoint string) string { return strings.TrimSuffix(endpoint, "/metrics") }

// fetchLog reads the engine's sample log into l: the schema page gives
// the families and series (each sample's value on it is the index of its
// line, the index the records use), each record the changed sample
// values; the first record has them all.
func (c *vclock) fetchLog(ctx context.Context, endpoint string, l *endpointLog) error {
	body, err := c.call(ctx, endpointBase(endpoint), http.MethodGet, "/sim/log", nil)
	if err != nil {
		return err
	}
	if len(body) < 4 {
		return errors.New("virtual clock /sim/log: short answer")
	}
	n := int(binary.LittleEndian.Uint32(body))
	if 4+n > len(body) {
		return errors.New("virtual clock /sim/log: truncated schema")
	}
	schema, recs := body[4:4+n], body[4+n:]
	snap, err := metrics.ParseText(bytes.NewReader(schema), "virtual clock /sim/log schema")
	if err != nil {
		return err
	}
	fams := promFamilies(snap.Families)
	lines, err := sampleLines(snap.Families, fams)
	if err != nil {
		return err
	}
	vals := make([]float64, len(lines))
	var changed []int // the lines the current record sets
	first := true
	for len(recs) >= 12 {
		t := math.Float64frombits(binary.LittleEndian.Uint64(recs))
		k := int(binary.LittleEndian.Uint32(recs[8:]))
		recs = recs[12:]
		if len(recs) < 12*k {
			return errors.New("virtual clock /sim/log: truncated record")
		}
		changed = changed[:0]
		for j := range k {
			i := int(binary.LittleEndian.Uint32(recs[12*j:]))
			if i >= len(vals) {
				return fmt.Errorf("virtual clock /sim/log: sample index %d of %d", i, len(vals))
			}
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(recs[12*j+4:]))
			changed = append(changed, i)
		}
		recs = recs[12*k:]
		ns := c.ns(t)
		if k > 0 || len(l.updates) == 0 {
			l.updates = append(l.updates, ns)
		}
		// Set the page's samples from the values: all of them at the
		// first record, then the ones each record changes (the samples
		// keep the others).
		set := func(i int) {
			ln := lines[i]
			smp := ln.sample
			if smp == nil {
				return
			}
			switch ln.part {
			case "bucket":
				smp.Buckets[ln.le] = vals[i]
			case "sum":
				smp.Sum = vals[i]
			case "count":
				smp.Count = vals[i]
			default:
				smp.Value = vals[i]
			}
		}
		if first {
			for i := range lines {
				set(i)
			}
			first = false
		} else {
			for _, i := range changed {
				set(i)
			}
		}
		l.add(ns, fams)
	}
	return nil
}

// sampleLine is what one sample line of the schema page sets: a part
// ("bucket" with its le, "sum", "count", or "" for the value) of a sample
// of fams, or nothing (sample nil: a line promFamilies drops).
type sampleLine struct {
	sample *promSample
	part   string
	le     string
}

// sampleLines maps each sample line of the schema page, by the index its
// value holds, to the part of the sample in fams (promFamilies(page)) it
// sets. Every line's index must be a distinct integer below the number of
// sample lines.
func sampleLines(page map[string]*dto.MetricFamily, fams map[string]*promFamily) ([]sampleLine, error) {
	n := 0
	for _, mf := range page {
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetHistogram() != nil:
				n += len(m.GetHistogram().GetBucket()) + 2
			case m.GetSummary() != nil:
				n += len(m.GetSummary().GetQuantile()) + 2
			default:
				n++
			}
		}
	}
	out := make([]sampleLine, n)
	set := make([]bool, n)
	put := func(v float64, ln sampleLine) error {
		i := int(v)
		if float64(i) != v || i < 0 || i >= n || set[i] {
			return fmt.Errorf("virtual clock /sim/log schema: sample value %v is not a line index below %d used once (is the engine a sweep sim-engine of this version?)", v, n)
		}
		out[i], set[i] = ln, true
		return nil
	}
	for _, f := range fams {
		for j := range f.Samples {
			smp := &f.Samples[j]
			var err error
			switch {
			case f.Type == "histogram" || f.Type == "gaugehistogram" || (f.Type == "summary" && smp.Labels["quantile"] == ""):
				for le, v := range smp.Buckets {
					if err = put(v, sampleLine{sample: smp, part: "bucket", le: le}); err != nil {
						return nil, err
					}
				}
				if err = put(smp.Sum, sampleLine{sample: smp, part: "sum"}); err == nil {
					err = put(smp.Count, sampleLine{sample: smp, part: "count"})
				}
			default:
				err = put(smp.Value, sampleLine{sample: smp})
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
