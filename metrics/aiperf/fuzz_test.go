package aiperf

import (
	"bytes"
	"encoding/json"
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

// FuzzMetricValueWritten holds MetricValue's fast path for the written
// form to the general decoding: same value and unit for any valid JSON it
// takes.
func FuzzMetricValueWritten(f *testing.F) {
	for _, s := range []string{`{"value":12,"unit":"tokens"}`, `{"value":null,"unit":"ms"}`, `{"value":1e999,"unit":"x"}`,
		`{"value":1,"unit":"a\"b"}`, `{"value":1,"unit":"x","unit":"y"}`, `{"value":1 ,"unit":"x"}`, `{"value":true,"unit":""}`,
		`{"value":[1.5,2,[3]],"unit":"ms"}`, `{"value":[1],"unit":"ms","value":[2],"unit":"s"}`, `{"value":[],"unit":"ms"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var fast MetricValue
		if !fast.written(bytes.TrimSpace(data)) {
			return
		}
		var obj struct {
			Value json.RawMessage `json:"value"`
			Unit  json.RawMessage `json:"unit"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			t.Fatalf("fast path took %q, which does not decode: %v", data, err)
		}
		var unit string
		if len(obj.Unit) > 0 && obj.Unit[0] == '"' {
			_ = json.Unmarshal(obj.Unit, &unit)
		}
		want := MetricValue{Value: ParseScalar(obj.Value), Unit: unit}
		if fast.Unit != want.Unit || fast.Value.kind != want.Value.kind || fast.Value.String() != want.Value.String() {
			t.Fatalf("%q: fast path %+v, decoding %+v", data, fast, want)
		}
	})
}
