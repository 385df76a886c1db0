package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"sweep/internal/plural"
)

// minReplicateDF is the fewest degrees of freedom of replicate scatter
// that make replicates the noise source.
const minReplicateDF = 3

// minIntervalDF is the fewest degrees of freedom of a noise estimate
// that give intervals. With one (two paired points, no replicates, no
// calibration) the t quantile of a point's 99 % family-wise interval is
// over 100 (127 for two points): the interval spans from a loss of
// everything to a gain of thousands of percent and says nothing, and the
// arm's own is read on a noise seen once. Such an arm has no interval
// and is INCONCLUSIVE, its note saying what would give one, as an arm
// without a noise estimate is.
const minIntervalDF = 2

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

// decide estimates the noise, gives every arm and point its intervals
// and verdict, the REGRESSION claims corrected for their number
// (Correction), and the report its overall verdict.
func decide(rep *Report, o Options, repSS, repDF float64) {
	q := quantiles{}
	judged := estimateNoise(rep, o, repSS, repDF, q)
	judgeArms(judged, o, q)
	points := judgePoints(judged, o, q)
	rep.Correction = newCorrection(len(judged), points, o)
	for _, a := range judged {
		decideArm(a, rep.Correction, o, q)
	}
	rep.Verdict = overall(rep)
}

// estimateNoise gives every arm with a paired point its pooled change
// and, with a noise estimate of at least minIntervalDF degrees of
// freedom, its noise and 90 % interval; it returns the arms with one (the
// judged arms), the others INCONCLUSIVE unless INCOMPLETE.
func estimateNoise(rep *Report, o Options, repSS, repDF float64, q quantiles) []*ArmReport {
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
	var judged []*ArmReport
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
		a.mean = sumL / k
		a.DeltaPct = ptr(round(pct(a.mean), 3))
		if source != "" && df < minIntervalDF {
			source = fmt.Sprintf("too few: %s; an interval needs %d degrees of freedom or more (a third paired point, a second result per point and side, or a calibration, sweep compare --calibrate, would give them)",
				source, minIntervalDF)
			a.NoiseSource, a.NoisePct, a.NoiseDF = source, round(100*math.Sqrt(sigma2), 3), int(df)
			if a.Verdict == "" {
				a.Verdict = Inconclusive
			}
			continue
		}
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
		a.sigma2, a.df = sigma2, df
		a.se = math.Sqrt(sigma2*sumQ) / k
		a.CIPct = pctCI(q.interval(a.mean, a.se, a.df, ciAlpha))
		judged = append(judged, a)
	}
	return judged
}

// quantiles memoises the Student t quantiles of a comparison's
// intervals, which its arms and points share: a few levels and degrees
// of freedom, many intervals.
type quantiles map[[2]float64]float64

// interval is the two-sided interval that leaves out level of a log
// change l with standard error se on df degrees of freedom.
func (q quantiles) interval(l, se, df, level float64) (lo, hi float64) {
	k := [2]float64{level, df}
	t, ok := q[k]
	if !ok {
		t = studentT(1-level/2, df)
		q[k] = t
	}
	return l - t*se, l + t*se
}

// pctCI is the interval [lo, hi] of log changes in percent, as the report
// prints it.
func pctCI(lo, hi float64) *[2]float64 {
	return &[2]float64{round(pct(lo), 3), round(pct(hi), 3)}
}

// pointSE is the standard error of the change at a's i-th judged point.
func (a *ArmReport) pointSE(i int) float64 { return math.Sqrt(a.sigma2 * a.qs[i]) }

// judgeArms gives each judged arm its family CI: its pooled change's
// interval at its level of Holm's step-down over the judged arms
// (ciAlpha family-wise), which decides whether the pooled change
// regresses.
func judgeArms(arms []*ArmReport, o Options, q quantiles) {
	p := make([]float64, len(arms))
	for i, a := range arms {
		p[i] = regressionP(a.mean, a.se, a.df, o)
	}
	levels := holm(p, ciAlpha, func(j int, level float64) bool {
		lo, hi := q.interval(arms[j].mean, arms[j].se, arms[j].df, level)
		return verdict(lo, hi, o) == Regression
	})
	for i, a := range arms {
		a.level = levels[i]
		a.FamilyCIPct = pctCI(q.interval(a.mean, a.se, a.df, a.level))
		a.FamilyConfidencePct = round(100*(1-a.level), 3)
	}
}

