package loadgen

import (
	"io"
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
