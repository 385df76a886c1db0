package compare

import (
	"fmt"
	"math"
)

// verdict reads the interval [lo, hi] of log changes against the
// tolerance, turned for a metric where lower is better.
func verdict(lo, hi float64, o Options) Decision {
	tol := o.Tolerance
	plo, phi := pct(lo), pct(hi)
	if o.Metric.LowerIsBetter() {
		plo, phi = -phi, -plo
	}
	switch {
	case plo > tol:
		return Improvement
	case plo > -tol:
		return Pass
	case phi < -tol:
		return Regression
	}
	return Inconclusive
}

// toleranceLine is the tolerance as a log change: ln(1 − tol/100), or
// ln(1 + tol/100) where lower is better.
func toleranceLine(o Options) float64 {
	if o.Metric.LowerIsBetter() {
		return math.Log1p(o.Tolerance / 100)
	}
	return math.Log1p(-o.Tolerance / 100)
}

// regressionP is the one-sided p-value of "no loss beyond the tolerance"
// for a log change estimated at l with standard error se on df degrees
// of freedom: the chance that noise puts the estimate at least this far
// past the tolerance line on the side of a loss (below it, above it where
// lower is better) when the change is exactly at the line. With se = 0 it
// is 0 past the line and 1 otherwise.
func regressionP(l, se, df float64, o Options) float64 {
	d := toleranceLine(o) - l
	if o.Metric.LowerIsBetter() {
		d = -d
	}
	if se == 0 {
		if d > 0 {
			return 0
		}
		return 1
	}
	return tCDF(-d/se, df)
}

// tolText is the tolerance line in percent: "-5 %", "+5 %" where lower
// is better.
func tolText(o Options) string {
	if o.Metric.LowerIsBetter() {
		return fmt.Sprintf("+%g %%", o.Tolerance)
	}
	return fmt.Sprintf("-%g %%", o.Tolerance)
}
