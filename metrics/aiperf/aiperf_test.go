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