// judgePoints gives every judged point of the judged arms its interval
// at its level of Holm's step-down over all of them (pointAlpha
// family-wise) and the verdict read from it as an arm's is. It returns
// how many points the family holds.
func judgePoints(arms []*ArmReport, o Options, q quantiles) int {
	type ref struct {
		a *ArmReport
		i int // index in a.logs
	}
	var refs []ref
	var p []float64
	for _, a := range arms {
		for i, l := range a.logs {
			refs = append(refs, ref{a, i})
			p = append(p, regressionP(l, a.pointSE(i), a.df, o))
		}
	}
	levels := holm(p, pointAlpha, func(j int, level float64) bool {
		r := refs[j]
		lo, hi := q.interval(r.a.logs[r.i], r.a.pointSE(r.i), r.a.df, level)
		return verdict(lo, hi, o) == Regression
	})
	for j, r := range refs {
		r.a.levels = append(r.a.levels, levels[j])
		lo, hi := q.interval(r.a.logs[r.i], r.a.pointSE(r.i), r.a.df, levels[j])
		pt := &r.a.Points[r.a.at[r.i]]
		pt.CIPct = pctCI(lo, hi)
		pt.ConfidencePct = round(100*(1-levels[j]), 3)
		pt.Verdict = verdict(lo, hi, o)
	}
	return len(refs)
}

// decideArm gives a judged arm its verdict: REGRESSION when its family
// CI or one of its points' CI lies beyond the tolerance, else what its
// own 90 % interval says, except that it is INCONCLUSIVE where the
// correction alone keeps it from regressing: its own 90 % interval lies
// beyond the tolerance, or one of its points' intervals at 99 % over the
// arm's own points (Bonferroni) does. So the correction turns a
// REGRESSION noise across many arms could explain into INCONCLUSIVE,
// never into PASS. An INCOMPLETE arm stays so.
func decideArm(a *ArmReport, c Correction, o Options, q quantiles) {
	lo, hi := q.interval(a.mean, a.se, a.df, ciAlpha)
	own := verdict(lo, hi, o)
	flo, fhi := q.interval(a.mean, a.se, a.df, a.level)
	pooled := own
	switch fam := verdict(flo, fhi, o); {
	case fam == Regression:
		pooled = Regression
	case own == Regression:
		pooled = Inconclusive
	}
	if a.Verdict == Incomplete {
		return
	}
	regressing := concsWith(a, Regression)
	var alone []int // beyond the tolerance alone, not family-wise
	if len(regressing) == 0 {
		alone = regressingAlone(a, o, q)
	}
	a.Verdict = pooled
	switch {
	case len(regressing) > 0:
		a.Verdict = Regression
	case len(alone) > 0 && (pooled == Pass || pooled == Improvement):
		a.Verdict = Inconclusive
	}
	a.Why = why(a, pooled, own, regressing, c, o)
	if len(alone) > 0 && pooled != Regression {
		a.Why = aloneText(a, pooled, alone, c, o)
	}
	if past := pastCliffConcs(a.Points); len(past) > 0 {
		a.Why += fmt.Sprintf("; %s past BASE's cliff (its throughput below half of its highest at a lower concurrency): not judged, a thrashing engine's results vary far beyond the arm's noise", concList(past))
	}
	if a.Verdict == Inconclusive {
		a.ReplicatesNeeded = advice(a, hi-a.mean, fhi-a.mean, alone, o, q)
	}
}

// regressingAlone lists the concurrencies of a's judged points whose
// interval at 99 % over the arm's own k points (Bonferroni: each at
// 1 − 0.01/k) lies beyond the tolerance: those that would regress were
// its points not one family with the other arms'.
func regressingAlone(a *ArmReport, o Options, q quantiles) []int {
	var out []int
	for i, l := range a.logs {
		lo, hi := q.interval(l, a.pointSE(i), a.df, pointAlpha/float64(len(a.logs)))
		if verdict(lo, hi, o) == Regression {
			out = append(out, a.Points[a.at[i]].Conc)
		}
	}
	return out
}

