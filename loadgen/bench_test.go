package loadgen

import (
	"io"
	"testing"
	"time"
)

// BenchmarkRunThroughput measures the generator itself: requests per
// second it sustains against a trivial in-process server (real loopback
// HTTP, 8 tokens per response, no delays), including prompt building,
// SSE parsing, records and artifacts.
func BenchmarkRunThroughput(b *testing.B) {
	f := &fakeServer{t: b, maxTokens: 8}
	srv := f.start(b)
	const perRun = 400
	var total time.Duration
	n := 0
	for b.Loop() {
		o := DefaultOptions()
		o.URL = srv.URL
		o.Model = "m"
		o.Streaming = true
		o.ServerTokens = true
		o.Concurrency = 16
		o.RequestCount = perRun
		o.IdleGapCap = time.Nanosecond
		o.NoServerMetrics = true
		o.ArtifactDir = b.TempDir()
		start := time.Now()
		if _, err := Run(b.Context(), o, io.Discard); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		n += perRun
	}
	b.ReportMetric(float64(n)/total.Seconds(), "req/s")
}
