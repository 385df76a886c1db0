package knee_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// corpusSeed and corpusSize fix the benchmark corpus; fieldSize and
// edgeSize the sizes of its FieldCorpus and EdgeCorpus at the same seed.
const (
	corpusSeed = 20260714
	corpusSize = 2000
	fieldSize  = 2000
	edgeSize   = 2000
)

// within reports |log2(a/b)| ≤ 1.
func within(a, b int) bool {
	return a > 0 && b > 0 && math.Abs(math.Log2(float64(a)/float64(b))) <= 1+1e-9
}

// hit scores a verdict against a case's truth (testdata/knee/README.md).
func hit(c *synth.Case, status knee.Status, k int) bool {
	if status == knee.StatusUnsaturated || status == knee.StatusInsufficient {
		k = 0
	}
	switch c.Truth {
	case knee.StatusOK:
		return within(k, c.TrueKnee)
	case knee.StatusSaturatedAtMin:
		return status == c.Truth || within(k, c.CFirst)
	}
	return status == c.Truth
}

// kneedleVerdict runs Kneedle (kneed's defaults) on the same cleaned
// points our method sees: the median throughput per usable concurrency,
// against log2 c (logX) or c. No knee reads as unsaturated; fewer than 3
// usable points as insufficient, as for ours.
func kneedleVerdict(r *knee.Result, logX bool) (knee.Status, int) {
	var x, y []float64
	var conc []int
	for _, p := range r.Points {
		if !p.Usable {
			continue
		}
		cx := float64(p.Conc)
		if logX {
			cx = math.Log2(cx)
		}
		x, y, conc = append(x, cx), append(y, *p.Throughput), append(conc, p.Conc)
	}
	if len(x) < 3 {
		return knee.StatusInsufficient, 0
	}
	i, ok := knee.Kneedle(x, y, 1)
	if !ok {
		return knee.StatusUnsaturated, 0
	}
	return knee.StatusOK, conc[i]
}

type tally struct{ n, ours, kLog, kRaw int }

func score(cases []*synth.Case) (map[string]*tally, tally) {
	by := map[string]*tally{}
	var all tally
	for _, c := range cases {
		r := knee.Analyze(c.Arm, knee.Options{})
		t := by[c.Family]
		if t == nil {
			t = &tally{}
			by[c.Family] = t
		}
		for _, tt := range []*tally{t, &all} {
			tt.n++
			if hit(c, r.Status, r.Knee) {
				tt.ours++
			}
			if s, k := kneedleVerdict(r, true); hit(c, s, k) {
				tt.kLog++
			}
			if s, k := kneedleVerdict(r, false); hit(c, s, k) {
				tt.kRaw++
			}
		}
	}
	return by, all
}

func pct(a, n int) float64 { return 100 * float64(a) / float64(n) }

func report(by map[string]*tally, all tally) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s %6s %12s %18s %16s\n", "family", "arms", "ours hit %", "kneedle(log2) hit %", "kneedle(c) hit %")
	fams := make([]string, 0, len(by))
	for f := range by {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	for _, f := range append(fams, "all") {
		t := &all
		if f != "all" {
			t = by[f]
		}
		fmt.Fprintf(&b, "%-18s %6d %12.1f %18.1f %16.1f\n", f, t.n, pct(t.ours, t.n), pct(t.kLog, t.n), pct(t.kRaw, t.n))
	}
	return b.String()
}

// missKind names how a verdict missed its case's truth ("" for a hit):
// for a truth of ok, the knee more than a doubling early or late (with
// the status given) or no knee at all; otherwise the truth and the status
// given, "unsaturated->ambiguous" for a still-rising arm called ambiguous.
func missKind(c *synth.Case, r *knee.Result) string {
	if hit(c, r.Status, r.Knee) {
		return ""
	}
	if c.Truth != knee.StatusOK {
		return fmt.Sprintf("%s->%s", c.Truth, r.Status)
	}
	switch {
	case r.Status == knee.StatusUnsaturated || r.Status == knee.StatusInsufficient:
		return fmt.Sprintf("ok->%s", r.Status)
	case r.Knee < c.TrueKnee:
		return fmt.Sprintf("ok->early (%s)", r.Status)
	}
	return fmt.Sprintf("ok->late (%s)", r.Status)
}

// misses counts the misses of our verdicts on cases by kind (missKind)
// and in all, and how many of them are undecidable at the case's noise.
func misses(cases []*synth.Case) (by map[string]int, all, undecided int) {
	by = map[string]int{}
	for _, c := range cases {
		r := knee.Analyze(c.Arm, knee.Options{})
		if k := missKind(c, r); k != "" {
			by[k]++
			all++
			if undecidable(c, r) {
				undecided++
			}
		}
	}
	return by, all, undecided
}

