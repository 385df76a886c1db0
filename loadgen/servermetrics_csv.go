package loadgen

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sweep/metrics/aiperf"
)

// ServerMetricsCSV is the tabular twin of aiperf.ServerMetricsFile that aiperf
// writes by default (--server-metrics-formats json csv); InferenceX's
// required-prefix check wants both files non-empty.
const ServerMetricsCSV = aiperf.ServerMetricsCSV

// serverMetricsCSV renders a server_metrics_export.json document as one
// row per metric, series and statistic:
// endpoint_url,metric,type,unit,labels,stat,value (labels as k=v;k=v).
func serverMetricsCSV(exportJSON []byte) ([]byte, error) {
	var doc struct {
		Metrics map[string]struct {
			Type   string `json:"type"`
			Unit   string `json:"unit"`
			Series []struct {
				EndpointURL string                     `json:"endpoint_url"`
				Labels      map[string]string          `json:"labels"`
				Stats       map[string]json.RawMessage `json:"stats"`
			} `json:"series"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(exportJSON, &doc); err != nil {
		return nil, fmt.Errorf("server metrics csv: %w", err)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"endpoint_url", "metric", "type", "unit", "labels", "stat", "value"})
	for _, name := range slices.Sorted(maps.Keys(doc.Metrics)) {
		m := doc.Metrics[name]
		for _, s := range m.Series {
			var labels []string
			for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
				labels = append(labels, k+"="+s.Labels[k])
			}
			for _, stat := range slices.Sorted(maps.Keys(s.Stats)) {
				var v float64
				if json.Unmarshal(s.Stats[stat], &v) != nil {
					continue // not a number (null or a nested value)
				}
				_ = w.Write([]string{s.EndpointURL, name, m.Type, m.Unit, strings.Join(labels, ";"), stat, strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}