// advice is how many results per point and side would likely decide an
// INCONCLUSIVE arm: make its pooled change's interval clear the
// tolerance line (its family CI of half-width fhw on the side of a loss,
// its 90 % interval of half-width hw on the other) and those of the
// points in alone their family CIs.
func advice(a *ArmReport, hw, fhw float64, alone []int, o Options, q quantiles) int {
	if verdict(a.mean, a.mean, o) == Regression {
		hw = fhw
	}
	n := replicatesNeeded(a.mean, hw, a.reps, o)
	for i, l := range a.logs {
		if slices.Contains(alone, a.Points[a.at[i]].Conc) {
			lo, _ := q.interval(l, a.pointSE(i), a.df, a.levels[i])
			n = max(n, replicatesNeeded(l, l-lo, a.reps, o))
		}
	}
	return n
}

// concsWith lists the concurrencies of a's points whose verdict is v.
func concsWith(a *ArmReport, v Decision) []int {
	var out []int
	for _, p := range a.Points {
		if p.Verdict == v {
			out = append(out, p.Conc)
		}
	}
	return out
}

// aloneText says why an arm is INCONCLUSIVE whose points in alone lie
// beyond the tolerance at 99 % over the arm's own points but not
// family-wise: after what its pooled change says (a.Why), or instead of
// "no point's lies beyond it" where the pooled change passes.
func aloneText(a *ArmReport, pooled Decision, alone []int, c Correction, o Options) string {
	s := fmt.Sprintf("%s beyond %s at 99 %% over this arm's own %s but not at %g %% family-wise over the comparison's %s: more results per point would tell",
		concList(alone)+plural.Word(len(alone), " lies", " lie"), tolText(o), plural.Count(len(a.logs), "point", "points"), c.PointConfidencePct, plural.Count(c.Points, "point", "points"))
	switch pooled {
	case Pass:
		return fmt.Sprintf("the pooled change's 90 %% interval lies within %s, but %s", tolText(o), s)
	case Improvement:
		return fmt.Sprintf("the pooled change's 90 %% interval lies beyond %s, an improvement, but %s", strings.NewReplacer("-", "+", "+", "-").Replace(tolText(o)), s)
	}
	return a.Why + "; " + s
}

// why says what decided an arm's pooled verdict: its pooled change, or
// the points that regress beside a pooled change that does not.
func why(a *ArmReport, pooled, own Decision, regressing []int, c Correction, o Options) string {
	line := tolText(o)
	switch {
	case len(regressing) > 0 && pooled != Regression:
		return fmt.Sprintf("%s beyond %s (%s %g %% family-wise %s) while the pooled change is %s: a change confined to some points is diluted in the pooled one", regressVerb(regressing), line, plural.Word(len(regressing), "its", "their"), c.PointConfidencePct, plural.Word(len(regressing), "interval", "intervals"), pooled)
	case len(regressing) > 0:
		return fmt.Sprintf("the pooled change's %s lies beyond %s, and so %s", familyCIText(a, c), line, plural.Word(len(regressing), "does "+concList(regressing)+"'s", "do those of "+concList(regressing)))
	case pooled == Regression:
		return fmt.Sprintf("the pooled change's %s lies beyond %s (no single point's does)", familyCIText(a, c), line)
	case own == Regression:
		return fmt.Sprintf("the pooled change's own 90 %% interval lies beyond %s, but not its %s: with %s, one lies this far by noise alone too often to call it a regression", line, familyCIText(a, c), plural.Count(c.Arms, "arm", "arms"))
	case pooled == Inconclusive:
		return fmt.Sprintf("the pooled change's 90 %% interval straddles %s", line)
	case pooled == Improvement:
		return fmt.Sprintf("the pooled change's 90 %% interval lies beyond %s, an improvement, and no point's lies beyond %s", strings.NewReplacer("-", "+", "+", "-").Replace(line), line)
	}
	return fmt.Sprintf("the pooled change's 90 %% interval lies within %s and no point's lies beyond it", line)
}

// familyCIText names an arm's family CI: "99.167 % interval (Holm, 90 %
// family-wise over 12 arms)".
func familyCIText(a *ArmReport, c Correction) string {
	return fmt.Sprintf("%g %% interval (Holm, %g %% family-wise over %s)", a.FamilyConfidencePct, c.ArmConfidencePct, plural.Count(c.Arms, "arm", "arms"))
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

// replicatesNeeded is how many results per point and side would likely
// make the interval clear the tolerance line, given the half-width hw
// with reps results per point and side now.
func replicatesNeeded(l, hw, reps float64, o Options) int {
	dist := math.Abs(l - toleranceLine(o))
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
