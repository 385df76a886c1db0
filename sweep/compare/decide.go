package compare

import (
	"fmt"
	"math"
	"strings"

	"sweep/internal/plural"
)

// ciAlpha is what an arm's interval of its pooled change leaves out: a
// 90 % interval.
const ciAlpha = 0.10

// pointAlpha is what the points' intervals leave out together: 99 %
// simultaneous intervals over an arm's k points (Bonferroni: each at
// 1 − 0.01/k). A point's REGRESSION is a second way for its arm to
// regress, beside the pooled change's 90 % interval, so it is held to a
// stricter level: it adds at most 0.5 % (one-sided) to the arm's false
// alarms where the pooled interval allows 5 %.
const pointAlpha = 0.01

// minReplicateDF is the fewest degrees of freedom of replicate scatter
// that make replicates the noise source.
const minReplicateDF = 3

// maxReplicatesAdvice caps the advice of an INCONCLUSIVE arm.
const maxReplicatesAdvice = 100

// armScatter is one arm's scatter of paired log changes around its
// precision-weighted mean over the points that change alike
// (uniformCore), scaled by each point's q (so that it estimates the noise
// of one result), with one degree of freedom fewer than those points.
type armScatter struct {
	arm    *ArmReport
	ss, df float64
}

// decide estimates the noise, gives every arm and point its interval and
// verdict, and the report its overall verdict.
func decide(rep *Report, o Options, repSS, repDF float64) {
	var scat []armScatter
	uniform := map[*ArmReport][]bool{}
	for _, a := range rep.Arms {
		if len(a.logs) < 2 {
			continue
		}
		in := uniformCore(a.logs, a.qs)
		uniform[a] = in
		var idx []int
		for i, ok := range in {
			if ok {
				idx = append(idx, i)
			}
		}
		_, ss := weightedFit(a.logs, a.qs, idx)
		scat = append(scat, armScatter{arm: a, ss: ss, df: float64(len(idx) - 1)})
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
			if len(a.Points) > 0 {
				a.NoiseSource = "none: no paired point before BASE's cliff"
			}
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
		case isLeft(left, a) != nil:
			own := isLeft(left, a)
			sigma2, df = (own.ss+repSS)/(own.df+repDF), own.df+repDF
			source = ownSource(a, uniform[a], len(pool), repDF, df)
			markUniform(a, uniform[a])
		case poolDF+repDF > 0:
			sigma2, df = (poolSS+repSS)/(poolDF+repDF), poolDF+repDF
			source = pairedSource(a, uniform[a], len(pool), left, repDF, df)
			markUniform(a, uniform[a])
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
		t := studentT(1-ciAlpha/2, df)
		lo, hi := l-t*se, l+t*se
		a.CIPct = &[2]float64{round(pct(lo), 3), round(pct(hi), 3)}
		pooled := verdict(lo, hi, o)
		regressing := decidePoints(a, sigma2, df, o)
		if a.Verdict == Incomplete {
			continue
		}
		a.Verdict = pooled
		if len(regressing) > 0 {
			a.Verdict = Regression
		}
		a.Why = why(a, pooled, regressing, o)
		if past := pastCliffConcs(a.Points); len(past) > 0 {
			a.Why += fmt.Sprintf("; %s past BASE's cliff (its throughput below half of its highest at a lower concurrency): not judged, a thrashing engine's results vary far beyond the arm's noise", concList(past))
		}
		if a.Verdict == Inconclusive {
			a.ReplicatesNeeded = replicatesNeeded(l, t*se, a.reps, o)
		}
	}
	rep.Verdict = overall(rep)
}

// decidePoints gives each judged point of a its interval and verdict:
// 99 % simultaneous intervals over the arm's k judged points (pointAlpha),
// read against the tolerance as the arm's is. It returns the
// concurrencies whose interval lies beyond the tolerance line.
func decidePoints(a *ArmReport, sigma2, df float64, o Options) []int {
	t := studentT(1-pointAlpha/(2*float64(len(a.logs))), df)
	var regressing []int
	for i, l := range a.logs {
		hw := t * math.Sqrt(sigma2*a.qs[i])
		p := &a.Points[a.at[i]]
		p.CIPct = &[2]float64{round(pct(l-hw), 3), round(pct(l+hw), 3)}
		p.Verdict = verdict(l-hw, l+hw, o)
		if p.Verdict == Regression {
			regressing = append(regressing, p.Conc)
		}
	}
	return regressing
}

