package result

import "sweep/metrics/aiperf"

// The per-request record metrics the result is built from, by their
// aiperf names.

func pickTTFT(m *aiperf.RecordMetrics) *aiperf.MetricValue { return m.Get("time_to_first_token") }
func pickE2EL(m *aiperf.RecordMetrics) *aiperf.MetricValue { return m.Get("request_latency") }
func pickITL(m *aiperf.RecordMetrics) *aiperf.MetricValue  { return m.Get("inter_token_latency") }
func pickFRITL(m *aiperf.RecordMetrics) *aiperf.MetricValue {
	return m.Get("full_response_inter_token_latency")
}
func pickISL(m *aiperf.RecordMetrics) *aiperf.MetricValue { return m.Get("input_sequence_length") }
func pickOSL(m *aiperf.RecordMetrics) *aiperf.MetricValue { return m.Get("output_sequence_length") }