// undecidable reports a missed case whose truth lies within one standard
// error of the edge of the rule it was missed on, the error being that of
// the two measurements the edge compares at the case's noise σ (σ√2 on
// their log ratio): the top gain per doubling against the gate for a miss
// involving unsaturated, the first point against 0.9 × the top for one
// involving saturated-at-min, and otherwise the curve at the grid points
// within a doubling of the knee given, or at its bracket (the usable
// point below it, two doublings down when the point between failed),
// against 0.9 × the top (the knee moved there by a point read on the
// wrong side of the threshold). Such a
// miss is a coin toss: no rule reading those points gets it right much
// more than half the time, and the curve's other points help only as far
// as its shape is assumed.
func undecidable(c *synth.Case, r *knee.Result) bool {
	var g []int
	for _, p := range r.Points {
		if p.Usable {
			g = append(g, p.Conc)
		}
	}
	n := len(g)
	if n < 3 {
		return false
	}
	se := c.Sigma * math.Sqrt2
	at := func(i int) float64 { return c.Curve(float64(g[i])) }
	top := 0.0
	for i := range g {
		top = max(top, at(i))
	}
	lt := math.Log(0.9)
	switch {
	case c.Truth == knee.StatusUnsaturated || r.Status == knee.StatusUnsaturated:
		du := math.Log2(float64(g[n-1]) / float64(g[n-2]))
		return math.Abs(math.Log(at(n-1)/at(n-2))-math.Log(1.1)*du) < se
	case c.Truth == knee.StatusSaturatedAtMin || r.Status == knee.StatusSaturatedAtMin:
		return math.Abs(math.Log(at(0)/top)-lt) < se
	}
	for i := range g {
		if (within(g[i], r.Knee) || g[i] == r.Bracket) && math.Abs(math.Log(at(i)/top)-lt) < se {
			return true
		}
	}
	return false
}

func missReport(by map[string]int, n int) string {
	kinds := make([]string, 0, len(by))
	for k := range by {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&b, "  %-34s %4d  %5.2f%%\n", k, by[k], pct(by[k], n))
	}
	return b.String()
}

// BenchmarkKneeAccuracy scores our knee and Kneedle's on the seeded corpus
// (synth.Corpus) side by side: hit = within one doubling of the noise-free
// knee, or the right status for unsaturated, saturated-at-min and
// insufficient arms. The metrics are the hit and miss percentages and
// ours' miss rate over the better Kneedle's (target ≤ 0.5). It also
// scores, once, synth.FieldCorpus (Corpus keeping the arms near the
// rule's edges, as real sweeps do: ours and Kneedle's miss %) and
// synth.EdgeCorpus, the two kinds of arm seen missed: the % of soft-knee
// arms (knee c32) given a knee more than a doubling early, and of
// flattening arms (top gain 10-25 % per doubling) not called unsaturated.
func BenchmarkKneeAccuracy(b *testing.B) {
	cases := synth.Corpus(corpusSeed, corpusSize)
	field := synth.FieldCorpus(corpusSeed, fieldSize)
	_, fieldAll := score(field)
	fieldBy, _, fieldUndecided := misses(field)
	edge := synth.EdgeCorpus(corpusSeed, edgeSize)
	edgeBy, _, edgeUndecided := misses(edge)
	fams := map[string]int{}
	for _, c := range edge {
		fams[c.Family]++
	}
	early := 0
	for k, v := range edgeBy {
		if strings.HasPrefix(k, "ok->early") {
			early += v
		}
	}
	flat := 0
	for k, v := range edgeBy {
		if strings.HasPrefix(k, "unsaturated->") {
			flat += v
		}
	}
	var by map[string]*tally
	var all tally
	for b.Loop() {
		by, all = score(cases)
	}
	ourMiss := 100 - pct(all.ours, all.n)
	kMiss := 100 - max(pct(all.kLog, all.n), pct(all.kRaw, all.n))
	b.ReportMetric(pct(all.ours, all.n), "ours_hit_%")
	b.ReportMetric(pct(all.kLog, all.n), "kneedle_log2_hit_%")
	b.ReportMetric(pct(all.kRaw, all.n), "kneedle_raw_hit_%")
	b.ReportMetric(ourMiss, "ours_miss_%")
	b.ReportMetric(kMiss, "kneedle_best_miss_%")
	b.ReportMetric(ourMiss/kMiss, "miss_ratio")
	b.ReportMetric(100-pct(fieldAll.ours, fieldAll.n), "field_ours_miss_%")
	b.ReportMetric(100-max(pct(fieldAll.kLog, fieldAll.n), pct(fieldAll.kRaw, fieldAll.n)), "field_kneedle_best_miss_%")
	b.ReportMetric(pct(early, fams[synth.FamilySoftKnee]), "softknee_early_%")
	b.ReportMetric(pct(flat, fams[synth.FamilyFlattening]), "flattening_missed_%")
	// On stdout: testing cuts a benchmark's log to its first ten lines.
	fmt.Printf("corpus seed %d, %d arms\n%s\n", corpusSeed, corpusSize, report(by, all))
	fmt.Printf("field corpus, %d arms: ours miss %.2f%% (undecidable at their noise: %.2f%%), by kind:\n%s\n", fieldAll.n, 100-pct(fieldAll.ours, fieldAll.n),
		pct(fieldUndecided, fieldAll.n), missReport(fieldBy, fieldAll.n))
	fmt.Printf("edge corpus, %d soft-knee and %d flattening arms, misses by kind (%d undecidable at their noise):\n%s\n", fams[synth.FamilySoftKnee], fams[synth.FamilyFlattening],
		edgeUndecided, missReport(edgeBy, len(edge)))
}

