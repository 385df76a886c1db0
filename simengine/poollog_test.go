package simengine

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/metrics/result"
)

// lockedBuffer is a log the test reads while the server may write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestEngineLogsItsKVPool: a simulated vLLM point's result had no KV pool
// (kv_cache_pool_tokens null, so sim calibrate could not hand one back):
// the engine logged "KV pool: N tokens per rank" in its own words, while
// the result reader takes vLLM's pool from vLLM's "GPU KV cache size: N
// tokens". Each engine now logs its pool as the real one does, and the
// result's readers find every rank's pool in it: for SGLang the total its
// sglang:max_total_num_tokens series report.
func TestEngineLogsItsKVPool(t *testing.T) {
	for _, tc := range []struct {
		name        string
		engine      configs.Engine
		tp, dp, ep  int
		dpAttention bool
		parse       func(string) (int64, bool)
	}{
		{"vllm tp8", configs.VLLM, 8, 1, 1, false, result.VLLMKVPoolFromLog},
		{"vllm dp4", configs.VLLM, 1, 4, 1, false, result.VLLMKVPoolFromLog},
		{"sglang tp8", configs.SGLang, 8, 1, 1, false, result.SGLangKVPoolFromLog},
		{"sglang dp-attention 8", configs.SGLang, 8, 8, 8, true, result.SGLangKVPoolFromLog},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.engine)
			cfg.TP, cfg.DP, cfg.EP, cfg.DPAttention = tc.tp, tc.dp, tc.ep, tc.dpAttention
			var log lockedBuffer
			srv, err := New(cfg, Options{Log: &log, Listen: func(ctx context.Context, _ string) (net.Listener, error) {
				var lc net.ListenConfig
				return lc.Listen(ctx, "tcp", "127.0.0.1:0")
			}})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()
			select {
			case <-srv.Ready():
			case err := <-done:
				t.Fatalf("Run returned before ready: %v", err)
			}
			var metricTotal float64
			if tc.engine == configs.SGLang {
				metricTotal = sum(scrape(t, "http://"+srv.Addr())["sglang:max_total_num_tokens"])
			}
			cancel()
			require.NoError(t, <-done)

			want := int64(srv.capa.poolTokens * cfg.Ranks())
			got, ok := tc.parse(log.String())
			assert.True(t, ok, "no KV pool line the result reader knows in the log:\n%s", log.String())
			assert.Equal(t, want, got, "the pool the result reads from the log:\n%s", log.String())
			if tc.engine == configs.SGLang {
				assert.InDelta(t, metricTotal, float64(got), 0, "the log's pool and sglang:max_total_num_tokens")
			}
		})
	}
}
