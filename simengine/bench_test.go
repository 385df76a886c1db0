package simengine

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sweep/configs"
	"testing"
	"time"
)

// BenchmarkServerRequests measures the requests per second one simulated
// engine sustains over loopback HTTP with streaming (SSE, include_usage)
// at a time scale so high that simulated time is never the limit: the
// simulator's own CPU cost per request. Run with -cpu 1 for one core.
func BenchmarkServerRequests(b *testing.B) {
	for _, tc := range []struct {
		name     string
		tokens   int
		interval int
	}{{"stream-256tok", 256, 1}, {"stream-256tok-interval50", 256, 50}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := testConfig(configs.SGLang)
			cfg.TimeScale = 1e7
			cfg.StreamInterval = tc.interval
			_, base := startServer(b, cfg)
			body, _ := json.Marshal(chatBody{Messages: userMsg("benchmark the simulator"), Stream: true,
				StreamOptions: map[string]any{"include_usage": true}, MaxTokens: intp(tc.tokens), IgnoreEOS: true})
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
			b.SetParallelism(16) // 16 x GOMAXPROCS concurrent clients
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
			b.ReportMetric(float64(b.N*tc.tokens)/time.Since(start).Seconds(), "tok/s")
		})
	}
}

// BenchmarkRankStep measures scheduler steps per second at a batch of 64
// agentic sessions in virtual time (no HTTP, no wall clock).
func BenchmarkRankStep(b *testing.B) {
	cfg, err := qwenConfig(configs.SGLang, 8, 1).Normalize()
	if err != nil {
		b.Fatal(err)
	}
	r := newRank(0, &cfg, newCapacity(cfg))
	var id uint64
	blocks := make([]uint64, 300)
	for i := range blocks {
		blocks[i] = uint64(i + 1)
	}
	now := 0.0
	for b.Loop() {
		for len(r.running)+len(r.waiting) < 64 {
			id++
			r.enqueue(&simRequest{id: id, prompt: 20000, blocks: blocks, target: 500, reason: "length", logged: true}, now)
		}
		dur, _ := r.step(now)
		now += dur
	}
}