// TestKneeAccuracy holds the benchmark's targets on a smaller corpus of
// the same generator: ≥ 95 % hits, and at most half Kneedle's misses.
func TestKneeAccuracy(t *testing.T) {
	by, all := score(synth.Corpus(corpusSeed+1, 600))
	t.Logf("\n%s", report(by, all))
	ourMiss := all.n - all.ours
	kMiss := all.n - max(all.kLog, all.kRaw)
	if pct(all.ours, all.n) < 95 {
		t.Errorf("ours hit %.1f%% of %d arms, want ≥ 95%%", pct(all.ours, all.n), all.n)
	}
	if 2*ourMiss > kMiss {
		t.Errorf("ours missed %d arms, Kneedle (best axis) %d: want at most half", ourMiss, kMiss)
	}
}

// reviewSeeds seed TestKneeReviewCorpus: seeds the decision logic was
// not tuned on (it was reviewed on seeds 1-6 of synth.Corpus and
// synth.ReviewCorpus).
var reviewSeeds = []uint64{101, 202}

// TestKneeReviewCorpus holds the knee finder to at most 1.5 % misses on
// synth.ReviewCorpus (hard arms over-represented: still-rising,
// declining past the peak, cliffs; doubling grids and conc-lists; σ 1-8
// %), scored by testdata/knee/README.md's rule. Before the saturation
// gate weighed a plateau's misfit (a still-rising arm whose last point on
// a dense conc-list dipped was called ambiguous) it missed 2.25 % of
// these 800 arms; it missed 0.6 % with the gate's noise fixed and the old
// spike guard (d4e5ef3), 0.5 % with the noise integrated out, and misses
// 0.25 % (2 arms) since an arm whose top gains on rising errors is past
// its capacity, not unsaturated (TestErrorsRisingAtTheTopAreNotUnsaturated).
func TestKneeReviewCorpus(t *testing.T) {
	const maxMiss = 1.0 // %
	var cases []*synth.Case
	for _, seed := range reviewSeeds {
		cases = append(cases, synth.ReviewCorpus(seed, 400)...)
	}
	by, all := score(cases)
	t.Logf("\n%s", report(by, all))
	if miss := 100 - pct(all.ours, all.n); miss > maxMiss {
		t.Errorf("missed %.2f%% of %d arms, want ≤ %.1f%%", miss, all.n, maxMiss)
		for _, c := range cases {
			if r := knee.Analyze(c.Arm, knee.Options{}); !hit(c, r.Status, r.Knee) {
				t.Logf("miss: %s %s on %s σ=%.3f %v: %s c%d, want %s c%d; %s",
					c.ID, c.Family, c.Grid, c.Sigma, c.Mods, r.Status, r.Knee, c.Truth, c.TrueKnee, r.Reason)
			}
		}
	}
}

// heldOutSeeds seed TestKneeFieldCorpus: seeds the decision rules were
// not reviewed on (the saturation gate and the spike guard were reviewed
// on the misses of seeds 11, 22, 33 and the benchmark's corpusSeed of
// synth.FieldCorpus, and on seeds 11, 22 and 33 of synth.Corpus,
// synth.EdgeCorpus and synth.ReviewCorpus). 909 is the first held-out
// seed; 4242 and 31337 were added when the gate came to integrate the
// noise out and the spike guard to fit the other points. The error-rate
// rules (the gate's, the spike guard's baseline) were reviewed on the
// misses of FieldCorpus seeds 33 and corpusSeed only.
var heldOutSeeds = []uint64{909, 4242, 31337}

