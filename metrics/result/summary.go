package result

import (
	"fmt"
	"io"
	"strconv"

	"sweep/internal/pyjson"
)

// WriteSummary writes InferenceX's summary lines of r (from the rounded
// values, as InferenceX prints them), then sweep's own: warnings and the
// acceptance length.
func WriteSummary(w io.Writer, r *Result) {
	a := r.RequestAccounting
	fmt.Fprintf(w, "  Requests: %d successful / %d total (%d warmup, %d error dropped)\n",
		r.NumRequestsSuccessful, a.RecordsTotal, a.RecordsWarmupDropped, a.RecordsErrorDropped)
	if q := r.RequestMetrics.QPS; q.Mean != nil {
		fmt.Fprintf(w, "  QPS: mean=%.2f p75=%.2f p95=%.2f\n", rounded(q.Mean), rounded(q.P75), rounded(q.P95))
	}
	pct := func(label string, v *pyjson.Rounded) {
		if v != nil {
			fmt.Fprintf(w, "  %s%.1f%%\n", label, rounded(v)*100)
		}
	}
	c, kv := r.ServerMetrics.Cache, r.ServerMetrics.KVCache
	pct("GPU cache hit rate: ", c.GPUCacheHitRate)
	pct("CPU/offload cache hit rate: ", c.CPUCacheHitRate)
	pct("External cache hit rate: ", c.ExternalCacheHitRate)
	pct("GPU KV cache usage:  ", kv.GPUUsagePct)
	if kv.GPUTotalTokens != nil {
		fmt.Fprintf(w, "  GPU KV cache capacity: %.0f tokens\n", rounded(kv.GPUTotalTokens))
	}
	pct("Theoretical cache hit rate: ", r.RequestMetrics.Cache.TheoreticalCacheHitRate)
	if pg := r.RequestMetrics.Throughput.PerGPU; pg != nil && pg.TotalTputTPS != nil {
		fmt.Fprintf(w, "  Throughput per GPU: %.0f tok/s\n", rounded(pg.TotalTputTPS))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	if al := r.AcceptanceLength; al != nil {
		switch {
		case al.Measured == nil:
			fmt.Fprintf(w, "  Acceptance length: not measured (%s)\n", al.Reason)
		case al.Golden == nil:
			fmt.Fprintf(w, "  Acceptance length: %.3f (no golden AL given)\n", float64(*al.Measured))
		default:
			fmt.Fprintf(w, "  Acceptance length: %.3f vs golden %.2f ± %.2f: %s\n",
				float64(*al.Measured), float64(*al.Golden), float64(al.Tolerance), al.Verdict)
		}
	}
}

// rounded is the value as the result JSON holds it.
func rounded(v *pyjson.Rounded) float64 {
	if v == nil {
		return 0
	}
	var f float64
	b, err := v.MarshalJSON()
	if err == nil {
		f, err = strconv.ParseFloat(string(b), 64)
	}
	if err != nil {
		return float64(*v)
	}
	return f
}
