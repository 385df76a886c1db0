package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"

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

// String says what became of the recorded requests, failures always
// counted, so that no difference reads as one: "97 recorded: 93 ok and
// measured, 4 warm-up (not measured), 0 failed". Failed requests give
// their InferenceX error categories, and a failed warm-up request, which
// counts as both, is said to be one: "3 failed (1 of them in the warm-up;
// RequestCancellationError 3)".
func (a RequestAccounting) String() string {
	var why []string
	both := min(a.RecordsWarmupDropped+a.RecordsErrorDropped-a.RecordsDroppedTotal, a.RecordsWarmupDropped, a.RecordsErrorDropped)
	if a.RecordsDroppedTotal > 0 && both > 0 {
		why = append(why, fmt.Sprintf("%d of them in the warm-up", both))
	}
	var kinds []string
	for _, k := range a.ErrorCategories.Keys() {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, a.ErrorCategories.Get(k)))
	}
	if len(kinds) > 0 {
		why = append(why, strings.Join(kinds, ", "))
	}
	failed := fmt.Sprintf("%d failed", a.RecordsErrorDropped)
	if len(why) > 0 {
		failed += " (" + strings.Join(why, "; ") + ")"
	}
	return fmt.Sprintf("%d recorded: %d ok and measured, %d warm-up (not measured), %s",
		a.RecordsTotal, a.RecordsProfiled, a.RecordsWarmupDropped, failed)
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
