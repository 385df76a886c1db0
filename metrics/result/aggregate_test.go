package result

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/metrics/aiperf"
)

func TestExactMomentsBeatNaiveSums(t *testing.T) {
	// 1e16 + 1 + 1 - 1e16: a naive float sum loses the ones.
	var m moments
	for _, v := range []float64{1e16, 1, 1, -1e16} {
		m.add(v)
	}
	assert.Equal(t, 0.5, m.mean())
	var one moments
	one.add(3)
	assert.Equal(t, 0.0, one.pstdev())
	var two moments
	two.add(1)
	two.add(3)
	assert.Equal(t, 1.0, two.pstdev())
	// Correctly rounded sqrt: pstdev of {0, 2} is exactly 1, of {0,1} 0.5.
	var h moments
	h.add(0)
	h.add(1)
	assert.Equal(t, 0.5, h.pstdev())
	assert.Equal(t, math.Sqrt(2), sqrtRat(ratOf(2)))
}

func TestSummaryMissingMetricNamed(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, aiperf.SummaryFile), []byte(body), 0o644))
	}
	tests := []struct{ body, reason string }{
		{`{"error_request_count":{"unit":"requests","avg":1}}`, "request_count.avg is missing"},
		{`{"request_count":5}`, "request_count must be an object"},
		{`{"request_count":{"avg":"5"}}`, "request_count.avg must be numeric"},
		{`{"request_count":{"avg":-1}}`, "request_count.avg must be a finite non-negative number"},
		{`{"request_count":{"avg":0}}`, "aiperf completed zero requests"},
		{`[1]`, "must contain a JSON object"},
		{`{"request_count":{"avg":9},"error_request_count":{"avg":1}}`, ""},
		{`{"request_count":{"avg":8},"error_request_count":{"avg":2}}`, "exceeded the benchmark limit: 2/10 = 20.000% > 10.000%"},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			write(tc.body)
			v, err := Validate(dir, ValidateOptions{FailedRequestThreshold: 0.10})
			require.NoError(t, err)
			if tc.reason == "" {
				assert.True(t, v.Valid, v.Reason)
				assert.Equal(t, "Validated aiperf request error rate: 1/10 = 10.000% <= 10.000%", v.Message)
				return
			}
			assert.False(t, v.Valid)
			assert.Contains(t, v.Reason, tc.reason)
		})
	}
	_, err := Validate(dir, ValidateOptions{FailedRequestThreshold: 1.5})
	assert.ErrorIs(t, err, ErrBadThreshold)
}

