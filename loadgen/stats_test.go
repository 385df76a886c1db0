package loadgen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/aiperf"
)

// TestRecordStatsMatchAiperf recomputes the summary blocks of a real
// aiperf run from its per-record values: same percentile method
// (linear), same std (population), same count and sum.
func TestRecordStatsMatchAiperf(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(exampleDir, "stats-conformance.json"))
	require.NoError(t, err)
	var fx struct {
		Values  map[string][]float64
		Summary map[string]map[string]any
	}
	require.NoError(t, json.Unmarshal(b, &fx))
	require.NotEmpty(t, fx.Values)
	for tag, vals := range fx.Values {
		t.Run(tag, func(t *testing.T) {
			want := fx.Summary[tag]
			raw, err := json.Marshal(recordStats(want["unit"].(string), vals))
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(raw, &got))
			assert.Equal(t, keys(want), keys(got))
			for k, w := range want {
				if k == "unit" {
					assert.Equal(t, w, got[k])
					continue
				}
				wf, gf := w.(float64), got[k].(float64)
				assert.InDelta(t, wf, gf, 1e-9*math.Max(1, math.Abs(wf)), "%s.%s", tag, k)
			}
		})
	}
}

func TestJSONNumbers(t *testing.T) {
	raw, err := json.Marshal(object{{"a", num(3)}, {"b", rawFloat(64)}, {"c", num(math.NaN())}, {"d", rawFloat(math.Inf(1))}, {"e", num(0.25)}})
	require.NoError(t, err)
	assert.Equal(t, `{"a":3,"b":64.0,"c":null,"d":null,"e":0.25}`, string(raw))
}

const promText = `# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} 120.0
vllm:prompt_tokens_created{engine="0",model_name="m"} 1.7e+09
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 2.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="1.0",model_name="m"} 3.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 4.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 3.5
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 4.0
sglang:cache_hit_rate{model_name="m",note="a \"quoted\" value"} 0.93
`

// TestServerMetricsWindow checks the export arithmetic on hand-made
// snapshots: counters are deltas over the window, gauges are stats over
// the samples inside it, histograms are bucket deltas.
func TestServerMetricsWindow(t *testing.T) {
	const ep = "http://e/metrics"
	s := newScraper(nil, []string{ep}, clock{scale: 1})
	l := s.logs[ep]
	snap := func(sec int64, tokens, usage, b01, b1, binf, sum, count float64) {
		text := strings.NewReplacer(
			"120.0", ftoa(tokens), "} 0.5", "} "+ftoa(usage),
			`le="0.1",model_name="m"} 2.0`, `le="0.1",model_name="m"} `+ftoa(b01),
			`le="1.0",model_name="m"} 3.0`, `le="1.0",model_name="m"} `+ftoa(b1),
			`le="+Inf",model_name="m"} 4.0`, `le="+Inf",model_name="m"} `+ftoa(binf),
			"_sum{engine=\"0\",model_name=\"m\"} 3.5", "_sum{engine=\"0\",model_name=\"m\"} "+ftoa(sum),
			"_count{engine=\"0\",model_name=\"m\"} 4.0", "_count{engine=\"0\",model_name=\"m\"} "+ftoa(count),
		).Replace(promText)
		fams, err := parseMetricsPage(strings.NewReader(text), "page")
		require.NoError(t, err)
		ns := sec * int64(time.Second)
		l.updates = append(l.updates, ns)
		l.add(ns, fams)
	}
	snap(0, 100, 0.1, 1, 1, 1, 0.05, 1) // before the window: the reference
	snap(10, 150, 0.4, 2, 3, 3, 1.0, 3) // window start
	snap(15, 200, 0.6, 3, 5, 6, 4.0, 6) // inside
	snap(20, 260, 0.8, 3, 6, 8, 6.0, 8) // window end
	out, ok := s.export("bench", 10*int64(time.Second), 20*int64(time.Second), 5*time.Second, exportOptions{})
	require.True(t, ok)
	raw, err := json.Marshal(out)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	mets := m["metrics"].(map[string]any)
	series := func(name string) map[string]any {
		return mets[name].(map[string]any)["series"].([]any)[0].(map[string]any)
	}
	cs := series("vllm:prompt_tokens")["stats"].(map[string]any)
	assert.Equal(t, 110.0, cs["total"], "260 - 150")
	assert.Equal(t, 11.0, cs["rate"])
	assert.Equal(t, 11.0, cs["rate_avg"], "two complete 5s slices: 50/5 and 60/5")
	assert.Equal(t, 10.0, cs["rate_min"])
	assert.Equal(t, 12.0, cs["rate_max"])
	gs := series("vllm:kv_cache_usage_perc")["stats"].(map[string]any)
	assert.InDelta(t, 0.6, gs["avg"], 1e-12, "samples at 10, 15, 20")
	assert.Equal(t, 0.4, gs["min"])
	assert.Equal(t, "percent", mets["vllm:kv_cache_usage_perc"].(map[string]any)["unit"])
	hs := series("vllm:time_to_first_token_seconds")
	assert.Equal(t, map[string]any{"0.1": 1.0, "1.0": 3.0, "+Inf": 5.0}, hs["buckets"])
	hst := hs["stats"].(map[string]any)
	assert.Equal(t, 5.0, hst["count"])
	assert.Equal(t, 5.0, hst["sum"])
	assert.InDelta(t, 0.1+0.9*(2.5-1)/2, hst["p50_estimate"], 1e-12, "rank 2.5 falls in (0.1, 1.0]")
	assert.Equal(t, "seconds", mets["vllm:time_to_first_token_seconds"].(map[string]any)["unit"])
}

