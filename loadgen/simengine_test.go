package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/metrics/aiperf"
	"sweep/simengine"

	"sweep/internal/simproto"
	"sweep/internal/testkit/cpuhog"
)

// startSimEngine runs a simulated SGLang engine (Qwen3.5 TEP8 on MI325X)
// until the test ends and returns its address.
func startSimEngine(t testing.TB, cfg simengine.Config) string {
	t.Helper()
	srv, err := simengine.New(cfg, simengine.Options{Listen: func(ctx context.Context, _ string) (net.Listener, error) {
		var lc net.ListenConfig
		return lc.Listen(ctx, "tcp", "127.0.0.1:0")
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }() // exits when ctx is cancelled (cleanup)
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("simulated engine stopped before ready: %v", err)
	}
	return srv.Addr()
}

func qwenSimConfig() simengine.Config {
	return simengine.Config{
		Engine: configs.SGLang, ModelPath: "Qwen/Qwen3.5-397B-A17B-FP8", TP: 8, EP: 8,
		EnableMetrics: true, Seed: 7, LoadTime: -1, WarmupTime: -1, GPU: "mi325x",
		Spec: simengine.Spec{Algorithm: "EAGLE", NumSteps: 3, TopK: 1, NumDraftTokens: 4, AcceptLength: 2.5},
	}
}

// TestRunAgainstSimulatedEngine replays the small synthetic traces against the
// simulated SGLang engine on a compressed clock (both sides at time
// scale 60): the artifacts carry simulated time, and the engine's
// counters agree with the client's records.
func TestRunAgainstSimulatedEngine(t *testing.T) {
	const scale = 60
	cfg := qwenSimConfig()
	cfg.TimeScale = scale
	addr := startSimEngine(t, cfg)

	o := DefaultOptions()
	o.URL = "http://" + addr
	o.Model = "Qwen/Qwen3.5-397B-A17B-FP8"
	o.Streaming = true
	o.ServerTokens = true
	o.ExtraInputs = map[string]any{"ignore_eos": true}
	o.Concurrency = 8
	o.WarmupPerLane = 1
	o.BenchmarkDuration = 180 * time.Second
	o.Seed = 42
	o.SliceDuration = 10 * time.Second
	o.ArtifactDir = t.TempDir()
	o.TimeScale = scale
	// The small trace set: on the wall clock the prompts go as text, and
	// 80k-word prompts starve a busy machine (requests time out at the end).
	o.TraceFile = smallTraces
	res, err := Run(t.Context(), o, io.Discard)
	require.NoError(t, err)
	assert.Zero(t, res.Profiling.Failed)
	require.Positive(t, res.Profiling.OK)

	sum := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile))
	dur := num64(sum["benchmark_duration"].(jsonObj)["avg"])
	assert.InDelta(t, 180, dur, 60, "benchmark_duration is in simulated seconds")
	sm := readJSON(t, filepath.Join(o.ArtifactDir, aiperf.ServerMetricsFile))
	mets := sm["metrics"].(jsonObj)
	gen, ok := mets["sglang:generation_tokens"].(jsonObj)
	require.True(t, ok, "sglang:generation_tokens exported (have %v)", keys(mets))
	var engineTokens float64
	for _, s := range gen["series"].([]any) {
		engineTokens += num64(s.(jsonObj)["stats"].(jsonObj)["total"])
	}
	clientTokens := num64(sum["total_output_tokens"].(jsonObj)["avg"])
	assert.InEpsilon(t, clientTokens, engineTokens, 0.02, "engine counter delta over the window vs the client's profiled tokens")
	stat := func(tag, k string) float64 { return num64(sum[tag].(jsonObj)[k]) }
	t.Logf("%d warm-up, %d profiling requests; %.0f s simulated; TTFT p50 %.1f ms, ITL p50 %.2f ms, %.0f output tok/s, ISL p50 %.0f, prefix hit %.1f%%",
		res.Warmup.OK, res.Profiling.OK, dur, stat("time_to_first_token", "p50"), stat("inter_token_latency", "p50"),
		stat("output_token_throughput", "avg"), stat("input_sequence_length", "p50"), stat("theoretical_prefix_cache_hit", "avg"))
}

