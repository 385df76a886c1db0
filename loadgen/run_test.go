package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/aiperf"
)

const exampleDir = "../testdata/loadgen/aiperf-example"

// fakeOptions returns options that drive f in-process (no sockets), for
// use inside a synctest bubble.
func fakeOptions(t *testing.T, f *fakeServer) Options {
	o := DefaultOptions()
	o.URL = "http://fake-engine:8000"
	o.Transport = handlerTransport{h: f.handler()}
	o.Model = "test-model"
	o.Streaming = true
	o.ServerTokens = true
	o.Concurrency = 4
	o.BenchmarkDuration = 120 * time.Second
	o.WarmupPerLane = 2
	// Seed 1 starts lane 1 (synth_0001) at its main turn 2, before its
	// subagent: the lanes replay one in profiling, none in warm-up.
	o.Seed = 1
	o.StartMinRatio, o.StartMaxRatio = 0, 1
	o.ArtifactDir = t.TempDir()
	o.ScrapeInterval = time.Second
	o.SliceDuration = 10 * time.Second
	o.ExtraInputs = map[string]any{"ignore_eos": true}
	o.TraceFile = smallTraces // small prompts and one subagent at a time: lanes map to requests
	return o
}

type jsonObj = map[string]any

func readJSONL(t testing.TB, path string) []jsonObj {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []jsonObj
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m jsonObj
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %d", len(out)+1)
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

func readJSON(t *testing.T, path string) jsonObj {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m jsonObj
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func keys(m any) []string {
	mm, _ := m.(jsonObj)
	return slices.Sorted(maps.Keys(mm))
}

func num64(v any) float64 { f, _ := v.(float64); return f }

func md(r jsonObj) jsonObj         { return r["metadata"].(jsonObj) }
func recMetrics(r jsonObj) jsonObj { m, _ := r["metrics"].(jsonObj); return m }
func mval(r jsonObj, tag string) float64 {
	m, ok := recMetrics(r)[tag].(jsonObj)
	if !ok {
		return -1
	}
	return num64(m["value"])
}

func phaseOf(r jsonObj) string { return md(r)["benchmark_phase"].(string) }

// exampleRecords returns the real aiperf records from testdata by role.
func exampleRecords(t *testing.T) map[string]jsonObj {
	recs := readJSONL(t, filepath.Join(exampleDir, "records.jsonl"))
	require.Len(t, recs, 8)
	return map[string]jsonObj{
		"profiling": recs[0], "warmup": recs[1], "subagent": recs[2],
		"http400": recs[3], "disconnect": recs[4], "cancelled": recs[5], "refused": recs[6], "http503": recs[7],
	}
}

// The example records come from InferenceX's aggregation cases, written
// by the InferenceX fork of aiperf: it adds these record metrics and
// warm-up metadata, which aiperf 0.12.0 (the built-in's model) does not
// write (see the real 0.12.0 artifacts in TestConformsToAiperf012).
var (
	forkOnlyMetrics        = []string{"full_decode_duration", "full_response_inter_token_latency", "full_response_output_token_throughput_per_user"}
	forkOnlyWarmupMetadata = []string{"phase_index", "phase_kind", "phase_name"}
	forkOnlyRunInfo        = []string{"run_label", "variation_index", "variation_label", "variation_values"}
)

// without returns the sorted keys ks less drop.
func without(ks []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(ks), func(k string) bool { return slices.Contains(drop, k) })
}

func TestRunArtifacts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, ttft: 50 * time.Millisecond, tokenGap: 20 * time.Millisecond}
		o := fakeOptions(t, f)
		begin := time.Now()
		res, err := Run(t.Context(), o, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, []string{aiperf.RecordsFile, aiperf.SummaryFile, SummaryCSV, ConsoleExport, aiperf.TimeslicesJSON, aiperf.TimeslicesCSV, aiperf.ServerMetricsFile, ServerMetricsCSV}, res.Files, "with --slice-duration, the timeslice files")
		assert.False(t, res.Cancelled)
		assert.LessOrEqual(t, f.maxFlight.Load(), int64(o.Concurrency), "concurrency exceeded")
		assert.Equal(t, int64(o.Concurrency), f.maxFlight.Load(), "all lanes should be busy at some point")

		recs := readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile))
		require.Equal(t, res.Warmup.OK+res.Profiling.OK, len(recs))
		ex := exampleRecords(t)

		var warm, prof []jsonObj
		for _, r := range recs {
			if phaseOf(r) == aiperf.PhaseWarmup {
				warm = append(warm, r)
			} else {
				prof = append(prof, r)
			}
		}
		assert.GreaterOrEqual(t, len(warm), o.Concurrency)
		assert.LessOrEqual(t, len(warm), o.Concurrency*o.WarmupPerLane)
		var profStart, lastWarmEnd int64 = 1 << 62, 0
		for _, r := range prof {
			profStart = min(profStart, int64(num64(md(r)["credit_issued_ns"])))
		}
		for _, r := range warm {
			lastWarmEnd = max(lastWarmEnd, int64(num64(md(r)["request_end_ns"])))
			assert.Equal(t, 1.0, mval(r, "output_sequence_length"), "warm-up requests ask for one token")
			assert.Equal(t, without(keys(md(ex["warmup"])), forkOnlyWarmupMetadata...), keys(md(r)), "warm-up metadata keys")
			// The warm-up metric keys are aiperf 0.12.0's (decode_duration 0
			// included), checked against its own records in TestConformsToAiperf012.
		}
		assert.LessOrEqual(t, lastWarmEnd, profStart, "every warm-up request ends before profiling starts")

		// The fake server reports cached prompt tokens (the example's engine
		// did not), and aiperf 0.12.0 writes osl_mismatch_diff_pct and the
		// http_req_* metrics.
		wantProfMetrics := without(slices.Compact(slices.Sorted(slices.Values(append(keys(recMetrics(ex["profiling"])), append(keys(recMetrics(ex["subagent"])), append(httpReqMetrics, "usage_prompt_cache_read_tokens", "osl_mismatch_diff_pct")...)...)))), forkOnlyMetrics...)
		window := profStart + o.BenchmarkDuration.Nanoseconds()
		sawSub := false
		for _, r := range prof {
			m := md(r)
			kind := m["source_kind"].(string)
			if kind == "weka_subagent" {
				sawSub = true
				assert.Equal(t, keys(md(ex["subagent"])), keys(m), "subagent metadata keys")
				assert.Equal(t, 1.0, m["agent_depth"])
			} else {
				assert.Equal(t, keys(md(ex["profiling"])), keys(m), "profiling metadata keys")
			}
			assert.Equal(t, 1.0, m["phase_index"])
			assert.Equal(t, 0.0, m["profiling_index"])
			assert.Equal(t, wantProfMetrics, keys(recMetrics(r)), "profiling metric keys")
			_, hasErr := r["error"]
			assert.False(t, hasErr)

			credit, start, ack, end := int64(num64(m["credit_issued_ns"])), int64(num64(m["request_start_ns"])), int64(num64(m["request_ack_ns"])), int64(num64(m["request_end_ns"]))
			assert.True(t, credit <= start && start <= ack && ack <= end, "timestamps out of order: %d %d %d %d", credit, start, ack, end)
			assert.Less(t, credit, window, "a request was issued after the benchmark duration")
			osl := mval(r, "output_sequence_length")
			ttft, lat := mval(r, "time_to_first_token"), mval(r, "request_latency")
			assert.InDelta(t, 50.0, ttft, 1e-6, "fake clock: TTFT is the server's")
			assert.InDelta(t, 50+20*(osl-1), lat, 1e-6)
			assert.LessOrEqual(t, ttft, lat)
			assert.LessOrEqual(t, lat, float64(end-start)/1e6+1e-3, "ns timestamps lose ~100ns in float64 JSON")
			icl := recMetrics(r)["inter_chunk_latency"].(jsonObj)["value"].([]any)
			assert.Len(t, icl, int(osl)-1, "one word per event: ITL count = tokens-1")
			assert.InDelta(t, (lat-ttft)/(osl-1), mval(r, "inter_token_latency"), 1e-9)
			assert.Equal(t, mval(r, "usage_prompt_tokens"), mval(r, "input_sequence_length"))
		}
		assert.True(t, sawSub, "the synthetic traces have subagents; none was replayed")

		// The run lasted warm-up + duration + drain, on the fake clock.
		elapsed := time.Since(begin)
		assert.GreaterOrEqual(t, elapsed, o.BenchmarkDuration)
		assert.Less(t, elapsed, o.BenchmarkDuration+o.GracePeriod+o.ScrapeFlush+time.Minute)

		// Summary: aiperf's keys and metric-block shapes.
		sum := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile))
		exSum := readJSON(t, filepath.Join(exampleDir, aiperf.SummaryFile))
		for _, k := range keys(exSum) {
			if strings.HasPrefix(k, "adj_") || strings.Contains(k, "error") || k == "completed_request_count" {
				continue // only in runs with errors (TestRunHTTPErrors)
			}
			assert.Contains(t, sum, k, "summary key")
		}
		assert.Equal(t, keys(exSum["request_latency"]), keys(sum["request_latency"]))
		assert.Equal(t, keys(exSum["request_count"]), keys(sum["request_count"]))
		// branch_stats: every subagent replayed was spawned, and each spawn
		// ended completed, errored or cut off by the end of the phase.
		subs := map[any]bool{}
		for _, r := range append(slices.Clone(warm), prof...) {
			if md(r)["source_kind"] == "weka_subagent" {
				subs[md(r)["x_correlation_id"]] = true
			}
		}
		bs := sum["branch_stats"].(jsonObj)
		assert.Equal(t, float64(len(subs)), bs["children_spawned"], "branch_stats %v", bs)
		assert.Equal(t, bs["children_spawned"], num64(bs["children_completed"])+num64(bs["children_errored"])+num64(bs["children_truncated"]))
		assert.Positive(t, num64(bs["parents_suspended"]))
		assert.LessOrEqual(t, num64(bs["parents_resumed"]), num64(bs["parents_suspended"]))
		assert.Equal(t, float64(len(prof)), num64(sum["request_count"].(jsonObj)["avg"]))
		assert.Equal(t, float64(len(prof)), num64(sum["request_latency"].(jsonObj)["count"]))
		assert.Equal(t, "1.4", sum["schema_version"])
		assert.Equal(t, false, sum["was_cancelled"])
		assert.Equal(t, without(keys(exSum["run_info"]), forkOnlyRunInfo...), keys(sum["run_info"]))
		tph := sum["theoretical_prefix_cache_hit"].(jsonObj)
		assert.Greater(t, num64(tph["avg"]), 50.0, "growing conversations reuse most blocks")

		// Server metrics: aiperf's structure, and counters are deltas over the window.
		sm := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.ServerMetricsFile))
		exSM := readJSON(t, filepath.Join(exampleDir, aiperf.ServerMetricsFile))
		// The example's run had no warm-up; aiperf exports a warm-up phase's
		// metrics beside the profiling ones (TestConformsToAiperf012).
		assert.Equal(t, slices.Sorted(slices.Values(append(keys(exSM), "warmup_metrics"))), keys(sm))
		assert.Equal(t, keys(exSM["summary"]), keys(sm["summary"]))
		ep := "http://fake-engine:8000/metrics"
		assert.Equal(t, keys(exSM["summary"].(jsonObj)["endpoint_info"].(jsonObj)["http://localhost:8888/metrics"]), keys(sm["summary"].(jsonObj)["endpoint_info"].(jsonObj)[ep]))
		exByType := map[string]jsonObj{}
		for _, m := range exSM["metrics"].(jsonObj) {
			exByType[m.(jsonObj)["type"].(string)] = m.(jsonObj)
		}
		for name, m := range sm["metrics"].(jsonObj) {
			typ := m.(jsonObj)["type"].(string)
			exm := exByType[typ]
			require.NotNil(t, exm, "type %s of %s", typ, name)
			got, want := m.(jsonObj)["series"].([]any)[0].(jsonObj), exm["series"].([]any)[0].(jsonObj)
			assert.Equal(t, keys(want), keys(got), "%s series keys", name)
			assert.Equal(t, keys(want["stats"]), keys(got["stats"]), "%s stats keys", name)
		}
		gen := sm["metrics"].(jsonObj)["sglang:generation_tokens"].(jsonObj)
		assert.Equal(t, "tokens", gen["unit"])
		total := num64(gen["series"].([]any)[0].(jsonObj)["stats"].(jsonObj)["total"])
		assert.Equal(t, num64(sum["total_output_tokens"].(jsonObj)["avg"]), total, "generation counter delta over the profiling window = profiled output tokens")
	})
}

func TestRunHTTPErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, tokenGap: 10 * time.Millisecond, status: http.StatusInternalServerError, failIf: func(i int) bool { return i%5 == 4 }}
		o := fakeOptions(t, f)
		o.WarmupPerLane = 0
		res, err := Run(t.Context(), o, io.Discard)
		require.NoError(t, err)
		require.Positive(t, res.Profiling.Failed)
		ex := exampleRecords(t)
		recs := readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile))
		failed := 0
		for _, r := range recs {
			e, ok := r["error"].(jsonObj)
			if !ok {
				continue
			}
			failed++
			assert.Equal(t, keys(ex["http400"]), keys(r))
			assert.Equal(t, keys(ex["http400"]["error"]), keys(e))
			assert.Equal(t, 500.0, e["code"])
			assert.Equal(t, "Internal Server Error", e["type"])
			assert.Contains(t, e["message"], "fake failure")
			assert.Equal(t, keys(recMetrics(ex["http400"])), keys(recMetrics(r)), "error_isl only")
		}
		assert.Equal(t, res.Profiling.Failed, failed)
		sum := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile))
		exSum := readJSON(t, filepath.Join(exampleDir, aiperf.SummaryFile))
		for _, k := range []string{"error_request_count", "error_isl", "total_error_isl", "request_error_rate", "completed_request_count"} {
			assert.Contains(t, sum, k)
			assert.Equal(t, keys(exSum[k]), keys(sum[k]), k)
		}
		assert.Equal(t, float64(failed), num64(sum["error_request_count"].(jsonObj)["avg"]))
		es := sum["error_summary"].([]any)
		require.Len(t, es, 1)
		assert.Equal(t, float64(failed), es[0].(jsonObj)["count"])
		assert.Equal(t, keys(exSum["error_summary"].([]any)[0]), keys(es[0]))
	})
}

