package loadgen

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// aiperf 0.12.0's sweep-line metrics: step functions of the profiling
// phase's requests over time (how many are in flight, in prefill or in
// decode, at what token rate, holding how many tokens), summarised over
// the phase's window by time-weighted statistics. The effective_* ones
// weigh the whole window, idle gaps included; the active_* ones only the
// time their phase had a request in it. Every input is what the client
// measured: each request's start, first content chunk (start + TTFT),
// content chunk gaps (inter_chunk_latency) and end, and its ISL and OSL.

// span is one successful request as the sweeps see it, in ns.
type span struct {
	start, gen, end float64 // request start, first content chunk, request end
	isl, osl        float64
	icl             []float64 // gaps between content chunks, ns
	hasGen          bool      // a content chunk came (gen is set)
}

// step is a step function: vals[i] holds from ts[i] to ts[i+1].
type step struct{ ts, vals []float64 }

type event struct{ t, d float64 }

// sweep sorts events by time, ends (non-positive deltas) before starts at
// one time, and sums the deltas. Round-off residue below 1e-9 of the peak
// is snapped to 0, as aiperf does.
func sweep(ev []event) step {
	slices.SortStableFunc(ev, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(b2i(a.d > 0), b2i(b.d > 0)))
	})
	s := step{ts: make([]float64, len(ev)), vals: make([]float64, len(ev))}
	var sum, peak float64
	for i, e := range ev {
		sum += e.d
		s.ts[i], s.vals[i] = e.t, sum
		peak = max(peak, math.Abs(sum))
	}
	for i, v := range s.vals {
		if math.Abs(v) < 1e-9*peak {
			s.vals[i] = 0
		}
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// at is the step function's value at t (0 before its first event).
func (s step) at(t float64) float64 {
	i := sort.Search(len(s.ts), func(i int) bool { return s.ts[i] > t }) - 1
	if i < 0 {
		return 0
	}
	return s.vals[i]
}

// divide is num/den on the merged times, 0 where den is not positive.
func divide(num, den step) step {
	if len(num.ts) == 0 || len(den.ts) == 0 {
		return step{}
	}
	ts := slices.Concat(num.ts, den.ts)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	out := step{ts: ts, vals: make([]float64, len(ts))}
	for i, t := range ts {
		if d := den.at(t); d > 0 {
			out.vals[i] = num.at(t) / d
		}
	}
	return out
}

// interval is a step function adding w over [from, to) of each span
// where ok says so.
func interval(spans []span, from, to, w func(span) float64, ok func(span) bool) step {
	var ev []event
	for _, s := range spans {
		if ok(s) {
			ev = append(ev, event{from(s), w(s)})
		}
	}
	for _, s := range spans {
		if ok(s) {
			ev = append(ev, event{to(s), -w(s)})
		}
	}
	return sweep(ev)
}

func spanStart(s span) float64 { return s.start }
func spanGen(s span) float64   { return s.gen }
func spanEnd(s span) float64   { return s.end }
func one(span) float64         { return 1 }
func always(span) bool         { return true }
func generates(s span) bool    { return s.hasGen }
func prefills(s span) bool     { return s.hasGen && s.gen > s.start }
func decodes(s span) bool      { return s.hasGen && s.end > s.gen && s.osl >= 1 }

// decodeRate is the output token rate: with chunks, each content chunk
// gap carries (OSL-1)/k tokens (k the gaps longer than 0), at that gap's
// rate; a request without gaps, or any without chunks, spreads OSL-1
// over its decode evenly.
func decodeRate(spans []span, chunks bool) step {
	var ev []event
	for _, s := range spans {
		if !s.hasGen || s.osl < 1 {
			continue
		}
		k := 0
		for _, g := range s.icl {
			if g > 0 && chunks {
				k++
			}
		}
		if k == 0 {
			if s.end > s.gen {
				r := (s.osl - 1) / (s.end - s.gen)
				ev = append(ev, event{s.gen, r}, event{s.end, -r})
			}
			continue
		}
		per := (s.osl - 1) / float64(k)
		t := s.gen
		for _, g := range s.icl {
			if g > 0 {
				ev = append(ev, event{t, per / g}, event{t + g, -per / g})
			}
			t += g
		}
	}
	return sweep(ev)
}

// totalRate is prefill (ISL over [start, first chunk)) plus decode
// ((OSL-1) evenly over [first chunk, end)).
func totalRate(spans []span) step {
	var ev []event
	for _, s := range spans {
		if prefills(s) {
			r := s.isl / (s.gen - s.start)
			ev = append(ev, event{s.start, r}, event{s.gen, -r})
		}
	}
	for _, s := range spans {
		if decodes(s) {
			r := (s.osl - 1) / (s.end - s.gen)
			ev = append(ev, event{s.gen, r}, event{s.end, -r})
		}
	}
	return sweep(ev)
}

// tokensInFlight is the KV load the requests hold: ISL from the start,
// with chunks one token at the first chunk and (OSL-1)/k at each later
// chunk (a chunk at or past the end counts just before it), else OSL at
// the first chunk; all freed at the end.
func tokensInFlight(spans []span, chunks bool) step {
	var ev []event
	for _, s := range spans {
		if !s.hasGen {
			continue
		}
		hasPrefill := prefills(s)
		if hasPrefill {
			ev = append(ev, event{s.start, s.isl})
		}
		free := 0.0
		if hasPrefill {
			free = s.isl
		}
		switch {
		case len(s.icl) > 0 && chunks:
			if s.osl >= 1 {
				ev = append(ev, event{s.gen, 1})
			}
			per := (s.osl - 1) / float64(len(s.icl))
			t := s.gen
			for _, g := range s.icl {
				t += g
				ev = append(ev, event{min(t, math.Nextafter(s.end, math.Inf(-1))), per})
			}
			free += s.osl
		case s.end > s.gen:
			ev = append(ev, event{s.gen, s.osl})
			free += s.osl
		}
		if free != 0 {
			ev = append(ev, event{s.end, -free})
		}
	}
	return sweep(ev)
}

// sweepStats are the time-weighted statistics of a step function.
type sweepStats struct{ avg, min, max, p50, p90, p95, p99, std float64 }

// weighted is the statistics of values held for durs, averaged over total.
func weighted(durs, vals []float64, total float64) sweepStats {
	if len(durs) == 0 || total <= 0 {
		return sweepStats{}
	}
	var st sweepStats
	st.min, st.max = math.Inf(1), math.Inf(-1)
	for i, v := range vals {
		st.avg += v * durs[i]
		st.min, st.max = min(st.min, v), max(st.max, v)
	}
	st.avg /= total
	for i, v := range vals {
		st.std += durs[i] * (v - st.avg) * (v - st.avg)
	}
	st.std = math.Sqrt(st.std / total)
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(vals[a], vals[b]) })
	cum := make([]float64, len(order))
	var sum float64
	for i, j := range order {
		sum += durs[j]
		cum[i] = sum
	}
	q := func(p float64) float64 {
		i := sort.Search(len(cum), func(i int) bool { return cum[i]/sum >= p })
		return vals[order[min(i, len(order)-1)]]
	}
	st.p50, st.p90, st.p95, st.p99 = q(0.50), q(0.90), q(0.95), q(0.99)
	return st
}

