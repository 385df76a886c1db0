package aiperf

import (
	"encoding/json"
	"errors"
	"strings"
	"sweep/configs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorCategory(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"code":400,"type":"Bad Request","message":"x"}`, "Bad Request"},
		{`{"type":"","code":500}`, "500"},
		{`{"code":400.0}`, "400.0"},
		{`{"class":true}`, "True"},
		{`{"message":"Timeout: took too long\nmore"}`, "Timeout"},
		{`{"error":"ConnErr: refused"}`, "ConnErr"},
		{`"plain: text"`, "plain"},
		{`{"message":""}`, "unknown"},
		{`{"message":"` + strings.Repeat("x", 130) + `"}`, strings.Repeat("x", 120)},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			assert.Equal(t, tc.want, errorCategory(json.RawMessage(tc.raw)))
		})
	}
}

func TestReadRecordsReportsMissingFieldByName(t *testing.T) {
	in := `{"metadata":{"benchmark_phase":"profiling"},"metrics":{}}` + "\n\n" + `{"metrics":{}}` + "\n"
	_, err := ReadRecords(strings.NewReader(in), "profile_export.jsonl")
	fe, ok := errors.AsType[*configs.Error](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, 3, fe.Line)
	assert.Equal(t, "metadata", fe.Key)
	assert.Contains(t, err.Error(), "profile_export.jsonl:3: metadata: missing")

	_, err = ReadRecords(strings.NewReader("[1,2]\n"), "p.jsonl")
	assert.ErrorContains(t, err, "p.jsonl:1: record: not a JSON object")

	// Unknown fields are tolerated; bare metric values are accepted.
	recs, err := ReadRecords(strings.NewReader(`{"metadata":{"new_field":[1]},"metrics":{"request_latency":12.5,"x":{"value":[1]}},"extra":1}`), "p")
	require.NoError(t, err)
	v, ok := recs[0].Metrics.Get("request_latency").Value.Float()
	assert.True(t, ok)
	assert.Equal(t, 12.5, v)
	assert.False(t, recs[0].Warmup())
}

// TestBenchmarkDuration: the configured benchmark duration is read from
// input_config as aiperf 0.12 and the fork record it; a run stopped by
// request count, or a summary without input_config, has none.
func TestBenchmarkDuration(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       float64
		ok         bool
	}{
		{"aiperf 0.12 profiling phase", `{"input_config": {"phases": [{"kind": "warmup", "requests": 40}, {"kind": "profiling", "duration": 1200.0, "concurrency": 4}]}}`, 1200, true},
		{"fork loadgen", `{"input_config": {"loadgen": {"concurrency": 32, "benchmark_duration": 1800.0}}}`, 1800, true},
		{"request count", `{"input_config": {"phases": [{"kind": "profiling", "requests": 500}]}}`, 0, false},
		{"no input_config", `{"aiperf_version": "0.12.0"}`, 0, false},
		{"input_config of another shape", `{"input_config": {"phases": "profiling"}}`, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadSummary(strings.NewReader(tc.body), "profile_export_aiperf.json")
			require.NoError(t, err)
			got, ok := s.BenchmarkDuration()
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
	_, ok := (*Summary)(nil).BenchmarkDuration()
	assert.False(t, ok, "no summary")
}

// TestReadSummaryNotJSON: a summary that is not JSON is an error at its
// line and column. Before, a NaN (which aiperf 0.12.0 never writes: its
// exporter writes null) was "invalid character 'N' looking for
// beginning of value", with no position.
func TestReadSummaryNotJSON(t *testing.T) {
	const nan = "a non-finite number (NaN or Infinity), which aiperf 0.12.0 never writes (its exporter writes null for one): something else wrote or edited the file"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"NaN", "{\n  \"request_latency\": {\n    \"std\": NaN\n  }\n}\n", "s.json:3:12: " + nan},
		{"Infinity", "{\"a\": {\"max\": Infinity}}", "s.json:1:15: " + nan},
		{"-Infinity", "{\"a\": {\"min\": -Infinity}}", "s.json:1:15: " + nan},
		{"cut short", "{\"a\": {\"min\": 1", "s.json:1:15: not valid JSON: unexpected end of JSON input: want the JSON object aiperf writes"},
		{"garbage", "{\"a\": 1}}", "s.json:1:9: not valid JSON: invalid character '}' after top-level value: want the JSON object aiperf writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSummary(strings.NewReader(tc.body), "s.json")
			_, ok := errors.AsType[*configs.Error](err)
			require.True(t, ok, "got %T %v", err, err)
			assert.EqualError(t, err, tc.want)
		})
	}
}
