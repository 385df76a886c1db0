package knee

import (
	"fmt"
	"math"
	"strings"
)

// WindowPoint is one concurrency of an arm's curve as the window rules
// read it.
type WindowPoint struct {
	Conc int
	// Throughput is per GPU; Interactivity is tokens/s per user, the
	// frontier's other axis (0 when unknown).
	Throughput, Interactivity float64
	// Failed is true when the point has no usable reading.
	Failed bool
}

// Window is one arm of a config key over its official window (InferenceX's
// conc-list for it, chosen around the knee measured on the hardware): its
// points at the window's concurrencies, ascending and distinct.
type Window struct {
	Arm    string // the arm's name in the verdicts
	Points []WindowPoint
	// Knee is the arm's knee verdict over the window (Analyze of its
	// results; CurveWindow analyzes a plain curve); nil with fewer than
	// three points.
	Knee *Result
}

// CurveWindow is the window of a plain curve (pts ascending and
// distinct), each usable point read as one simulated result at its
// throughput (Analyze with the default options).
func CurveWindow(arm string, pts []WindowPoint) Window {
	w := Window{Arm: arm, Points: pts}
	if len(pts) < minPoints {
		return w
	}
	a := &Arm{Simulated: true}
	for _, p := range pts {
		if p.Failed {
			continue
		}
		v := p.Throughput
		a.Samples = append(a.Samples, Sample{Conc: p.Conc, Simulated: true, TotalTPS: &v, OutputTPS: &v})
	}
	w.Knee = Analyze(a, Options{})
	return w
}

// failed counts the window's failed points.
func (w Window) failed() int {
	n := 0
	for _, p := range w.Points {
		if p.Failed {
			n++
		}
	}
	return n
}

// Judge is the window rule on one arm. Every point must be green. An arm
// of fewer than three points agrees then; one of three or more agrees
// strictly when its knee (ok or ambiguous) lies above the window's first
// point and at most its last. ByPeak judges it by InferenceX's own word
// instead: its notes call an arm's peak its knee (the measured MI325X
// Qwen3.5 key's "TP2 peaks at c4"), and its windows were chosen around
// those. The arm agrees by the peak when the knee finder gives a knee
// (HasKnee: ok, ambiguous or saturated-at-min; a peak at the top of a
// window it is still climbing is no peak) and the peak lies above the
// window's first point and at most its last. A flat window (the offload
// arms' c64-c76) has its knee at its first point whatever the hardware
// showed; its peak is still read. why names the arm and what decided.
func (w Window) Judge() (strict, byPeak bool, why string) {
	if n := w.failed(); n > 0 || len(w.Points) < minPoints {
		ok := n == 0
		return ok, ok, fmt.Sprintf("%s: %d of %d points failed", w.Arm, n, len(w.Points))
	}
	lo, hi := w.Points[0].Conc, w.Points[len(w.Points)-1].Conc
	r := w.Knee
	strict = (r.Status == StatusOK || r.Status == StatusAmbiguous) && r.Knee > lo && r.Knee <= hi
	byPeak = strict || r.HasKnee() && r.Peak > lo && r.Peak <= hi
	knee := "no knee"
	if r.Knee > 0 {
		knee = fmt.Sprintf("knee c%d", r.Knee)
	}
	if r.Peak > 0 {
		knee += fmt.Sprintf(" peak c%d", r.Peak)
	}
	return strict, byPeak, fmt.Sprintf("%s: %s %s window %d-%d", w.Arm, r.Status, knee, lo, hi)
}

// Dominates reports whether q is at least as good as p on the frontier
// InferenceX compares a key's arms on (throughput per GPU against
// interactivity, both higher is better) and better in one of them: the
// upper-right frontier of Frontiers, except that there a tie goes to the
// point sorted first, where here it dominates neither way.
func Dominates(q, p WindowPoint) bool {
	return q.Throughput >= p.Throughput && q.Interactivity >= p.Interactivity &&
		(q.Throughput > p.Throughput || q.Interactivity > p.Interactivity)
}

// FrontierStep is the concurrency the frontier rule reads an arm at: the
// lowest one above its window's top that another arm of the key measures
// (where the key has an official alternative), or the doubling of its top
// when no other arm measures above it (the next step of a doubling grid).
func FrontierStep(a Window, key []Window) int {
	top := a.Points[len(a.Points)-1].Conc
	step := 0
	for _, o := range key {
		if o.Arm == a.Arm {
			continue
		}
		for _, p := range o.Points {
			if p.Conc > top && (step == 0 || p.Conc < step) {
				step = p.Conc
			}
		}
	}
	if step == 0 {
		step = 2 * top
	}
	return step
}