func TestRunFailedRequestThreshold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, tokenGap: time.Millisecond, status: http.StatusServiceUnavailable, failIf: func(i int) bool { return i >= 8 }}
		o := fakeOptions(t, f)
		o.WarmupPerLane = 1
		o.Concurrency = 2 // warm-up: requests 0-1 succeed; profiling: 2-7 succeed, then all fail
		o.FailThreshold = 0.10
		o.Scenario = ScenarioAgentX // the scenario stamp says why the run is not a valid submission
		begin := time.Now()
		res, err := Run(t.Context(), o, io.Discard)
		re, ok := errors.AsType[*RunError](err)
		require.True(t, ok, "want *RunError, got %v", err)
		assert.Equal(t, "failed_request_threshold", re.Reason)
		assert.True(t, res.Cancelled)
		assert.Less(t, time.Since(begin), o.BenchmarkDuration, "the threshold aborts the run early")
		sum := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile))
		assert.Equal(t, true, sum["was_cancelled"])
		assert.Contains(t, sum["metadata"].(jsonObj)["submission_invalid_reasons"], "run_cancelled")
	})
}

func TestRunWarmupFailureAborts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, status: http.StatusInternalServerError}
		o := fakeOptions(t, f)
		res, err := Run(t.Context(), o, io.Discard)
		re, ok := errors.AsType[*RunError](err)
		require.True(t, ok, "want *RunError, got %v", err)
		assert.Equal(t, "warmup_failed", re.Reason)
		assert.Equal(t, []string{aiperf.RecordsFile}, res.Files, "no summary without a successful request")
		assert.Zero(t, res.Profiling.OK+res.Profiling.Failed)
	})
}

