package aiperf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"sweep/configs"
)

// Record is one line of profile_export.jsonl: what sweep's load generator
// writes (MarshalJSON, byte for byte as aiperf 0.12 does) and what
// ReadRecords and EachRecord read back, leniently, from its files and
// from real aiperf's.
type Record struct {
	Line     int // 1-based line in the file read; 0 for a record being written
	Metadata RecordMetadata
	// Metrics are the record's metrics in the order written: those of a
	// successful request, or for a failed one none or only error_isl.
	Metrics RecordMetrics
	Error   *RecordError // nil: no "error" (absent or null)
}

// RecordMetadata is the "metadata" object of a record, field for field as
// aiperf 0.12 writes it for agentic replay. Reading fills only the fields
// the aggregation uses (XRequestID, ConversationID, TurnIndex,
// RequestStartNs, RequestEndNs, BenchmarkPhase, WasCancelled) and ignores
// the others, whatever their type; they stay zero.
type RecordMetadata struct {
	SessionNum     int    `json:"session_num"`
	XRequestID     string `json:"x_request_id"`
	XCorrelationID string `json:"x_correlation_id"`
	ConversationID string `json:"conversation_id"`
	// TurnIndex is the turn within the conversation (absent = nil). It is
	// a float because Python reads 3.0 as a valid index too.
	TurnIndex      *float64 `json:"turn_index"`
	SourceTraceID  string   `json:"source_trace_id"`
	SourceOuterIdx int      `json:"source_outer_idx"`
	SourceInnerIdx *int     `json:"source_inner_idx,omitempty"`
	SourceKind     string   `json:"source_kind"`
	CreditIssuedNs int64    `json:"credit_issued_ns"`
	// RequestStartNs and RequestEndNs are wall-clock nanoseconds, written
	// as IntScalar; read, a value that is absent, null or 0 is "not
	// recorded".
	RequestStartNs    Scalar `json:"request_start_ns"`
	RequestAckNs      int64  `json:"request_ack_ns,omitempty"` // 0: no response headers
	RequestEndNs      Scalar `json:"request_end_ns"`
	WorkerID          string `json:"worker_id"`
	RecordProcessorID string `json:"record_processor_id"`
	// BenchmarkPhase is PhaseWarmup or PhaseProfiling, written as
	// StringScalar; read, absent means profiling (older artifacts).
	// PhaseIndex, PhaseName and PhaseKind are written on profiling
	// records only (aiperf 0.12.0 leaves them out of warm-up records).
	BenchmarkPhase      Scalar `json:"benchmark_phase"`
	PhaseIndex          *int   `json:"phase_index,omitempty"`
	ProfilingIndex      *int   `json:"profiling_index,omitempty"`
	PhaseName           string `json:"phase_name,omitempty"`
	PhaseKind           string `json:"phase_kind,omitempty"`
	WasCancelled        bool   `json:"was_cancelled"`
	CancellationTimeNs  int64  `json:"cancellation_time_ns,omitempty"`
	ContextOverflowSkip bool   `json:"context_overflow_skip"`
	AgentDepth          int    `json:"agent_depth"`
	ParentCorrelationID string `json:"parent_correlation_id,omitempty"`
	RootCorrelationID   string `json:"root_correlation_id"`
}

// metadataRead is the part of RecordMetadata a reader decodes.
type metadataRead struct {
	XRequestID     string   `json:"x_request_id"`
	ConversationID string   `json:"conversation_id"`
	TurnIndex      *float64 `json:"turn_index"`
	RequestStartNs Scalar   `json:"request_start_ns"`
	RequestEndNs   Scalar   `json:"request_end_ns"`
	BenchmarkPhase Scalar   `json:"benchmark_phase"`
	WasCancelled   bool     `json:"was_cancelled"`
}

// UnmarshalJSON reads the fields the aggregation uses (see RecordMetadata).
func (m *RecordMetadata) UnmarshalJSON(b []byte) error {
	var r metadataRead
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	*m = r.metadata()
	return nil
}

func (r *metadataRead) metadata() RecordMetadata {
	return RecordMetadata{
		XRequestID: r.XRequestID, ConversationID: r.ConversationID, TurnIndex: r.TurnIndex,
		RequestStartNs: r.RequestStartNs, RequestEndNs: r.RequestEndNs,
		BenchmarkPhase: r.BenchmarkPhase, WasCancelled: r.WasCancelled,
	}
}

