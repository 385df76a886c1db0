package aiperf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The one-pass decode must read every shipped export exactly as the
// member-by-member reader does.
func TestServerMetricsFastPathAgrees(t *testing.T) {
	for _, f := range shippedExports(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		fast, ok := decodeServerMetrics(data, f)
		require.True(t, ok, "%s: the fast path refused a well-formed export", f)
		slow, err := readServerMetricsTolerant(data, f)
		require.NoError(t, err)
		assert.Equal(t, slow, fast, f)
	}
}

// shippedExports are the server_metrics_export.json files in testdata.
func shippedExports(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../testdata/*/*/aiperf_artifacts/server_metrics_export.json")
	require.NoError(t, err)
	more, _ := filepath.Glob("../../testdata/loadgen/*/server_metrics_export.json")
	files = append(files, more...)
	require.NotEmpty(t, files)
	return files
}

// Shapes the tolerant reader treats specially make the fast path step
// aside, and the result is the tolerant reader's.
func TestServerMetricsFastPathStepsAside(t *testing.T) {
	cases := map[string]string{
		"key case":      `{"Metrics": {"a": {"type": "gauge", "series": [{"stats": {"avg": 1}}]}}}`,
		"null series":   `{"metrics": {"a": {"type": "gauge", "series": [null, {"stats": {"avg": 1}}]}}}`,
		"odd labels":    `{"metrics": {"a": {"type": "gauge", "series": [{"labels": [1], "stats": {"avg": 1}}]}}}`,
		"trailing data": `{"metrics": {}} {}`,
		"no metrics":    `{"schema_version": "1.1"}`,
		"metrics list":  `{"metrics": []}`,
		"series string": `{"metrics": {"a": {"series": ["x", {"stats": {"avg": 2}}]}}}`,
		"metrics null":  `{"metrics": null}`,
		"family list":   `{"metrics": {"a": []}}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, ok := decodeServerMetrics([]byte(in), "f")
			assert.False(t, ok)
		})
	}
	got, err := ReadServerMetrics(strings.NewReader(cases["null series"]), "f")
	require.NoError(t, err)
	require.Len(t, got.Metrics["a"].Series, 1)
	v, _ := got.Metrics["a"].Series[0].Stat("avg")
	assert.Equal(t, 1.0, v)
}

// Families are decoded one at a time; what a map decode does with a
// repeated key (the last wins) or a repeated "metrics" object (the last
// replaces the first) the one-pass path does too.
func TestServerMetricsFastPathRepeatedKeys(t *testing.T) {
	for name, in := range map[string]string{
		"family":      `{"metrics": {"a": {"type": "gauge", "series": [{"stats": {"avg": 1}}]}, "a": {"type": "counter", "series": [{"stats": {"avg": 2}}]}}}`,
		"metrics":     `{"metrics": {"a": {"type": "gauge"}}, "metrics": {"b": {"type": "counter", "series": [{"stats": {"avg": 3}}]}}}`,
		"null family": `{"metrics": {"a": null, "b": {"type": "gauge"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			fast, ok := decodeServerMetrics([]byte(in), "f")
			require.True(t, ok)
			slow, err := readServerMetricsTolerant([]byte(in), "f")
			require.NoError(t, err)
			assert.Equal(t, slow, fast)
		})
	}
}
