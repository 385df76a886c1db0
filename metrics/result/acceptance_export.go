package result

import (
	"errors"
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
	e := detectExportBackend(v, "").AdapterFamily()
	c := metrics.ALCounters{Engine: e}
	al := e.Facts().AL
	if !al.PerDraft() && !al.PerVerify() {
		return metrics.ALCounters{}, errors.New("server metrics are neither sglang: nor vllm:")
	}
	var errs []error
	for _, f := range c.Fields() {
		if f.Counter.Name == "" {
			continue
		}
		if *f.Dst = v.sum(names(f.Counter.Name), []string{"total"}, nil); *f.Dst == nil {
			errs = append(errs, &metrics.MissingSeriesError{Engine: e, Series: f.Counter.Name})
		}
	}
	return c, errors.Join(errs...)
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
