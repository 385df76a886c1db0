package compare

import (
	"fmt"
	"strings"

	"sweep/internal/pyjson"
	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// Metric is the figure points are compared on.
type Metric string

// The metrics. Throughput and interactivity are better higher; TTFT, ITL
// and energy per token lower.
const (
	MetricTotal   Metric = "total"    // request_metrics.throughput.per_gpu.total_tput_tps (default)
	MetricOutput  Metric = "output"   // request_metrics.throughput.per_gpu.output_tput_tps
	MetricIntvty  Metric = "intvty"   // request_metrics.latency.intvty.p50 (tok/s/user)
	MetricTTFTP50 Metric = "ttft-p50" // request_metrics.latency.ttft.p50 (s)
	MetricTTFTP90 Metric = "ttft-p90"
	MetricITLP50  Metric = "itl-p50" // request_metrics.latency.itl.p50 (s)
	MetricITLP90  Metric = "itl-p90"
	// MetricEnergy is the power lane's energy per output token (J), from
	// results whose power_valid is 1.
	MetricEnergy Metric = "energy"
)

var metrics = []Metric{MetricTotal, MetricOutput, MetricIntvty, MetricTTFTP50, MetricTTFTP90, MetricITLP50, MetricITLP90, MetricEnergy}

// Set implements pflag.Value.
func (m *Metric) Set(s string) error {
	for _, k := range metrics {
		if Metric(s) == k {
			*m = k
			return nil
		}
	}
	return fmt.Errorf("metric %q: want one of %s", s, m.Type())
}

// String implements pflag.Value.
func (m *Metric) String() string { return string(*m) }

// Type implements pflag.Value: the allowed values.
func (m *Metric) Type() string {
	names := make([]string, len(metrics))
	for i, k := range metrics {
		names[i] = string(k)
	}
	return strings.Join(names, "|")
}

// LowerIsBetter says whether a rise of the metric is a regression.
func (m Metric) LowerIsBetter() bool {
	return strings.HasPrefix(string(m), "ttft") || strings.HasPrefix(string(m), "itl") || m == MetricEnergy
}

// value returns the sample's figure, nil when it has none (or a
// non-positive one: a ratio needs a positive value).
func (m Metric) value(s *knee.Sample) *float64 {
	var v *float64
	switch m {
	case MetricOutput:
		v = s.OutputTPS
	case MetricIntvty:
		v = stat(s.Intvty, false)
	case MetricTTFTP50:
		v = stat(s.TTFT, false)
	case MetricTTFTP90:
		v = stat(s.TTFT, true)
	case MetricITLP50:
		v = stat(s.ITL, false)
	case MetricITLP90:
		v = stat(s.ITL, true)
	case MetricEnergy:
		v = s.JoulesPerOutputToken
	default:
		v = s.TotalTPS
	}
	if v == nil || !(*v > 0) {
		return nil
	}
	return v
}

func stat(st result.Stats, p90 bool) *float64 {
	r := st.P50
	if p90 {
		r = st.P90
	}
	if r == nil {
		return nil
	}
	return ptr(float64(*r))
}

// interactivity is the x of a frontier point on axis: P90
// E2E-normalised interactivity (the report's charts), or median 1/ITL
// (else the mean); nil when the sample has no positive one.
func interactivity(s *knee.Sample, axis knee.Axis) *float64 {
	rs := []*pyjson.Rounded{s.Intvty.P50, s.Intvty.Mean}
	if axis == knee.AxisE2ENormP90 {
		rs = []*pyjson.Rounded{s.E2ENormIntvty.P90}
	}
	for _, r := range rs {
		if r != nil && float64(*r) > 0 {
			return ptr(float64(*r))
		}
	}
	return nil
}

func ptr(v float64) *float64 { return &v }

// Unit is the unit a point's values are printed in by WriteText and
// WriteMarkdown (latencies in milliseconds; the JSON keeps seconds).
func (m Metric) Unit() string {
	switch {
	case m == MetricIntvty:
		return "tok/s/user"
	case strings.HasPrefix(string(m), "ttft"), strings.HasPrefix(string(m), "itl"):
		return "ms"
	case m == MetricEnergy:
		return "J/tok"
	}
	return "tok/s/GPU"
}

// Format prints a point's value in Unit with the digits its size needs:
// one decimal of a throughput, three of a latency in milliseconds or of
// joules per token.
func (m Metric) Format(v float64) string {
	switch m.Unit() {
	case "ms":
		return fmt.Sprintf("%.3f", 1000*v)
	case "J/tok":
		return fmt.Sprintf("%.3f", v)
	case "tok/s/user":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