// virtualOptions is a 5-minute InferenceX-shaped point at concurrency 8
// on the virtual clock.
func virtualOptions(t *testing.T, addr string) Options {
	o := DefaultOptions()
	o.URL = "http://" + addr
	o.Model = "Qwen/Qwen3.5-397B-A17B-FP8"
	o.Streaming, o.ServerTokens, o.CacheBust = true, true, true
	o.ExtraInputs = map[string]any{"ignore_eos": true}
	o.Concurrency = 8
	o.WarmupPerLane = 1
	o.BenchmarkDuration = 300 * time.Second
	o.SystemIdleCap = 10 * time.Second
	o.Seed = 42
	o.ArtifactDir = t.TempDir()
	o.VirtualClock = true
	return o
}

// TestVirtualClockIsDeterministic runs the same point on a fresh engine
// three times: idle, under a CPU hog, and beside another point on its own
// engine. Every number of the summary is the same: simulated time depends
// on events, not on how busy the machine is.
func TestVirtualClockIsDeterministic(t *testing.T) {
	run := func(t *testing.T) jsonObj {
		cfg := qwenSimConfig()
		cfg.Virtual = true
		o := virtualOptions(t, startSimEngine(t, cfg))
		res, err := Run(t.Context(), o, io.Discard)
		require.NoError(t, err)
		require.Positive(t, res.Profiling.OK)
		return readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile))
	}
	idle := run(t)
	var loaded, beside jsonObj
	t.Run("under a CPU hog", func(t *testing.T) {
		cpuhog.Hog(t)
		loaded = run(t)
	})
	t.Run("two points at once", func(t *testing.T) {
		var other jsonObj
		var wg sync.WaitGroup
		wg.Go(func() { other = run(t) })
		beside = run(t)
		wg.Wait()
		assert.Equal(t, numbers(idle), numbers(other))
	})
	want := numbers(idle)
	require.NotEmpty(t, want)
	assert.Equal(t, want, numbers(loaded), "under a CPU hog")
	assert.Equal(t, want, numbers(beside), "beside another point")
	stat := func(tag, k string) float64 { return num64(idle[tag].(jsonObj)[k]) }
	assert.InDelta(t, 300, stat("benchmark_duration", "avg"), 40, "simulated seconds")
	t.Logf("%.0f requests, TTFT p50 %.1f ms, ITL p50 %.2f ms, %.0f output tok/s, ISL p50 %.0f",
		stat("request_count", "avg"), stat("time_to_first_token", "p50"), stat("inter_token_latency", "p50"),
		stat("output_token_throughput", "avg"), stat("input_sequence_length", "p50"))
}

// numbers flattens the summary's metric statistics (the numbers a result
// is made from); run identifiers and wall timestamps are left out.
func numbers(sum jsonObj) map[string]float64 {
	out := map[string]float64{}
	for tag, v := range sum {
		m, ok := v.(jsonObj)
		if !ok {
			continue
		}
		for k, x := range m {
			if f, ok := x.(float64); ok {
				out[tag+"."+k] = f
			}
		}
	}
	return out
}

// TestVirtualClockProtocolNames: the load generator spells the virtual
// clock's headers and SSE time comment itself (it does not import the
// simulator); they must be the simulated engine's.
func TestVirtualClockProtocolNames(t *testing.T) {
	assert.Equal(t, simproto.HeaderParticipant, simproto.HeaderParticipant)
	assert.Equal(t, simproto.HeaderTime, simproto.HeaderTime)
	assert.Equal(t, simproto.HeaderDeadline, simproto.HeaderDeadline)
	assert.Equal(t, simproto.SSEClockPrefix, simproto.SSEClockPrefix)
	assert.Equal(t, simproto.HeaderThen, simproto.HeaderThen)
	assert.Equal(t, simproto.HeaderWoke, simproto.HeaderWoke)
	assert.Equal(t, simproto.HeaderPrompt, simproto.HeaderPrompt)
}

