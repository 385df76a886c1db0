package loadgen

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerMetricsCSV: the table built from the export tree has the rows
// a reader of the written JSON gets: metrics, labels and statistics
// sorted by name, numbers as Go's shortest form, non-numbers skipped.
func TestServerMetricsCSV(t *testing.T) {
	export := object{
		{"schema_version", "1.1"},
		{"metrics", object{
			{"vllm:num_requests_running", object{{"type", "gauge"}, {"unit", "requests"}, {"series", []object{
				{{"endpoint_url", "http://h:1/metrics"}, {"labels", map[string]string{"model_name": "m", "engine": "0"}},
					{"stats", object{{"max", rawFloat(12)}, {"avg", rawFloat(3.25)}, {"p50", rawFloat(math.NaN())}}},
					{"timeslices", []object{{{"start_ns", int64(1)}, {"value", rawFloat(1)}}}}},
			}}}},
			{"vllm:e2e_request_latency_seconds", object{{"type", "histogram"}, {"series", []object{
				{{"endpoint_url", "http://h:1/metrics"}, {"labels", map[string]string{}},
					{"stats", object{{"count", int64(1234567)}, {"sum", rawFloat(0.1)}, {"buckets", object{{"+Inf", int64(3)}}}, {"avg", num(7)}}}},
			}}}},
		}},
	}
	got, err := serverMetricsCSV(export)
	require.NoError(t, err)

	// What a reader of the JSON file gets.
	var written bytes.Buffer
	require.NoError(t, writeIndent(&written, export))
	var doc struct {
		Metrics map[string]struct {
			Type, Unit string
			Series     []struct {
				EndpointURL string `json:"endpoint_url"`
				Labels      map[string]string
				Stats       map[string]json.RawMessage
			}
		}
	}
	require.NoError(t, json.Unmarshal(written.Bytes(), &doc))
	var want bytes.Buffer
	w := csv.NewWriter(&want)
	require.NoError(t, w.Write([]string{"endpoint_url", "metric", "type", "unit", "labels", "stat", "value"}))
	for _, name := range slices.Sorted(maps.Keys(doc.Metrics)) {
		m := doc.Metrics[name]
		for _, s := range m.Series {
			var labels []string
			for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
				labels = append(labels, k+"="+s.Labels[k])
			}
			for _, stat := range slices.Sorted(maps.Keys(s.Stats)) {
				var v float64
				if string(s.Stats[stat]) == "null" || json.Unmarshal(s.Stats[stat], &v) != nil {
					continue // NaN (the reader of the old table wrote it as 0) or nested
				}
				require.NoError(t, w.Write([]string{s.EndpointURL, name, m.Type, m.Unit, strings.Join(labels, ";"), stat, strconv.FormatFloat(v, 'g', -1, 64)}))
			}
		}
	}
	w.Flush()
	assert.Equal(t, want.String(), string(got))
	assert.Equal(t, `endpoint_url,metric,type,unit,labels,stat,value
http://h:1/metrics,vllm:e2e_request_latency_seconds,histogram,,,avg,7
http://h:1/metrics,vllm:e2e_request_latency_seconds,histogram,,,count,1.234567e+06
http://h:1/metrics,vllm:e2e_request_latency_seconds,histogram,,,sum,0.1
http://h:1/metrics,vllm:num_requests_running,gauge,requests,engine=0;model_name=m,avg,3.25
http://h:1/metrics,vllm:num_requests_running,gauge,requests,engine=0;model_name=m,max,12
`, string(got))
}
