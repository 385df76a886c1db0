package aiperf

import (
	"bytes"
	"testing"
)

// FuzzReadRecords feeds arbitrary JSONL to the record reader: records or an
// error naming the line, never a panic; every record answers its accessors.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":12.5,"unit":"ms"}}}` + "\n"))
	f.Add([]byte(`{"metadata":{},"metrics":{"x":{"value":1e999}},"error":{"code":500,"message":"a: b"}}` + "\n"))
	f.Add([]byte("{\"metadata\":{\"benchmark_phase\":\"warmup\"},\"metrics\":{}}\n\n[1]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadRecords(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		for i := range recs {
			r := &recs[i]
			_ = r.Warmup()
			_ = r.Failed()
			_ = r.ErrorCategory()
			if m := r.Metrics.Get("request_latency"); m != nil {
				_, _ = m.Value.Float()
			}
		}
	})
}
