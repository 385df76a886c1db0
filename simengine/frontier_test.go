package simengine

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/knee"
)

// windowPoint is a steady-state point as the window rules read it.
func (p armPoint) windowPoint() knee.WindowPoint {
	return knee.WindowPoint{Conc: p.conc, Throughput: p.tputPerGPU, Interactivity: p.interactivity, Failed: p.failed}
}

// steadyCurve is an arm's steady state (steadyPoint) at each distinct
// official concurrency, in ascending order, as its window
// (knee.CurveWindow).
func steadyCurve(a plannedArm) knee.Window {
	var pts []knee.WindowPoint
	seen := map[int]bool{}
	for i, c := range a.concs {
		if !seen[c] {
			seen[c] = true
			pts = append(pts, steadyPoint(a.points[i], c, a.traces).windowPoint())
		}
	}
	slices.SortFunc(pts, func(x, y knee.WindowPoint) int { return x.Conc - y.Conc })
	return knee.CurveWindow(a.name, pts)
}

// keyCurves is every arm of a key at steady state (steadyCurve).
func keyCurves(arms []plannedArm) []knee.Window {
	key := make([]knee.Window, len(arms))
	for i, a := range arms {
		key[i] = steadyCurve(a)
	}
	return key
}

// steadyBeyond reads an arm of arms at steady state at a concurrency
// outside its window (the recipe planned again there: plannedArm.at).
func steadyBeyond(t testing.TB, arms []plannedArm) knee.Beyond {
	return func(w knee.Window, conc int) (knee.WindowPoint, bool, error) {
		i := slices.IndexFunc(arms, func(a plannedArm) bool { return a.name == w.Arm })
		require.GreaterOrEqual(t, i, 0, w.Arm)
		a := arms[i]
		return steadyPoint(a.at(t, conc), conc, a.traces).windowPoint(), true, nil
	}
}

// judgeKey judges each arm of a key at steady state over its official
// concurrencies with the window rules (knee.JudgeKey; an arm that does
// not agree strictly read at its frontier step too).
func judgeKey(t testing.TB, arms []plannedArm) knee.KeyVerdict {
	t.Helper()
	v, err := knee.JudgeKey(keyCurves(arms), steadyBeyond(t, arms))
	require.NoError(t, err)
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
		{"glm5.2-fp4-mi355x-sglang-agentic-mtp", "tp8 ep8", 8, true, "dominated by tp4 ep4 kv:dram c4"},
		{"qwen3.5-fp4-mi355x-sglang-agentic-mtp", "tp2 ep2", 24, false, "not dominated"},
		// Resident to c10, LMCache at c16: the pool (12.5 long sessions)
		// runs out between, so c16 is past the arm's own cliff.
		{"minimaxm3-fp8-mi300x-vllm-agentic-mtp", "tp8", 16, false, "below its top c10"},
		// TP4 dominates every TP2 point in the model.
		{"minimaxm3-fp4-mi355x-vllm-agentic-mtp", "tp2", 8, false, "no window point on the frontier"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			arms := plannedArms(t, tc.key)
			key := keyCurves(arms)
			i := slices.IndexFunc(key, func(w knee.Window) bool { return w.Arm == tc.arm })
			require.GreaterOrEqual(t, i, 0)
			a := key[i]
			ok, _, w := a.Judge()
			require.False(t, ok, "the arm disagrees strictly: %s", w)
			step := knee.FrontierStep(a, key)
			assert.Equal(t, tc.step, step)
			beyond, _, err := steadyBeyond(t, arms)(a, step)
			require.NoError(t, err)
			front, why := knee.FrontierVerdict(a, beyond, key)
			t.Log(why)
			assert.Equal(t, tc.flips, front, why)
			assert.Contains(t, why, tc.why)
			v := judgeKey(t, arms)
			assert.Equal(t, tc.flips, v.ByFrontier, strings.Join(v.Why, "; "))
		})
	}
}
