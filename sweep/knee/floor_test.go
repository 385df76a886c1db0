package knee_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"sweep/sweep/knee"
)

// floorRule is what a hindsight floor asks of a measurement set beyond
// the full grid's verdict (SameVerdict): nothing (loose), or what a
// search could justify (justified).
type floorRule int

const (
	// floorLoose: any set whose verdict is the full grid's.
	floorLoose floorRule = iota
	// floorJustified: the set also holds the grid's first point (every
	// search starts there: nothing below it can move the knee) and bounds
	// its own top: it holds the grid's top, or the next measured point
	// above its own verdict's peak failed or fell off a cliff from the
	// peak's reading (more than 10 % and two of the two readings' noise
	// standard deviations: the search's cliff), so nothing unmeasured
	// above could raise the peak.
	floorJustified
	// floorBracketed: floorJustified, and the verdict is read where the
	// full grid reads it: an unsaturated verdict holds the grid's top and
	// the grid point below it (the top gate's pair); a knee's measured
	// neighbours each lie within a doubling of it or are its grid
	// neighbours (the tolerance the knee is read with).
	floorBracketed
	// floorRobust: floorBracketed, and the verdict stays the full grid's
	// with any one probe's reading moved two of its standard deviations
	// up or down (the search's test for a probe it may keep).
	floorRobust
	// floorSearchable: floorBracketed, and every probe of the set is one
	// the search's own rules keep: its reading moved two of its standard
	// deviations up or down leaves the verdict the full grid's, unless
	// the set reads the arm unsaturated with the search's odds
	// (sureUnsaturated); and a probe whose KV pool came near full
	// (Sample.Unsteady) leaves it so at UnsteadyLow times its reading.
	floorSearchable
	// floorTrusted: floorRobust, and no probe whose KV pool came near
	// full (Sample.Unsteady): such a probe has not reached the steady
	// state (the simulated MiniMax-M3 FP8 MI325X TP8 arm's c18 probe
	// reads 38.1k tok/s/GPU, its full-length point 11.8k past the KV
	// cliff), so a floor that keeps one is luck, not a rule a search
	// could follow.
	floorTrusted
)

func (r floorRule) String() string {
	return [...]string{"loose", "justified", "bracketed", "robust", "searchable", "trusted"}[r]
}

// hindsightFloor is the cheapest measurement set of c (each grid point
// unmeasured, a probe or a full-length point; the cost a server start,
// pointSeconds per full-length point and probe length plus drain per
// probe, per GPU) whose verdict is the full grid's and which meets rule.
// ok is false when none does (then the cost is the full grid's at the
// full length).
func hindsightFloor(c *searchCase, rule floorRule) (spent float64, set []knee.Sample, ok bool) {
	full := knee.Analyze(c.full, knee.Options{})
	measure := c.session()
	n := len(c.grid)
	probeAt := make([]knee.Sample, n)
	fullAt := make([]knee.Sample, n)
	for i, g := range c.grid {
		fullAt[i] = measure(g, gridRun)
		if c.probeSeconds > 0 {
			probeAt[i] = measure(g, probeRun)
		}
	}
	probeCost := c.probeSeconds + drainSeconds
	type mix struct{ f, p int }
	var mixes []mix
	for f := 0; f <= n; f++ {
		for p := 0; f+p <= n; p++ {
			if p > 0 && c.probeSeconds == 0 {
				break
			}
			if f+p >= 3 {
				mixes = append(mixes, mix{f, p})
			}
		}
	}
	cost := func(m mix) float64 { return startSeconds + float64(m.f)*pointSeconds + float64(m.p)*probeCost }
	slices.SortStableFunc(mixes, func(a, b mix) int { return int(cost(a) - cost(b)) })
	kind := make([]int, n) // 0 unmeasured, 1 probe, 2 full
	var try func(i, f, p int) bool
	try = func(i, f, p int) bool {
		if i == n {
			if f > 0 || p > 0 {
				return false
			}
			set = set[:0]
			for j, k := range kind {
				switch k {
				case 1:
					set = append(set, probeAt[j])
				case 2:
					set = append(set, fullAt[j])
				}
			}
			return floorMeets(c.grid, set, full, rule)
		}
		if n-i < f+p {
			return false
		}
		for k := 2; k >= 0; k-- {
			if k == 2 && f == 0 || k == 1 && p == 0 {
				continue
			}
			kind[i] = k
			nf, np := f, p
			switch k {
			case 2:
				nf--
			case 1:
				np--
			}
			if try(i+1, nf, np) {
				return true
			}
		}
		kind[i] = 0
		return false
	}
	for _, m := range mixes {
		clear(kind)
		if try(0, m.f, m.p) {
			return cost(m), slices.Clone(set), true
		}
	}
	return startSeconds + float64(n)*pointSeconds, nil, false
}