// TestRunGracePeriodCancelsInFlight: requests still open when the grace
// period ends are cancelled and, as in aiperf 0.12.0 (its worker emits no
// record for a cancelled credit), leave no record: every profiling
// request outlasts the window, so no profiling request completed.
func TestRunGracePeriodCancelsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, tokenGap: 2 * time.Second} // every profiling request outlasts the window
		o := fakeOptions(t, f)
		o.WarmupPerLane = 1
		o.BenchmarkDuration = 10 * time.Second
		o.GracePeriod = 5 * time.Second
		o.ScrapeFlush = 0
		o.IdleGapCap = time.Millisecond
		begin := time.Now()
		res, err := Run(t.Context(), o, io.Discard)
		re, ok := errors.AsType[*RunError](err)
		require.True(t, ok, "want *RunError, got %v", err)
		assert.Equal(t, "none_completed", re.Reason)
		assert.Equal(t, 15*time.Second, time.Since(begin), "duration + grace, then cancel (fake clock)")
		assert.Equal(t, Counts{Cancelled: o.Concurrency}, res.Profiling)
		assert.False(t, res.Cancelled, "the grace period ending is not a cancelled run")
		for _, r := range readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile)) {
			assert.NotEqual(t, aiperf.PhaseProfiling, phaseOf(r), "a cancelled request leaves no record")
		}
	})
}