// window is the part of s that matters over [w0, w1]: its value at w0
// (0 before its first event) and its events inside (w0, w1).
func (s step) window(w0, w1 float64) (at0 float64, ts, vals []float64) {
	lo := sort.Search(len(s.ts), func(i int) bool { return s.ts[i] > w0 })
	hi := sort.Search(len(s.ts), func(i int) bool { return s.ts[i] >= w1 })
	if lo > 0 {
		at0 = s.vals[lo-1]
	}
	if hi < lo {
		hi = lo
	}
	return at0, s.ts[lo:hi], s.vals[lo:hi]
}

// timeWeighted summarises s over [w0, w1], the time before its first
// event counting as 0.
func timeWeighted(s step, w0, w1 float64) sweepStats {
	if len(s.ts) == 0 || w1 <= w0 {
		return sweepStats{}
	}
	at0, ts, vals := s.window(w0, w1)
	durs, held := make([]float64, 0, len(ts)+1), make([]float64, 0, len(ts)+1)
	from, v := w0, at0
	for i, t := range ts {
		if t > from {
			durs, held = append(durs, t-from), append(held, v)
		}
		from, v = t, vals[i]
	}
	if w1 > from {
		durs, held = append(durs, w1-from), append(held, v)
	}
	return weighted(durs, held, w1-w0)
}

// activeWeighted summarises rate over the parts of [w0, w1] where mask
// is positive, averaged over their length.
func activeWeighted(rate, mask step, w0, w1 float64) sweepStats {
	if len(rate.ts) == 0 || w1 <= w0 {
		return sweepStats{}
	}
	r0, rts, rvals := rate.window(w0, w1)
	m0, mts, mvals := mask.window(w0, w1)
	var durs, vals []float64
	var active float64
	// Walk both step functions' events in time order.
	from, rv, mv := w0, r0, m0
	i, j := 0, 0
	for {
		next := w1
		if i < len(rts) {
			next = min(next, rts[i])
		}
		if j < len(mts) {
			next = min(next, mts[j])
		}
		if d := next - from; d > 0 && mv > 0 {
			durs, vals = append(durs, d), append(vals, rv)
			active += d
		}
		if next >= w1 {
			break
		}
		for i < len(rts) && rts[i] == next {
			rv = rvals[i]
			i++
		}
		for j < len(mts) && mts[j] == next {
			mv = mvals[j]
			j++
		}
		from = next
	}
	return weighted(durs, vals, active)
}