func ftoa(f float64) string { b, _ := json.Marshal(f); return string(b) }

// TestNumberSessions: session_num follows each session's first credit,
// ties by correlation id, whatever order the records come in.
func TestNumberSessions(t *testing.T) {
	mk := func(corr string, credit int64) *record {
		rec := &record{}
		rec.Metadata.XCorrelationID, rec.Metadata.CreditIssuedNs = corr, credit
		rec.Metadata.SessionNum = -1
		return rec
	}
	want := map[string]int{"b": 0, "c": 1, "a": 2, "d": 3}
	for seed := range uint64(20) {
		recs := []*record{mk("a", 50), mk("b", 10), mk("c", 10), mk("a", 30), mk("b", 90), mk("d", 60)}
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		numberSessions(recs)
		for _, rec := range recs {
			assert.Equal(t, want[rec.Metadata.XCorrelationID], rec.Metadata.SessionNum, rec.Metadata.XCorrelationID)
		}
	}
}

// TestEncodeRecords: the parts, joined, are the records one a line in
// order, however many records there are for the parts, each line as
// json.Marshal writes it, also for strings its second pass over a
// record's MarshalJSON escapes (<, >, &) or rejects (strconv.Quote's \x).
func TestEncodeRecords(t *testing.T) {
	odd := []string{"a<b", "x&y", "q\"uote", "back\\slash", "tab\t", "caf\u00e9", "ls\u2028", "plain"}
	for _, n := range []int{1, 2, 3, 7, 100} {
		var recs []*record
		var want []byte
		for i := range n {
			rec := &record{}
			rec.Metadata.SessionNum, rec.Metadata.XRequestID = i, strings.Repeat("r", i%5)
			if i%2 == 1 {
				rec.Metadata.ConversationID = "<conv>&"
				rec.Metrics = aiperf.RecordMetrics{
					{Tag: "request_latency", Value: aiperf.FloatScalar(1.5), Unit: "ms"},
					{Tag: odd[i%len(odd)], List: []float64{1, 2.5}, Unit: odd[(i+3)%len(odd)]},
					{Tag: "s", Value: aiperf.StringScalar("<&>\u2028"), Unit: "tokens"},
				}
			}
			recs = append(recs, rec)
			line, err := json.Marshal(&rec.Record)
			require.NoError(t, err)
			want = append(append(want, line...), '\n')
		}
		parts, err := encodeRecords(recs)
		require.NoError(t, err)
		var got []byte
		for _, p := range parts {
			got = append(got, p...)
		}
		assert.Equal(t, string(want), string(got), "%d records", n)
	}
	for _, bad := range []string{"ctl\x01", "bad\xff"} {
		rec := &record{}
		rec.Metrics = aiperf.RecordMetrics{{Tag: "m", Value: aiperf.FloatScalar(1), Unit: bad}}
		_, want := json.Marshal(&rec.Record)
		require.Error(t, want, "%q", bad)
		_, err := encodeRecords([]*record{rec})
		assert.ErrorContains(t, err, want.Error(), "%q", bad)
	}
}