// TestRunGracePeriodCancelledAreNoErrors: a point whose slowest requests
// are still queued when the grace period ends (here every request after
// the first profiling round stalls) validates on the requests that
// completed, as with aiperf 0.12.0: the cancelled ones are in neither
// request_count nor error_request_count, so the error rate InferenceX
// checks is 0, and they do not trip the live failed-request threshold.
// Before, each was an error record (RequestCancellationError) and the
// point failed with a 50 % error rate.
func TestRunGracePeriodCancelledAreNoErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lanes = 4 // one warm-up request and one completed profiling request each, then stalls
		f := &fakeServer{t: t, tokenGap: time.Millisecond, stallIf: func(i int) bool { return i >= 2*lanes }}
		o := fakeOptions(t, f)
		o.Concurrency = lanes
		o.WarmupPerLane = 1
		o.BenchmarkDuration = 10 * time.Second
		o.GracePeriod = 5 * time.Second
		o.ScrapeFlush = 0
		o.IdleGapCap = time.Millisecond
		o.FailThreshold = 0.10
		res, err := Run(t.Context(), o, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, Counts{OK: o.Concurrency}, res.Warmup)
		assert.Equal(t, Counts{OK: o.Concurrency, Cancelled: o.Concurrency}, res.Profiling)
		recs := readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile))
		assert.Len(t, recs, 2*o.Concurrency, "warm-up and completed profiling requests only")
		for _, r := range recs {
			assert.Nil(t, r["error"])
			assert.Equal(t, false, md(r)["was_cancelled"])
		}
		sum := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile))
		assert.Equal(t, float64(o.Concurrency), num64(sum["request_count"].(jsonObj)["avg"]))
		assert.NotContains(t, sum, "error_request_count")
		assert.Empty(t, sum["error_summary"])
		assert.Equal(t, false, sum["was_cancelled"])
	})
}

func TestRunContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, tokenGap: 50 * time.Millisecond}
		o := fakeOptions(t, f)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		res, err := Run(ctx, o, io.Discard)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotNil(t, res)
		assert.True(t, res.Cancelled)
		sum := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile))
		assert.Equal(t, true, sum["was_cancelled"])
		// synctest.Test returns only once every goroutine Run started has exited.
	})
}

func TestRunUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	o := DefaultOptions()
	o.URL = "http://" + addr
	o.Model = "m"
	o.Streaming = true
	o.Concurrency = 2
	o.RequestCount = 6
	o.IdleGapCap = time.Millisecond // recorded think times would stretch the test
	o.ScrapeFlush = 0
	o.ArtifactDir = t.TempDir()
	res, err := Run(t.Context(), o, io.Discard)
	re, ok := errors.AsType[*RunError](err)
	require.True(t, ok, "want *RunError, got %v", err)
	assert.Equal(t, "all_failed", re.Reason)
	assert.Equal(t, "all 6 inference request(s) failed; no successful responses were collected", err.Error())
	assert.Equal(t, []string{aiperf.RecordsFile}, res.Files, "aiperf writes only the JSONL when every request failed")
	ex := exampleRecords(t)
	for _, r := range readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile)) {
		e := r["error"].(jsonObj)
		assert.Equal(t, keys(ex["refused"]["error"]), keys(e))
		assert.Equal(t, "ClientConnectorError", e["type"])
		assert.Equal(t, []any{"ClientConnectorError", "ConnectionRefusedError"}, e["cause_chain"])
		assert.Empty(t, recMetrics(r), "no response, no error_isl")
		want := keys(md(ex["refused"]))
		if md(r)["source_kind"] == "weka_subagent" { // no request_ack_ns: no response
			want = slices.DeleteFunc(keys(md(ex["subagent"])), func(k string) bool { return k == "request_ack_ns" })
		}
		assert.Equal(t, want, keys(md(r)))
	}
}

// TestRunServerMetricsNotWritten: the log said "no server metrics
// endpoint answered" of an engine whose /metrics answered with text that
// does not parse; it says so now, with the parser's error.
func TestRunServerMetricsNotWritten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		page   string
		status int
		want   string
	}{
		{name: "answers text that does not parse", page: "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{tp_rank=\"0\" 3\n",
			want: "loadgen: warning: http://fake-engine:8000/metrics answered, but with metrics that do not parse as Prometheus text (scrape http://fake-engine:8000/metrics: text format parsing error in line 2: "},
		{name: "answers no metrics", status: http.StatusNotFound,
			want: "loadgen: warning: no server metrics endpoint answered (http://fake-engine:8000/metrics: scrape http://fake-engine:8000/metrics: HTTP 404); server_metrics_export.json not written\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeServer{t: t, ttft: 50 * time.Millisecond, tokenGap: 20 * time.Millisecond, metricsPage: tc.page, metricsStatus: tc.status}
				o := fakeOptions(t, f)
				o.BenchmarkDuration = 20 * time.Second
				var log strings.Builder
				res, err := Run(t.Context(), o, &log)
				require.NoError(t, err)
				assert.NotContains(t, res.Files, aiperf.ServerMetricsFile)
				assert.Contains(t, log.String(), tc.want)
			})
		})
	}
}