// TestVirtualLookaheadChangesNothing runs the same point with and without
// the lookahead (requests declaring the sleep that follows them, turns
// sent ahead of their wake-up): every number of the summary and every
// record's simulated times are the same. At concurrency 1 the idle-gap
// cap often wakes the lane before a turn sent ahead was due, which is
// then sent again at the earlier time.
func TestVirtualLookaheadChangesNothing(t *testing.T) {
	run := func(t *testing.T, ahead bool, conc int) (jsonObj, []string, string) {
		defer func(v bool) { virtualLookahead = v }(virtualLookahead)
		virtualLookahead = ahead
		cfg := qwenSimConfig()
		cfg.Virtual = true
		o := virtualOptions(t, startSimEngine(t, cfg))
		o.Concurrency = conc
		var log strings.Builder
		_, err := Run(t.Context(), o, &log)
		require.NoError(t, err)
		return readJSON(t, filepath.Join(o.ArtifactDir, aiperf.SummaryFile)), recordTimes(t, filepath.Join(o.ArtifactDir, aiperf.RecordsFile)), log.String()
	}
	for _, tc := range []struct {
		conc  int
		again string
	}{{1, `[1-9]\d* sent again`}, {8, `\d+ sent again`}} {
		t.Run(fmt.Sprintf("conc %d", tc.conc), func(t *testing.T) {
			sumOff, recOff, logOff := run(t, false, tc.conc)
			sumOn, recOn, logOn := run(t, true, tc.conc)
			require.NotEmpty(t, numbers(sumOff))
			// The bytes sent are the simulated prompt's wire encoding, which
			// the lookahead changes by design (a turn sent ahead sends the
			// ids the engine keeps again): not a number of the benchmark.
			delete(sumOff, "http_req_data_sent")
			delete(sumOn, "http_req_data_sent")
			assert.Equal(t, numbers(sumOff), numbers(sumOn))
			assert.Equal(t, recOff, recOn)
			assert.NotContains(t, logOff, "sent ahead")
			assert.Regexp(t, `[1-9]\d* turns sent ahead of their wake-up, `+tc.again, logOn)
		})
	}
}

// recordTimes lists each record's request id, phase and simulated times
// (from the first credit), in file order.
func recordTimes(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	var t0 int64
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Metadata struct {
				ID     string `json:"x_request_id"`
				Phase  string `json:"benchmark_phase"`
				Credit int64  `json:"credit_issued_ns"`
				Ack    int64  `json:"request_ack_ns"`
				End    int64  `json:"request_end_ns"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		m := rec.Metadata
		if t0 == 0 {
			t0 = m.Credit
		}
		out = append(out, fmt.Sprintf("%s %s %d %d %d", m.ID, m.Phase, m.Credit-t0, m.Ack-t0, m.End-t0))
	}
	return out
}

// cancelWriter cancels a run a moment after its first profiling line.
type cancelWriter struct {
	once   sync.Once
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "loadgen: profiling:") {
		w.once.Do(func() { time.AfterFunc(300*time.Millisecond, w.cancel) })
	}
	return len(p), nil
}

// TestVirtualClockCancelledRun cancels a point while its lanes have
// turns sent ahead and declared sleeps in the engine: the run returns
// the cancellation, and the same engine then runs a whole point (nothing
// the cancelled run left holds its clock).
func TestVirtualClockCancelledRun(t *testing.T) {
	cfg := qwenSimConfig()
	cfg.Virtual = true
	addr := startSimEngine(t, cfg)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o := virtualOptions(t, addr)
	o.BenchmarkDuration = 3600 * time.Second
	res, err := Run(ctx, o, &cancelWriter{cancel: cancel})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.True(t, res.Cancelled)

	o = virtualOptions(t, addr)
	res, err = Run(t.Context(), o, io.Discard)
	require.NoError(t, err)
	assert.Positive(t, res.Profiling.OK)
}

// TestVirtualClockEngineLost: an engine that crashes mid-load stops
// answering the clock, which lanes read as the end of their time: the
// run ended like a full one and exited 0 with a partial profile.
func TestVirtualClockEngineLost(t *testing.T) {
	cfg := qwenSimConfig()
	cfg.Virtual = true
	cfg.Faults = []simengine.Fault{{Kind: simengine.FaultCrash, After: 100}}
	srv, err := simengine.New(cfg, simengine.Options{Listen: func(ctx context.Context, _ string) (net.Listener, error) {
		var lc net.ListenConfig
		return lc.Listen(ctx, "tcp", "127.0.0.1:0")
	}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Run(t.Context()) }() // exits with the crash
	<-srv.Ready()
	o := virtualOptions(t, srv.Addr())
	o.BenchmarkDuration = 3600 * time.Second
	res, err := Run(t.Context(), o, io.Discard)
	var crash *simengine.CrashError
	require.ErrorAs(t, <-done, &crash)
	re, ok := errors.AsType[*RunError](err)
	require.True(t, ok, "got %T %v", err, err)
	assert.Equal(t, "virtual_clock", re.Reason)
	assert.ErrorContains(t, err, "the load was cut short: the engine stopped answering")
	assert.ErrorContains(t, err, "into the 1h0m0s profiling window")
	require.NotNil(t, res)
	assert.Positive(t, res.Profiling.OK, "the partial profile is written")
}
