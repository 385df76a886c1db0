package metrics

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScrapeTableColumns(t *testing.T) {
	var b bytes.Buffer
	table := NewScrapeTable(&b, []string{"http://a:8000/metrics", "http://engine-b:8001/metrics"})
	running, kv := 16.0, 0.718
	table.Row(Sample{Endpoint: "http://a:8000/metrics", Gauges: Gauges{Running: &running, KVUsage: &kv}})
	table.Row(Sample{Endpoint: "http://engine-b:8001/metrics", Err: errors.New("connection refused")})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	assert.Regexp(t, `^TIME\s+ENDPOINT\s+RUNNING\s+QUEUED\s+KV %\s+HIT %\s+GEN TOK/S$`, lines[0])
	assert.Regexp(t, `^\d\d:\d\d:\d\d a:8000\s+16\s+-\s+71\.8\s+-\s+-$`, lines[1], "with several endpoints each row names its host")
	assert.Regexp(t, `^\d\d:\d\d:\d\d engine-b:8001 scrape failed: connection refused$`, lines[2])
}

// TestScrapeTableMarksNaN: a figure some rank reported NaN for showed the
// other ranks' value as if whole (KV % 20.0 of rank 0 while rank 1's was
// NaN); it is marked now, the mark explained once, and a figure no rank
// gave a number for is NaN, not "-" (not exported).
func TestScrapeTableMarksNaN(t *testing.T) {
	var b bytes.Buffer
	table := NewScrapeTable(&b, []string{"http://a:8000/metrics"})
	running, kv := 8.0, 0.2
	g := Gauges{Running: &running, KVUsage: &kv, NaN: []string{"kv_usage", "cache_hit_rate"}}
	table.Row(Sample{Endpoint: "http://a:8000/metrics", Gauges: g})
	table.Row(Sample{Endpoint: "http://a:8000/metrics", Gauges: g})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4, b.String())
	assert.Regexp(t, `^\d\d:\d\d:\d\d\s+8\s+-\s+20\.0\*\s+NaN\s+-$`, lines[1])
	assert.Equal(t, "         * a rank reported NaN: the figure is of the other ranks (NaN: every rank did)", lines[2])
	assert.Regexp(t, `^\d\d:\d\d:\d\d\s+8\s+-\s+20\.0\*\s+NaN\s+-$`, lines[3], "explained once")
}
