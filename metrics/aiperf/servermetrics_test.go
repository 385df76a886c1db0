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
	files, err := filepath.Glob("../../testdata/*/*/aiperf_artifacts/server_metrics_export.json")
	require.NoError(t, err)
	more, _ := filepath.Glob("../../testdata/loadgen/*/server_metrics_export.json")
	files = append(files, more...)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		fast, ok := decodeServerMetrics(data, f)
		require.True(t, ok, "%s: the fast path refused a well-formed export", f)
		slow, err := readServerMetricsTolerant(data, f)
		require.NoError(t, err)
		assert.Equal(t, slow, fast, f)
	}
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