func TestValidateRequiredMetricPrefix(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, aiperf.SummaryFile), []byte(`{"request_count":{"avg":10}}`), 0o644))
	opts := ValidateOptions{FailedRequestThreshold: 0.1, RequiredMetricPrefix: "sglang:"}
	v, err := Validate(dir, opts)
	require.NoError(t, err)
	assert.Contains(t, v.Reason, "required AIPerf server metrics artifacts are missing or empty")

	require.NoError(t, os.WriteFile(filepath.Join(dir, aiperf.ServerMetricsFile), []byte(`{"metrics":{"dynamo_frontend_x":{}}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, aiperf.ServerMetricsCSV), []byte("a,b\n"), 0o644))
	v, _ = Validate(dir, opts)
	assert.Contains(t, v.Reason, "contains no metric with required prefix 'sglang:'")

	require.NoError(t, os.WriteFile(filepath.Join(dir, aiperf.ServerMetricsFile), []byte(`{"metrics":{"sglang:num_running_reqs":{}}}`), 0o644))
	v, _ = Validate(dir, opts)
	assert.True(t, v.Valid, v.Reason)
	assert.Contains(t, v.Message, "Validated required AIPerf server metrics prefix 'sglang:'")
}

func TestFromEnvChecks(t *testing.T) {
	base := func() map[string]string {
		return map[string]string{"KV_OFFLOADING": "none", "CONC": "8", "TP": "4", "FRAMEWORK": "vllm"}
	}
	tests := []struct {
		name string
		edit func(map[string]string)
		msg  string
	}{
		{"ok", func(map[string]string) {}, ""},
		{"kv offloading required", func(e map[string]string) { delete(e, "KV_OFFLOADING") }, "Missing required environment variable: KV_OFFLOADING"},
		{"backend with none", func(e map[string]string) { e["KV_OFFLOAD_BACKEND"] = "lmcache" }, "KV_OFFLOAD_BACKEND must be empty when KV_OFFLOADING=none"},
		{"backend needed", func(e map[string]string) { e["KV_OFFLOADING"] = "dram" }, "KV_OFFLOAD_BACKEND is required when KV_OFFLOADING is enabled"},
		{"backend name mismatch", func(e map[string]string) {
			e["KV_OFFLOADING"], e["KV_OFFLOAD_BACKEND"], e["KV_OFFLOAD_BACKEND_METADATA"] = "dram", "lmcache", `{"name":"hicache"}`
		}, "KV_OFFLOAD_BACKEND must match KV_OFFLOAD_BACKEND_METADATA.name"},
		{"router needs version", func(e map[string]string) { e["ROUTER_METADATA"] = `{"name":"r"}` }, "ROUTER_METADATA must contain exactly 'name' and 'version'"},
		{"router json", func(e map[string]string) { e["ROUTER_METADATA"] = `{` }, "ROUTER_METADATA must contain valid JSON"},
		{"bad pp", func(e map[string]string) { e["PP_SIZE"] = "0" }, "PP_SIZE, DCP_SIZE, and PCP_SIZE must be positive integers."},
		{"bad conc", func(e map[string]string) { e["CONC"] = "" }, `CONC="" is not an integer`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := base()
			tc.edit(env)
			f, err := FromEnv(env)
			if tc.msg == "" {
				require.NoError(t, err)
				assert.Equal(t, 4, f.NumGPUs())
				assert.Equal(t, "false", f.DPAttention)
				assert.Equal(t, "none", f.SpecDecoding)
				return
			}
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestMultinodeShape(t *testing.T) {
	f, err := FromEnv(map[string]string{"KV_OFFLOADING": "none", "IS_MULTINODE": "true",
		"PREFILL_NUM_WORKERS": "2", "PREFILL_TP": "4", "PREFILL_EP": "4", "DECODE_NUM_WORKERS": "0",
		"DECODE_TP": "8", "DECODE_EP": "16", "PREFILL_DP_ATTN": "true"})
	require.NoError(t, err)
	res, err := Aggregate(&Inputs{}, f)
	require.NoError(t, err)
	assert.Equal(t, 4, res.TP, "an aggregated worker adds no decode TP")
	assert.Equal(t, 4, res.EP)
	assert.Equal(t, "true", res.DPAttention)
	assert.Equal(t, 8, res.MultiNodeShape.NumPrefillGPU)
	assert.Nil(t, res.SingleNodeShape)
}

func TestResultFilename(t *testing.T) {
	got := ResultFilename(FilenameParts{ExpName: "glm5.2_agentic", Precision: "fp8", Framework: "sglang",
		Parallelism: configs.Parallelism{TP: 8, PP: 1, DCPSize: 1, PCPSize: 1, EP: 1}, SpecDecoding: "mtp", Conc: 32, RunnerName: "b300-nv_02",
		RecipeFingerprint: "6bf3be82e2c5d9a090ee859d28d8a2075fa729b56086e2803e8f312cb14e84ac"})
	// The RESULT_FILENAME of the sglang-error-rate-15pct conformance case.
	assert.Equal(t, "glm5.2_agentic_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc32_b300-nv_02_recipe-6bf3be82e2c5d9a0", got)
	assert.NotContains(t, ResultFilename(FilenameParts{ExpName: "x"}), "_recipe-")
	assert.Error(t, CheckResultFilename("../x"))
	assert.NoError(t, CheckResultFilename(got))
}

func ratOf(x int64) *big.Rat { return new(big.Rat).SetInt64(x) }

// writeSyntheticRecords writes n aiperf-like records (about 1 KB each, the
// size aiperf 0.12 writes) with 10% warm-up and 2% errors.
func writeSyntheticRecords(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := int64(1787999638012439134)
	for i := range n {
		phase := "profiling"
		if i%10 == 0 {
			phase = "warmup"
		}
		start := t0 + int64(i)*20_000_000 + rng.Int64N(1e9)
		dur := 200_000_000 + rng.Int64N(5e9)
		fmt.Fprintf(w, `{"metadata":{"session_num":%d,"x_request_id":"088aa3cc-a260-4854-86c9-%012d","x_correlation_id":"f5bdfa75-dcc5-45dc-a6e1-c932ce1c2b60","conversation_id":"trace_%04d_f36501","turn_index":%d,"source_trace_id":"trace_0432_f36501","source_outer_idx":8,"source_kind":"weka_main","credit_issued_ns":%d,"request_start_ns":%d,"request_ack_ns":%d,"request_end_ns":%d,"worker_id":"worker_ee1a67f6","record_processor_id":"record_processor_a3958f94","benchmark_phase":"%s","phase_index":1,"phase_name":"%s","phase_kind":"%s","was_cancelled":false,"context_overflow_skip":false,"agent_depth":0,"root_correlation_id":"f5bdfa75-dcc5-45dc-a6e1-c932ce1c2b60"},`,
			i%64, i, i%500, i%30, start-100000, start, start+1300000, start+dur, phase, phase, phase)
		if i%50 == 7 {
			fmt.Fprintf(w, `"metrics":{"error_isl":{"value":%d,"unit":"tokens"}},"error":{"code":500,"type":"Internal Server Error","message":"EngineCore encountered an issue"}}`+"\n", 20000+i%1000)
			continue
		}
		osl := 1 + rng.IntN(2000)
		ttft := 50 + rng.Float64()*900
		itl := 3 + rng.Float64()*8
		fmt.Fprintf(w, `"metrics":{"output_sequence_length":{"value":%d,"unit":"tokens"},"input_sequence_length":{"value":%d,"unit":"tokens"},"time_to_first_token":{"value":%v,"unit":"ms"},"time_to_second_token":{"value":%v,"unit":"ms"},"output_token_count":{"value":%d,"unit":"tokens"},"request_latency":{"value":%v,"unit":"ms"},"inter_token_latency":{"value":%v,"unit":"ms"},"output_token_throughput_per_user":{"value":%v,"unit":"tokens/sec/user"},"time_to_first_output_token":{"value":%v,"unit":"ms"},"prefill_throughput_per_user":{"value":%v,"unit":"tokens/sec/user"},"usage_prompt_tokens":{"value":%d,"unit":"tokens"},"usage_completion_tokens":{"value":%d,"unit":"tokens"}}}`+"\n",
			osl, 20000+rng.IntN(80000), ttft, itl*1.1, osl, ttft+itl*float64(osl), itl, 1000/itl, ttft, 50000+rng.Float64()*1000, 30000+i%1000, osl)
	}
	require.NoError(tb, w.Flush())
	require.NoError(tb, f.Close())
}

func TestAggregateSyntheticRun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "aiperf_artifacts"), 0o755))
	writeSyntheticRecords(t, filepath.Join(dir, "aiperf_artifacts", aiperf.RecordsFile), 1000)
	in, err := LoadInputs(dir, "")
	require.NoError(t, err)
	f, err := FromEnv(map[string]string{"KV_OFFLOADING": "none", "TP": "8", "FRAMEWORK": "vllm"})
	require.NoError(t, err)
	res, err := Aggregate(in, f)
	require.NoError(t, err)
	a := res.RequestAccounting
	assert.Equal(t, 1000, a.RecordsTotal)
	assert.Equal(t, 100, a.RecordsWarmupDropped)
	assert.Equal(t, 20, a.RecordsErrorDropped)
	assert.Equal(t, 880, res.NumRequestsSuccessful, "warm-up errors count in both categories")
	assert.Equal(t, 20, a.ErrorCategories.Get("Internal Server Error"))
	lat := res.RequestMetrics.Latency
	require.NotNil(t, lat.ITL.P90)
	assert.InDelta(t, 1/float64(*lat.ITL.P90), float64(*lat.Intvty.P90), 1e-9, "intvty is 1/percentile(ITL)")
	assert.Less(t, float64(*lat.Intvty.P90), float64(*lat.Intvty.P50), "the slow tail stays a slow tail")
	assert.Equal(t, lat.ITL, lat.TPOT)
	tp := res.RequestMetrics.Throughput
	require.NotNil(t, tp.PerGPU.TotalTputTPS)
	assert.InDelta(t, float64(tp.Total.TokensPerSecond)/8, float64(*tp.PerGPU.TotalTputTPS), 1e-6)
	assert.Equal(t, []string{"server_metrics_export.json missing or empty"}, res.Warnings)
	assert.Equal(t, "none", res.ServerMetrics.Adapter)
	assert.Nil(t, res.KVCachePoolTokens)
	require.NotNil(t, res.ServerMetrics.Tokens.GenerationTotal, "falls back to the records' sum")
}

// BenchmarkAggregate100k reads and aggregates a 100,000-request
// profile_export.jsonl (~120 MB, generated once) end to end.
func BenchmarkAggregate100k(b *testing.B) {
	dir := b.TempDir()
	require.NoError(b, os.MkdirAll(filepath.Join(dir, "aiperf_artifacts"), 0o755))
	path := filepath.Join(dir, "aiperf_artifacts", aiperf.RecordsFile)
	writeSyntheticRecords(b, path, 100_000)
	st, err := os.Stat(path)
	require.NoError(b, err)
	f, err := FromEnv(map[string]string{"KV_OFFLOADING": "none", "TP": "8", "FRAMEWORK": "sglang"})
	require.NoError(b, err)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		in, err := LoadInputs(dir, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Aggregate(in, f); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAggregateRejectsBogusTimestamp(t *testing.T) {
	line := func(end string) string {
		return `{"metadata":{"benchmark_phase":"profiling","request_start_ns":1787999638012439134,"request_end_ns":` + end + `},"metrics":{}}` + "\n"
	}
	recs, err := aiperf.ReadRecords(strings.NewReader(line("1787999639012439134")+line(`"7"`)), "p")
	require.NoError(t, err)
	f, err := FromEnv(map[string]string{"KV_OFFLOADING": "none"})
	require.NoError(t, err)
	_, err = Aggregate(&Inputs{Records: recs}, f)
	_, ok := errors.AsType[*ImplausibleSpanError](err)
	assert.True(t, ok, "got %v", err)
}

func TestValidateUnreadableSummary(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, aiperf.SummaryFile), []byte(`{"request_count":`), 0o644))
	v, err := Validate(dir, ValidateOptions{FailedRequestThreshold: 0.1})
	require.NoError(t, err)
	assert.False(t, v.Valid)
	assert.True(t, strings.HasPrefix(v.Reason, "failed to read "+filepath.Join(dir, aiperf.SummaryFile)), v.Reason)
	require.NoError(t, os.WriteFile(filepath.Join(dir, aiperf.SummaryFile), []byte(`null`), 0o644))
	v, _ = Validate(dir, ValidateOptions{FailedRequestThreshold: 0.1})
	assert.Equal(t, filepath.Join(dir, aiperf.SummaryFile)+" must contain a JSON object", v.Reason)
}

// TestHugeAndNonFiniteValues: a request_latency of 1e308 ms used to square
// to +Inf and panic the exact sum (big.Rat.SetFloat64(Inf) is nil). Huge
// finite values are summed exactly, as Python's statistics module does;
// non-finite statistics are written as null.
func TestHugeAndNonFiniteValues(t *testing.T) {
	var m moments
	for _, x := range []float64{1e308, 1e308, 1} {
		m.add(x)
	}
	assert.Equal(t, 2e308/3+1.0/3, m.mean(), "exact mean of huge values")
	assert.InDelta(t, 4.714045207910317e307, m.pstdev(), 1e293)

	s := statsOf([]float64{1, math.Inf(1), 2})
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"mean":null`)
	assert.Contains(t, string(b), `"std":null`)

	dir := t.TempDir()
	rec := func(lat string) string {
		return `{"metadata":{"benchmark_phase":"profiling","request_start_ns":1000000000,"request_end_ns":2000000000},"metrics":{"request_latency":{"value":` + lat + `,"unit":"ms"},"time_to_first_token":{"value":` + lat + `,"unit":"ms"},"output_sequence_length":{"value":10,"unit":"tokens"},"input_sequence_length":{"value":10,"unit":"tokens"}}}` + "\n"
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "aiperf_artifacts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "aiperf_artifacts", aiperf.RecordsFile), []byte(rec("1e308")+rec("12.5")+rec("1e999")), 0o644))
	in, err := LoadInputs(dir, "")
	require.NoError(t, err)
	f, err := FromEnv(map[string]string{"KV_OFFLOADING": "none", "TP": "1", "FRAMEWORK": "vllm"})
	require.NoError(t, err)
	res, err := Aggregate(in, f)
	require.NoError(t, err, "no panic, and huge values aggregate")
	b, err = json.Marshal(res.RequestMetrics.Latency.E2EL)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"mean":5e+304`, "1e308 ms is 1e305 s, with 0.0125 s; 1e999 overflows to inf and is dropped")
	assert.Contains(t, string(b), `"std":5e+304`)
}
