package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"sweep/internal/pyjson"
	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// A seeded corpus of base/head pairs with planted effects, built the way
// the step's hidden corpus is described (each result's throughput is the
// arm's noise-free saturating curve, times the planted change on HEAD,
// times 1 + N(0, σ)), scored by the same rules: false alarms at most 5 %
// where nothing beyond -tol/2 was planted, never PASS and at least 90 %
// REGRESSION where the planted loss is at least twice the tolerance at
// σ ≤ tol/2 on 3 or more points, never PASS where it is at least the
// tolerance, and 90 % intervals that contain the planted pooled effect for
// at least three arms in four.

type plant struct {
	kind   string // none, uniform, past-knee, improvement
	effect float64
}

type synthArm struct {
	id     result.Identity
	grid   []int
	a, s   float64 // curve: A·c/(c^p+s^p)^(1/p) with a gentle decline past 2s
	p      float64
	effect map[int]float64 // planted change per conc (fraction)
}

var grids = [][]int{
	{1, 2, 4, 8, 16, 32, 64},
	{4, 8, 16, 32, 64, 128},
	{1, 2, 4, 8, 16, 32, 64, 128, 256},
	{8, 16, 32, 64},
	{1, 5, 10, 15, 20},
	{16, 32, 64},
	{15, 20, 25, 30, 32, 34, 36, 38, 40},
}

func identity(tp, ep int, kv string) result.Identity {
	var id result.Identity
	vals := map[string]any{"infmax_model_prefix": "qwen3.5", "hw": "mi325x-amds", "framework": "sglang", "precision": "fp8",
		"spec_decoding": "mtp", "scenario_type": "agentic", "disagg": false, "is_multinode": false, "tp": tp, "ep": ep,
		"dp_attention": "false", "kv_offloading": kv, "pp": 1}
	for i, k := range result.IdentityKeys {
		if v, ok := vals[k]; ok { // no multi-node shape
			id[i], _ = json.Marshal(v)
		}
	}
	return id
}

func (a *synthArm) curve(c int) float64 {
	x := float64(c)
	t := a.a * x / math.Pow(math.Pow(x, a.p)+math.Pow(a.s, a.p), 1/a.p)
	if x > 2*a.s {
		t *= math.Pow(2*a.s/x, 0.05)
	}
	return t
}

func sample(rng *rand.Rand, c int, v, sigma float64) knee.Sample {
	tps := v * (1 + sigma*rng.NormFloat64())
	iv := pyjson.Rounded(2000 / (1 + float64(c)/4) * (1 + sigma*rng.NormFloat64()))
	return knee.Sample{Conc: c, TotalTPS: &tps, Intvty: result.Stats{P50: &iv}, File: fmt.Sprintf("c%d", c)}
}

type corpusCase struct {
	base, head []*knee.Arm
	tol, sigma float64
	planted    int             // index of the planted arm, -1 when none
	truth      map[int]float64 // per arm: planted pooled effect in percent (equal weights in log)
	class      string
}