// TestKneeFieldCorpus holds the knee finder's miss rates on held-out
// seeds: synth.FieldCorpus (arms kept near the rule's edges, the stand-in
// for a field corpus), 1500 arms per seed, and the flattening arms of
// synth.EdgeCorpus seed 909 (still rising 10-25 % per doubling at the
// top) not called unsaturated. With the saturation gate's noise fixed
// (the default pooled with the fit's residuals) and the old spike guard,
// FieldCorpus missed 1.33, 1.53 and 1.27 % at seeds 909, 4242 and 31337;
// with the noise integrated out and the spike guard fitting the other
// points, 1.13, 1.07 and 1.20 %; about three quarters of those misses are
// undecidable at the arm's noise (undecidable), nearly all of them
// saturating arms whose last doubling gains 5-10 % called unsaturated.
// With the gate no longer calling unsaturated an arm whose top gains on
// a rising error rate (past its capacity) and the spike guard reading
// that rise from the arm's lowest rate: 0.93, 0.93 and 1.07 % (14, 14
// and 16 arms, 13, 12 and 9 undecidable); no arm that was a hit became a
// miss, on these seeds or the review seeds 33 and corpusSeed (1500 arms:
// 1.73 -> 1.20 % and 1.60 -> 1.33 %; at the benchmark's 2000 arms
// corpusSeed 1.70 -> 1.50 %).
//
// The misses of the five seeds (7500 arms) by cause, before -> after
// (undecidable counting a knee's bracket too, two doublings below it
// when the point between failed): undecidable 78 -> 64 (saturating arms
// called unsaturated 35 -> 21, still-rising arms given a knee, most on
// the dense 64..76 lists, 16, saturated-at-min arms with their first point or top
// gain read across the edge 13, knees moved a doubling by a point read
// across 0.9 of the top 14); decidable 23 -> 18: cliff arms gaining on
// rising errors at their top 4 -> 0 and a cliff's peak read as a spike
// 1 -> 0 (fixed), an unreplicated spike (15-30 %) on the point that
// decided 10 (at the top, the first point or the peak: nothing but the
// curve's assumed shape tells it from a real level), a noisy plateau
// whose first point read 1.5-2.5 σ low or whose peak rose with its
// noisiest points 4, a knee two doublings above its bracket across a
// failed point 3, two points read 1.3 and 1.9 σ low at a dense top 1.
// The flattening arms were 49.0 % and are 50.2 % missed: 94 % of those
// misses are undecidable (a top gain of 10-15 % read through 1-8 % noise).
func TestKneeFieldCorpus(t *testing.T) {
	skipUnderRace(t)
	const maxField, maxFlat = 1.10, 50.5 // %
	for _, seed := range heldOutSeeds {
		field := synth.FieldCorpus(seed, 1500)
		fieldBy, fieldMiss, undecided := misses(field)
		t.Logf("field corpus seed %d: missed %.2f%% of %d arms (%d of %d undecidable at their noise):\n%s",
			seed, pct(fieldMiss, len(field)), len(field), undecided, fieldMiss, missReport(fieldBy, len(field)))
		if m := pct(fieldMiss, len(field)); m > maxField {
			t.Errorf("field corpus seed %d: missed %.2f%% of %d arms, want ≤ %.2f%%", seed, m, len(field), maxField)
		}
	}
	edge := synth.EdgeCorpus(heldOutSeeds[0], 800)
	flat, nFlat := 0, 0
	for _, c := range edge {
		if c.Family != synth.FamilyFlattening {
			continue
		}
		nFlat++
		if r := knee.Analyze(c.Arm, knee.Options{}); r.Status != knee.StatusUnsaturated {
			flat++
		}
	}
	t.Logf("edge corpus seed %d: %.1f%% of %d flattening arms not called unsaturated", heldOutSeeds[0], pct(flat, nFlat), nFlat)
	if m := pct(flat, nFlat); m > maxFlat {
		t.Errorf("edge corpus: %.1f%% of %d flattening arms not called unsaturated, want ≤ %.1f%%", m, nFlat, maxFlat)
	}
}

// skipUnderRace skips a corpus test under the race detector: arithmetic on
// one goroutine, which the detector has nothing to check in and runs
// three times slower (TestAdaptiveSearch 228 s against 86 s). make test
// runs these without it.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("one goroutine's arithmetic, 3x slower under -race: make test runs it without (go test -run " + t.Name() + " ./sweep/knee)")
	}
}
