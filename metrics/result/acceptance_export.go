package result

import (
	"errors"
	"sweep/configs"
	"sweep/metrics"
	"sweep/metrics/aiperf"
)

// ALCountersFromExport reads the counter totals aiperf exported over the
// profiling window (server_metrics_export.json names counters without
// _total). The engine is picked from the metric prefix. A missing counter
// is a *metrics.MissingSeriesError.
func ALCountersFromExport(exp *aiperf.ServerMetricsExport) (metrics.ALCounters, error) {
	if exp == nil || len(exp.Metrics) == 0 {
		return metrics.ALCounters{}, errors.New("no server metrics exported")
	}
	v := exportView(exp.Metrics)
	total := func(e configs.Engine, name string) (*float64, error) {
		s := v.sum(names(name), []string{"total"}, nil)
		if s == nil {
			return nil, &metrics.MissingSeriesError{Engine: e, Series: name}
		}
		return s, nil
	}
	var err1, err2, err3 error
	switch detectExportBackend(v, "") {
	case "sglang":
		c := metrics.ALCounters{Engine: configs.SGLang}
		c.GenerationTokens, err1 = total(configs.SGLang, "sglang:generation_tokens")
		c.Requests, err2 = total(configs.SGLang, "sglang:num_requests")
		c.VerifyCalls, err3 = total(configs.SGLang, "sglang:spec_verify_calls")
		return c, errors.Join(err1, err2, err3)
	case "vllm", "dynamo-vllm":
		c := metrics.ALCounters{Engine: configs.VLLM}
		c.Accepted, err1 = total(configs.VLLM, "vllm:spec_decode_num_accepted_tokens")
		c.Drafts, err2 = total(configs.VLLM, "vllm:spec_decode_num_drafts")
		return c, errors.Join(err1, err2)
	}
	return metrics.ALCounters{}, errors.New("server metrics are neither sglang: nor vllm:")
}

// CheckALFromExport is metrics.CheckAL over the exported counters; a missing
// counter gives a not_measured verdict naming it.
func CheckALFromExport(exp *aiperf.ServerMetricsExport, golden *float64, tolerance float64) *metrics.ALCheck {
	counters, err := ALCountersFromExport(exp)
	c := metrics.CheckAL(aiperf.ServerMetricsFile, counters, golden, tolerance)
	if err != nil {
		c.Measured, c.Delta, c.Verdict, c.Reason = nil, nil, metrics.ALNotMeasured, err.Error()
	}
	return c
}