// floorMeets reports whether the set (sorted by concurrency) reads the
// full grid's verdict and meets rule.
func floorMeets(grid []int, set []knee.Sample, full *knee.Result, rule floorRule) bool {
	r := knee.Analyze(&knee.Arm{Samples: set}, knee.Options{})
	if !knee.SameVerdict(full, r) {
		return false
	}
	if rule == floorLoose {
		return true
	}
	if set[0].Conc != grid[0] {
		return false
	}
	if set[len(set)-1].Conc != grid[len(grid)-1] && !topBounded(set, r) {
		return false
	}
	if rule == floorJustified {
		return true
	}
	if !floorBracketedAt(grid, set, r) {
		return false
	}
	if rule == floorBracketed {
		return true
	}
	sameMoved := func(i int, f float64) bool {
		moved := slices.Clone(set)
		v := *set[i].TotalTPS * f
		moved[i].TotalTPS = &v
		return knee.SameVerdict(full, knee.Analyze(&knee.Arm{Samples: moved}, knee.Options{}))
	}
	sure := rule == floorSearchable && knee.SureUnsaturated(r)
	for i, s := range set {
		if !s.Probe || s.Excluded != "" || s.TotalTPS == nil {
			continue
		}
		if rule == floorSearchable && s.Unsteady() && !sameMoved(i, knee.UnsteadyLow) {
			return false
		}
		for _, dir := range []float64{1, -1} {
			if !sure && !sameMoved(i, math.Exp(dir*2*knee.SearchSigma(&s))) {
				return false
			}
		}
	}
	if rule == floorRobust || rule == floorSearchable {
		return true
	}
	return !slices.ContainsFunc(set, func(s knee.Sample) bool { return s.Unsteady() })
}

// floorBracketedAt reports whether set reads r where the full grid
// reads it (floorBracketed).
func floorBracketedAt(grid []int, set []knee.Sample, r *knee.Result) bool {
	n := len(grid)
	has := func(c int) bool {
		return slices.ContainsFunc(set, func(s knee.Sample) bool { return s.Conc == c })
	}
	if r.Status == knee.StatusUnsaturated {
		return has(grid[n-1]) && has(grid[n-2])
	}
	if !r.HasKnee() {
		return true
	}
	i := slices.IndexFunc(set, func(s knee.Sample) bool { return s.Conc == r.Knee })
	g := slices.Index(grid, r.Knee)
	if i > 0 && set[i-1].Conc*2 < r.Knee && set[i-1].Conc != grid[g-1] {
		return false
	}
	return i+1 >= len(set) || set[i+1].Conc <= 2*r.Knee || set[i+1].Conc == grid[g+1]
}

// topBounded reports whether the next point of set above r's peak
// failed or fell off a cliff from the peak's reading.
func topBounded(set []knee.Sample, r *knee.Result) bool {
	i := slices.IndexFunc(set, func(s knee.Sample) bool { return s.Conc == r.Peak })
	if i < 0 || i+1 >= len(set) || set[i].TotalTPS == nil {
		return false
	}
	pk, nx := set[i], set[i+1]
	if nx.Excluded != "" || nx.TotalTPS == nil {
		return true
	}
	return knee.FellOff(*pk.TotalTPS, *nx.TotalTPS, knee.SearchSigma(&pk), knee.SearchSigma(&nx))
}

// BenchmarkSearchFloor prints, for the simulated conc-lists with 180 s
// probes (seeds 7 and 8, then 5 and 6, the held-out ones, then 3, 4, 2
// and 1), each arm's search cost
// and its hindsight floors (hindsightFloor, one per floorRule) as a share
// of the arm's full grid, with the measurement set each chose, and the
// totals GPU-weighted as BenchmarkAdaptiveSearch's GPU-hours: how far
// below the search a search that knew the full grid's verdict could go.
// The search costs a server start, 1260 s per full-length point and
// 240 s per probe; a grid of n points 1860n.
func BenchmarkSearchFloor(b *testing.B) {
	sim := loadSimCorpus(b, simCorpusFile)
	rules := []floorRule{floorLoose, floorJustified, floorBracketed, floorRobust, floorSearchable, floorTrusted}
	var out strings.Builder
	for b.Loop() {
		out.Reset()
		for _, seed := range []int{7, 8, 5, 6, 3, 4, 2, 1} {
			fmt.Fprintf(&out, "simulated conc-lists, seed %d, 180 s probes: cost %% of the arm's full grid\n%-52s %-16s %7s  %-36s", seed, "arm", "full grid", "search", "searched")
			for _, r := range rules {
				fmt.Fprintf(&out, " %9s  %-24s", r, "set")
			}
			out.WriteString("\n")
			var ix, ours float64
			floors := make([]float64, len(rules))
			for _, c := range simCases(sim, probes, seed) {
				full := knee.Analyze(c.full, knee.Options{})
				if full.Status == knee.StatusInsufficient {
					continue
				}
				base := c.gpus * float64(len(c.grid)) * (startSeconds + pointSeconds)
				run := search(c)
				ix += base
				ours += c.gpus * run.spent
				fmt.Fprintf(&out, "%-52s %-16s %6.1f%%  %-36s", strings.TrimSuffix(c.id, fmt.Sprintf(" seed %d", seed)), fmt.Sprintf("%s c%d", full.Status, full.Knee),
					100*c.gpus*run.spent/base, strings.Join(concs(run.measured), " "))
				for i, r := range rules {
					spent, set, ok := hindsightFloor(c, r)
					if !ok {
						b.Errorf("%s: no %s floor", c.id, r)
					}
					floors[i] += c.gpus * spent
					fmt.Fprintf(&out, " %8.1f%%  %-24s", 100*c.gpus*spent/base, strings.Join(concs(set), " "))
				}
				out.WriteString("\n")
			}
			fmt.Fprintf(&out, "%-52s %-16s %6.2f%%  %-36s", "total (GPU-weighted)", "", 100*ours/ix, "")
			for i := range rules {
				fmt.Fprintf(&out, " %8.2f%%  %-24s", 100*floors[i]/ix, "")
			}
			out.WriteString("\n")
		}
	}
	fmt.Print(out.String())
}