func TestRunRequestBodies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, tokenGap: time.Millisecond}
		o := fakeOptions(t, f)
		o.Concurrency = 1
		o.WarmupPerLane = 0
		o.StartMinRatio, o.StartMaxRatio = 0, 0
		o.RequestCount = 3
		o.CacheBust = true
		_, err := Run(t.Context(), o, io.Discard)
		require.NoError(t, err)
		require.Len(t, f.bodies, 3)
		var prev []any
		for i, b := range f.bodies {
			assert.Equal(t, true, b["stream"])
			assert.Equal(t, true, b["ignore_eos"])
			assert.Equal(t, "test-model", b["model"])
			assert.Equal(t, jsonObj{"include_usage": true}, b["stream_options"])
			msgs := b["messages"].([]any)
			if i > 0 && len(msgs) > len(prev) {
				assert.Equal(t, prev, msgs[:len(prev)], "turn %d: the prompt extends the previous one (prefix cache)", i)
				assert.Equal(t, "assistant", msgs[len(prev)].(jsonObj)["role"], "the recorded response is replayed into the history")
			}
			assert.True(t, strings.HasPrefix(msgs[0].(jsonObj)["content"].(string), "[rid:"), "first_turn_prefix cache-bust marker")
			prev = msgs
		}
	})
}

func TestRunServerDiesMidStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, tokenGap: time.Millisecond, dropAfter: 3}
		o := fakeOptions(t, f)
		o.WarmupPerLane = 1 // one-token warm-ups complete
		o.RequestCount = 5
		_, err := Run(t.Context(), o, io.Discard)
		re, ok := errors.AsType[*RunError](err)
		require.True(t, ok, "want *RunError, got %v", err)
		assert.Equal(t, "all_failed", re.Reason)
		ex := exampleRecords(t)
		n := 0
		for _, r := range readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile)) {
			if phaseOf(r) != aiperf.PhaseProfiling {
				continue
			}
			n++
			e := r["error"].(jsonObj)
			assert.Equal(t, "ServerDisconnectedError", e["type"])
			assert.Equal(t, ex["disconnect"]["error"].(jsonObj)["cause_chain"], e["cause_chain"])
			assert.Equal(t, keys(recMetrics(ex["disconnect"])), keys(recMetrics(r)), "error_isl: the server had answered")
		}
		assert.Equal(t, 5, n)
	})
}

// TestRunWarmupGracePeriod: primers slower than the warm-up grace period
// (30 s against 10 s). The SemiAnalysis fork's --warmup-grace-period
// cancels them without a record and profiling starts; upstream aiperf
// 0.12.0 (--warmup-request-count) waits for every primer, as its agentic
// warm-up phase has no expected duration for the grace to follow.
func TestRunWarmupGracePeriod(t *testing.T) {
	tests := []struct {
		name     string
		requests int // WarmupRequests: --warmup-request-count (upstream 0.12.0)
		want     func(conc int) Counts
	}{
		{"fork cancels at the grace period", 0, func(conc int) Counts { return Counts{Cancelled: conc} }},
		{"aiperf 0.12.0 waits for every primer", 4, func(conc int) Counts { return Counts{OK: conc} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeServer{t: t, ttft: 30 * time.Second, tokenGap: time.Millisecond}
				o := fakeOptions(t, f)
				o.WarmupPerLane, o.WarmupRequests = 1, tc.requests
				o.WarmupGrace = 10 * time.Second
				o.BenchmarkDuration = 60 * time.Second
				o.GracePeriod = 60 * time.Second
				begin := time.Now()
				res, err := Run(t.Context(), o, io.Discard)
				require.NoError(t, err, "slow warm-ups do not abort the run")
				assert.Equal(t, tc.want(o.Concurrency), res.Warmup)
				warm := 0
				for _, r := range readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile)) {
					if phaseOf(r) == aiperf.PhaseWarmup {
						warm++
						assert.Equal(t, begin.Add(30*time.Second).UnixNano(), int64(num64(md(r)["request_end_ns"]))/1000*1000, "answered after the grace period")
					}
				}
				assert.Equal(t, res.Warmup.OK, warm, "a record for each primer answered, none for those cancelled")
			})
		})
	}
}

func TestRunMaxSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeServer{t: t, tokenGap: time.Millisecond, maxTokens: 4}
		o := fakeOptions(t, f)
		o.Concurrency = 2
		o.WarmupPerLane = 0
		o.StartMinRatio, o.StartMaxRatio = 0, 0 // first plays start at turn 1 (k=0 was history)
		o.BenchmarkDuration = 0
		o.MaxSessions = 3
		_, err := Run(t.Context(), o, io.Discard)
		require.NoError(t, err)
		roots := map[string]bool{}
		for _, r := range readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile)) {
			roots[md(r)["root_correlation_id"].(string)] = true
		}
		assert.Len(t, roots, 2+3, "the two initial trajectories plus three recycled plays")
	})
}

// TestIdleGuard: two lanes wait 100 s and 130 s while nothing is in
// flight; with a 10 s cap both waits are shifted by 90 s, keeping their
// 30 s spacing.
func TestIdleGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newIdleGuard(10*time.Second, 2)
		start := time.Now()
		woke := make(chan time.Duration, 2)
		for _, d := range []time.Duration{100 * time.Second, 130 * time.Second} {
			go func() { // exits after its wait
				assert.True(t, g.sleep(t.Context(), d))
				woke <- time.Since(start)
			}()
		}
		assert.Equal(t, 10*time.Second, <-woke)
		assert.Equal(t, 40*time.Second, <-woke)
		assert.Equal(t, 1, g.jumps)
	})
}

func TestIdleGuardBusyLaneBlocksShift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newIdleGuard(10*time.Second, 2) // the second lane stays busy
		start := time.Now()
		assert.True(t, g.sleep(t.Context(), 100*time.Second))
		assert.Equal(t, 100*time.Second, time.Since(start))
		assert.Zero(t, g.jumps)
	})
}

// TestRunParallelSubagents: two subagents spawned between the same parent
// turns run at the same time on one lane, and the parent's next turn
// waits for both (aiperf's per-session-tree concurrency).
func TestRunParallelSubagents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		tr := Trace{ID: "fan", BlockSize: 16, Requests: []TraceRequest{
			{T: 0, Type: "n", In: 100, Out: 4, HashIDs: []int64{1, 2, 3, 4, 5, 6, 7}},
			{T: 1, Type: "subagent", AgentID: "a1", Requests: []TraceRequest{{T: 0, Type: "n", In: 50, Out: 4}}},
			{T: 1, Type: "subagent", AgentID: "a2", Requests: []TraceRequest{{T: 0, Type: "n", In: 60, Out: 4}}},
			{T: 5, Type: "n", In: 200, Out: 4},
			{T: 9, Type: "n", In: 300, Out: 4},
		}}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "fan.jsonl"), encodeTraces(t, []Trace{tr}), 0o644))
		f := &fakeServer{t: t, tokenGap: 100 * time.Millisecond}
		o := fakeOptions(t, f)
		o.TraceFile = filepath.Join(dir, "fan.jsonl")
		o.Concurrency = 1
		o.WarmupPerLane = 0
		o.StartMinRatio, o.StartMaxRatio = 0, 0 // k=0: profiling starts at main turn 1, after the fan-out
		o.RequestCount = 4
		_, err := Run(t.Context(), o, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, int64(2), f.maxFlight.Load(), "both subagents in flight at once")
		recs := readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile))
		require.Len(t, recs, 4)
		var subEnd, parentStart int64
		for _, r := range recs {
			m := md(r)
			switch m["conversation_id"] {
			case "fan::sa:a1", "fan::sa:a2":
				subEnd = max(subEnd, int64(num64(m["request_end_ns"])))
				assert.NotEmpty(t, m["parent_correlation_id"])
			case "fan":
				if m["turn_index"] == 1.0 {
					parentStart = int64(num64(m["request_start_ns"]))
				}
			}
		}
		assert.LessOrEqual(t, subEnd, parentStart, "the parent's next turn waits for both subagents")
	})
}

