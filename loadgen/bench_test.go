package loadgen

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sweep/metrics/aiperf"
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

// benchSlices is an hour of 1 s timeslices: aiperf's own 21 slices of
// its c4 records, repeated.
func benchSlices(b *testing.B) []recordSlice {
	real := recordSlices(referenceRecords(b, filepath.Join(realAiperf, "c4", aiperf.RecordsFile)), time.Second.Nanoseconds(), nil)
	out := make([]recordSlice, 3600)
	for i := range out {
		s := real[i%len(real)]
		s.start, s.end = int64(i)*1e9, int64(i+1)*1e9
		out[i] = s
	}
	return out
}

// BenchmarkTimeslicesCSV measures the long timeslice table of an hour's
// point (MB/s of CSV written).
func BenchmarkTimeslicesCSV(b *testing.B) {
	ts := benchSlices(b)
	var n int64
	for b.Loop() {
		c := &byteCounter{}
		if err := writeTimeslicesCSV(c, ts); err != nil {
			b.Fatal(err)
		}
		n = c.n
	}
	b.SetBytes(n)
}

// BenchmarkTimeslicesJSON measures the timeslice JSON of an hour's point.
func BenchmarkTimeslicesJSON(b *testing.B) {
	ts := benchSlices(b)
	list := make([]object, 0, len(ts))
	for _, s := range ts {
		list = append(list, append(object{{"start_ns", s.start}, {"end_ns", s.end}}, s.blocks...))
	}
	var n int64
	for b.Loop() {
		c := &byteCounter{}
		if err := writeIndent(c, object{{"timeslices", list}}); err != nil {
			b.Fatal(err)
		}
		n = c.n
	}
	b.SetBytes(n)
}

type byteCounter struct{ n int64 }

func (c *byteCounter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// BenchmarkEncodeRecords measures profile_export.jsonl of a c64 hour
// (12,500 records: aiperf's own c4 records, repeated).
func BenchmarkEncodeRecords(b *testing.B) {
	real := referenceRecords(b, filepath.Join(realAiperf, "c4", aiperf.RecordsFile))
	recs := make([]*record, 12500)
	for i := range recs {
		recs[i] = real[i%len(real)]
	}
	var n int64
	for b.Loop() {
		parts, err := encodeRecords(recs)
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for _, p := range parts {
			n += int64(len(p))
		}
	}
	b.SetBytes(n)
}

// BenchmarkSimulatedPoint is the README's main job's point path on one
// core pair: a 20-minute concurrency-32 point replayed on the virtual
// clock against the in-process simulated engine (Qwen3.5 TP8 EP8 with
// MTP), with InferenceX's 1 s timeslices and the server-metrics export,
// artifacts written to disk. One iteration is one point (a fresh engine
// each, as each point flushes the cache); it reports the point's
// artifact bytes per second of the whole iteration.
func BenchmarkSimulatedPoint(b *testing.B) {
	var bytes int64
	for b.Loop() {
		b.StopTimer()
		cfg := qwenSimConfig()
		cfg.Virtual = true
		addr := startSimEngine(b, cfg)
		o := DefaultOptions()
		o.URL = "http://" + addr
		o.Model = "Qwen/Qwen3.5-397B-A17B-FP8"
		o.Streaming, o.ServerTokens = true, true
		o.Concurrency = 32
		o.WarmupPerLane = 1
		o.BenchmarkDuration = 1200 * time.Second
		o.Seed = 42
		o.SliceDuration = time.Second
		o.Scenario = "inferencex-agentx-mvp"
		o.ArtifactDir = b.TempDir()
		o.VirtualClock = true
		b.StartTimer()
		res, err := Run(b.Context(), o, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		bytes = 0
		for _, f := range res.Files {
			st, err := os.Stat(filepath.Join(o.ArtifactDir, f))
			if err != nil {
				b.Fatal(err)
			}
			bytes += st.Size()
		}
		b.StartTimer()
	}
	b.SetBytes(bytes)
}