// why says what decided an arm's verdict: its pooled change, or the
// points that regress beside a pooled change that does not.
func why(a *ArmReport, pooled Decision, regressing []int, o Options) string {
	line := tolText(o)
	switch {
	case len(regressing) > 0 && pooled != Regression:
		return fmt.Sprintf("%s beyond %s (%s 99 %% simultaneous %s) while the pooled change is %s: a change confined to some points is diluted in the pooled one", regressVerb(regressing), line, plural.Word(len(regressing), "its", "their"), plural.Word(len(regressing), "interval", "intervals"), pooled)
	case len(regressing) > 0:
		return fmt.Sprintf("the pooled change's interval lies beyond %s, and so %s", line, plural.Word(len(regressing), "does "+concList(regressing)+"'s", "do those of "+concList(regressing)))
	case pooled == Regression:
		return fmt.Sprintf("the pooled change's interval lies beyond %s (no single point's does)", line)
	case pooled == Inconclusive:
		return fmt.Sprintf("the pooled change's interval straddles %s", line)
	case pooled == Improvement:
		return fmt.Sprintf("the pooled change's interval lies beyond %s, an improvement, and no point's lies beyond %s", strings.NewReplacer("-", "+", "+", "-").Replace(line), line)
	}
	return fmt.Sprintf("the pooled change's interval lies within %s and no point's lies beyond it", line)
}

func tolText(o Options) string {
	if o.Metric.LowerIsBetter() {
		return fmt.Sprintf("+%g %%", o.Tolerance)
	}
	return fmt.Sprintf("-%g %%", o.Tolerance)
}

// concList is "c40, c48 and c64".
func concList(cs []int) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = fmt.Sprintf("c%d", c)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// pairedSource names the paired scatter pooled over arms as a's noise
// source: how many arms it pools, the points of a left out as not
// uniform and the arms left out of the pool.
func pairedSource(a *ArmReport, in []bool, pooled int, left []armScatter, repDF, df float64) string {
	s := fmt.Sprintf("paired scatter: the per-point changes around each arm's pooled change, pooled over %s", plural.Count(pooled, "arm", "arms"))
	if repDF > 0 {
		s += " and the replicates"
	}
	s += fmt.Sprintf(" (%s)", plural.Count(int(df), "degree of freedom", "degrees of freedom"))
	s += notUniformText(a, in)
	if len(left) > 0 {
		s += fmt.Sprintf("; %s left out of the pool as not uniform (F test, p < %g): %s", plural.Count(len(left), "arm", "arms"), heterogeneityP, labels(left))
	}
	return s
}

// ownSource names the noise of an arm the F test left out of the pool:
// the scatter of its own uniform points, since it is not the other
// arms' noise (a change that varies across its points, or a noisier
// arm), so the others' smaller scatter does not narrow its interval and
// its verdict is the one it has alone.
func ownSource(a *ArmReport, in []bool, pooled int, repDF, df float64) string {
	s := "paired scatter: this arm's per-point changes around its pooled change"
	if repDF > 0 {
		s += " and the replicates"
	}
	s += fmt.Sprintf(" (%s); left out of the pool of the other %s as not uniform (F test, p < %g)",
		plural.Count(int(df), "degree of freedom", "degrees of freedom"), plural.Count(pooled, "arm", "arms"), heterogeneityP)
	return s + notUniformText(a, in)
}

func notUniformText(a *ArmReport, in []bool) string {
	var out []int
	for i, ok := range in {
		if !ok {
			out = append(out, a.Points[a.at[i]].Conc)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s of this arm left out as not uniform (beyond the other points' prediction interval, p < %g): a change, not noise", concList(out), heterogeneityP)
}

// markUniform marks the points of a that the paired scatter left out.
func markUniform(a *ArmReport, in []bool) {
	for i, ok := range in {
		a.Points[a.at[i]].NotUniform = !ok
	}
}

// isLeft returns a's scatter when the F test left it out of the pool.
func isLeft(left []armScatter, a *ArmReport) *armScatter {
	for i := range left {
		if left[i].arm == a {
			return &left[i]
		}
	}
	return nil
}

// poolScatter keeps the arms whose scatter agrees with the others' and
// returns them and the ones left out: repeatedly, the arm whose variance
// is largest against the pool of the rest is left out while an F test
// says it is not noise of the same size (p < heterogeneityP). An arm with
// any scatter beside others with none (the identical results of a
// simulated engine) is not noise of their size either. One arm is always
// kept.
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
			if rdf == 0 || s.df == 0 || s.ss == 0 {
				continue
			}
			p := 0.0
			if rss > 0 {
				p = fSurvival((s.ss/s.df)/(rss/rdf), s.df, rdf)
			}
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

// regressVerb is "c64 regresses" or "c48 and c64 regress".
func regressVerb(cs []int) string {
	return concList(cs) + plural.Word(len(cs), " regresses", " regress")
}
