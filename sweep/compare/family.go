package compare

import (
	"fmt"
	"sort"

	"sweep/internal/plural"
)

// ciAlpha is what the arms' intervals of their pooled changes leave out
// together: 90 % family-wise over the arms (Holm), each arm's interval
// at 1 − 0.10/k to 90 % by its step; an arm's own 90 % interval (which
// decides PASS) leaves it out alone.
const ciAlpha = 0.10

// pointAlpha is what the points' intervals leave out together: 99 %
// family-wise over every judged point of the comparison (Holm). A
// point's REGRESSION is a second way for its arm to regress, beside the
// pooled change, so it is held to a stricter level: it adds at most
// 0.5 % (one-sided) to the comparison's false REGRESSIONs where the
// pooled changes allow 5 %.
const pointAlpha = 0.01

// holm is Holm's step-down procedure over hypotheses of no loss beyond
// the tolerance with one-sided p-values p (regressionP), at family level
// alpha (what their two-sided intervals leave out together): taken in
// order of p, the i-th (from 0) of n is judged at level alpha/(n−i)
// while every one before it was rejected; the first that is not stops
// it, and it and every later one are judged at that step's level.
// rejects says whether hypothesis j's interval at a level lies beyond the
// tolerance; holm returns each hypothesis's level. A false rejection
// anywhere in the family has a chance of at most alpha/2 whatever the
// hypotheses' dependence (they share a noise estimate), as with
// Bonferroni's alpha/n for every one, which is its first step; each
// rejection loosens the next step, so a change that slows every arm is
// found in every arm.
func holm(p []float64, alpha float64, rejects func(j int, level float64) bool) []float64 {
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] < p[order[b]] })
	levels := make([]float64, len(p))
	for i, j := range order {
		level := alpha / float64(len(p)-i)
		if !rejects(j, level) {
			for _, r := range order[i:] {
				levels[r] = level
			}
			break
		}
		levels[j] = level
	}
	return levels
}

// newCorrection describes the families of a comparison whose arm family
// holds arms pooled changes and whose point family holds points.
func newCorrection(arms, points int, o Options) Correction {
	c := Correction{Method: "holm", Arms: arms, ArmConfidencePct: round(100*(1-ciAlpha), 3), Points: points,
		PointConfidencePct: round(100*(1-pointAlpha), 3), FalseRegressionPct: round(100*(ciAlpha+pointAlpha)/2, 3)}
	if arms == 0 {
		c.Rule = "no arm has an interval (a noise estimate of 2 degrees of freedom or more), so none is read as a REGRESSION"
		return c
	}
	side := "above"
	if o.Metric.LowerIsBetter() {
		side = "below"
	}
	c.Rule = fmt.Sprintf("REGRESSION is read at %g %% family-wise over %s and %g %% over %s %s (Holm): "+
		"an arm regresses when its pooled change's %g%%-family CI (at its step of Holm's procedure over the arms) "+
		"or one of its points' %g%%-family CI (over the points) lies beyond %s, so noise alone reads REGRESSION "+
		"in at most %g %% of comparisons, however many arms; PASS needs every arm's own 90 %% CI %s %s "+
		"(every arm must pass, which needs no correction)",
		c.ArmConfidencePct, plural.Count(arms, "arm", "arms"), c.PointConfidencePct, plural.Word(arms, "its", "their"),
		plural.Count(points, "point", "points"), c.ArmConfidencePct, c.PointConfidencePct, tolText(o),
		c.FalseRegressionPct, side, tolText(o))
	return c
}
