// Package synth generates seeded discovery sweeps with a known knee: arms
// whose throughput follows a noise-free curve (saturating, post-knee
// cliff, unsaturated, saturated at the first point, or too few usable
// points), measured with multiplicative noise, spikes, replicates and
// failed points on doubling grids and on the agentic conc-lists of the
// shipped master configs. The knee benchmark and the command tests use it;
// WriteDir lays an arm out as InferenceX aggregate result files.
//
//	cases := synth.Corpus(seed, n)
//	for _, c := range cases { r := knee.Analyze(c.Arm, knee.Options{}); ... c.Truth ... }
package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"sweep/configs"
	"sweep/internal/pyjson"
	"sweep/metrics"
	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// Families of noise-free curves.
const (
	FamilySaturating     = "saturating"
	FamilyCliff          = "cliff"
	FamilyUnsaturated    = "unsaturated"
	FamilySaturatedAtMin = "saturated-at-min"
	FamilyInsufficient   = "insufficient"
	// FamilyDeclining saturates and then loses 1–8 % per doubling past
	// its peak, gently and with no failures (a scheduler thrashing, not a
	// KV cliff). Only ReviewCorpus draws it.
	FamilyDeclining = "declining"
	// FamilySoftKnee saturates with a soft bend (p 1.2–2.5) whose knee
	// is c32 of a doubling grid: the curve still climbs a few per cent a
	// doubling past it, so one noisy point below it can look like the
	// plateau. Only EdgeCorpus draws it.
	FamilySoftKnee = "soft-knee"
	// FamilyFlattening is still rising at the top of its grid, but only
	// just: the noise-free top gain is 10–25 % per doubling, the last
	// points bending towards a plateau the grid does not reach. Only
	// EdgeCorpus draws it.
	FamilyFlattening = "flattening"
)

// Case is one generated arm with its truth.
type Case struct {
	ID     string
	Family string
	Grid   string // "dbl-1-256" or "real:<key> tp..": where the grid came from
	Sigma  float64
	Mods   []string // spike, replicates, failed
	// Truth is the status of the noise-free curve on the usable grid (the
	// rule of testdata/knee/README.md); TrueKnee its knee (0 unless ok),
	// CFirst the first usable concurrency.
	Truth    knee.Status
	TrueKnee int
	CFirst   int
	Arm      *knee.Arm
	// Curve is the noise-free throughput per GPU at any concurrency.
	Curve func(c float64) float64 `json:"-"`
}

// Grids returns the concurrency grids cases are drawn on: doubling grids
// and every distinct agentic single-node conc-list (≥ 4 values) of the
// embedded master configs.
func Grids() []Grid {
	gs := []Grid{dbl(1, 256), dbl(4, 128), dbl(1, 1024), dbl(2, 64), dbl(1, 64)}
	m, err := configs.DefaultMasters()
	if err != nil {
		return gs
	}
	seen := map[string]bool{}
	for _, k := range m.Keys() {
		e, _ := m.Lookup(k)
		for _, a := range e.Scenarios.AgenticCoding {
			for _, s := range a.SearchSpace {
				if s.IsMultinode() || len(s.ConcList) < 4 {
					continue
				}
				c := slices.Clone(s.ConcList)
				sort.Ints(c)
				c = slices.Compact(c)
				if len(c) < 4 || seen[fmt.Sprint(c)] {
					continue
				}
				seen[fmt.Sprint(c)] = true
				gs = append(gs, Grid{Name: fmt.Sprintf("real:%s tp%d", k, *s.TP), Conc: c})
			}
		}
	}
	return gs
}

// Grid is a named list of concurrencies, ascending.
type Grid struct {
	Name string
	Conc []int
}

func dbl(lo, hi int) Grid {
	var c []int
	for x := lo; x <= hi; x *= 2 {
		c = append(c, x)
	}
	return Grid{Name: fmt.Sprintf("dbl-%d-%d", lo, hi), Conc: c}
}

// Corpus returns n cases drawn with seed: families in the proportions
// 40 % saturating, 20 % cliff, 15 % unsaturated, 15 % saturated-at-min,
// 10 % insufficient. Cases whose truth sits on a knife edge of the rule
// (top gain within 5 points of the 10 % gate, first point within 0.02 of
// 0.9 × peak) are redrawn.
func Corpus(seed uint64, n int) []*Case {
	return corpus(seed, n, Grids())
}

