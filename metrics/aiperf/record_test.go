package aiperf

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/records_written.jsonl")

// writtenRecords cover every kind of field and value the load generator
// writes: optional metadata, a list metric, non-finite and large values,
// HTML and non-ASCII characters, a cancelled and a timed-out request.
func writtenRecords() []*Record {
	inner, zero := 2, 0
	return []*Record{
		{Metadata: RecordMetadata{SessionNum: 3, XRequestID: "a<b>&c", XCorrelationID: "x", ConversationID: "conv::sa:1", TurnIndex: new(7.0), SourceTraceID: "tr", SourceOuterIdx: 4, SourceInnerIdx: &inner, SourceKind: "weka_main", CreditIssuedNs: 1796306000575391947, RequestStartNs: IntScalar(1796306000575391947), RequestAckNs: 1796306000575391948, RequestEndNs: IntScalar(1796306007671286742), WorkerID: "w", RecordProcessorID: "p", BenchmarkPhase: StringScalar(PhaseProfiling), PhaseIndex: new(1), ProfilingIndex: &zero, PhaseName: PhaseProfiling, PhaseKind: PhaseProfiling, AgentDepth: 1, ParentCorrelationID: "par", RootCorrelationID: "root"},
			Metrics: RecordMetrics{{Tag: "output_sequence_length", Value: FloatScalar(12), Unit: "tokens"}, {Tag: "time_to_first_token", Value: FloatScalar(7095.894795), Unit: "ms"}, {Tag: "inter_chunk_latency", List: []float64{0.5, 2, math.NaN(), 1e-7}, Unit: "ms"}, {Tag: "big", Value: FloatScalar(1e15), Unit: "x"}, {Tag: "huge", Value: FloatScalar(3e21), Unit: "x"}, {Tag: "inf", Value: FloatScalar(math.Inf(1)), Unit: "x"}, {Tag: "neg", Value: FloatScalar(-4), Unit: "x"}, {Tag: "neg0", Value: FloatScalar(math.Copysign(0, -1)), Unit: "x"}}},
		{Metadata: RecordMetadata{XRequestID: "é\u2028", TurnIndex: new(0.0), BenchmarkPhase: StringScalar(PhaseWarmup), WasCancelled: true, CancellationTimeNs: 5, RequestStartNs: IntScalar(1), RequestEndNs: IntScalar(5)},
			Metrics: RecordMetrics{}, Error: &RecordError{Code: 499, Type: "RequestCancellationError", Message: "Request cancelled <by> \"external\" signal\n", CauseChain: []string{"A", "B"}}},
		{Metadata: RecordMetadata{TurnIndex: new(0.0), BenchmarkPhase: StringScalar(PhaseProfiling), RequestStartNs: IntScalar(1), RequestEndNs: IntScalar(2)},
			Metrics: RecordMetrics{{Tag: "error_isl", Value: FloatScalar(321), Unit: "tokens"}}, Error: &RecordError{Type: "TimeoutError", Message: "m"}},
	}
}

// TestRecordMarshal pins the bytes of written records. The golden was
// produced by loadgen's own record writer before the model moved here.
func TestRecordMarshal(t *testing.T) {
	var b bytes.Buffer
	for _, r := range writtenRecords() {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join("testdata", "records_written.jsonl")
	if *update {
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String())
}

// TestRecordRoundTrip reads written records back: the reader's fields,
// the metrics in order, and the errors.
func TestRecordRoundTrip(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "records_written.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	recs, err := ReadRecords(f, RecordsFile)
	require.NoError(t, err)
	require.Len(t, recs, 3)

	r := recs[0]
	assert.Equal(t, 1, r.Line)
	assert.Equal(t, "a<b>&c", r.Metadata.XRequestID)
	assert.Equal(t, "conv::sa:1", r.Metadata.ConversationID)
	assert.Equal(t, new(7.0), r.Metadata.TurnIndex)
	start, ok := r.Metadata.RequestStartNs.Int()
	assert.True(t, ok)
	assert.Equal(t, int64(1796306000575391947), start)
	assert.Zero(t, r.Metadata.SessionNum, "fields the aggregation does not read are not decoded")
	assert.False(t, r.Warmup())
	assert.False(t, r.Failed())
	var tags []string
	for _, m := range r.Metrics {
		tags = append(tags, m.Tag)
	}
	assert.Equal(t, []string{"big", "huge", "inf", "inter_chunk_latency", "neg", "neg0", "output_sequence_length", "time_to_first_token"}, tags, "sorted by tag")
	v, ok := r.Metrics.Get("time_to_first_token").Value.Float()
	assert.True(t, ok)
	assert.Equal(t, 7095.894795, v)
	assert.Equal(t, "ms", r.Metrics.Get("time_to_first_token").Unit)
	_, ok = r.Metrics.Get("inter_chunk_latency").Value.Float()
	assert.False(t, ok, "a list is not a number")
	assert.False(t, r.Metrics.Get("inf").Value.Present(), "null")
	assert.Nil(t, r.Metrics.Get("absent"))

	assert.True(t, recs[1].Warmup())
	assert.True(t, recs[1].Failed())
	assert.Equal(t, "RequestCancellationError", recs[1].ErrorCategory())
	assert.Equal(t, &RecordError{Code: 499, Type: "RequestCancellationError", Message: "Request cancelled <by> \"external\" signal\n", CauseChain: []string{"A", "B"}, raw: recs[1].Error.raw}, recs[1].Error)
	assert.Equal(t, "TimeoutError", recs[2].ErrorCategory())

	// A built record answers the same as one read.
	built := writtenRecords()
	assert.Equal(t, "RequestCancellationError", built[1].ErrorCategory())
	assert.True(t, built[2].Failed())
	assert.Equal(t, "unknown", built[0].ErrorCategory())
}

// TestRecordMetricsLenient: what InferenceX's json.load would accept.
func TestRecordMetricsLenient(t *testing.T) {
	tests := []struct {
		name, metrics string
		want          map[string]float64 // tag -> value (NaN: present, not a number)
		wantErr       bool
	}{
		{"bare values", `{"a":1,"b":"2.5"}`, map[string]float64{"a": 1, "b": 2.5}, false},
		{"last duplicate wins", `{"a":{"value":1},"a":{"value":2}}`, map[string]float64{"a": 2}, false},
		{"null is no metric", `{"a":{"value":1},"a":null,"b":null}`, map[string]float64{}, false},
		{"null metrics", `null`, map[string]float64{}, false},
		{"list value", `{"a":{"value":[1,2]}}`, map[string]float64{"a": math.NaN()}, false},
		{"not an object", `[1]`, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := ReadRecords(bytes.NewReader([]byte(`{"metadata":{},"metrics":`+tc.metrics+"}\n")), "p.jsonl")
			if tc.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "p.jsonl:1: record: ")
				return
			}
			require.NoError(t, err)
			got := map[string]float64{}
			for _, m := range recs[0].Metrics {
				v, ok := m.Value.Float()
				if !ok {
					v = math.NaN()
				}
				got[m.Tag] = v
			}
			require.Len(t, got, len(tc.want))
			for k, w := range tc.want {
				if math.IsNaN(w) {
					assert.True(t, math.IsNaN(got[k]), k)
				} else {
					assert.Equal(t, w, got[k], k)
				}
			}
		})
	}
}

