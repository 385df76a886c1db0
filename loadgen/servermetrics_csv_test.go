package loadgen

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerMetricsCSV: the table is in aiperf 0.12.0's layout (the
// built-in wrote one row per statistic, endpoint_url,metric,...,stat,value):
// a commented header, one table per type with its statistics and its label
// names as columns, 4 decimals, integer counts, cumulative buckets, rows by
// label set and metric, blank lines between tables.
func TestServerMetricsCSV(t *testing.T) {
	export := object{
		{"schema_version", "1.1"},
		{"aiperf_version", "0.12.0"},
		{"benchmark_id", "0123456789ab"},
		{"metrics", object{
			{"vllm:num_requests_running", object{{"type", "gauge"}, {"description", "Running, now"}, {"series", []object{
				{{"endpoint_url", "http://h:1/metrics"}, {"labels", map[string]string{"model_name": "m", "engine": "1", "pid": "7"}},
					{"stats", object{{"max", rawFloat(12)}, {"avg", rawFloat(3.25)}, {"p50", rawFloat(math.NaN())}}}},
				{{"endpoint_url", "http://h:1/metrics"}, {"labels", map[string]string{"model_name": "m", "engine": "0"}},
					{"stats", object{{"avg", rawFloat(1)}}}},
			}}}},
			{"vllm:kv_cache_usage_perc", object{{"type", "gauge"}, {"series", []object{
				{{"endpoint_url", "http://h:1/metrics"}, {"labels", map[string]string{"model_name": "m", "engine": "0"}},
					{"stats", object{{"avg", rawFloat(0.123456)}}}},
			}}}},
			{"vllm:prompt_tokens", object{{"type", "counter"}, {"unit", "tokens"}, {"series", []object{
				{{"endpoint_url", "http://h:1/metrics"}, {"labels", map[string]string{}},
					{"stats", object{{"total", rawFloat(100)}, {"rate", rawFloat(2.5)}}}},
			}}}},
			{"vllm:e2e_request_latency_seconds", object{{"type", "histogram"}, {"unit", "seconds"}, {"series", []object{
				{{"endpoint_url", "http://h:1/metrics"}, {"labels", map[string]string{"engine": "0"}},
					{"stats", object{{"count", int64(1234567)}, {"sum", rawFloat(0.1)}, {"avg", num(7)}}},
					{"buckets", object{{"0.5", int64(1)}, {"+Inf", int64(3)}}}},
			}}}},
		}},
	}
	got, err := serverMetricsCSV(export)
	require.NoError(t, err)
	want := `# AIPerf Server Metrics Export (CSV)
# aiperf_version: 0.12.0
# schema_version: 1.0
# benchmark_id: 0123456789ab
# Note: Same benchmark_id and version appear in JSON and Parquet exports
#
Endpoint,Type,Metric,Unit,avg,min,max,std,p1,p5,p10,p25,p50,p75,p90,p95,p99,engine,model_name,pid,Description
h:1,gauge,vllm:kv_cache_usage_perc,,0.1235,,,,,,,,,,,,,0,m,,
h:1,gauge,vllm:num_requests_running,,1.0000,,,,,,,,,,,,,0,m,,"Running, now"
h:1,gauge,vllm:num_requests_running,,3.2500,,12.0000,,,,,,,,,,,1,m,7,"Running, now"

Endpoint,Type,Metric,Unit,total,rate,rate_avg,rate_min,rate_max,rate_std,Description
h:1,counter,vllm:prompt_tokens,tokens,100.0000,2.5000,,,,,

Endpoint,Type,Metric,Unit,count,count_rate,sum,sum_rate,avg,p1_estimate,p5_estimate,p10_estimate,p25_estimate,p50_estimate,p75_estimate,p90_estimate,p95_estimate,p99_estimate,engine,Description,buckets
h:1,histogram,vllm:e2e_request_latency_seconds,seconds,1234567,,0.1000,,7.0000,,,,,,,,,,0,,0.5=1;+Inf=3
`
	lines := strings.SplitAfter(want, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "#") { // the tables end their lines in CRLF, as Python's csv module
			lines[i] = strings.Replace(l, "\n", "\r\n", 1)
		}
	}
	assert.Equal(t, strings.Join(lines, ""), string(got))
}
