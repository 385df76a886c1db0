package compare

import "math"

// round rounds v to places decimal places. With roundSig (significant
// digits) and pct (a log ratio as a change in percent) it makes the
// report's figures.
func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// roundSig rounds v to digits significant digits: a latency in seconds
// (0.00593) keeps as many as a throughput (21215.6).
func roundSig(v float64, digits int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	return round(v, digits-1-int(math.Floor(math.Log10(math.Abs(v)))))
}

// pct turns a log ratio into a change in percent.
func pct(l float64) float64 { return 100 * (math.Exp(l) - 1) }
