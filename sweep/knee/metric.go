package knee

import "fmt"

// Metric selects the throughput a knee is found on.
type Metric string

// Metrics.
const (
	MetricTotal  Metric = "total"  // request_metrics.throughput.per_gpu.total_tput_tps
	MetricOutput Metric = "output" // request_metrics.throughput.per_gpu.output_tput_tps
)

// Set implements pflag.Value.
func (m *Metric) Set(s string) error {
	switch Metric(s) {
	case MetricTotal, MetricOutput:
		*m = Metric(s)
		return nil
	}
	return fmt.Errorf("metric %q: want total or output", s)
}

func (m *Metric) String() string { return string(*m) }

// Type implements pflag.Value.
func (m *Metric) Type() string { return "total|output" }
