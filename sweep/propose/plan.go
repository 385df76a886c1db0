// Package propose turns a discovery sweep into the proposed official
// matrix: per arm a short conc-list (the latency floor, the knee, the first
// post-knee point, the arm's Pareto-frontier points and the two frontier
// points bracketing each target interactivity, about four per arm), with
// arms that never reach the frontier dropped; then it edits the master
// config in place (only the conc-list text of each search-space entry
// changes) and appends a perf-changelog.yaml entry.
//
//	plans := propose.Plan(results, frontiers, propose.Options{})
//	out, changes, err := propose.EditMaster(data, file, key, plans)
//	log := propose.AppendChangelog(changelog, propose.Entry(key, plans))
package propose

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sweep/sweep/knee"
)

// Options tune Plan; the zero value means the defaults.
type Options struct {
	// Targets are the interactivity levels (tok/s/user, on the frontier's
	// axis) whose bracketing frontier points are kept; default 20, 50, 100.
	Targets []float64
	// Max caps the points per arm; default 4. The floor, the knee and the
	// first post-knee point always stay.
	Max int
	// NotPlanned holds, per arm, the concurrencies of its official
	// conc-list its discovery did not plan (a discovery narrowed with
	// --conc-list: campaign.Plans.NotPlanned); such an arm's conc-list is
	// left as it is (notPlannedWhy).
	NotPlanned map[*knee.Result][]int
}

// ArmPlan is the proposal for one arm.
type ArmPlan struct {
	Result *knee.Result
	// Conc is the proposed conc-list, ascending; nil when the arm is
	// dropped or kept unchanged.
	Conc []int
	// Why says why each concurrency is in Conc.
	Why map[int][]string
	// Dropped says why the arm leaves the official matrix (dominated by
	// other arms everywhere); empty when kept.
	Dropped string
	// Unchanged says why the arm's conc-list is left as it is
	// (insufficient data; points its discovery has not finished, which
	// could move its knee: unfinishedWhy; official points its discovery
	// did not plan: notPlannedWhy); empty otherwise.
	Unchanged string
	// NotPlanned are the official concurrencies the arm's discovery did
	// not plan (Options.NotPlanned); nil when it planned them all.
	NotPlanned []int
}

// Plan proposes conc-lists for the arms of one config key; frontier is
// that key's frontier (knee.Frontiers on the same results).
func Plan(rs []*knee.Result, frontier *knee.Frontier, o Options) []ArmPlan {
	if len(o.Targets) == 0 {
		o.Targets = []float64{20, 50, 100}
	}
	if o.Max <= 0 {
		o.Max = 4
	}
	on := frontier.OnFrontier() // interactivity descending
	bracket := map[*knee.Result][]int{}
	for _, t := range o.Targets {
		for i := 0; i+1 < len(on); i++ {
			if on[i].Intvty >= t && on[i+1].Intvty < t {
				bracket[on[i].Result] = append(bracket[on[i].Result], on[i].Conc)
				bracket[on[i+1].Result] = append(bracket[on[i+1].Result], on[i+1].Conc)
			}
		}
	}
	var out []ArmPlan
	for _, r := range rs {
		p := ArmPlan{Result: r, Why: map[int][]string{}, NotPlanned: o.NotPlanned[r]}
		var usable []int
		for _, pt := range r.Points {
			if pt.Usable {
				usable = append(usable, pt.Conc)
			}
		}
		switch {
		case len(r.Unfinished) > 0:
			p.Unchanged = unfinishedWhy(r.Unfinished)
			out = append(out, p)
			continue
		case len(p.NotPlanned) > 0:
			p.Unchanged = notPlannedWhy(p.NotPlanned)
			out = append(out, p)
			continue
		case r.Status == knee.StatusInsufficient:
			p.Unchanged = "insufficient data: " + r.Reason
			out = append(out, p)
			continue
		case !frontier.Contributes(r):
			p.Dropped = "dominated: no point on the Pareto frontier of " + frontier.Group
			out = append(out, p)
			continue
		}
		add := func(c int, why string) {
			if c > 0 && !slices.Contains(p.Why[c], why) {
				p.Why[c] = append(p.Why[c], why)
			}
		}
		add(usable[0], "latency floor")
		switch r.Status {
		case knee.StatusUnsaturated:
			add(usable[len(usable)-1], "top of the grid (unsaturated: extend it upward)")
		default:
			add(r.Knee, "knee")
			if i := slices.Index(usable, r.Knee); i >= 0 && i+1 < len(usable) {
				add(usable[i+1], "first post-knee point")
			}
		}
		must := len(p.Why)
		var extra []int
		for _, c := range bracket[r] {
			if _, ok := p.Why[c]; !ok && !slices.Contains(extra, c) {
				extra = append(extra, c)
			}
		}
		for _, fp := range on {
			if fp.Result == r {
				if _, ok := p.Why[fp.Conc]; !ok && !slices.Contains(extra, fp.Conc) {
					extra = append(extra, fp.Conc)
				}
			}
		}
		for _, c := range bracket[r] {
			add(c, "brackets a target interactivity")
		}
		for _, fp := range on {
			if fp.Result == r {
				add(fp.Conc, "on the frontier")
			}
		}
		// cap: keep the must-haves, then the extras in priority order
		keep := max(o.Max, must)
		var conc []int
		for c, why := range p.Why {
			if isMust(why) {
				conc = append(conc, c)
			}
		}
		for _, c := range extra {
			if len(conc) >= keep {
				delete(p.Why, c)
				continue
			}
			conc = append(conc, c)
		}
		sort.Ints(conc)
		p.Conc = conc
		out = append(out, p)
	}
	return out
}

// unfinishedWhy is ArmPlan.Unchanged of an arm whose discovery has not
// finished the concurrencies u (knee.Result.Unfinished).
func unfinishedWhy(u []int) string {
	return "unfinished: the discovery has not finished " + concs(u) +
		" (interrupted or not run), which could move its knee, peak and frontier points: resume the discovery and propose again"
}

// notPlannedWhy is ArmPlan.Unchanged of an arm whose discovery did not
// plan the concurrencies u of its official conc-list (ArmPlan.
// NotPlanned).
func notPlannedWhy(u []int) string {
	return "not among the discovery's points: its official " + concs(u) +
		" (its --conc-list left them out, or the config gained them since), which could move its knee, peak and frontier points: discover them and propose again"
}

func isMust(why []string) bool {
	for _, w := range why {
		if w == "latency floor" || w == "knee" || w == "first post-knee point" || strings.HasPrefix(w, "top of the grid") {
			return true
		}
	}
	return false
}

// Summary is one line per arm for a person.
func (p ArmPlan) Summary() string {
	label := p.Result.Arm.Identity.Parallelism()
	switch {
	case p.Dropped != "":
		return fmt.Sprintf("%s: dropped (%s)", label, p.Dropped)
	case p.Unchanged != "":
		return fmt.Sprintf("%s: unchanged (%s)", label, p.Unchanged)
	}
	var parts []string
	for _, c := range p.Conc {
		parts = append(parts, fmt.Sprintf("c%d (%s)", c, strings.Join(p.Why[c], ", ")))
	}
	return fmt.Sprintf("%s: %s", label, strings.Join(parts, ", "))
}

// concs names concurrencies: "c40, c48".
func concs(cs []int) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = "c" + strconv.Itoa(c)
	}
	return strings.Join(s, ", ")
}
