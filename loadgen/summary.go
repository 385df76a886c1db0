package loadgen

import (
	"cmp"
	"math"
	"slices"
	"time"

	"sweep/metrics/aiperf"
)

// recordMetricOrder is the order aiperf writes per-record metric blocks
// in profile_export_aiperf.json; tags not listed follow in first-seen
// order.
var recordMetricOrder = []string{
	"request_latency", "time_to_first_token", "time_to_second_token", "inter_token_latency",
	"output_token_throughput_per_user", "output_sequence_length", "input_sequence_length",
	"output_token_count", "inter_chunk_latency", "time_to_first_output_token", "decode_duration",
	"prefill_throughput_per_user", "e2e_output_token_throughput", "usage_prompt_tokens",
	"usage_completion_tokens", "usage_total_tokens", "usage_prompt_cache_read_tokens",
}

// phaseStats holds what a phase's metric blocks are computed from.
type phaseStats struct {
	values       map[string][]float64
	units        map[string]string
	tags         []string
	ok, failed   int
	errorISL     []float64
	startNs      int64 // min request_start_ns over the phase's records
	endNs        int64 // max request_end_ns
	osl, isl     float64
	blocks, hits int
	// oslMismatch counts answers whose length is off the requested one by
	// more than aiperf's threshold (see oslMismatched).
	oslMismatch int
	// spans are the successful requests for the sweep-line metrics, over
	// window, the phase's start and end (artifact ns; 0, 0: unknown).
	spans  []span
	curves *curves // of spans, or of the whole phase for a timeslice
	window [2]int64
	// slice: the stats are a timeslice's, whose rates are per its width
	// (the window) and whose sweep-line metrics spread tokens evenly.
	slice bool
}

// aiperf 0.12.0's OSL mismatch threshold: min(requested x 5 %, 50 tokens)
// (AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD, ..._MAX_TOKEN_THRESHOLD).
const (
	oslMismatchPct       = 5
	oslMismatchMaxTokens = 50
)

// oslMismatched reports whether an answer of osl tokens is off the
// requested length (osl / (1 + diffPct/100)) by more than the threshold.
func oslMismatched(osl, diffPct float64) bool {
	requested := osl / (1 + diffPct/100)
	return math.Abs(osl-requested) > min(requested*oslMismatchPct/100, oslMismatchMaxTokens)
}