// FrontierVerdict is the frontier rule, for an arm whose knee is not in
// its window: InferenceX keeps the points of a key's arms that make its
// Pareto frontier (MODELS.md's AgentX guidelines; the GLM-5.2 FP4 MI355X
// key: "SA selects the Pareto-optimal arm per concurrency"), so an arm's
// window may end where another arm takes the frontier over, not at a
// knee. The arm agrees by the frontier when every point of its window is
// green and
//   - beyond, the arm's own point at FrontierStep, still gives at least
//     the throughput of its window's top (past a cliff, any point is
//     dominated: the knee lies between, and that is the knee's question),
//   - an official point of another arm of the key dominates beyond: at
//     least its throughput per GPU at at least its interactivity, and
//     more of one. A tie does not count: two arms of one engine that
//     differ only by an offload tier are one curve in the simulated
//     engine until the pool runs out, so an offload arm taking over at
//     the same point says the hardware's pool ran out there, a knee the
//     model misses, not a frontier, and
//   - at least one point of its window is strictly dominated by no other
//     arm's official point (the window is a segment of the frontier; an
//     arm off the frontier everywhere has a window the frontier cannot
//     explain).
//
// why says which condition decided.
func FrontierVerdict(a Window, beyond WindowPoint, key []Window) (ok bool, why string) {
	if n := a.failed(); n > 0 {
		return false, fmt.Sprintf("frontier: %d of %d window points failed", n, len(a.Points))
	}
	onFront := false
	for _, p := range a.Points {
		onFront = onFront || dominator(p, a, key) == nil
	}
	top := a.Points[len(a.Points)-1]
	q := dominator(beyond, a, key)
	switch {
	case !onFront:
		return false, "frontier: no window point on the frontier"
	case beyond.Failed:
		return false, fmt.Sprintf("frontier: c%d failed", beyond.Conc)
	case beyond.Throughput < top.Throughput:
		return false, fmt.Sprintf("frontier: c%d %s below its top c%d %s", beyond.Conc, frontPoint(beyond), top.Conc, frontPoint(top))
	case q == nil:
		return false, fmt.Sprintf("frontier: c%d %s not dominated", beyond.Conc, frontPoint(beyond))
	}
	return true, fmt.Sprintf("frontier: c%d %s dominated by %s c%d %s", beyond.Conc, frontPoint(beyond), q.arm, q.pt.Conc, frontPoint(q.pt))
}

// frontPoint prints a point's frontier coordinates.
func frontPoint(p WindowPoint) string {
	return fmt.Sprintf("(%.0f tok/s/GPU, %.1f tok/s/user)", p.Throughput, p.Interactivity)
}

// dominatingPoint is an official point of a key's arm that dominates
// another point.
type dominatingPoint struct {
	arm string
	pt  WindowPoint
}

// dominator is the green official point of another arm of the key than a
// that dominates p with the most throughput per GPU, or nil.
func dominator(p WindowPoint, a Window, key []Window) *dominatingPoint {
	var best *dominatingPoint
	for _, o := range key {
		if o.Arm == a.Arm {
			continue
		}
		for _, q := range o.Points {
			if !q.Failed && Dominates(q, p) && (best == nil || q.Throughput > best.pt.Throughput) {
				best = &dominatingPoint{arm: o.Arm, pt: q}
			}
		}
	}
	return best
}

// Beyond gives arm a's own point at conc, a concurrency above its window
// (FrontierStep); measured is false when it is not known (the rule then
// leaves the key's frontier verdict open).
type Beyond func(a Window, conc int) (p WindowPoint, measured bool, err error)

// KeyVerdict is how a key's arms compare with their official windows.
type KeyVerdict struct {
	// Strict: every arm agrees by Judge's strict rule; ByPeak: by its
	// peak; ByFrontier: every arm agrees strictly or by FrontierVerdict.
	Strict, ByPeak, ByFrontier bool
	// Open lists the arms whose point at the frontier step is not
	// measured (ByFrontier is then false and undecided).
	Open []string
	Why  []string // one per arm that does not agree strictly
}