func makeCase(rng *rand.Rand) corpusCase {
	tol := []float64{3, 5}[rng.IntN(2)]
	sigma := []float64{0.005, 0.01, 0.015, 0.02, 0.03, 0.045, 0.06}[rng.IntN(7)]
	nArms := 1 + rng.IntN(3)
	repsB, repsH := 1+rng.IntN(3), 1+rng.IntN(3)
	if rng.IntN(2) == 0 {
		repsB, repsH = 1, 1
	}
	pl := plant{kind: "none"}
	switch rng.IntN(6) {
	case 0, 1:
	case 2:
		pl = plant{"uniform", -tol * (2 + 3*rng.Float64()) / 100}
	case 3:
		pl = plant{"uniform", -tol * (0.3 + 1.5*rng.Float64()) / 100}
	case 4:
		pl = plant{"past-knee", -tol * (2 + 4*rng.Float64()) / 100}
	case 5:
		pl = plant{"improvement", tol * (0.5 + 2*rng.Float64()) / 100}
	}
	cc := corpusCase{tol: tol, sigma: sigma, planted: -1, truth: map[int]float64{}}
	if pl.kind != "none" {
		cc.planted = rng.IntN(nArms)
	}
	for i := range nArms {
		grid := grids[rng.IntN(len(grids))]
		sa := &synthArm{id: identity(1<<i, 1, "none"), grid: grid, a: 800 + 4000*rng.Float64(),
			s: float64(grid[len(grid)/2]) * (0.3 + 0.7*rng.Float64()), p: 1 + 3*rng.Float64(), effect: map[int]float64{}}
		var sumLog float64
		for j, c := range grid {
			e := 0.0
			if i == cc.planted {
				switch pl.kind {
				case "uniform", "improvement":
					e = pl.effect
				case "past-knee":
					knee := len(grid) / 2
					if j > knee {
						e = pl.effect * math.Min(1, float64(j-knee)/2)
					}
				}
			}
			sa.effect[c] = e
			sumLog += math.Log1p(e)
		}
		cc.truth[i] = 100 * (math.Exp(sumLog/float64(len(grid))) - 1)
		b, h := &knee.Arm{Identity: sa.id}, &knee.Arm{Identity: sa.id}
		for _, c := range grid {
			for range max(1, repsB+rng.IntN(2)-rng.IntN(2)) {
				b.Samples = append(b.Samples, sample(rng, c, sa.curve(c), sigma))
			}
			for range max(1, repsH+rng.IntN(2)-rng.IntN(2)) {
				h.Samples = append(h.Samples, sample(rng, c, sa.curve(c)*(1+sa.effect[c]), sigma))
			}
		}
		cc.base, cc.head = append(cc.base, b), append(cc.head, h)
	}
	e := 0.0
	if cc.planted >= 0 {
		e = cc.truth[cc.planted]
	}
	// The corpus' classes (the shortest grid has 3 points).
	switch {
	case e <= -2*tol && 100*sigma <= tol/2 && pl.kind == "uniform":
		cc.class = "REGRESSION"
	case e <= -tol:
		cc.class = "NOT_PASS"
	case e > -tol/2:
		cc.class = "NOT_REGRESSION"
	default:
		cc.class = "ANY"
	}
	return cc
}

func TestSyntheticCorpus(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261204, 17))
	counts := map[string]int{}
	var falseAlarms, passedRegressions, detected, covered, arms int
	for range 1500 {
		cc := makeCase(rng)
		rep := Compare(cc.base, cc.head, Options{Tolerance: cc.tol})
		counts[cc.class]++
		switch cc.class {
		case "NOT_REGRESSION":
			if rep.Verdict == Regression {
				falseAlarms++
			}
		case "REGRESSION", "NOT_PASS":
			if rep.Verdict == Pass {
				passedRegressions++
			}
			if cc.class == "REGRESSION" && rep.Verdict == Regression {
				detected++
			}
			if rep.Verdict == Regression {
				for i, a := range rep.Arms {
					if (a.Verdict == Regression) != (i == cc.planted) {
						t.Errorf("%s case: arm %s verdict %s, planted arm %d", cc.class, a.Arm, a.Verdict, cc.planted)
					}
				}
			}
		}
		for i, a := range rep.Arms {
			if a.CIPct == nil {
				continue
			}
			arms++
			if tr := cc.truth[i]; a.CIPct[0] <= tr && tr <= a.CIPct[1] {
				covered++
			}
		}
	}
	rate := func(n, d int) float64 { return float64(n) / float64(max(d, 1)) }
	t.Logf("cases %v; false alarms %d (%.1f%%); regressions passed %d; detected %d of %d (%.1f%%); coverage %.1f%% of %d arms",
		counts, falseAlarms, 100*rate(falseAlarms, counts["NOT_REGRESSION"]), passedRegressions, detected, counts["REGRESSION"],
		100*rate(detected, counts["REGRESSION"]), 100*rate(covered, arms), arms)
	if rate(falseAlarms, counts["NOT_REGRESSION"]) > 0.05 {
		t.Errorf("false alarms %d of %d: want at most 5 %%", falseAlarms, counts["NOT_REGRESSION"])
	}
	if passedRegressions > 0 {
		t.Errorf("%d planted regressions of at least the tolerance passed: want none", passedRegressions)
	}
	if rate(detected, counts["REGRESSION"]) < 0.9 {
		t.Errorf("detected %d of %d clear regressions: want at least 90 %%", detected, counts["REGRESSION"])
	}
	if rate(covered, arms) < 0.85 {
		t.Errorf("90 %% intervals covered the planted effect for %d of %d arms: want at least 85 %%", covered, arms)
	}
}