// TestStartPointIsAiperfs: where lanes start on the small trace set.
// The seed-42 rows are what the real aiperf 0.12.0 primed on the c16
// reference (testdata/loadgen/aiperf-0.12.0/c16-warmup.jsonl); the
// others place t* around synth_0001's subagent (spawned at 61.2 s after
// main turn 3, its turns at 61.2, 64.6, 66.8 and 71.6 s; main turn 4 at
// 83.1 s).
func TestStartPointIsAiperfs(t *testing.T) {
	traces, err := LoadTraces(smallTraces)
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		seed     uint64
		min, max float64
		trace    int
		want     startPoint
	}{
		{"reference: subagent in flight at its first turn", 42, 0.25, 0.75, 10, startPoint{3, 4, []int{1}}},
		{"reference: main turn just before a subagent", 42, 0.25, 0.75, 14, startPoint{3, -1, nil}},
		{"reference: main turn after a subagent", 42, 0.25, 0.75, 13, startPoint{3, -1, nil}},
		{"before the subagent", 1, 0, 1, 1, startPoint{2, -1, nil}},
		{"subagent in flight at its second turn", 15, 0, 1, 1, startPoint{3, 4, []int{2}}},
		{"subagent done, main turn 4 not sent", 14, 0, 1, 1, startPoint{3, 4, []int{4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{o: DefaultOptions()}
			r.o.Seed, r.o.StartMinRatio, r.o.StartMaxRatio = tc.seed, tc.min, tc.max
			assert.Equal(t, tc.want, r.startPoint(traces[tc.trace].Conversation(0), tc.trace))
		})
	}
}

// TestRunPrimesSubagentMidChain: a subagent in flight at the lane's start
// is primed at its last turn before it (seed 15: synth_0001's subagent
// at its second turn) and goes on with its next ones in the same
// session; the main agent, primed at turn 3, goes on with turn 4 once
// the subagent is done.
func TestRunPrimesSubagentMidChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o, recs := runSeed(t, 15)
		var warm []jsonObj
		sub := "synth_0001_7b8829::sa:agent_004"
		var subTurns, mainTurns []any
		var subID any
		for _, r := range recs {
			m := md(r)
			if phaseOf(r) == aiperf.PhaseWarmup {
				warm = append(warm, r)
				if m["conversation_id"] == sub {
					subID = m["x_correlation_id"]
				}
				continue
			}
			switch {
			case m["conversation_id"] == sub && m["x_correlation_id"] == subID:
				subTurns = append(subTurns, m["turn_index"])
			case m["conversation_id"] == "synth_0001_7b8829" && len(mainTurns) == 0:
				mainTurns = append(mainTurns, m["turn_index"])
			}
		}
		assert.Contains(t, primedSet(warm), sub+"#1")
		assert.Contains(t, primedSet(warm), "synth_0001_7b8829#3")
		assert.Len(t, warm, o.Concurrency+1, "one per main stream and the subagent in flight")
		assert.Equal(t, []any{2.0, 3.0}, subTurns, "the primed subagent goes on with its next turns")
		assert.Equal(t, []any{4.0}, mainTurns, "then the main agent's next turn")
	})
}

// TestRunSkipsSubagentDoneBeforeStart: a subagent that finished before
// the lane's start is neither primed nor replayed, and (as in aiperf,
// which leaves it out of the snapshot) spawns no branch: seed 14 starts
// synth_0001 after its subagent ended, before main turn 4.
func TestRunSkipsSubagentDoneBeforeStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o, recs := runSeed(t, 14)
		subs := map[any]bool{}
		var warm []jsonObj
		for _, r := range recs {
			if md(r)["source_kind"] == "weka_subagent" {
				subs[md(r)["x_correlation_id"]] = true
			}
			if phaseOf(r) == aiperf.PhaseWarmup {
				warm = append(warm, r)
			}
		}
		assert.Contains(t, primedSet(warm), "synth_0001_7b8829#3")
		assert.Len(t, warm, o.Concurrency, "the main streams only")
		sum := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile))
		assert.Equal(t, float64(len(subs)), sum["branch_stats"].(jsonObj)["children_spawned"], "a branch per subagent replayed")
	})
}

// runSeed runs the fake engine with seed and one warm-up turn per
// stream, inside a synctest bubble, and returns its records.
func runSeed(t *testing.T, seed uint64) (Options, []jsonObj) {
	f := &fakeServer{t: t, ttft: 50 * time.Millisecond, tokenGap: 5 * time.Millisecond}
	o := fakeOptions(t, f)
	o.Seed = seed
	o.WarmupPerLane = 1
	_, err := Run(t.Context(), o, io.Discard)
	require.NoError(t, err)
	return o, readJSONL(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile))
}