// A "metrics" value that is not an object is named as such; null is no
// metrics, and a null metric is no metric.
func TestRecordMetricsShapes(t *testing.T) {
	const md = `"metadata": {"x_request_id": "r"}`
	_, err := ReadRecords(strings.NewReader(`{`+md+`, "metrics": 5}`), RecordsFile)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `profile_export.jsonl:1: record: "metrics" is not a JSON object`)
	recs, err := ReadRecords(strings.NewReader(`{`+md+`, "metrics": null}`+"\n"+`{`+md+`, "metrics": {"a": null, "b": {"value": 2, "unit": "ms"}, "b": {"value": 3, "unit": "ms"}}}`), RecordsFile)
	require.NoError(t, err)
	assert.Empty(t, recs[0].Metrics)
	require.Len(t, recs[1].Metrics, 1)
	v, _ := recs[1].Metrics.Get("b").Value.Float()
	assert.Equal(t, 3.0, v, "the last of a repeated key")
}

// TestReadRecordsInBatches: ReadRecords decodes its lines in batches side
// by side; what it returns is still EachRecord's, in order, with line
// numbers, blank lines skipped, and on a bad line the first bad line's
// error with the records before it, however far into the file it is.
func TestReadRecordsInBatches(t *testing.T) {
	written, err := os.ReadFile(filepath.Join("testdata", "records_written.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(written)), "\n")
	var b strings.Builder
	for i := range 1000 { // several batches
		b.WriteString(lines[i%len(lines)] + "\n")
		if i%97 == 0 {
			b.WriteString("\n")
		}
	}
	serial := func(in string) ([]Record, error) {
		var out []Record
		err := EachRecord(strings.NewReader(in), RecordsFile, func(r *Record) error {
			out = append(out, *r)
			return nil
		})
		return out, err
	}
	want, err := serial(b.String())
	require.NoError(t, err)
	got, err := ReadRecords(strings.NewReader(b.String()), RecordsFile)
	require.NoError(t, err)
	require.Len(t, got, 1000)
	assert.Equal(t, want, got)
	assert.Equal(t, 1011, got[999].Line) // 11 blank lines

	bad := b.String() + "[1]\n" + lines[0] + "\n{\n"
	want, wantErr := serial(bad)
	got, err = ReadRecords(strings.NewReader(bad), RecordsFile)
	require.Error(t, wantErr)
	assert.Equal(t, wantErr.Error(), err.Error())
	assert.Contains(t, err.Error(), ":1012:")
	assert.Equal(t, want, got)
	assert.Len(t, got, 1000)
}

// BenchmarkReadRecords reads a 20-minute concurrency-32 point's worth of
// records (3,345: the three written records, repeated), as the runner
// does after each point.
func BenchmarkReadRecords(b *testing.B) {
	written, err := os.ReadFile(filepath.Join("testdata", "records_written.jsonl"))
	require.NoError(b, err)
	data := bytes.Repeat(written, 1115)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		recs, err := ReadRecords(bytes.NewReader(data), RecordsFile)
		if err != nil || len(recs) != 3345 {
			b.Fatal(len(recs), err)
		}
	}
}