// JudgeKey judges every arm of a key against its window (Judge) and each
// arm that does not agree strictly by the frontier too, reading it at
// FrontierStep through beyond (not for an arm with failed window points,
// which the frontier rule never takes).
func JudgeKey(key []Window, beyond Beyond) (KeyVerdict, error) {
	v := KeyVerdict{Strict: true, ByPeak: true, ByFrontier: true}
	for _, a := range key {
		ok, peak, w := a.Judge()
		v.ByPeak = v.ByPeak && peak
		if ok {
			continue
		}
		v.Strict = false
		front, fw := false, ""
		if a.failed() > 0 {
			// No point beyond rescues a window with failed points.
			front, fw = FrontierVerdict(a, WindowPoint{}, key)
		} else {
			step := FrontierStep(a, key)
			p, measured, err := beyond(a, step)
			if err != nil {
				return v, fmt.Errorf("%s at c%d: %w", a.Arm, step, err)
			}
			fw = fmt.Sprintf("frontier: c%d not measured", step)
			if measured {
				front, fw = FrontierVerdict(a, p, key)
			} else {
				v.Open = append(v.Open, a.Arm)
			}
		}
		v.ByFrontier = v.ByFrontier && front
		v.Why = append(v.Why, w+" ("+fw+")")
	}
	return v, nil
}

// Label is the verdict's word: agree, by peak+frontier, by peak, by
// frontier or disagree.
func (v KeyVerdict) Label() string {
	switch {
	case v.Strict:
		return "agree"
	case v.ByPeak && v.ByFrontier:
		return "by peak+frontier"
	case v.ByPeak:
		return "by peak"
	case v.ByFrontier:
		return "by frontier"
	}
	return "disagree"
}

// Line is the key's verdict line: its label and key, and why for a key
// that does not agree strictly.
func (v KeyVerdict) Line(key string) string {
	if v.Strict {
		return fmt.Sprintf("%-17s %s", v.Label(), key)
	}
	return fmt.Sprintf("%-17s %s: %s", v.Label(), key, strings.Join(v.Why, "; "))
}

// Tally counts the keys by the three rules.
type Tally struct {
	Keys, Strict, ByPeak, ByFrontier int
	// Open counts the keys whose frontier verdict is open (KeyVerdict.Open).
	Open int
}

// Add counts one key's verdict.
func (t *Tally) Add(v KeyVerdict) {
	t.Keys++
	t.Strict += count(v.Strict)
	t.ByPeak += count(v.ByPeak)
	t.ByFrontier += count(v.ByFrontier)
	t.Open += count(len(v.Open) > 0)
}

// count is 1 for true, 0 for false.
func count(b bool) int {
	if b {
		return 1
	}
	return 0
}

// String is the counts line.
func (t Tally) String() string {
	s := fmt.Sprintf("%d of %d keys agree; %d with InferenceX's knee, the peak, inside every window; %d with each arm whose knee misses its window a segment of the simulated frontier",
		t.Strict, t.Keys, t.ByPeak, t.ByFrontier)
	if t.Open > 0 {
		s += fmt.Sprintf(" (%d %s open: an arm's point at its frontier step is not measured)", t.Open, map[bool]string{true: "key", false: "keys"}[t.Open == 1])
	}
	return s
}

// WindowOf is the window of a measured arm r (Analyze's verdict with the
// default options; nil when nothing of the arm was measured) at
// concs, its official concurrencies (ascending and distinct): each point
// at its median throughput per GPU and P90 E2E-normalised interactivity
// (the frontier's default axis, AxisE2ENormP90); a concurrency without a
// usable reading is failed. The knee verdict is r's when the arm's
// concurrencies are the window's, else Analyze of the arm's results at
// the window's concurrencies only (default options).
func WindowOf(name string, r *Result, concs []int) Window {
	w := Window{Arm: name}
	at := map[int]*Point{}
	if r != nil {
		for i := range r.Points {
			at[r.Points[i].Conc] = &r.Points[i]
		}
	}
	for _, c := range concs {
		p := at[c]
		if p == nil || !p.Usable {
			w.Points = append(w.Points, WindowPoint{Conc: c, Failed: true})
			continue
		}
		wp := WindowPoint{Conc: c, Throughput: *p.Throughput}
		if p.E2ENormP90 != nil && !math.IsNaN(*p.E2ENormP90) {
			wp.Interactivity = *p.E2ENormP90
		}
		w.Points = append(w.Points, wp)
	}
	if r == nil || len(concs) < minPoints {
		return w
	}
	inWindow := map[int]bool{}
	for _, c := range concs {
		inWindow[c] = true
	}
	same := len(r.Points) == len(concs)
	for _, p := range r.Points {
		same = same && inWindow[p.Conc]
	}
	if same {
		w.Knee = r
		return w
	}
	a := *r.Arm
	a.Samples = nil
	for _, s := range r.Arm.Samples {
		if inWindow[s.Conc] {
			a.Samples = append(a.Samples, s)
		}
	}
	w.Knee = Analyze(&a, Options{})
	return w
}
