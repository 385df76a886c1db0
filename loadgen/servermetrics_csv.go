package loadgen

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"sweep/metrics/aiperf"
)

// ServerMetricsCSV is the tabular twin of aiperf.ServerMetricsFile that aiperf
// writes by default (--server-metrics-formats json csv); InferenceX's
// required-prefix check wants both files non-empty.
const ServerMetricsCSV = aiperf.ServerMetricsCSV

// csvSection is one table of the CSV: the metrics of one type and the
// statistics its columns hold, in aiperf 0.12.0's order.
type csvSection struct {
	typ   string
	stats []string
}

var csvSections = []csvSection{
	{"gauge", []string{"avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}},
	{"counter", []string{"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"}},
	{"histogram", []string{"count", "count_rate", "sum", "sum_rate", "avg", "p1_estimate", "p5_estimate", "p10_estimate",
		"p25_estimate", "p50_estimate", "p75_estimate", "p90_estimate", "p95_estimate", "p99_estimate"}},
}

// csvRow is one series of the export.
type csvRow struct {
	endpoint, metric, unit, description string
	labels                              map[string]string
	stats                               object
	buckets                             object
}

// serverMetricsCSV renders the export that scraper.export built in
// aiperf 0.12.0's layout: a commented header (version, schema, benchmark
// id), then one table per metric type (gauge, counter, histogram), CRLF
// line ends and blank lines between, each with its own header: Endpoint (host:port), Type,
// Metric, Unit, the type's statistics (numbers with 4 decimals, a
// histogram's count as an integer), one column per label name of the
// table (sorted; empty where a series lacks the label), Description, and
// for histograms the cumulative buckets as le=count;... Rows go by the
// number of labels, then the label set in the order its first metric
// comes by name, then metric and label values.
func serverMetricsCSV(export object) ([]byte, error) {
	var buf bytes.Buffer
	version, _ := export.get("aiperf_version").(string)
	id, _ := export.get("benchmark_id").(string)
	fmt.Fprintf(&buf, "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: %s\n# schema_version: 1.0\n# benchmark_id: %s\n", version, id)
	buf.WriteString("# Note: Same benchmark_id and version appear in JSON and Parquet exports\n#\n")
	metrics, _ := export.get("metrics").(object)
	byType := map[string][]csvRow{}
	for _, mf := range metrics {
		m, _ := mf.Value.(object)
		typ, _ := m.get("type").(string)
		unit, _ := m.get("unit").(string)
		desc, _ := m.get("description").(string)
		series, _ := m.get("series").([]object)
		for _, s := range series {
			u, _ := s.get("endpoint_url").(string)
			lm, _ := s.get("labels").(map[string]string)
			stats, _ := s.get("stats").(object)
			buckets, _ := s.get("buckets").(object)
			byType[typ] = append(byType[typ], csvRow{endpoint: hostPort(u), metric: mf.Key, unit: unit, description: desc, labels: lm, stats: stats, buckets: buckets})
		}
	}
	first := true
	for _, sec := range csvSections {
		rows := byType[sec.typ]
		if len(rows) == 0 {
			continue
		}
		if !first {
			buf.WriteString("\r\n")
		}
		first = false
		sortCSVRows(rows)
		labelSet := map[string]bool{}
		for _, r := range rows {
			for k := range r.labels {
				labelSet[k] = true
			}
		}
		labels := slices.Sorted(maps.Keys(labelSet))
		w := csv.NewWriter(&buf)
		w.UseCRLF = true // as Python's csv module writes the tables (the comments end in \n)
		head := append(append([]string{"Endpoint", "Type", "Metric", "Unit"}, sec.stats...), labels...)
		head = append(head, "Description")
		if sec.typ == "histogram" {
			head = append(head, "buckets")
		}
		_ = w.Write(head)
		for _, r := range rows {
			line := []string{r.endpoint, sec.typ, r.metric, r.unit}
			for _, st := range sec.stats {
				line = append(line, csvStat(r.stats.get(st), st == "count"))
			}
			for _, k := range labels {
				line = append(line, r.labels[k])
			}
			line = append(line, r.description)
			if sec.typ == "histogram" {
				var bs []string
				for _, b := range r.buckets {
					bs = append(bs, b.Key+"="+csvStat(b.Value, true))
				}
				line = append(line, strings.Join(bs, ";"))
			}
			_ = w.Write(line)
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// sortCSVRows orders a table's rows as aiperf's tables are: by the
// number of labels, then by label set (in the order each set's first
// metric comes by name), metric and label values.
func sortCSVRows(rows []csvRow) {
	set := func(r csvRow) string { return strings.Join(slices.Sorted(maps.Keys(r.labels)), ",") }
	values := func(r csvRow) string {
		var vs []string
		for _, k := range slices.Sorted(maps.Keys(r.labels)) {
			vs = append(vs, r.labels[k])
		}
		return strings.Join(vs, "\x00")
	}
	byName := slices.Clone(rows)
	slices.SortStableFunc(byName, func(a, b csvRow) int { return strings.Compare(a.metric, b.metric) })
	rank := map[string]int{}
	for _, r := range byName {
		if _, ok := rank[set(r)]; !ok {
			rank[set(r)] = len(rank)
		}
	}
	slices.SortStableFunc(rows, func(a, b csvRow) int {
		if c := len(a.labels) - len(b.labels); c != 0 {
			return c
		}
		if c := rank[set(a)] - rank[set(b)]; c != 0 {
			return c
		}
		if c := strings.Compare(a.metric, b.metric); c != 0 {
			return c
		}
		return strings.Compare(values(a), values(b))
	})
}

// hostPort is the Endpoint column: the host and port of a metrics URL.
func hostPort(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// csvStat formats a statistic: 4 decimals, or an integer for counts; ""
// when it is missing or not a number.
func csvStat(v any, integer bool) string {
	f, ok := statNumber(v)
	switch {
	case !ok:
		return ""
	case integer:
		return strconv.FormatFloat(math.Round(f), 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'f', 4, 64)
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
	case float64: // a decoded JSON number
		f = v
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