func collect(records []*record, phase string) *phaseStats {
	ps := &phaseStats{values: map[string][]float64{}, units: map[string]string{}}
	for _, r := range records {
		if r.phase() != phase {
			continue
		}
		if start := r.startNs(); ps.startNs == 0 || start < ps.startNs {
			ps.startNs = start
		}
		ps.endNs = max(ps.endNs, r.endNs())
		if r.Error != nil {
			ps.failed++
			if v, ok := r.metric("error_isl"); ok {
				ps.errorISL = append(ps.errorISL, v)
			}
			continue
		}
		ps.ok++
		ps.blocks += r.blocks
		ps.hits += r.hits
		// Summary-only metrics from the record's timestamps, in aiperf's
		// units: the wait from credit to send, and credit to last byte.
		if credit := r.Metadata.CreditIssuedNs; credit > 0 {
			ps.add("credit_to_start_latency", "ms", float64(r.startNs()-credit)/1e6)
			ps.add("effective_latency", "ms", float64(r.endNs()-credit)/1e6)
		}
		if d, ok := r.metric("osl_mismatch_diff_pct"); ok {
			if osl, ok := r.metric("output_sequence_length"); ok && oslMismatched(osl, d) {
				ps.oslMismatch++
			}
		}
		for _, m := range r.Metrics {
			if _, seen := ps.units[m.Tag]; !seen {
				ps.units[m.Tag] = m.Unit
				ps.tags = append(ps.tags, m.Tag)
			}
			if m.List != nil {
				ps.values[m.Tag] = append(ps.values[m.Tag], m.List...)
				continue
			}
			v, _ := m.Value.Number() // written as FloatScalar
			ps.values[m.Tag] = append(ps.values[m.Tag], v)
			switch m.Tag {
			case "output_sequence_length":
				ps.osl += v
			case "input_sequence_length":
				ps.isl += v
			}
		}
	}
	rank := func(tag string) int {
		if i := slices.Index(recordMetricOrder, tag); i >= 0 {
			return i
		}
		return len(recordMetricOrder)
	}
	slices.SortStableFunc(ps.tags, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	ps.spans = spansOf(records, phase)
	return ps
}

// add appends a value of a summary-only metric (no record carries it).
func (ps *phaseStats) add(tag, unit string, v float64) {
	if _, seen := ps.units[tag]; !seen {
		ps.units[tag] = unit
		ps.tags = append(ps.tags, tag)
	}
	ps.values[tag] = append(ps.values[tag], v)
}

// metricBlocks returns the phase's metric blocks in aiperf's order:
// throughputs and counts first, then the record metrics and totals.
func (ps *phaseStats) metricBlocks() object {
	dur := float64(ps.endNs-ps.startNs) / 1e9
	per := dur
	if ps.slice {
		per = float64(ps.window[1]-ps.window[0]) / 1e9
	}
	rate := func(v float64) float64 {
		if per <= 0 {
			return 0
		}
		return v / per
	}
	var o object
	rec := func(tag string) {
		if xs := ps.values[tag]; len(xs) > 0 {
			o = append(o, field{tag, recordStats(ps.units[tag], xs)})
		}
	}
	o = append(o, field{"request_throughput", single("requests/sec", rate(float64(ps.ok)))})
	rec("request_latency")
	o = append(o, field{"request_count", single("requests", float64(ps.ok))})
	for _, tag := range []string{"time_to_first_token", "time_to_second_token", "inter_token_latency"} {
		rec(tag)
	}
	o = append(o, field{"output_token_throughput", single("tokens/sec", rate(ps.osl))})
	done := map[string]bool{"request_latency": true, "time_to_first_token": true, "time_to_second_token": true, "inter_token_latency": true}
	for _, tag := range []string{"output_token_throughput_per_user", "output_sequence_length", "input_sequence_length", "output_token_count", "inter_chunk_latency"} {
		rec(tag)
		done[tag] = true
	}
	o = append(o,
		field{"total_output_tokens", single("tokens", ps.osl)},
		field{"benchmark_duration", single("sec", dur)},
		field{"total_isl", single("tokens", ps.isl)},
		field{"total_osl", single("tokens", ps.osl)},
	)
	if ps.failed > 0 {
		o = append(o, field{"error_request_count", single("requests", float64(ps.failed))})
		if len(ps.errorISL) > 0 {
			o = append(o, field{"error_isl", recordStats("tokens", ps.errorISL)})
			var sum float64
			for _, v := range ps.errorISL {
				sum += v
			}
			o = append(o, field{"total_error_isl", single("tokens", sum)})
		}
	}
	for _, tag := range ps.tags {
		if !done[tag] {
			rec(tag)
		}
	}
	o = append(o,
		field{"input_token_throughput", single("tokens/sec", rate(ps.isl))},
		field{"total_token_throughput", single("tokens/sec", rate(ps.isl+ps.osl))},
	)
	total := func(tag string) (float64, bool) {
		vs, ok := ps.values[tag]
		var sum float64
		for _, v := range vs {
			sum += v
		}
		return sum, ok
	}
	for _, u := range []string{"prompt", "completion", "total", "prompt_cache_read"} {
		if sum, ok := total("usage_" + u + "_tokens"); ok {
			o = append(o, field{"total_usage_" + u + "_tokens", single("tokens", sum)})
		}
	}
	cached, okC := total("usage_prompt_cache_read_tokens")
	if prompt, okP := total("usage_prompt_tokens"); okC && okP && prompt > 0 {
		o = append(o, field{"overall_usage_prompt_cache_read_pct", single("%", 100*cached/prompt)})
	}
	if ps.failed > 0 { // aiperf counts completed requests only beside errors
		o = append(o, field{"completed_request_count", single("requests", float64(ps.ok+ps.failed))})
	}
	if _, ok := ps.values["osl_mismatch_diff_pct"]; ok {
		o = append(o, field{"osl_mismatch_count", single("requests", float64(ps.oslMismatch))})
	}
	if n := ps.ok + ps.failed; n > 0 {
		o = append(o, field{"request_error_rate", single("%", 100*float64(ps.failed)/float64(n))})
	}
	if ps.curves == nil && len(ps.spans) > 0 {
		ps.curves = newCurves(ps.spans, true)
	}
	if ps.curves != nil {
		w0, w1 := float64(ps.window[0]), float64(ps.window[1])
		if ps.window[1] <= ps.window[0] { // no phase bounds: the records' span
			w0, w1 = float64(ps.startNs), float64(ps.endNs)
		}
		o = append(o, ps.curves.metrics(w0, w1)...)
	}
	if ps.blocks > 0 {
		o = append(o, field{"theoretical_prefix_cache_hit", object{
			{"unit", "%"}, {"avg", rawFloat(100 * float64(ps.hits) / float64(ps.blocks))},
			{"count", ps.blocks}, {"sum", ps.hits},
		}})
	}
	return o
}

// errorSummary groups failed profiling records by error, most frequent
// first, as aiperf's error_summary.
func errorSummary(records []*record) []object {
	type key struct {
		code         int
		typ, message string
	}
	counts := map[key]int{}
	var order []key
	for _, r := range records {
		if r.Error == nil || r.phase() != aiperf.PhaseProfiling {
			continue
		}
		k := key{r.Error.Code, r.Error.Type, r.Error.Message}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	slices.SortStableFunc(order, func(a, b key) int { return cmp.Compare(counts[b], counts[a]) })
	out := make([]object, 0, len(order))
	for _, k := range order {
		d := object{}
		if k.code != 0 {
			d = append(d, field{"code", k.code})
		}
		d = append(d, field{"type", k.typ}, field{"message", k.message})
		out = append(out, object{{"error_details", d}, {"count", counts[k]}})
	}
	return out
}

// isoLocal formats a Unix-ns time like Python's datetime.isoformat()
// of a naive local time, as aiperf's start_time / end_time.
func isoLocal(ns int64) string {
	return time.Unix(0, ns).Local().Format("2006-01-02T15:04:05.000000")
}
