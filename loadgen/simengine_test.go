package loadgen

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/simengine"
)

// TestRunAgainstSimulatedEngine replays the built-in traces against the
// simulated SGLang engine on a compressed clock (both sides at time
// scale 60): the artifacts carry simulated time, and the engine's
// counters agree with the client's records.
func TestRunAgainstSimulatedEngine(t *testing.T) {
	const scale = 60
	cfg := simengine.Config{
		Engine: simengine.SGLang, ModelPath: "Qwen/Qwen3.5-397B-A17B-FP8", TP: 8, EP: 8,
		EnableMetrics: true, TimeScale: scale, Seed: 7, LoadTime: -1, WarmupTime: -1, GPU: "mi325x",
		Spec: simengine.Spec{Algorithm: "EAGLE", NumSteps: 3, TopK: 1, NumDraftTokens: 4, AcceptLength: 2.5},
	}
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

	o := DefaultOptions()
	o.URL = "http://" + srv.Addr()
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
	res, err := Run(t.Context(), o, io.Discard)
	require.NoError(t, err)
	assert.Zero(t, res.Profiling.Failed)
	require.Positive(t, res.Profiling.OK)

	sum := readJSON(t, filepath.Join(o.ArtifactDir, SummaryFile))
	dur := num64(sum["benchmark_duration"].(jsonObj)["avg"])
	assert.InDelta(t, 180, dur, 60, "benchmark_duration is in simulated seconds")
	sm := readJSON(t, filepath.Join(o.ArtifactDir, ServerMetricsFile))
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
