package loadgen

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Phase names as aiperf writes them in benchmark_phase / phase_name.
const (
	PhaseWarmup    = "warmup"
	PhaseProfiling = "profiling"
)

// RecordMetadata is the "metadata" object of one profile_export.jsonl
// line, field for field as aiperf 0.12 writes it for agentic replay.
type RecordMetadata struct {
	SessionNum          int    `json:"session_num"`
	XRequestID          string `json:"x_request_id"`
	XCorrelationID      string `json:"x_correlation_id"`
	ConversationID      string `json:"conversation_id"`
	TurnIndex           int    `json:"turn_index"`
	SourceTraceID       string `json:"source_trace_id"`
	SourceOuterIdx      int    `json:"source_outer_idx"`
	SourceInnerIdx      *int   `json:"source_inner_idx,omitempty"`
	SourceKind          string `json:"source_kind"`
	CreditIssuedNs      int64  `json:"credit_issued_ns"`
	RequestStartNs      int64  `json:"request_start_ns"`
	RequestAckNs        int64  `json:"request_ack_ns,omitempty"` // 0: no response headers
	RequestEndNs        int64  `json:"request_end_ns"`
	WorkerID            string `json:"worker_id"`
	RecordProcessorID   string `json:"record_processor_id"`
	BenchmarkPhase      string `json:"benchmark_phase"`
	PhaseIndex          int    `json:"phase_index"`
	ProfilingIndex      *int   `json:"profiling_index,omitempty"`
	PhaseName           string `json:"phase_name"`
	PhaseKind           string `json:"phase_kind"`
	WasCancelled        bool   `json:"was_cancelled"`
	CancellationTimeNs  int64  `json:"cancellation_time_ns,omitempty"`
	ContextOverflowSkip bool   `json:"context_overflow_skip"`
	AgentDepth          int    `json:"agent_depth"`
	ParentCorrelationID string `json:"parent_correlation_id,omitempty"`
	RootCorrelationID   string `json:"root_correlation_id"`
}

// RecordError is the "error" object of a failed request: the HTTP status
// (when there was one), a type and a message, plus the chain of causes
// for transport errors, as aiperf's ErrorDetails.
type RecordError struct {
	Code       int      `json:"code,omitempty"`
	Type       string   `json:"type"`
	Message    string   `json:"message"`
	CauseChain []string `json:"cause_chain,omitempty"`
}

// Metric is one per-record metric: a scalar or, for
// inter_chunk_latency, a list.
type Metric struct {
	Tag   string
	Value float64
	List  []float64 // set for list-valued metrics
	Unit  string
}

// Record is one request: metadata, the metrics of a successful request
// (nil for failed ones, apart from error_isl) and the error.
type Record struct {
	Metadata RecordMetadata
	Metrics  []Metric
	Error    *RecordError

	blocks, hits int // KV blocks of the input and those already sent in this play
}

// Metric returns the value of the scalar metric tag and whether it is set.
func (r *Record) Metric(tag string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Tag == tag && m.List == nil {
			return m.Value, true
		}
	}
	return 0, false
}

// MarshalJSON writes the record like aiperf: metadata, metrics in the
// order they were computed, and "error" only for failed requests.
func (r *Record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	md, err := json.Marshal(r.Metadata)
	if err != nil {
		return nil, err
	}
	b.WriteString(`{"metadata":`)
	b.Write(md)
	b.WriteString(`,"metrics":{`)
	for i, m := range r.Metrics {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(m.Tag))
		b.WriteString(`:{"value":`)
		if m.List != nil {
			b.WriteByte('[')
			for j, v := range m.List {
				if j > 0 {
					b.WriteByte(',')
				}
				b.Write(jsonFloat(v))
			}
			b.WriteByte(']')
		} else {
			b.Write(jsonFloat(m.Value))
		}
		b.WriteString(`,"unit":`)
		b.WriteString(strconv.Quote(m.Unit))
		b.WriteByte('}')
	}
	b.WriteByte('}')
	if r.Error != nil {
		e, err := json.Marshal(r.Error)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"error":`)
		b.Write(e)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonFloat formats v as JSON: integral values as integers (as Python
// writes token counts), non-finite values as null.
func jsonFloat(v float64) []byte {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return []byte("null")
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.AppendInt(nil, int64(v), 10)
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64)
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
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// recordMetrics derives aiperf's per-record metrics from a successful
// streamed (or non-streamed) response, with aiperf's definitions:
// request_latency ends at the last content token, the full_response_*
// variants at the end of the stream.
func recordMetrics(t *timing, streaming bool) []Metric {
	const ms = 1e6
	isl, osl := float64(t.inputToks), float64(t.outputToks)
	var out []Metric
	add := func(tag string, v float64, unit string) { out = append(out, Metric{Tag: tag, Value: v, Unit: unit}) }
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
	if streaming && osl > 1 && len(t.chunkNs) > 1 {
		add("decode_duration", decode, "ms")
		icl := make([]float64, 0, len(t.chunkNs)-1)
		for i := 1; i < len(t.chunkNs); i++ {
			icl = append(icl, float64(t.chunkNs[i]-t.chunkNs[i-1])/ms)
		}
		out = append(out, Metric{Tag: "inter_chunk_latency", List: icl, Unit: "ms"})
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
	}
	if streaming && osl > 1 && len(t.chunkNs) > 1 {
		full := float64(t.endNs)/ms - ttft
		if full > 0 {
			add("full_decode_duration", full, "ms")
			itl := full / (osl - 1)
			add("full_response_output_token_throughput_per_user", 1e3/itl, "tokens/sec/user")
			add("full_response_inter_token_latency", itl, "ms")
		}
	}
	return out
}