// MetricValue is one per-record metric, written {"value": v, "unit": u}.
// Value is a number; a list-valued metric (inter_chunk_latency) has List
// instead. Read, a bare value is accepted as InferenceX does, and a list
// is kept only as "not a number" (Value of another kind, List nil).
type MetricValue struct {
	Tag   string // the key, e.g. "request_latency"
	Value Scalar
	List  []float64
	Unit  string
}

// UnmarshalJSON reads the value and unit of one metric (Tag is its key,
// set by the record reader).
func (m *MetricValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if m.written(b) {
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		m.Value = ParseScalar(b)
		return nil
	}
	var obj struct {
		Value json.RawMessage `json:"value"`
		Unit  json.RawMessage `json:"unit"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	m.Value = ParseScalar(obj.Value)
	if len(obj.Unit) > 0 && obj.Unit[0] == '"' {
		_ = json.Unmarshal(obj.Unit, &m.Unit) // a non-string unit is ignored
	}
	return nil
}

// written reads b when it has the form aiperf and loadgen write,
// {"value":SCALAR,"unit":"UNIT"} with a number, true, false or null and a
// unit of valid UTF-8 without escapes, and reports whether it did; b is valid JSON (the
// record was checked whole), so that form is exactly what it looks like.
// It spares a second decoding pass for each of a record's metrics.
func (m *MetricValue) written(b []byte) bool {
	const head, mid = `{"value":`, `,"unit":"`
	rest, ok := bytes.CutPrefix(b, []byte(head))
	if !ok {
		return false
	}
	if len(rest) > 0 && rest[0] == '[' {
		// A list of numbers (inter_chunk_latency): no string inside it, so
		// the last `],"unit":"` ends it. Read, a list is not a number.
		i := bytes.LastIndex(rest, []byte("]"+mid))
		if i < 0 || bytes.IndexByte(rest[:i], '"') >= 0 {
			return false
		}
		return m.setUnit(rest[i+1+len(mid):], Scalar{kind: scalarOther})
	}
	i := bytes.Index(rest, []byte(mid))
	if i <= 0 || bytes.IndexByte([]byte(`[{"`), rest[0]) >= 0 || bytes.IndexByte(rest[:i], ',') >= 0 {
		return false // a string or container value, or other members before "unit"
	}
	return m.setUnit(rest[i+len(mid):], ParseScalar(rest[:i]))
}

// setUnit sets v and the unit from tail, the rest of a written metric
// after `"unit":"`, when it is UNIT"} with a unit of valid UTF-8 and no
// escapes (encoding/json would replace invalid UTF-8), and reports
// whether it was.
func (m *MetricValue) setUnit(tail []byte, v Scalar) bool {
	unit, ok := bytes.CutSuffix(tail, []byte(`"}`))
	if !ok || bytes.IndexAny(unit, `"\`) >= 0 || !utf8.Valid(unit) {
		return false
	}
	m.Value, m.Unit = v, string(unit)
	return true
}

// RecordMetrics is a record's "metrics" object: in the order a writer
// gives them, sorted by tag when read.
type RecordMetrics []MetricValue

// Get returns the metric tag, or nil when the record has none.
func (ms RecordMetrics) Get(tag string) *MetricValue {
	for i := range ms {
		if ms[i].Tag == tag {
			return &ms[i]
		}
	}
	return nil
}

// errMetricsNotObject is the error for a "metrics" value that is neither
// an object nor null.
var errMetricsNotObject = errors.New(`"metrics" is not a JSON object`)

// RecordError is the "error" object of a failed request: the HTTP status
// (when there was one), a type and a message, plus the chain of causes
// for transport errors, as aiperf's ErrorDetails. Read, any JSON value is
// an error (InferenceX accepts a string too): it is kept as read for
// Failed and ErrorCategory, and the fields are filled where it is an
// object with the written types.
type RecordError struct {
	Code       int      `json:"code,omitempty"`
	Type       string   `json:"type"`
	Message    string   `json:"message"`
	CauseChain []string `json:"cause_chain,omitempty"`

	raw json.RawMessage // as read; nil for an error being written
}

// UnmarshalJSON keeps the value as read and fills the fields it can.
func (e *RecordError) UnmarshalJSON(b []byte) error {
	type fields RecordError // without this method
	var f fields
	_ = json.Unmarshal(b, &f) // best effort: the raw value is what counts
	*e = RecordError(f)
	e.raw = bytes.Clone(b)
	return nil
}

// rawJSON is the error as read, or as it is written.
func (e *RecordError) rawJSON() json.RawMessage {
	if e.raw != nil {
		return e.raw
	}
	b, _ := json.Marshal(e) // strings, ints and a string list always encode
	return b
}

// Warmup reports whether the record belongs to a phase other than
// profiling (InferenceX: phase is not None and phase != "profiling").
func (r *Record) Warmup() bool {
	p := r.Metadata.BenchmarkPhase
	return p.Present() && !(p.kind == scalarString && p.str == PhaseProfiling)
}

// Failed reports whether the record carries a truthy error value.
func (r *Record) Failed() bool { return r.Error != nil && Truthy(r.Error.rawJSON()) }

// ErrorCategory names the error the way InferenceX counts it: the first of
// type, error_type, code, class, status that is set, else the text before
// the first colon of the message's first line, at most 120 characters.
func (r *Record) ErrorCategory() string {
	if r.Error == nil {
		return errorCategory(nil)
	}
	return errorCategory(r.Error.rawJSON())
}

// recordJSON is a record as EachRecord decodes it (the metadata straight
// into the fields read, sparing RecordMetadata.UnmarshalJSON's second pass).
type recordJSON struct {
	Metadata *metadataRead `json:"metadata"`
	// Metrics is decoded in the record's one pass (a null value is a nil
	// entry: no metric); metrics() makes it RecordMetrics.
	Metrics map[string]*MetricValue `json:"metrics"`
	Error   *RecordError            `json:"error"`
}

// metrics returns the decoded metrics sorted by tag.
func (r *recordJSON) metrics() RecordMetrics {
	// The tags are sorted, not the values: a MetricValue is about a
	// hundred bytes to move, a tag sixteen.
	tags := make([]string, 0, len(r.Metrics))
	for tag, m := range r.Metrics {
		if m != nil {
			tags = append(tags, tag)
		}
	}
	slices.Sort(tags)
	out := make(RecordMetrics, len(tags))
	for i, tag := range tags {
		out[i] = *r.Metrics[tag]
		out[i].Tag = tag
	}
	return out
}

// MarshalJSON writes the record as aiperf does: metadata, the metrics in
// their order, and "error" only for a failed request. Values are written
// by Scalar.AppendJSON (integral values as integers, NaN and infinities
// as null).
func (r *Record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	md, err := json.Marshal(r.Metadata)
	if err != nil {
		return nil, err
	}
	b.WriteString(`{"metadata":`)
	b.Write(md)
	b.WriteString(`,"metrics":{`)
	var num []byte
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
				num = FloatScalar(v).AppendJSON(num[:0])
				b.Write(num)
			}
			b.WriteByte(']')
		} else {
			num = m.Value.AppendJSON(num[:0])
			b.Write(num)
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

// maxRecordLine bounds one JSONL line (a record with a long error message
// or a big inter_chunk_latency list is still far below it).
const maxRecordLine = 64 << 20

// ReadRecords reads every record of a profile_export.jsonl stream. name is
// used in errors. Blank lines are skipped; a line that is not a JSON object
// or has no "metadata" object is an error naming the line. It returns what
// EachRecord would give, in order (with an error, the records before the
// first bad line), but decodes the lines in batches on every core: a
// point's file is thousands of 2-3 kB records, read after each point.
func ReadRecords(r io.Reader, name string) ([]Record, error) {
	type batch struct {
		first int      // line number of lines[0]
		lines [][]byte // within data
		data  []byte
		recs  []Record
		err   error // the batch's first bad line's; recs are the lines before it
	}
	var batches []*batch
	work := make(chan *batch)
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Go(func() { // exits when work is closed
			for b := range work {
				b.recs = make([]Record, 0, len(b.lines))
				for i, l := range b.lines {
					rec, ok, err := decodeRecordLine(l, name, b.first+i)
					if err != nil {
						b.err = err
						break
					}
					if ok {
						b.recs = append(b.recs, rec)
					}
				}
			}
		})
	}
	const batchBytes = 256 << 10
	cur := &batch{first: 1}
	send := func(next int) {
		batches = append(batches, cur)
		work <- cur
		cur = &batch{first: next}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256<<10), maxRecordLine)
	line := 0
	for sc.Scan() {
		line++
		if len(cur.data)+len(sc.Bytes()) > cap(cur.data) {
			cur.data = make([]byte, 0, max(batchBytes, len(sc.Bytes())))
			// the earlier lines keep the previous array
		}
		off := len(cur.data)
		cur.data = append(cur.data, sc.Bytes()...)
		cur.lines = append(cur.lines, cur.data[off:len(cur.data):len(cur.data)])
		if len(cur.lines) >= 128 {
			send(line + 1)
		}
	}
	if len(cur.lines) > 0 {
		send(line + 1)
	}
	close(work)
	wg.Wait()
	n := 0
	for _, b := range batches {
		n += len(b.recs)
	}
	var out []Record // nil without records, as before
	if n > 0 {
		out = make([]Record, 0, n)
	}
	for _, b := range batches {
		out = append(out, b.recs...)
		b.recs = nil
		if b.err != nil {
			return out, b.err
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s: line %d: %w", name, line+1, err)
	}
	return out, nil
}

// EachRecord streams the records of a profile_export.jsonl stream to fn
// without keeping them; fn must not retain rec.
func EachRecord(r io.Reader, name string, fn func(rec *Record) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256<<10), maxRecordLine)
	line := 0
	for sc.Scan() {
		line++
		rec, ok, err := decodeRecordLine(sc.Bytes(), name, line)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: line %d: %w", name, line+1, err)
	}
	return nil
}

// decodeRecordLine decodes l, line number line of a records file; ok is
// false for a blank line.
func decodeRecordLine(l []byte, name string, line int) (rec Record, ok bool, _ error) {
	b := bytes.TrimSpace(l)
	if len(b) == 0 {
		return rec, false, nil
	}
	if b[0] != '{' {
		return rec, false, &configs.Error{File: name, Line: line, Key: "record", Msg: "not a JSON object"}
	}
	var raw recordJSON
	if err := json.Unmarshal(b, &raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "metrics" {
			err = errMetricsNotObject
		}
		return rec, false, &configs.Error{File: name, Line: line, Key: "record", Msg: err.Error()}
	}
	if raw.Metadata == nil {
		return rec, false, &configs.Error{File: name, Line: line, Key: "metadata", Msg: "missing (aiperf writes it on every record)"}
	}
	rec.Metrics = raw.metrics()
	rec.Metadata = raw.Metadata.metadata()
	rec.Error = raw.Error // nil when absent or null
	rec.Line = line
	return rec, true, nil
}

// IntScalar is the integer v, as a record's timestamps are written.
func IntScalar(v int64) Scalar { return Scalar{kind: scalarInt, i: v, num: float64(v)} }

// FloatScalar is the number v, as a record's metric values are written.
func FloatScalar(v float64) Scalar { return Scalar{kind: scalarFloat, num: v} }

// StringScalar is the string s.
func StringScalar(s string) Scalar { return Scalar{kind: scalarString, str: s} }

// AppendJSON appends the value as a record carries it: an integer as
// itself; a float that is integral and below 1e15 in magnitude as an
// integer (as Python writes token counts), NaN and infinities as null,
// other floats in their shortest form; a string or boolean as JSON; an
// absent value or a container (which a Scalar does not keep) as null.
func (s Scalar) AppendJSON(b []byte) []byte {
	switch s.kind {
	case scalarInt:
		return strconv.AppendInt(b, s.i, 10)
	case scalarFloat:
		v := s.num
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return append(b, "null"...)
		case v == math.Trunc(v) && math.Abs(v) < 1e15:
			return strconv.AppendInt(b, int64(v), 10)
		}
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case scalarString:
		q, _ := json.Marshal(s.str) // a string always encodes
		return append(b, q...)
	case scalarBool:
		return strconv.AppendBool(b, s.b)
	}
	return append(b, "null"...)
}

// MarshalJSON writes the value as AppendJSON does.
func (s Scalar) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }
