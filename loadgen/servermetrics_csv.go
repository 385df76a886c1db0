package loadgen

import (
	"bytes"
	"encoding/csv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"sweep/metrics/aiperf"
)

// ServerMetricsCSV is the tabular twin of aiperf.ServerMetricsFile that aiperf
// writes by default (--server-metrics-formats json csv); InferenceX's
// required-prefix check wants both files non-empty.
const ServerMetricsCSV = aiperf.ServerMetricsCSV

// serverMetricsCSV renders the export that scraper.export built as one
// row per metric, series and statistic:
// endpoint_url,metric,type,unit,labels,stat,value (labels as k=v;k=v),
// metrics, labels and statistics sorted by name. A statistic that is not
// a number (NaN, written as null, or a nested value) has no row.
func serverMetricsCSV(export object) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"endpoint_url", "metric", "type", "unit", "labels", "stat", "value"})
	metrics, _ := export.get("metrics").(object)
	metrics = slices.Clone(metrics)
	slices.SortStableFunc(metrics, func(a, b field) int { return strings.Compare(a.Key, b.Key) })
	for _, mf := range metrics {
		m, _ := mf.Value.(object)
		typ, _ := m.get("type").(string)
		unit, _ := m.get("unit").(string)
		series, _ := m.get("series").([]object)
		for _, s := range series {
			url, _ := s.get("endpoint_url").(string)
			lm, _ := s.get("labels").(map[string]string)
			var labels []string
			for _, k := range slices.Sorted(maps.Keys(lm)) {
				labels = append(labels, k+"="+lm[k])
			}
			stats, _ := s.get("stats").(object)
			stats = slices.Clone(stats)
			slices.SortStableFunc(stats, func(a, b field) int { return strings.Compare(a.Key, b.Key) })
			for _, st := range stats {
				v, ok := statNumber(st.Value)
				if !ok {
					continue
				}
				_ = w.Write([]string{url, mf.Key, typ, unit, strings.Join(labels, ";"), st.Key, strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// statNumber is the number a statistic's JSON holds, when it is one.
func statNumber(v any) (float64, bool) {
	var f float64
	switch v := v.(type) {
	case rawFloat:
		f = float64(v)
	case num:
		f = float64(v)
	case int64:
		f = float64(v)
	case int:
		f = float64(v)
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