// sweepBlock is a sweep-line metric's summary block, scaled (ns to s).
func sweepBlock(unit string, st sweepStats, scale float64) object {
	f := func(v float64) rawFloat { return rawFloat(v * scale) }
	return object{
		{"unit", unit}, {"avg", f(st.avg)}, {"p50", f(st.p50)}, {"p90", f(st.p90)}, {"p95", f(st.p95)},
		{"p99", f(st.p99)}, {"min", f(st.min)}, {"max", f(st.max)}, {"std", f(st.std)},
	}
}

// spansOf are the phase's successful requests.
func spansOf(records []*record, phase string) []span {
	var out []span
	for _, r := range records {
		if r.phase() != phase || r.Error != nil {
			continue
		}
		s := span{start: float64(r.startNs()), end: float64(r.endNs())}
		s.isl, _ = r.metric("input_sequence_length")
		s.osl, _ = r.metric("output_sequence_length")
		if ttft, ok := r.metric("time_to_first_token"); ok {
			s.gen, s.hasGen = s.start+ttft*1e6, true
		}
		if m := r.Metrics.Get("inter_chunk_latency"); m != nil {
			for _, v := range m.List {
				s.icl = append(s.icl, v*1e6)
			}
		}
		out = append(out, s)
	}
	return out
}

// curves are the sweep-line step functions of a phase's requests.
type curves struct {
	conc, decConc, preConc, dec, pre, total, decUser, preUser, kv step
}

// newCurves builds the curves of spans; chunks uses the content chunk
// gaps for the decode rate and the KV load.
func newCurves(spans []span, chunks bool) *curves {
	c := &curves{
		conc:    interval(spans, spanStart, spanEnd, one, always),
		decConc: interval(spans, spanGen, spanEnd, one, generates),
		preConc: interval(spans, spanStart, spanGen, one, generates),
		dec:     decodeRate(spans, chunks),
		pre:     interval(spans, spanStart, spanGen, func(s span) float64 { return s.isl / (s.gen - s.start) }, prefills),
		total:   totalRate(spans),
		kv:      tokensInFlight(spans, chunks),
	}
	c.decUser, c.preUser = divide(c.dec, c.decConc), divide(c.pre, c.preConc)
	return c
}

// metrics are the effective_*, tokens_in_flight and active_* blocks over
// the window [w0, w1] (ns), in aiperf's order.
func (c *curves) metrics(w0, w1 float64) object {
	const perSec = 1e9
	o := object{}
	for _, m := range []struct {
		tag, unit string
		s         step
		scale     float64
	}{
		{"effective_concurrency", "requests", c.conc, 1},
		{"effective_decode_throughput", "tokens/sec", c.dec, perSec},
		{"effective_prefill_throughput", "tokens/sec", c.pre, perSec},
		{"effective_decode_concurrency", "requests", c.decConc, 1},
		{"effective_prefill_concurrency", "requests", c.preConc, 1},
		{"effective_total_throughput", "tokens/sec", c.total, perSec},
		{"effective_decode_throughput_per_user", "tokens/sec/user", c.decUser, perSec},
		{"effective_prefill_throughput_per_user", "tokens/sec/user", c.preUser, perSec},
		{"tokens_in_flight", "tokens", c.kv, 1},
	} {
		o = append(o, field{m.tag, sweepBlock(m.unit, timeWeighted(m.s, w0, w1), m.scale)})
	}
	for _, m := range []struct {
		tag, unit  string
		rate, mask step
	}{
		{"active_decode_throughput", "tokens/sec", c.dec, c.decConc},
		{"active_prefill_throughput", "tokens/sec", c.pre, c.preConc},
		{"active_decode_throughput_per_user", "tokens/sec/user", c.decUser, c.decConc},
		{"active_prefill_throughput_per_user", "tokens/sec/user", c.preUser, c.preConc},
		{"active_total_throughput", "tokens/sec", c.total, c.conc},
	} {
		o = append(o, field{m.tag, sweepBlock(m.unit, activeWeighted(m.rate, m.mask, w0, w1), perSec)})
	}
	return o
}

// sweepMetrics are the sweep-line blocks of spans over [w0, w1], the
// decode rate and KV load by content chunk, as aiperf's summary has them.
func sweepMetrics(spans []span, w0, w1 float64, chunks bool) object {
	return newCurves(spans, chunks).metrics(w0, w1)
}
