package compare

import (
	"fmt"
	"math"

	"sweep/internal/plural"
)

// heterogeneityP is the F-test level below which an arm's paired scatter
// is too large, against the other arms', to be noise.
const heterogeneityP = 0.001

// armScatter is one arm's scatter of paired log changes around its
// precision-weighted mean, scaled by each point's q (so that it estimates
// the noise of one result), with k−1 degrees of freedom.
type armScatter struct {
	arm    *ArmReport
	ss, df float64
}

// decide estimates the noise, gives every arm its interval and verdict,
// and the report its overall verdict.
func decide(rep *Report, o Options, repSS, repDF float64) {
	var scat []armScatter
	for _, a := range rep.Arms {
		if len(a.logs) < 2 {
			continue
		}
		var sw, swl float64
		for i, l := range a.logs {
			sw += 1 / a.qs[i]
			swl += l / a.qs[i]
		}
		lw := swl / sw
		var ss float64
		for i, l := range a.logs {
			ss += (l - lw) * (l - lw) / a.qs[i]
		}
		scat = append(scat, armScatter{arm: a, ss: ss, df: float64(len(a.logs) - 1)})
	}
	pool, left := poolScatter(scat)
	var poolSS, poolDF float64
	for _, s := range pool {
		poolSS += s.ss
		poolDF += s.df
	}
	for _, a := range rep.Arms {
		if len(a.logs) == 0 {
			if a.Verdict == "" {
				a.Verdict = Inconclusive
			}
			a.NoiseSource = "none: no paired point"
			continue
		}
		sigma2, df, source := 0.0, 0.0, ""
		switch cal := o.Calibration.arm(a.Identity); {
		case repDF >= minReplicateDF:
			sigma2, df = repSS/repDF, repDF
			source = fmt.Sprintf("replicates: scatter of repeated results of one point, pooled over every arm and both sides (%s)", plural.Count(int(df), "degree of freedom", "degrees of freedom"))
		case cal != nil:
			sigma2, df = cal.SigmaLog*cal.SigmaLog, float64(cal.DF)
			source = fmt.Sprintf("calibration: A/A noise of this arm from %s (%s)", o.Calibration.Source, plural.Count(cal.DF, "degree of freedom", "degrees of freedom"))
		case poolDF+repDF > 0:
			sigma2, df = (poolSS+repSS)/(poolDF+repDF), poolDF+repDF
			source = fmt.Sprintf("paired scatter: the per-point changes around each arm's pooled change, pooled over %s", plural.Count(len(pool), "arm", "arms"))
			if repDF > 0 {
				source += " and the replicates"
			}
			source += fmt.Sprintf(" (%s)", plural.Count(int(df), "degree of freedom", "degrees of freedom"))
			if len(left) > 0 {
				source += fmt.Sprintf("; %s left out as not uniform (F test, p < %g): %s", plural.Count(len(left), "arm", "arms"), heterogeneityP, labels(left))
			}
		}
		k := float64(len(a.logs))
		var sumL, sumQ float64
		for i, l := range a.logs {
			sumL += l
			sumQ += a.qs[i]
		}
		l := sumL / k
		a.DeltaPct = ptr(round(pct(l), 3))
		if source == "" {
			a.NoiseSource = "none: one paired point, no replicates and no calibration"
			if a.Verdict == "" {
				a.Verdict = Inconclusive
			}
			continue
		}
		a.NoiseSource = source
		a.NoisePct = round(100*math.Sqrt(sigma2), 3)
		a.NoiseDF = int(df)
		se := math.Sqrt(sigma2*sumQ) / k
		t := studentT(0.95, df)
		lo, hi := l-t*se, l+t*se
		a.CIPct = &[2]float64{round(pct(lo), 3), round(pct(hi), 3)}
		if a.Verdict == Incomplete {
			continue
		}
		a.Verdict = verdict(lo, hi, o)
		if a.Verdict == Inconclusive {
			a.ReplicatesNeeded = replicatesNeeded(l, t*se, a.reps, o)
		}
	}
	rep.Verdict = overall(rep)
}

// poolScatter keeps the arms whose scatter agrees with the others' and
// returns them and the ones left out: repeatedly, the arm whose variance
// is largest against the pool of the rest is left out while an F test
// says it is not noise of the same size (p < heterogeneityP). One arm is
// always kept.
func poolScatter(all []armScatter) (pool, left []armScatter) {
	pool = append(pool, all...)
	for len(pool) > 1 {
		worst, worstP := -1, 1.0
		for i, s := range pool {
			var rss, rdf float64
			for j, r := range pool {
				if j != i {
					rss += r.ss
					rdf += r.df
				}
			}
			if rdf == 0 || rss == 0 {
				continue
			}
			p := fSurvival((s.ss/s.df)/(rss/rdf), s.df, rdf)
			if p < worstP {
				worst, worstP = i, p
			}
		}
		if worst < 0 || worstP >= heterogeneityP {
			break
		}
		left = append(left, pool[worst])
		pool = append(pool[:worst:worst], pool[worst+1:]...)
	}
	return pool, left
}

func labels(ss []armScatter) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s.arm.Arm
	}
	return out
}

// pct turns a log ratio into a change in percent.
func pct(l float64) float64 { return 100 * (math.Exp(l) - 1) }

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

// replicatesNeeded is how many results per point and side would likely
// make the interval clear the tolerance line, given the half-width hw
// with reps results per point and side now.
func replicatesNeeded(l, hw, reps float64, o Options) int {
	line := math.Log(1 - o.Tolerance/100)
	if o.Metric.LowerIsBetter() {
		line = math.Log(1 + o.Tolerance/100)
	}
	dist := math.Abs(l - line)
	if dist == 0 || reps <= 0 {
		return maxReplicatesAdvice
	}
	n := math.Ceil(reps * (hw / dist) * (hw / dist))
	return int(min(max(n, reps+1), maxReplicatesAdvice))
}

// overall: INCOMPLETE if there is any problem, else REGRESSION if any arm
// regresses, else INCONCLUSIVE if any arm is, else PASS.
func overall(rep *Report) Decision {
	if len(rep.Problems) > 0 {
		return Incomplete
	}
	v := Pass
	for _, a := range rep.Arms {
		switch a.Verdict {
		case Regression:
			return Regression
		case Inconclusive:
			v = Inconclusive
		}
	}
	return v
}
