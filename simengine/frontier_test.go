package simengine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// armCurveOf is one arm of a key with its steady-state points at its
// official concurrencies, in ascending order.
type armCurveOf struct {
	arm plannedArm
	pts []armPoint
}

// steadyCurve is an arm's steady state (steadyPoint) at each distinct
// official concurrency, in ascending order.
func steadyCurve(a plannedArm) armCurveOf {
	var pts []armPoint
	seen := map[int]bool{}
	for i, c := range a.concs {
		if !seen[c] {
			seen[c] = true
			pts = append(pts, steadyPoint(a.points[i], c, a.traces))
		}
	}
	slices.SortFunc(pts, func(x, y armPoint) int { return x.conc - y.conc })
	return armCurveOf{arm: a, pts: pts}
}

// dominates reports whether q is at least as good as p on the frontier
// InferenceX compares a key's arms on (throughput per GPU against
// interactivity, both higher is better) and better in one of them: the
// upper-right frontier of knee.Frontiers, except that there a tie goes to
// the point sorted first, where here it dominates neither way.
func dominates(q, p armPoint) bool {
	return q.tputPerGPU >= p.tputPerGPU && q.interactivity >= p.interactivity &&
		(q.tputPerGPU > p.tputPerGPU || q.interactivity > p.interactivity)
}

// frontierStep is the concurrency the frontier rule reads an arm at: the
// lowest one above its window's top that another arm of the key
// measures (where the key has an official alternative), or the doubling
// of its top when no other arm measures above it (the next step of a
// doubling grid).
func frontierStep(a armCurveOf, key []armCurveOf) int {
	top := a.pts[len(a.pts)-1].conc
	step := 0
	for _, o := range key {
		if o.arm.name == a.arm.name {
			continue
		}
		for _, p := range o.pts {
			if p.conc > top && (step == 0 || p.conc < step) {
				step = p.conc
			}
		}
	}
	if step == 0 {
		step = 2 * top
	}
	return step
}

// frontierVerdict is the frontier rule, for an arm whose simulated knee
// is not in its window: InferenceX keeps the points of a key's arms that
// make its Pareto frontier (MODELS.md's AgentX guidelines; the GLM-5.2
// FP4 MI355X key: "SA selects the Pareto-optimal arm per concurrency"),
// so an arm's window may end where another arm takes the frontier over,
// not at a knee. The arm agrees by the frontier when
//   - beyond, the arm's own point at frontierStep, still gives at least
//     the throughput of its window's top (past a cliff, any point is
//     dominated: the knee lies between, and that is the knee's question),
//   - an official point of another arm of the key dominates beyond: at
//     least its throughput per GPU at at least its interactivity, and
//     more of one. A tie does not count: two arms of one engine that
//     differ only by an offload tier are one curve in the model until
//     the pool runs out, so an offload arm taking over at the same point
//     says the hardware's pool ran out there, a knee the model misses,
//     not a frontier, and
//   - at least one point of its window is strictly dominated by no other
//     arm's official point (the window is a segment of the frontier; an
//     arm off the frontier everywhere has a window the frontier cannot
//     explain).
//
// why says which condition decided.
func frontierVerdict(a armCurveOf, beyond armPoint, key []armCurveOf) (ok bool, why string) {
	onFront := false
	for _, p := range a.pts {
		onFront = onFront || dominator(p, a, key) == nil
	}
	top := a.pts[len(a.pts)-1]
	q := dominator(beyond, a, key)
	switch {
	case !onFront:
		return false, "frontier: no window point on the frontier"
	case beyond.tputPerGPU < top.tputPerGPU:
		return false, fmt.Sprintf("frontier: c%d %s below its top c%d %s", beyond.conc, frontPoint(beyond), top.conc, frontPoint(top))
	case q == nil:
		return false, fmt.Sprintf("frontier: c%d %s not dominated", beyond.conc, frontPoint(beyond))
	}
	return true, fmt.Sprintf("frontier: c%d %s dominated by %s c%d %s", beyond.conc, frontPoint(beyond), q.arm, q.pt.conc, frontPoint(q.pt))
}

// frontPoint prints a point's frontier coordinates.
func frontPoint(p armPoint) string {
	return fmt.Sprintf("(%.0f tok/s/GPU, %.1f tok/s/user)", p.tputPerGPU, p.interactivity)
}

// dominatingPoint is an official point of a key's arm that dominates
// another point.
type dominatingPoint struct {
	arm string
	pt  armPoint
}

// dominator is the official point of another arm of the key than a that
// dominates p with the most throughput per GPU, or nil.
func dominator(p armPoint, a armCurveOf, key []armCurveOf) *dominatingPoint {
	var best *dominatingPoint
	for _, o := range key {
		if o.arm.name == a.arm.name {
			continue
		}
		for _, q := range o.pts {
			if dominates(q, p) && (best == nil || q.tputPerGPU > best.pt.tputPerGPU) {
				best = &dominatingPoint{arm: o.arm.name, pt: q}
			}
		}
	}
	return best
}

// keyVerdict is how a key's arms compare with its official windows.
type keyVerdict struct {
	strict, byPeak, byFrontier bool
	why                        []string // one per arm that does not agree strictly
}

// keyCurves is every arm of a key at steady state (steadyCurve).
func keyCurves(arms []plannedArm) []armCurveOf {
	key := make([]armCurveOf, len(arms))
	for i, a := range arms {
		key[i] = steadyCurve(a)
	}
	return key
}

