package loadgen

import (
	"io"
	"maps"
	"slices"
	"strings"

	"sweep/internal/pyjson"
	"sweep/metrics"

	dto "github.com/prometheus/client_model/go"
)

// promFamily is one metric family of a Prometheus text exposition, named
// the way prometheus_client's parser (and so aiperf) names it: counters
// without their _total suffix, histograms without _bucket/_sum/_count.
type promFamily struct {
	Name, Type, Help string
	Samples          []promSample // series in order of first appearance
}

// promSample is one series of a family at one scrape: a value for
// gauges, counters and untyped metrics, or buckets, sum and count for
// histograms.
type promSample struct {
	Labels  map[string]string // without "le"
	key     string            // canonical label string, identifies the series
	Value   float64
	Buckets map[string]float64 // le -> cumulative count; le as prometheus_client writes the bound
	Sum     float64
	Count   float64
}

// parseMetricsPage parses a /metrics page (Prometheus text format 0.0.4)
// with expfmt (metrics.ParseText; name is used in errors, which wrap
// expfmt.ParseError) and names its families as promFamilies does.
func parseMetricsPage(r io.Reader, name string) (map[string]*promFamily, error) {
	snap, err := metrics.ParseText(r, name)
	if err != nil {
		return nil, err
	}
	return promFamilies(snap.Families), nil
}

// promFamilies converts expfmt's families to the names and shapes
// prometheus_client's parser gives them: a counter's family loses its
// _total suffix; a histogram's series carry buckets keyed by the bound in
// prometheus_client's text (floatToGoString: "0.1", "1.0", "2.5e+06",
// "+Inf"), which is the le text vLLM, SGLang and the simulated engine
// write; a summary gives one series per quantile (labels with
// "quantile") and one with its sum and count. The untyped _created
// samples Python writes beside a counter or histogram are dropped.
func promFamilies(in map[string]*dto.MetricFamily) map[string]*promFamily {
	out := make(map[string]*promFamily, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) { // deterministic when two names meet
		mf := in[name]
		if isCreated(name, mf, in) {
			continue
		}
		f := &promFamily{Name: name, Type: typeName(mf.GetType()), Help: mf.GetHelp()}
		if f.Type == "counter" {
			f.Name = strings.TrimSuffix(name, "_total")
		}
		if prev := out[f.Name]; prev != nil {
			f = prev
		} else {
			out[f.Name] = f
		}
		index := make(map[string]int, len(f.Samples))
		for i, s := range f.Samples {
			index[s.key] = i
		}
		for _, m := range mf.GetMetric() {
			for _, s := range seriesOf(mf.GetType(), m) {
				if i, ok := index[s.key]; ok { // the same series twice: the last line wins
					f.Samples[i] = s
					continue
				}
				index[s.key] = len(f.Samples)
				f.Samples = append(f.Samples, s)
			}
		}
	}
	return out
}

// isCreated reports whether name is the untyped X_created family Python's
// client writes for the counter X_total or the histogram X.
func isCreated(name string, mf *dto.MetricFamily, all map[string]*dto.MetricFamily) bool {
	base, ok := strings.CutSuffix(name, "_created")
	if !ok || mf.GetType() != dto.MetricType_UNTYPED {
		return false
	}
	if c := all[base+"_total"]; c != nil && c.GetType() == dto.MetricType_COUNTER {
		return true
	}
	b := all[base]
	return b != nil && (b.GetType() == dto.MetricType_COUNTER || b.GetType() == dto.MetricType_HISTOGRAM)
}

// typeName is the type as prometheus_client's parser names it.
func typeName(t dto.MetricType) string {
	switch t {
	case dto.MetricType_COUNTER:
		return "counter"
	case dto.MetricType_GAUGE:
		return "gauge"
	case dto.MetricType_HISTOGRAM:
		return "histogram"
	case dto.MetricType_SUMMARY:
		return "summary"
	case dto.MetricType_GAUGE_HISTOGRAM:
		return "gaugehistogram"
	}
	return "unknown"
}

// seriesOf returns the series of one expfmt metric.
func seriesOf(t dto.MetricType, m *dto.Metric) []promSample {
	labels, key := metrics.LabelMap(m), metrics.SeriesKey(m)
	s := promSample{Labels: labels, key: key}
	switch t {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		if bs := h.GetBucket(); len(bs) > 0 {
			s.Buckets = make(map[string]float64, len(bs))
			for _, b := range bs {
				c := float64(b.GetCumulativeCount())
				if b.CumulativeCountFloat != nil {
					c = b.GetCumulativeCountFloat()
				}
				s.Buckets[pyjson.PromFloat(b.GetUpperBound())] = c
			}
		}
		s.Sum, s.Count = h.GetSampleSum(), float64(h.GetSampleCount())
		if h.SampleCountFloat != nil {
			s.Count = h.GetSampleCountFloat()
		}
		return []promSample{s}
	case dto.MetricType_SUMMARY:
		sm := m.GetSummary()
		var out []promSample
		for _, q := range sm.GetQuantile() {
			qt := pyjson.PromFloat(q.GetQuantile())
			ql := maps.Clone(labels)
			ql["quantile"] = qt
			// Apart from the sum-and-count series by the quantile label
			// (the page's own labels cannot hold "quantile": expfmt takes
			// it as the summary's).
			out = append(out, promSample{Labels: ql, key: key + "\xfdquantile\xff" + qt, Value: q.GetValue()})
		}
		s.Sum, s.Count = sm.GetSampleSum(), float64(sm.GetSampleCount())
		return append(out, s)
	case dto.MetricType_COUNTER:
		s.Value = m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		s.Value = m.GetGauge().GetValue()
	default:
		s.Value = m.GetUntyped().GetValue()
	}
	return []promSample{s}
}
