package loadgen

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMetricsPage(t *testing.T) {
	fams, err := parseMetricsPage(strings.NewReader(promText), "page")
	require.NoError(t, err)
	require.Contains(t, fams, "vllm:prompt_tokens", "counters lose _total, as prometheus_client names them")
	c := fams["vllm:prompt_tokens"]
	assert.Equal(t, "counter", c.Type)
	assert.Equal(t, "Number of prefill tokens processed.", c.Help)
	require.Len(t, c.Samples, 1)
	assert.Equal(t, 120.0, c.Samples[0].Value)
	assert.Equal(t, map[string]string{"engine": "0", "model_name": "m"}, c.Samples[0].Labels)
	h := fams["vllm:time_to_first_token_seconds"]
	assert.Equal(t, "histogram", h.Type)
	assert.Equal(t, "Histogram of time to first token in seconds.", h.Help)
	require.Len(t, h.Samples, 1)
	assert.Equal(t, map[string]string{"engine": "0", "model_name": "m"}, h.Samples[0].Labels, "no le")
	assert.Equal(t, map[string]float64{"0.1": 2, "1.0": 3, "+Inf": 4}, h.Samples[0].Buckets)
	assert.Equal(t, 3.5, h.Samples[0].Sum)
	assert.Equal(t, 4.0, h.Samples[0].Count)
	g := fams["vllm:kv_cache_usage_perc"]
	assert.Equal(t, "gauge", g.Type)
	assert.Equal(t, "KV-cache usage. 1 means 100 percent usage.", g.Help)
	u := fams["sglang:cache_hit_rate"]
	assert.Equal(t, "unknown", u.Type)
	assert.Equal(t, `a "quoted" value`, u.Samples[0].Labels["note"])
	assert.Len(t, fams, 4, "no family for _created samples")
}

// TestParseMetricsPageShapes covers what the export depends on beyond the
// common page: le text as prometheus_client writes the bound, series in
// order of first appearance, non-finite values, summaries, and which
// _created samples are dropped.
func TestParseMetricsPageShapes(t *testing.T) {
	const page = `# HELP h_seconds A histogram with Python-written bounds.
# TYPE h_seconds histogram
h_seconds_bucket{le="0.005",rank="1"} 0.0
h_seconds_bucket{le="2.5",rank="1"} 1.0
h_seconds_bucket{le="655360.0",rank="1"} 2.0
h_seconds_bucket{le="2.62144e+06",rank="1"} 3.0
h_seconds_bucket{le="+Inf",rank="1"} 3.0
h_seconds_count{rank="1"} 3.0
h_seconds_sum{rank="1"} 7.5
h_seconds_bucket{le="0.005",rank="0"} 1.0
h_seconds_bucket{le="2.5",rank="0"} 1.0
h_seconds_bucket{le="655360.0",rank="0"} 1.0
h_seconds_bucket{le="2.62144e+06",rank="0"} 1.0
h_seconds_bucket{le="+Inf",rank="0"} 1.0
h_seconds_count{rank="0"} 1.0
h_seconds_sum{rank="0"} 0.001
h_seconds_created{rank="0"} 1.7e+09
# TYPE g gauge
g{rank="2"} +Inf
g{rank="0"} NaN
g{rank="1"} -Inf
g{rank="2"} 5.0
# TYPE lat summary
lat{quantile="0.5"} 1.0
lat{quantile="0.99"} 2.0
lat_sum 10.0
lat_count 4.0
# TYPE g_created gauge
g_created 3.0
lone_created 4.0
`
	fams, err := parseMetricsPage(strings.NewReader(page), "page")
	require.NoError(t, err)

	h := fams["h_seconds"]
	require.NotNil(t, h)
	require.Len(t, h.Samples, 2)
	assert.Equal(t, "1", h.Samples[0].Labels["rank"], "series in order of first appearance")
	assert.Equal(t, map[string]float64{"0.005": 0, "2.5": 1, "655360.0": 2, "2.62144e+06": 3, "+Inf": 3}, h.Samples[0].Buckets, "le as written")
	assert.Equal(t, 7.5, h.Samples[0].Sum)
	assert.Equal(t, 3.0, h.Samples[0].Count)
	assert.NotContains(t, fams, "h_seconds_created")

	g := fams["g"]
	require.Len(t, g.Samples, 3, "a series written twice is one series")
	assert.Equal(t, []string{"2", "0", "1"}, []string{g.Samples[0].Labels["rank"], g.Samples[1].Labels["rank"], g.Samples[2].Labels["rank"]})
	assert.Equal(t, 5.0, g.Samples[0].Value, "the last line wins")
	assert.True(t, math.IsNaN(g.Samples[1].Value))
	assert.True(t, math.IsInf(g.Samples[2].Value, -1))

	s := fams["lat"]
	require.NotNil(t, s)
	assert.Equal(t, "summary", s.Type)
	require.Len(t, s.Samples, 3)
	assert.Equal(t, map[string]string{"quantile": "0.5"}, s.Samples[0].Labels)
	assert.Equal(t, 2.0, s.Samples[1].Value)
	assert.Equal(t, map[string]string{}, s.Samples[2].Labels)
	assert.Equal(t, 10.0, s.Samples[2].Sum)
	assert.Equal(t, 4.0, s.Samples[2].Count)

	assert.Equal(t, "gauge", fams["g_created"].Type, "a typed _created family is kept")
	assert.Equal(t, "unknown", fams["lone_created"].Type, "no counter or histogram beside it")
}

func TestParseMetricsPageError(t *testing.T) {
	_, err := parseMetricsPage(strings.NewReader("ok 1\nbroken{a=\"x} 2\n"), "http://e/metrics")
	require.Error(t, err)
	pe, ok := errors.AsType[expfmt.ParseError](err)
	require.True(t, ok, "wraps expfmt.ParseError: %v", err)
	assert.Equal(t, 2, pe.Line)
	assert.True(t, strings.HasPrefix(err.Error(), "http://e/metrics: text format parsing error in line 2: "), "got %q", err)
}