// judgeKey runs each arm of a key at steady state over its official
// concurrencies and judges it (armVerdict; for an arm that does not
// agree strictly, frontierVerdict at frontierStep too).
func judgeKey(t testing.TB, arms []plannedArm) keyVerdict {
	t.Helper()
	key := keyCurves(arms)
	v := keyVerdict{strict: true, byPeak: true, byFrontier: true}
	for _, a := range key {
		ok, peak, w := armVerdict(a.arm, a.pts)
		v.byPeak = v.byPeak && peak
		if ok {
			continue
		}
		v.strict = false
		step := frontierStep(a, key)
		front, fw := frontierVerdict(a, steadyPoint(a.arm.at(t, step), step, a.arm.traces), key)
		v.byFrontier = v.byFrontier && front
		v.why = append(v.why, w+" ("+fw+")")
	}
	return v
}

// TestFrontierRuleFlipsOnlyFrontierSegments holds the frontier rule to
// two real keys. GLM-5.2 FP4 on MI355X pairs TP4/EP4 with DRAM offload
// (c1-c16) with a TP8/EP8 arm without offload at c1, c2 and c4, "for
// low-latency comparison" (its config notes): TP8 still rises at c4
// (its pool holds about ten 340k-token sessions), and at c8 the TP4 arm's
// c4 gives more throughput per GPU at more interactivity, so the rule
// flips it. Qwen3.5 FP4 on MI355X ends TP2/EP2 at c20 beside a TP4 arm to
// c40, but TP2 gives more throughput per GPU than any TP4 point at c24:
// the rule keeps it a disagreement (its window ends at an HBM capacity
// knee, the changelog says, which the model places later). Two more
// keys hold the rule's other conditions: an arm past its own cliff at
// the next point, and an arm off the frontier everywhere.
func TestFrontierRuleFlipsOnlyFrontierSegments(t *testing.T) {
	for _, tc := range []struct {
		key, arm string
		step     int
		flips    bool
		why      string
	}{
		{"glm5.2-fp4-mi355x-sglang-agentic-mtp", "tp8 ep8 dpa=false", 8, true, "dominated by tp4 ep4 dpa=false kv=dram c4"},
		{"qwen3.5-fp4-mi355x-sglang-agentic-mtp", "tp2 ep2 dpa=false", 24, false, "not dominated"},
		// Resident to c10, LMCache at c16: the pool (12.5 long sessions)
		// runs out between, so c16 is past the arm's own cliff.
		{"minimaxm3-fp8-mi300x-vllm-agentic-mtp", "tp8 ep1 dpa=false", 16, false, "below its top c10"},
		// TP4 dominates every TP2 point in the model.
		{"minimaxm3-fp4-mi355x-vllm-agentic-mtp", "tp2 ep1 dpa=false", 8, false, "no window point on the frontier"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			arms := plannedArms(t, tc.key)
			key := keyCurves(arms)
			i := slices.IndexFunc(key, func(c armCurveOf) bool { return c.arm.name == tc.arm })
			require.GreaterOrEqual(t, i, 0)
			a := key[i]
			ok, _, w := armVerdict(a.arm, a.pts)
			require.False(t, ok, "the arm disagrees strictly: %s", w)
			step := frontierStep(a, key)
			assert.Equal(t, tc.step, step)
			front, why := frontierVerdict(a, steadyPoint(a.arm.at(t, step), step, a.arm.traces), key)
			t.Log(why)
			assert.Equal(t, tc.flips, front, why)
			assert.Contains(t, why, tc.why)
			v := judgeKey(t, arms)
			assert.Equal(t, tc.flips, v.byFrontier, strings.Join(v.why, "; "))
		})
	}
}

// TestFrontierRuleConditions holds frontierVerdict's three conditions on
// made-up curves: an arm dominated at every point of its window is not a
// frontier segment, however dominated it is beyond it; a tie beyond,
// a point more efficient than the other arm's, or one past the
// arm's own cliff, does not.
func TestFrontierRuleConditions(t *testing.T) {
	pt := func(c int, tput, inter float64) armPoint {
		return armPoint{conc: c, tputPerGPU: tput, interactivity: inter}
	}
	low := armCurveOf{arm: plannedArm{name: "low"}, pts: []armPoint{pt(1, 100, 50), pt(2, 180, 40)}}
	high := armCurveOf{arm: plannedArm{name: "high"}, pts: []armPoint{pt(1, 150, 60), pt(4, 400, 45)}}
	key := []armCurveOf{low, high}
	assert.Equal(t, 4, frontierStep(low, key))
	assert.Equal(t, 8, frontierStep(high, key), "no other arm above: the doubling")
	ok, why := frontierVerdict(low, pt(4, 250, 30), key)
	assert.False(t, ok, why)
	assert.Contains(t, why, "no window point on the frontier")
	// The same arm with a low-latency point the other arm does not beat.
	low.pts[0] = pt(1, 100, 80)
	ok, why = frontierVerdict(low, pt(4, 250, 30), []armCurveOf{low, high})
	assert.True(t, ok, why)
	// A tie with the other arm's point does not count.
	ok, why = frontierVerdict(low, pt(4, 400, 45), []armCurveOf{low, high})
	assert.False(t, ok, why)
	// Not dominated beyond: more throughput than any point of the other arm.
	ok, why = frontierVerdict(low, pt(4, 450, 30), []armCurveOf{low, high})
	assert.False(t, ok, why)
	assert.Contains(t, why, "not dominated")
	// Past its own cliff, the arm's knee lies between: not a frontier question.
	ok, why = frontierVerdict(low, pt(4, 20, 1), []armCurveOf{low, high})
	assert.False(t, ok, why)
	assert.Contains(t, why, "below its top")
}
