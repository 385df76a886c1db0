package loadgen

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"sweep/metrics/aiperf"
)

// record is one request's profile_export.jsonl record (the model
// metrics/aiperf reads back) and its KV-block accounting.
type record struct {
	aiperf.Record
	blocks, hits int // KV blocks of the input and those already sent in this play
}

// phase is the record's benchmark phase (aiperf.PhaseWarmup, aiperf.PhaseProfiling).
func (r *record) phase() string { p, _ := r.Metadata.BenchmarkPhase.Text(); return p }

// startNs and endNs are the request's start and end timestamps.
func (r *record) startNs() int64 { v, _ := r.Metadata.RequestStartNs.Int(); return v }
func (r *record) endNs() int64   { v, _ := r.Metadata.RequestEndNs.Int(); return v }

// metric returns the value of the scalar metric tag and whether it is set.
func (r *record) metric(tag string) (float64, bool) {
	if m := r.Metrics.Get(tag); m != nil && m.List == nil {
		return m.Value.Number()
	}
	return 0, false
}

// timing is what the client measured for one request, all offsets in ns
// from the request start.
type timing struct {
	ackNs      int64   // response headers, 0 if none
	chunkNs    []int64 // each SSE event that carried output content
	chunkToks  []int   // tokens (words) in each of those events
	endNs      int64   // last byte of the response ([DONE] / usage chunk)
	inputToks  int     // ISL (server usage or client estimate)
	outputToks int     // OSL (server usage or client estimate)
	usage      *usage  // server usage block, when sent
	finish     string  // the last finish_reason seen

	// On the virtual clock every offset is simulated: sim is the request's
	// call and simT the latest simulated time the engine stamped.
	sim  *simCall
	simT float64
	// woke is, for a request sent at its participant's declared wake-up,
	// the earlier time the engine woke it at instead (HTTP 409): it must
	// be sent again at that time (0: not so).
	woke float64
	// promptUnknown: the engine does not have the ids the prompt reuses
	// (HTTP 409 X-Sim-Prompt): send it again whole.
	promptUnknown bool
	// http is where the request's time went on its connection (set for
	// a successful request).
	http httpPhases
}

// since is the offset of now from the request start: wall time, or on
// the virtual clock the simulated time the engine last stamped.
func (t *timing) since(start time.Time) int64 {
	if t.sim != nil {
		return int64(math.Round((t.simT - t.sim.at) * 1e9))
	}
	return time.Since(start).Nanoseconds()
}

// scale multiplies every measured offset by s (see clock).
func (t *timing) scale(s float64) {
	if s == 1 || s == 0 {
		return
	}
	f := func(ns int64) int64 { return int64(float64(ns) * s) }
	t.ackNs, t.endNs = f(t.ackNs), f(t.endNs)
	for i := range t.chunkNs {
		t.chunkNs[i] = f(t.chunkNs[i])
	}
	t.http.scale(s)
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails carries the prompt tokens the server read from
	// its prefix cache (SGLang --enable-cache-report, vLLM); nil when the
	// server does not report them.
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// recordMetrics derives aiperf's per-record metrics from a successful
// streamed (or non-streamed) response, with aiperf 0.12.0's definitions:
// request_latency ends at the last content token. (aiperf 0.12.0 has no
// full_response_* metrics: the InferenceX fork adds them.) requested is
// the max_tokens the request asked for: osl_mismatch_diff_pct is how far
// the answer's length is from it, in percent.
func recordMetrics(t *timing, streaming bool, requested int) aiperf.RecordMetrics {
	const ms = 1e6
	isl, osl := float64(t.inputToks), float64(t.outputToks)
	var out aiperf.RecordMetrics
	add := func(tag string, v float64, unit string) {
		out = append(out, aiperf.MetricValue{Tag: tag, Value: aiperf.FloatScalar(v), Unit: unit})
	}
	add("output_sequence_length", osl, "tokens")
	add("input_sequence_length", isl, "tokens")
	lastNs := t.endNs
	if n := len(t.chunkNs); n > 0 {
		lastNs = t.chunkNs[n-1]
	}
	var ttft float64
	if streaming && len(t.chunkNs) > 0 {
		ttft = float64(t.chunkNs[0]) / ms
		add("time_to_first_token", ttft, "ms")
	}
	add("output_token_count", osl, "tokens")
	if streaming && len(t.chunkNs) > 1 {
		add("time_to_second_token", float64(t.chunkNs[1]-t.chunkNs[0])/ms, "ms")
	}
	latency := float64(lastNs) / ms
	add("request_latency", latency, "ms")
	if streaming && len(t.chunkNs) > 0 {
		add("time_to_first_output_token", ttft, "ms")
	}
	decode := latency - ttft
	if streaming && len(t.chunkNs) > 0 { // 0 for a one-token answer, as aiperf writes it
		add("decode_duration", decode, "ms")
	}
	if streaming && osl > 1 && len(t.chunkNs) > 1 {
		icl := make([]float64, 0, len(t.chunkNs)-1)
		for i := 1; i < len(t.chunkNs); i++ {
			icl = append(icl, float64(t.chunkNs[i]-t.chunkNs[i-1])/ms)
		}
		out = append(out, aiperf.MetricValue{Tag: "inter_chunk_latency", List: icl, Unit: "ms"})
	}
	if streaming && ttft > 0 {
		add("prefill_throughput_per_user", isl/(ttft/1e3), "tokens/sec/user")
	}
	if streaming && osl > 1 && len(t.chunkNs) > 1 && decode > 0 {
		itl := decode / (osl - 1)
		add("inter_token_latency", itl, "ms")
		add("output_token_throughput_per_user", 1e3/itl, "tokens/sec/user")
	}
	if latency > 0 {
		add("e2e_output_token_throughput", osl/(latency/1e3), "tokens/sec/user")
	}
	if t.usage != nil {
		add("usage_prompt_tokens", float64(t.usage.PromptTokens), "tokens")
		add("usage_completion_tokens", float64(t.usage.CompletionTokens), "tokens")
		add("usage_total_tokens", float64(t.usage.TotalTokens), "tokens")
		if d := t.usage.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			add("usage_prompt_cache_read_tokens", float64(*d.CachedTokens), "tokens")
		}
	}
	if requested > 0 {
		add("osl_mismatch_diff_pct", 100*(osl-float64(requested))/float64(requested), "%")
	}
	t.http.metrics(add)
	return out
}

// numberSessions sets the records' session_num to the ordinal of their
// session by its first credit, ties by correlation id. On the virtual
// clock that order is the seed's: the numbers newSession hands out follow
// whichever lane's goroutine gets there first when several sessions start
// at one simulated time (at conc 256, a run in two numbered some
// subagent sessions differently).
func numberSessions(records []*record) {
	type start struct {
		ns int64
		id string
	}
	first := map[string]int64{}
	for _, rec := range records {
		m := &rec.Metadata
		if ns, ok := first[m.XCorrelationID]; !ok || m.CreditIssuedNs < ns {
			first[m.XCorrelationID] = m.CreditIssuedNs
		}
	}
	order := make([]start, 0, len(first))
	for id, ns := range first {
		order = append(order, start{ns, id})
	}
	slices.SortFunc(order, func(a, b start) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), strings.Compare(a.id, b.id))
	})
	num := make(map[string]int, len(order))
	for i, s := range order {
		num[s.id] = i
	}
	for _, rec := range records {
		rec.Metadata.SessionNum = num[rec.Metadata.XCorrelationID]
	}
}
