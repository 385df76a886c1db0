package loadgen

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/aiperf"
)

// referenceRecords reads a real profile_export.jsonl as the client's
// records: the timestamps, phase, error and metrics the summary uses.
func referenceRecords(t testing.TB, path string) []*record {
	t.Helper()
	var out []*record
	for _, j := range readJSONL(t, path) {
		r := &record{}
		m := md(j)
		r.Metadata.RequestStartNs = aiperf.IntScalar(int64(m["request_start_ns"].(float64)))
		r.Metadata.RequestEndNs = aiperf.IntScalar(int64(m["request_end_ns"].(float64)))
		r.Metadata.BenchmarkPhase = aiperf.StringScalar(m["benchmark_phase"].(string))
		if c, ok := m["credit_issued_ns"].(float64); ok {
			r.Metadata.CreditIssuedNs = int64(c)
		}
		if j["error"] != nil {
			r.Error = &aiperf.RecordError{Type: "error"}
		}
		for _, tag := range keys(recMetrics(j)) {
			mv := aiperf.MetricValue{Tag: tag, Unit: recMetrics(j)[tag].(jsonObj)["unit"].(string)}
			switch v := recMetrics(j)[tag].(jsonObj)["value"].(type) {
			case []any:
				for _, x := range v {
					mv.List = append(mv.List, x.(float64))
				}
			case float64:
				mv.Value = aiperf.FloatScalar(v)
			}
			r.Metrics = append(r.Metrics, mv)
		}
		out = append(out, r)
	}
	return out
}

// TestSweepLineMatchesAiperf: from the real aiperf 0.12.0's own
// records, over its profiling phase (start_time to end_time), the
// effective_*, tokens_in_flight and active_* blocks come out as aiperf
// wrote them, to 1e-4 relative (aiperf holds the ns stamps as float64,
// 256 ns apart at today's epoch, and writes times to the microsecond).
func TestSweepLineMatchesAiperf(t *testing.T) {
	ref := filepath.Join(realAiperf, "c4")
	recs := referenceRecords(t, filepath.Join(ref, aiperf.RecordsFile))
	sum := readJSON(t, filepath.Join(ref, aiperf.SummaryFile))
	at := func(key string) float64 {
		ts, err := time.ParseInLocation("2006-01-02T15:04:05.000000", sum[key].(string), time.UTC)
		require.NoError(t, err)
		return float64(ts.UnixNano())
	}
	got := sweepMetrics(spansOf(recs, aiperf.PhaseProfiling), at("start_time"), at("end_time"), true)
	require.Len(t, got, 14)
	for _, f := range got {
		real, ok := sum[f.Key].(jsonObj)
		require.True(t, ok, f.Key)
		block := f.Value.(object)
		assert.Equal(t, keys(real), sorted(keysOf(block)), f.Key)
		assert.Equal(t, real["unit"], block.get("unit"), f.Key)
		for _, st := range block[1:] {
			g, w := float64(st.Value.(rawFloat)), real[st.Key].(float64)
			assert.InDelta(t, w, g, 1e-4*math.Abs(w)+1e-9, "%s %s", f.Key, st.Key)
		}
	}
}

func keysOf(o object) []string {
	var out []string
	for _, f := range o {
		out = append(out, f.Key)
	}
	return out
}

// TestSweepLineDefinitions pins the curves on two hand-made requests.
func TestSweepLineDefinitions(t *testing.T) {
	// A: prefill 0-2 s (100 tokens), chunks at 2, 3, 4 s (OSL 5: 1 token,
	// then 2 per gap), ends at 4 s. B: prefill 1-2 s (50 tokens), no gaps
	// (OSL 1), ends at 6 s. Window 0-8 s.
	const s = 1e9
	spans := []span{
		{start: 0, gen: 2 * s, end: 4 * s, isl: 100, osl: 5, icl: []float64{s, s}, hasGen: true},
		{start: 1 * s, gen: 2 * s, end: 6 * s, isl: 50, osl: 1, hasGen: true},
	}
	m := sweepMetrics(spans, 0, 8*s, true)
	avg := func(tag string) float64 { return float64(m.get(tag).(object).get("avg").(rawFloat)) }
	assert.InDelta(t, (4.0+5.0)/8, avg("effective_concurrency"), 1e-12)
	assert.InDelta(t, (2.0+1.0)/8, avg("effective_prefill_concurrency"), 1e-12)
	assert.InDelta(t, (2.0+4.0)/8, avg("effective_decode_concurrency"), 1e-12)
	assert.InDelta(t, 150.0/8, avg("effective_prefill_throughput"), 1e-9, "every input token once")
	assert.InDelta(t, 4.0/8, avg("effective_decode_throughput"), 1e-9, "OSL-1 tokens of A")
	assert.InDelta(t, 154.0/8, avg("effective_total_throughput"), 1e-9)
	// Tokens in flight: A holds 100 over 0-2, 101 over 2-3, 103 over 3-4
	// (the last chunk lands just before the end); B 50 over 1-2, 51 over 2-6.
	assert.InDelta(t, (100*2+101+103+50+51*4)/8.0, avg("tokens_in_flight"), 1e-6)
	// Active decode: 2 tokens/s over 2-4 while A or B decodes (2-6).
	assert.InDelta(t, 4.0/4, avg("active_decode_throughput"), 1e-9)
	assert.InDelta(t, 150.0/2, avg("active_prefill_throughput"), 1e-9, "prefill active 0-2 s")
}