// DoublingGrids are the doubling grids over the concurrency ranges of a
// discovery sweep that DoublingCorpus draws on (peers' §3.2 simulated
// 1…1024): 9 to 11 points.
func DoublingGrids() []Grid {
	return []Grid{dbl(1, 256), dbl(1, 512), dbl(1, 1024), dbl(2, 512), dbl(4, 1024)}
}

// DoublingCorpus is Corpus on DoublingGrids only: the same families,
// noise and modifications, every arm's full grid a doubling one.
func DoublingCorpus(seed uint64, n int) []*Case {
	return corpus(seed, n, DoublingGrids())
}

// ReviewCorpus returns n cases drawn with seed on Grids and
// DoublingGrids alike, for reviewing the knee finder's decisions rather
// than for a benchmark's headline figure: fewer easy arms and more of the
// hard ones (30 % saturating, 15 % cliff, 15 % declining past the peak,
// 20 % unsaturated, 12 % saturated-at-min, 8 % insufficient), the same
// noise, modifications and knife-edge redraws as Corpus.
func ReviewCorpus(seed uint64, n int) []*Case {
	grids := append(Grids(), DoublingGrids()...)
	weights := []struct {
		fam string
		w   float64
	}{{FamilySaturating, 0.30}, {FamilyCliff, 0.15}, {FamilyDeclining, 0.15}, {FamilyUnsaturated, 0.20}, {FamilySaturatedAtMin, 0.12}, {FamilyInsufficient, 0.08}}
	return drawCorpus(seed^0x7265766965770000, n, grids, wideKnife, func(f float64) string {
		for _, x := range weights {
			if f < x.w {
				return x.fam
			}
			f -= x.w
		}
		return FamilyInsufficient
	})
}

func corpus(seed uint64, n int, grids []Grid) []*Case {
	return drawCorpus(seed, n, grids, wideKnife, corpusFamily)
}

// FieldCorpus is Corpus without its wide knife-edge redraws: arms whose
// noise-free top gain lies a few points either side of the 10 % gate, or
// whose first point is near 0.9 × peak, are kept as a real sweep keeps
// them (only draws within a hair of an edge, where the truth is a coin
// toss, are redrawn). It holds the near-edge arms a decision rule must
// weigh against the noise: saturating arms whose last doubling still
// gains 5-10 %, still-rising ones gaining 10-15 %.
func FieldCorpus(seed uint64, n int) []*Case {
	return drawCorpus(seed^0x6669656c64000000, n, Grids(), hairKnife, corpusFamily)
}

// corpusFamily picks Corpus's family from a uniform number in [0, 1).
func corpusFamily(f float64) string {
	{
		switch {
		case f < 0.40:
			return FamilySaturating
		case f < 0.60:
			return FamilyCliff
		case f < 0.75:
			return FamilyUnsaturated
		case f < 0.90:
			return FamilySaturatedAtMin
		}
		return FamilyInsufficient
	}
}

// edges are how near the rule's edges a draw may land: the noise-free top
// gain per doubling within gain of the 10 % gate, or the first point within
// first of 0.9 × peak, is redrawn.
type edges struct{ gain, first float64 }

var (
	wideKnife = edges{gain: 0.05, first: 0.02}
	hairKnife = edges{gain: 0.005, first: 0.002}
)

// drawCorpus draws n cases, each family picked by family from a uniform
// number in [0, 1).
func drawCorpus(seed uint64, n int, grids []Grid, knife edges, family func(float64) string) []*Case {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]*Case, 0, n)
	for len(out) < n {
		fam := family(rng.Float64())
		if c := draw(rng, fam, grids[rng.IntN(len(grids))], fmt.Sprintf("s%04d", len(out)+1), knife); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// EdgeCorpus returns n cases drawn with seed of the two kinds of arm a
// knee finder is most easily fooled by, half each: FamilySoftKnee on the
// doubling grids that hold c32 well inside them (EdgeGrids), and
// FamilyFlattening on Grids and DoublingGrids. Noise, modifications and
// truth are Corpus's; only draws within a hair of the rule's edges are
// redrawn, as in FieldCorpus.
func EdgeCorpus(seed uint64, n int) []*Case {
	rng := rand.New(rand.NewPCG(seed^0x65646765, seed^0x9e3779b97f4a7c15))
	rising := append(Grids(), DoublingGrids()...)
	soft := EdgeGrids()
	out := make([]*Case, 0, n)
	for len(out) < n {
		fam, grids := FamilySoftKnee, soft
		if len(out)%2 == 1 {
			fam, grids = FamilyFlattening, rising
		}
		if c := draw(rng, fam, grids[rng.IntN(len(grids))], fmt.Sprintf("e%04d", len(out)+1), hairKnife); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// EdgeGrids are the doubling grids FamilySoftKnee is drawn on: each
// holds c32 with at least two doublings either side.
func EdgeGrids() []Grid {
	return []Grid{dbl(1, 256), dbl(1, 512), dbl(1, 1024), dbl(2, 512), dbl(4, 1024), dbl(4, 128), dbl(8, 128)}
}

func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
}

// drawShape draws the family's curve shape over concurrencies c1..cn: the
// saturation scale s, and for cliffs where the cliff is, how much
// throughput each doubling past it loses and how fast errors grow there;
// for saturated-at-min arms sometimes a decline per doubling.
func drawShape(rng *rand.Rand, fam string, c1, cn float64) (s, cliff, drop, errRate, decline float64) {
	cliff = math.Inf(1)
	switch fam {
	case FamilySaturating, FamilyInsufficient:
		s = logUniform(rng, c1*1.2, cn/2.5)
	case FamilyCliff:
		s = logUniform(rng, c1*1.2, cn/4)
		cliff = s * logUniform(rng, 1.3, 3)
		drop = 0.05 + rng.Float64()*0.35
		errRate = 0.03 + rng.Float64()*0.2
	case FamilyDeclining:
		s = logUniform(rng, c1*1.2, cn/4)
		cliff = s * logUniform(rng, 1, 2.5)
		drop = 0.01 + rng.Float64()*0.07
	case FamilyUnsaturated:
		s = cn * logUniform(rng, 1.5, 8)
	case FamilyFlattening:
		s = cn * logUniform(rng, 0.25, 2)
	case FamilySaturatedAtMin:
		s = c1 / logUniform(rng, 3, 12)
		if rng.IntN(2) == 0 {
			decline = 0.01 + rng.Float64()*0.03
		}
	}
	return s, cliff, drop, errRate, decline
}

// draw makes one case or returns nil when the draw lands on a knife edge.
func draw(rng *rand.Rand, fam string, g Grid, id string, knife edges) *Case {
	conc := g.Conc
	c1, cn := float64(conc[0]), float64(conc[len(conc)-1])
	a := logUniform(rng, 2000, 30000)
	p := 1.2 + rng.Float64()*4.8
	s, cliff, drop, errRate, decline := drawShape(rng, fam, c1, cn)
	if fam == FamilySoftKnee {
		// c/s reaches 0.9 of A at r: put the knee of A at c32, so that
		// c16 falls short of it.
		p = 1.2 + rng.Float64()*1.3
		r := math.Pow(math.Pow(0.9, -p)-1, -1/p)
		s = 32 / r / math.Pow(2, rng.Float64())
	}
	curve := func(c float64) float64 {
		t := a * c / math.Pow(math.Pow(c, p)+math.Pow(s, p), 1/p)
		if c > cliff {
			t *= math.Pow(1-drop, math.Log2(c/cliff))
		}
		if decline > 0 && c > s {
			t *= math.Pow(1-decline, math.Log2(c/c1))
		}
		return t
	}
	errAt := func(c float64) float64 {
		if c <= cliff || errRate == 0 {
			return 0.004
		}
		return 0.004 + errRate*math.Log2(c/cliff)
	}
	cs := &Case{ID: id, Family: fam, Grid: g.Name, Sigma: 0.01 + rng.Float64()*0.07, Curve: curve}
	// which concurrencies are usable
	usable := make([]bool, len(conc))
	for i := range conc {
		usable[i] = errAt(float64(conc[i])) <= result.DefaultFailedRequestThreshold
	}
	if fam == FamilyInsufficient {
		keep := 1 + rng.IntN(2)
		for i := range usable {
			usable[i] = false
		}
		for _, i := range rng.Perm(len(conc))[:keep] {
			usable[i] = true
		}
	} else if rng.Float64() < 0.25 && len(conc) > 5 {
		// one concurrency that only failed (a node problem), not the first
		usable[1+rng.IntN(len(conc)-1)] = false
		cs.Mods = append(cs.Mods, "failed")
	}
	var ug []int
	for i, c := range conc {
		if usable[i] {
			ug = append(ug, c)
		}
	}
	cs.Truth, cs.TrueKnee = truth(ug, curve)
	if len(ug) > 0 {
		cs.CFirst = ug[0]
	}
	if knife.near(ug, curve) {
		return nil
	}
	if !madeFamily(fam, cs, ug, curve) {
		return nil // the draw did not make the family it was meant to
	}
	spike := -1
	if rng.Float64() < 0.15 && len(ug) >= 4 {
		spike = rng.IntN(len(conc))
		cs.Mods = append(cs.Mods, "spike")
	}
	reps := rng.Float64() < 0.3
	if reps {
		cs.Mods = append(cs.Mods, "replicates")
	}
	failedRerun := rng.Float64() < 0.2
	if failedRerun {
		cs.Mods = append(cs.Mods, "failed")
	}
	arm := &knee.Arm{Identity: identity(rng, id)}
	for i, c := range conc {
		n := 1
		if reps && rng.Float64() < 0.5 {
			n = 2 + rng.IntN(2)
		}
		for r := range n {
			t := curve(float64(c)) * math.Exp(cs.Sigma*rng.NormFloat64())
			if i == spike && r == 0 {
				t *= 1.15 + 0.15*rng.Float64()
			}
			smp := sample(id, c, r, t, curve, s, errAt(float64(c)), cs.Sigma, rng)
			if !usable[i] {
				fail(&smp, rng)
			}
			arm.Samples = append(arm.Samples, smp)
		}
		if failedRerun && usable[i] && rng.Float64() < 0.3 {
			smp := sample(id, c, n, curve(float64(c)), curve, s, 0, cs.Sigma, rng)
			fail(&smp, rng)
			arm.Samples = append(arm.Samples, smp)
		}
	}
	cs.Arm = arm
	return cs
}

// madeFamily reports whether a drawn case (its truth on the usable grid
// ug) is the family it was drawn for.
func madeFamily(fam string, cs *Case, ug []int, curve func(float64) float64) bool {
	switch fam {
	case FamilyUnsaturated:
		return cs.Truth == knee.StatusUnsaturated
	case FamilySaturatedAtMin:
		return cs.Truth == knee.StatusSaturatedAtMin
	case FamilyInsufficient:
		return cs.Truth == knee.StatusInsufficient
	case FamilySaturating, FamilyCliff, FamilyDeclining:
		return cs.Truth == knee.StatusOK
	case FamilySoftKnee:
		return cs.Truth == knee.StatusOK && cs.TrueKnee == 32
	case FamilyFlattening:
		return cs.Truth == knee.StatusUnsaturated && topGain(ug, curve) <= 0.25
	}
	return true
}

// fail turns a sample into a failed point: no successful request, or an
// error rate above 10 %.
func fail(s *knee.Sample, rng *rand.Rand) {
	if rng.IntN(2) == 0 {
		s.Excluded, s.TotalTPS, s.OutputTPS = result.ExcludedNoSuccess, nil, nil
		return
	}
	s.ErrorRate = 0.12 + 0.5*rng.Float64()
	s.Errors = int(100 * s.ErrorRate)
	s.Excluded = fmt.Sprintf("error rate %.1f%% > 10%%", 100*s.ErrorRate)
}

func sample(id string, c, rep int, t float64, curve func(float64) float64, s, errRate, sigma float64, rng *rand.Rand) knee.Sample {
	out := t * 0.008
	ctx := float64(c)
	intv := 2400 * curve(ctx) / curve(1) / ctx * math.Exp(0.5*sigma*rng.NormFloat64()) * 60 / (60 + ctx)
	intv = max(intv, 0.5)
	kv := min(1, 0.25*math.Pow(ctx/s, 0.8))
	hit := 0.95
	if kv >= 0.99 {
		hit = 0.05
	}
	f := func(v float64) *pyjson.Rounded { x := pyjson.Rounded(v); return &x }
	st := func(p50, p90 float64) result.Stats {
		return result.Stats{P50: f(p50), P90: f(p90), Mean: f((p50 + p90) / 2)}
	}
	ttft := 0.3 * (1 + math.Pow(ctx/s, 1.5))
	return knee.Sample{
		File: fmt.Sprintf("%s/conc%d_r%d.json", id, c, rep), Conc: c,
		TotalTPS: ptr(t), OutputTPS: ptr(out), ErrorRate: errRate, Errors: int(errRate * 1000),
		Intvty: st(intv, intv*0.8), E2ENormIntvty: st(intv*0.8, intv*0.6),
		TTFT: st(ttft, ttft*2.2), ITL: st(1/intv, 1.25/intv),
		KVUsage: ptr(kv), CacheHit: ptr(hit),
	}
}

func ptr(v float64) *float64 { return &v }

var arms = []struct{ tp, ep int }{{2, 2}, {4, 1}, {4, 4}, {8, 1}, {8, 8}}

func identity(rng *rand.Rand, id string) result.Identity {
	a := arms[rng.IntN(len(arms))]
	v := []any{"qwen3.5", "mi325x-amds", "sglang", "fp8", "mtp", "agentic-coding", false, false, a.tp, a.ep, "false", "none", 1}
	var out result.Identity
	for i, x := range v {
		out[i], _ = json.Marshal(x)
	}
	out[0], _ = json.Marshal("qwen3.5-" + id)
	return out
}

// truth applies the noise-free rule on the usable grid.
func truth(grid []int, curve func(float64) float64) (knee.Status, int) {
	n := len(grid)
	if n < 3 {
		return knee.StatusInsufficient, 0
	}
	t := make([]float64, n)
	top := 0.0
	for i, c := range grid {
		t[i] = curve(float64(c))
		top = max(top, t[i])
	}
	if t[n-1]/t[n-2] >= math.Pow(1.1, math.Log2(float64(grid[n-1])/float64(grid[n-2]))) {
		return knee.StatusUnsaturated, 0
	}
	if t[0] >= 0.9*top {
		return knee.StatusSaturatedAtMin, 0
	}
	for i := range t {
		if t[i] >= 0.9*top {
			return knee.StatusOK, grid[i]
		}
	}
	return knee.StatusOK, grid[n-1]
}

// near reports a draw whose truth is within e of the rule's edges.
func (e edges) near(grid []int, curve func(float64) float64) bool {
	n := len(grid)
	if n < 3 {
		return false
	}
	top := 0.0
	for _, c := range grid {
		top = max(top, curve(float64(c)))
	}
	first := curve(float64(grid[0])) / top
	return math.Abs(topGain(grid, curve)-0.10) < e.gain || math.Abs(first-0.9) < e.first
}

// topGain is the noise-free gain per doubling between the last two
// concurrencies of grid (at least two).
func topGain(grid []int, curve func(float64) float64) float64 {
	n := len(grid)
	return math.Pow(curve(float64(grid[n-1]))/curve(float64(grid[n-2])), 1/math.Log2(float64(grid[n-1])/float64(grid[n-2]))) - 1
}

// WriteDir writes the arm's samples under dir as InferenceX aggregate
// result files (one per sample, in per-concurrency artifact folders) and
// returns the paths.
func WriteDir(dir string, a *knee.Arm, simulated bool) ([]string, error) {
	var paths []string
	for i, s := range a.Samples {
		obj := map[string]any{}
		// Identity.MarshalJSON writes the keys a result of the arm has (a
		// single-node arm no multi-node shape).
		idJSON, err := json.Marshal(a.Identity)
		if err != nil {
			return nil, err
		}
		var idKeys map[string]json.RawMessage
		if err := json.Unmarshal(idJSON, &idKeys); err != nil {
			return nil, err
		}
		for k, v := range idKeys {
			obj[k] = v
		}
		obj["conc"] = s.Conc
		obj["image"] = "lmsysorg/sglang:synthetic"
		obj["simulated"] = simulated
		if s.Probe {
			obj["probe"] = true
		}
		succ, profiled := 1000, 1000
		if s.Excluded == result.ExcludedNoSuccess {
			succ, profiled = 0, 0
		}
		errs := int(math.Round(s.ErrorRate * float64(profiled) / (1 - min(s.ErrorRate, 0.99))))
		obj["num_requests_total"] = profiled + errs + 8
		obj["num_requests_successful"] = succ
		obj["request_accounting"] = map[string]any{"records_total": profiled + errs + 8, "records_profiled": profiled,
			"records_dropped_total": errs + 8, "records_warmup_dropped": 8, "records_error_dropped": errs, "error_categories": map[string]int{}}
		tp := map[string]any{}
		if s.TotalTPS != nil && succ > 0 {
			tp["per_gpu"] = map[string]any{"total_tput_tps": *s.TotalTPS, "output_tput_tps": *s.OutputTPS, "input_tput_tps": *s.TotalTPS - *s.OutputTPS}
		}
		obj["request_metrics"] = map[string]any{
			"latency":    map[string]any{"ttft": s.TTFT, "itl": s.ITL, "tpot": s.ITL, "intvty": s.Intvty, "e2e_norm_intvty": s.E2ENormIntvty},
			"throughput": tp,
		}
		obj["server_metrics"] = map[string]any{"present": true, "adapter": "sglang",
			"cache": map[string]any{"overall_cache_hit_rate": s.CacheHit}, "kv_cache": map[string]any{"gpu_usage_pct": s.KVUsage}}
		if s.AL != nil {
			obj["acceptance_length"] = s.AL
		}
		data, err := json.MarshalIndent(obj, "", "  ")
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, fmt.Sprintf("bmk_agentic_tp%s_ep%s_conc%d_%d", a.Identity.Get("tp"), a.Identity.Get("ep"), s.Conc, i), fmt.Sprintf("result_conc%d.json", s.Conc))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// KeySweep returns the arms of one config key (qwen3.5 fp8 mi325x sglang
// mtp, the shipped MI325X key's five parallelism configs on a doubling
// grid 1..128): small TP saturating early with a KV cliff, large TP and EP
// later and higher, acceptance length measured around a golden 3.39.
func KeySweep(seed uint64) []*Case {
	rng := rand.New(rand.NewPCG(seed, seed^0x51ed2701))
	type shape struct {
		tp, ep int
		a, s   float64
		cliff  float64
	}
	shapes := []shape{{2, 2, 5200, 4, 12}, {4, 1, 7600, 10, 40}, {4, 4, 8200, 14, 48}, {8, 1, 9800, 20, 80}, {8, 8, 11500, 28, 1e9}}
	g := dbl(1, 128)
	var out []*Case
	for i, sh := range shapes {
		p := 3.0
		curve := func(c float64) float64 {
			t := sh.a * c / math.Pow(math.Pow(c, p)+math.Pow(sh.s, p), 1/p)
			if c > sh.cliff {
				t *= math.Pow(0.7, math.Log2(c/sh.cliff))
			}
			return t
		}
		cs := &Case{ID: fmt.Sprintf("k%d", i+1), Family: FamilySaturating, Grid: g.Name, Sigma: 0.03, Curve: curve}
		cs.Truth, cs.TrueKnee = truth(g.Conc, curve)
		cs.CFirst = g.Conc[0]
		v := []any{"qwen3.5", "mi325x-amds", "sglang", "fp8", "mtp", "agentic-coding", false, false, sh.tp, sh.ep, "false", "none", 1}
		var id result.Identity
		for j, x := range v {
			id[j], _ = json.Marshal(x)
		}
		arm := &knee.Arm{Identity: id}
		for _, c := range g.Conc {
			t := curve(float64(c)) * math.Exp(cs.Sigma*rng.NormFloat64())
			er := 0.003
			if float64(c) > sh.cliff {
				er += 0.06 * math.Log2(float64(c)/sh.cliff)
			}
			smp := sample(cs.ID, c, 0, t, curve, sh.s, er, cs.Sigma, rng)
			if er > result.DefaultFailedRequestThreshold {
				smp.Excluded = fmt.Sprintf("error rate %.1f%% > 10%%", 100*er)
			}
			golden := 3.39
			meas := golden - 0.02 + 0.04*rng.Float64() - 0.01*math.Log2(float64(c))/7
			smp.AL = &metrics.ALCheck{Source: "synthetic", Measured: mf(meas), Golden: mf(golden), Tolerance: 0.05, Verdict: metrics.ALPass}
			arm.Samples = append(arm.Samples, smp)
		}
		cs.Arm = arm
		out = append(out, cs)
	}
	return out
}

func mf(v float64) *pyjson.Rounded { f := pyjson.Rounded(v); return &f }
