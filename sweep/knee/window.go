package knee

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"sweep/internal/plural"
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
	// NotMeasured is true for a concurrency an adaptive discovery chose
	// not to run (its journal records the point skipped, and no result
	// holds it) or the discovery did not plan (--conc-list), and for
	// every point of an arm not in the discovery
	// (Window.Absent): neither green nor failed. The rules judge the
	// points measured.
	NotMeasured bool
	// Probe is true when the point's reading is an adaptive search's
	// short probe only (its results are all probes: the point was not
	// run again at the full length).
	Probe bool
	// Unfinished is true for a concurrency its discovery has not finished
	// (Discovery.Unfinished): neither green nor failed, and the key is
	// not judged until the discovery is resumed (UnfinishedVerdict).
	Unfinished bool
}

// Window is one arm of a config key over its official window (InferenceX's
// conc-list for it, chosen around the knee measured on the hardware where
// InferenceX says so; configs/window-provenance.csv): its
// points at the window's concurrencies, ascending and distinct.
type Window struct {
	Arm    string // the arm's name in the verdicts
	Points []WindowPoint
	// Knee is the arm's knee verdict over the window (Analyze of its
	// results; CurveWindow analyzes a plain curve); nil with fewer than
	// three points.
	Knee *Result
	// Adaptive is true when the arm's discovery was adaptive (it ran only
	// the points its knee search asked for; Discovery).
	Adaptive bool
	// Absent is true for an arm not in the key's discovery (Discovery.
	// Absent): none of its points ran, each is NotMeasured, none failed.
	// JudgeKey judges the key on its other arms.
	Absent bool
}

// CurveWindow is the window of a plain curve (pts ascending and
// distinct), each usable point (not failed, measured, finished) read as one
// simulated result at its throughput (Analyze with the default options).
func CurveWindow(arm string, pts []WindowPoint) Window {
	w := Window{Arm: arm, Points: pts}
	if len(pts) < minPoints {
		return w
	}
	a := &Arm{Simulated: true}
	for _, p := range pts {
		if p.Failed || p.NotMeasured || p.Unfinished {
			continue
		}
		v := p.Throughput
		a.Samples = append(a.Samples, Sample{Conc: p.Conc, Simulated: true, TotalTPS: &v, OutputTPS: &v})
	}
	w.Knee = Analyze(a, Options{})
	return w
}

// failed counts the window's failed points.
func (w Window) failed() int { return w.count(func(p WindowPoint) bool { return p.Failed }) }

// unfinished counts the window's points not finished.
func (w Window) unfinished() int { return w.count(func(p WindowPoint) bool { return p.Unfinished }) }

// count counts the window's points for which is returns true.
func (w Window) count(is func(WindowPoint) bool) int {
	n := 0
	for _, p := range w.Points {
		if is(p) {
			n++
		}
	}
	return n
}

// partial reports whether a verdict on the window rests on less than
// every point at the full length: a point not measured or not finished,
// or one read from a probe only.
func (w Window) partial() bool {
	return slices.ContainsFunc(w.Points, func(p WindowPoint) bool { return p.NotMeasured || p.Unfinished || p.Probe })
}

// coverage says what of a partial window was measured: "window c1 c8
// c16 c32 c40 c48: 5 green (probe only: c16 c32 c48), 1 not measured
// (adaptive: c40)", with the failed points after the green ones and the
// points not finished last ("2 not finished (c40 c48)").
func (w Window) coverage() string {
	var all, probes, failed, unmeasured, unfinished []string
	green := 0
	for _, p := range w.Points {
		c := fmt.Sprintf("c%d", p.Conc)
		all = append(all, c)
		switch {
		case p.Unfinished:
			unfinished = append(unfinished, c)
		case p.NotMeasured:
			unmeasured = append(unmeasured, c)
		case p.Failed && p.Probe:
			failed = append(failed, c+" probe only")
		case p.Failed:
			failed = append(failed, c)
		default:
			green++
			if p.Probe {
				probes = append(probes, c)
			}
		}
	}
	s := fmt.Sprintf("window %s: %d green", strings.Join(all, " "), green)
	if len(probes) > 0 {
		s += fmt.Sprintf(" (probe only: %s)", strings.Join(probes, " "))
	}
	if len(failed) > 0 {
		s += fmt.Sprintf(", %d failed (%s)", len(failed), strings.Join(failed, ", "))
	}
	if len(unmeasured) > 0 {
		why := "adaptive"
		if !w.Adaptive {
			why = "not among the discovery's points"
		}
		s += fmt.Sprintf(", %d not measured (%s: %s)", len(unmeasured), why, strings.Join(unmeasured, " "))
	}
	if len(unfinished) > 0 {
		s += fmt.Sprintf(", %d not finished (%s)", len(unfinished), strings.Join(unfinished, " "))
	}
	return s
}

// absent is why for an arm not in the discovery: "tp2 ep2: not in this
// discovery".
func (w Window) absent() string { return w.Arm + ": not in this discovery" }

// measured returns the window's points that were measured (green or
// failed), in order.
func (w Window) measured() []WindowPoint {
	return slices.DeleteFunc(slices.Clone(w.Points), func(p WindowPoint) bool { return p.NotMeasured || p.Unfinished })
}

// Judge is the window rule on one arm. Every point must be green. An arm
// of fewer than three points agrees then; one of three or more agrees
// strictly when its knee (ok or ambiguous) lies above the window's first
// point and at most its last. ByPeak judges it by InferenceX's own word
// instead: its notes call an arm's peak its knee (the measured MI325X
// Qwen3.5 key's "TP2 peaks at c4"), and the windows it chose at a
// measured knee were chosen around those. The arm agrees by the peak when the knee finder gives a knee
// (HasKnee: ok, ambiguous or saturated-at-min; a peak at the top of a
// window it is still climbing is no peak) and the peak lies above the
// window's first point and at most its last; JudgeKey also takes a
// window still climbing to its top when the arm's own point beyond it
// falls off a cliff (Window.peakAtTop). A flat window (the offload
// arms' c64-c76) has its knee at its first point whatever the hardware
// showed; its peak is still read. why names the arm and what decided.
//
// A window an adaptive discovery measured in part (points NotMeasured,
// or read from a probe only) is judged on what it measured: every
// measured point must be green (a failed one still fails the arm), and
// the knee and the peak are the knee finder's over the measured points,
// against the official window's first and last concurrency. why then
// says what the verdict rests on (coverage) instead of "window lo-hi".
//
// An arm not in the discovery (Absent) agrees by no rule; why says it is
// not in it (JudgeKey leaves such an arm out of the key's verdict).
func (w Window) Judge() (strict, byPeak bool, why string) {
	if w.Absent {
		return false, false, w.absent()
	}
	if n := w.failed(); n > 0 || len(w.Points) < minPoints {
		ok := n == 0
		if w.partial() {
			return ok, ok, fmt.Sprintf("%s: %s", w.Arm, w.coverage())
		}
		return ok, ok, fmt.Sprintf("%s: %d of %d points failed", w.Arm, n, len(w.Points))
	}
	lo, hi := w.Points[0].Conc, w.Points[len(w.Points)-1].Conc
	r := w.Knee
	if r == nil {
		// Not one point of the window measured (every one skipped).
		return false, false, fmt.Sprintf("%s: no knee on %s", w.Arm, w.coverage())
	}
	strict = (r.Status == StatusOK || r.Status == StatusAmbiguous) && r.Knee > lo && r.Knee <= hi
	byPeak = strict || r.HasKnee() && r.Peak > lo && r.Peak <= hi
	knee := "no knee"
	if r.Knee > 0 {
		knee = fmt.Sprintf("knee c%d", r.Knee)
	}
	if r.Peak > 0 {
		knee += fmt.Sprintf(" peak c%d", r.Peak)
	}
	if w.partial() {
		return strict, byPeak, fmt.Sprintf("%s: %s %s on %s", w.Arm, r.Status, knee, w.coverage())
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
// It reads the official windows, measured or not: an adaptive discovery
// that skipped a point leaves the official grid as it is.
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
//
// On windows an adaptive discovery measured in part, the rule reads the
// measured points only: the arm's failed ones still fail it, its top is
// its highest measured point ("its top measured"), and only measured
// points of other arms dominate (why counts the ones not measured when
// nothing dominates).
//
// An arm whose key's other arms are all not in the discovery (Absent)
// has no point of another arm to dominate beyond: it does not agree by
// the frontier, whatever beyond is ("no other arm in this discovery"),
// and JudgeKey asks for beyond only for the peak (Window.peakAtTop).
func FrontierVerdict(a Window, beyond WindowPoint, key []Window) (ok bool, why string) {
	if n := a.failed(); n > 0 {
		if a.partial() {
			return false, fmt.Sprintf("frontier: %d of %d measured window points failed", n, len(a.measured()))
		}
		return false, fmt.Sprintf("frontier: %d of %d window points failed", n, len(a.Points))
	}
	measured := a.measured()
	if len(measured) == 0 {
		return false, "frontier: no window point measured"
	}
	if alone(a, key) {
		return false, "frontier: no other arm in this discovery"
	}
	onFront := false
	for _, p := range measured {
		onFront = onFront || dominator(p, a, key) == nil
	}
	top, topWord := measured[len(measured)-1], "top"
	if top.Conc != a.Points[len(a.Points)-1].Conc {
		topWord = "top measured"
	}
	q := dominator(beyond, a, key)
	switch {
	case !onFront:
		return false, "frontier: no window point on the frontier"
	case beyond.Failed:
		return false, fmt.Sprintf("frontier: c%d failed", beyond.Conc)
	case beyond.Throughput < top.Throughput:
		return false, fmt.Sprintf("frontier: c%d %s below its %s c%d %s", beyond.Conc, frontPoint(beyond), topWord, top.Conc, frontPoint(top))
	case q == nil:
		if n := notMeasuredElsewhere(a, key); n > 0 {
			return false, fmt.Sprintf("frontier: c%d %s not dominated by a measured point (%d official points of other arms not measured)", beyond.Conc, frontPoint(beyond), n)
		}
		return false, fmt.Sprintf("frontier: c%d %s not dominated", beyond.Conc, frontPoint(beyond))
	}
	return true, fmt.Sprintf("frontier: c%d %s dominated by %s c%d %s", beyond.Conc, frontPoint(beyond), q.arm, q.pt.Conc, frontPoint(q.pt))
}

// frontPoint prints a point's frontier coordinates, and "probe only"
// for a point read from a probe only.
func frontPoint(p WindowPoint) string {
	if p.Probe {
		return fmt.Sprintf("(%.0f tok/s/GPU, %.1f tok/s/user, probe only)", p.Throughput, p.Interactivity)
	}
	return fmt.Sprintf("(%.0f tok/s/GPU, %.1f tok/s/user)", p.Throughput, p.Interactivity)
}

// dominatingPoint is an official point of a key's arm that dominates
// another point.
type dominatingPoint struct {
	arm string
	pt  WindowPoint
}

// alone reports whether the key has arms other than a and none of them
// is in the discovery.
func alone(a Window, key []Window) bool {
	others := false
	for _, o := range key {
		if o.Arm != a.Arm {
			if !o.Absent {
				return false
			}
			others = true
		}
	}
	return others
}

// notMeasuredElsewhere counts the official points of the key's other
// arms than a that were not measured.
func notMeasuredElsewhere(a Window, key []Window) int {
	n := 0
	for _, o := range key {
		if o.Arm != a.Arm {
			n += len(o.Points) - len(o.measured())
		}
	}
	return n
}

// dominator is the green official point of another arm of the key than a
// that dominates p with the most throughput per GPU, or nil (a point not
// measured dominates nothing).
func dominator(p WindowPoint, a Window, key []Window) *dominatingPoint {
	var best *dominatingPoint
	for _, o := range key {
		if o.Arm == a.Arm {
			continue
		}
		for _, q := range o.Points {
			if !q.Failed && !q.NotMeasured && Dominates(q, p) && (best == nil || q.Throughput > best.pt.Throughput) {
				best = &dominatingPoint{arm: o.Arm, pt: q}
			}
		}
	}
	return best
}

// climbsToTop reports whether the window, every point green and its top
// measured, reads no knee because it still gains at its top (Analyze's
// unsaturated), none of its points above its top's reading: the arm's
// peak lies at its top or above it.
func (w Window) climbsToTop() bool {
	if w.failed() > 0 || w.Knee == nil || w.Knee.Status != StatusUnsaturated {
		return false
	}
	m := w.measured()
	if len(m) == 0 || m[len(m)-1].Conc != w.Points[len(w.Points)-1].Conc {
		return false
	}
	top := m[len(m)-1]
	return !slices.ContainsFunc(m, func(p WindowPoint) bool { return p.Throughput > top.Throughput })
}

// peakAtTop reports whether a window still climbing at its top
// (climbsToTop) has its peak there: the arm's own point beyond it, at its
// frontier step, falls off a cliff from the top, as the search reads one
// between two readings (fellOff: more than cliffDrop; both full-length
// readings, their noise left out). The peak then lies at the top or between it
// and that step (the lowest concurrency above the window another arm of
// the key measures, else the top's doubling), as InferenceX reads a
// window that ends at the last concurrency a resident KV pool holds, an
// offload arm taking over at the step.
func (w Window) peakAtTop(beyond WindowPoint) bool {
	if !w.climbsToTop() || beyond.Failed || beyond.NotMeasured || beyond.Unfinished {
		return false
	}
	return fellOff(w.Points[len(w.Points)-1].Throughput, beyond.Throughput, 0, 0)
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
	// Why has one entry per arm that does not agree strictly, and one per
	// arm that agrees on a window measured in part (its coverage), in the
	// key's order.
	Why []string
	// Adaptive is true when an arm's discovery was adaptive
	// (Window.Adaptive): the verdict rests on the points it measured.
	Adaptive bool
	// Unfinished is true when the key's discovery has not finished
	// (UnfinishedVerdict): the key is not judged, Strict, ByPeak and
	// ByFrontier are false and Why says what is not finished.
	Unfinished bool
	// Arms counts the key's arms and Absent those not in its discovery
	// (Window.Absent): a key with Absent > 0 is judged on the other
	// Arms-Absent only, and Line says so.
	Arms, Absent int
	// Window is where the key's official windows came from, as the
	// caller read it (configs.WindowSource.Provenance; "" when the key
	// has no row): JudgeKey leaves it empty, WindowLine prints it and
	// WindowTally counts by it.
	Window string
}

// OnSomeArms reports whether the verdict rests on part of the key's arms
// only, the others not in its discovery.
func (v KeyVerdict) OnSomeArms() bool { return v.Absent > 0 }

// UnfinishedVerdict is the verdict on a key whose discovery has not
// finished: a window point Unfinished (the discovery was killed while it
// ran the point or before it got to it, or its search may still run the
// point's probe at the full length), or others, points of the
// discovery not finished that its journal places on no arm. A point that
// ran and failed stays failed, but no rule judges the key: what the
// discovery has still to run may turn any verdict. Why names, per arm
// with points not finished (or measured in part), its window's coverage
// ("tp8 ep8: window c1 c2 c4: 1 green, 2 not finished (c2 c4)"), per
// other arm with failed points how many ("tp4: 6 of 6 points failed"),
// per arm not in the discovery that it is not ("tp2 ep2: not in this
// discovery": resuming it runs none of that arm's points), then the
// others.
// ok is false when the discovery is finished as far as the windows and
// others tell.
func UnfinishedVerdict(key []Window, others int) (v KeyVerdict, ok bool) {
	v.Unfinished = others > 0
	for _, a := range key {
		v.Adaptive = v.Adaptive || a.Adaptive
		v.Unfinished = v.Unfinished || a.unfinished() > 0
	}
	if !v.Unfinished {
		return KeyVerdict{}, false
	}
	for _, a := range key {
		switch n := a.failed(); {
		case a.Absent:
			v.Why = append(v.Why, a.absent())
		case a.partial():
			v.Why = append(v.Why, fmt.Sprintf("%s: %s", a.Arm, a.coverage()))
		case n > 0:
			v.Why = append(v.Why, fmt.Sprintf("%s: %d of %d points failed", a.Arm, n, len(a.Points)))
		}
	}
	if others > 0 {
		v.Why = append(v.Why, plural.Count(others, "point", "points")+" of the discovery not finished with no arm named in its journal")
	}
	return v, true
}

// JudgeKey judges every arm of a key against its window (Judge) and each
// arm that does not agree strictly by the frontier too, reading it at
// FrontierStep through beyond (not for an arm with failed window points,
// which the frontier rule never takes, nor for one with no point
// measured, nor for one with no other arm of the key in the discovery
// unless its window still climbs to its top). A window still climbing
// to its top agrees by the peak when that point beyond falls off a
// cliff (Window.peakAtTop): its peak lies between its top and the
// step, and why says so ("its peak at its top (c16 beyond falls off a
// cliff)").
//
// A key whose discovery has not finished is not judged: its verdict is
// UnfinishedVerdict's, and beyond is not asked for a point.
//
// An arm not in the discovery (Absent) is not judged, and beyond is not
// asked for its point: the key's verdict rests on its other arms (Why
// names the arm, Line says on how many arms the key was judged), whose
// frontier steps still read its official window and whose frontier it
// does not dominate. A key none of whose arms is in its discovery cannot
// be judged: an error.
func JudgeKey(key []Window, beyond Beyond) (KeyVerdict, error) {
	if v, ok := UnfinishedVerdict(key, 0); ok {
		return v, nil
	}
	v := KeyVerdict{Strict: true, ByPeak: true, ByFrontier: true, Arms: len(key)}
	for _, a := range key {
		if a.Absent {
			v.Absent++
			v.Why = append(v.Why, a.absent())
			continue
		}
		ok, peak, w := a.Judge()
		v.Adaptive = v.Adaptive || a.Adaptive
		if ok {
			v.ByPeak = v.ByPeak && peak
			if a.partial() {
				v.Why = append(v.Why, w)
			}
			continue
		}
		v.Strict = false
		// The arm's own point beyond its window: for the frontier rule,
		// and for the peak of a window still climbing at its top.
		var p WindowPoint
		measured, step := false, 0
		if a.failed() == 0 && len(a.measured()) > 0 && (!alone(a, key) || a.climbsToTop()) {
			step = FrontierStep(a, key)
			var err error
			if p, measured, err = beyond(a, step); err != nil {
				return v, fmt.Errorf("%s at c%d: %w", a.Arm, step, err)
			}
		}
		switch {
		case !peak && measured && a.peakAtTop(p):
			peak = true
			w += fmt.Sprintf(", its peak at its top (c%d beyond falls off a cliff)", p.Conc)
		case !peak && !measured && step > 0 && alone(a, key):
			// Not in Open (its frontier verdict is decided): say it here.
			w += fmt.Sprintf(", its peak not judged (c%d beyond not measured)", step)
		}
		v.ByPeak = v.ByPeak && peak
		front, fw := false, ""
		switch {
		case a.failed() > 0 || len(a.measured()) == 0 || alone(a, key):
			// No point beyond rescues a window with failed points, or
			// one no other arm's point can dominate beyond.
			front, fw = FrontierVerdict(a, WindowPoint{}, key)
		case measured:
			front, fw = FrontierVerdict(a, p, key)
		default:
			fw = fmt.Sprintf("frontier: c%d not measured", step)
			v.Open = append(v.Open, a.Arm)
		}
		v.ByFrontier = v.ByFrontier && front
		v.Why = append(v.Why, w+" ("+fw+")")
	}
	if v.Absent == len(key) {
		return KeyVerdict{}, errors.New("no arm of the key is in the discovery: nothing to judge")
	}
	return v, nil
}

// Label is the verdict's word: agree, by peak+frontier, by peak, by
// frontier or disagree; unfinished for a key not judged.
func (v KeyVerdict) Label() string {
	switch {
	case v.Unfinished:
		return "unfinished"
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
// that does not agree strictly or rests on windows measured in part; for
// a key whose discovery has not finished, what is not finished and to
// resume it. A key judged on part of its arms says so first ("judged on
// 1 of 5 arms"), then names each arm not in its discovery in its place.
func (v KeyVerdict) Line(key string) string {
	if v.Unfinished {
		return fmt.Sprintf("%-17s %s: %s: resume the discovery (the sweep discover command that started it) and judge it again", v.Label(), key, strings.Join(v.Why, "; "))
	}
	if v.OnSomeArms() {
		return fmt.Sprintf("%-17s %s: judged on %d of %s; %s", v.Label(), key, v.Arms-v.Absent, plural.Count(v.Arms, "arm", "arms"), strings.Join(v.Why, "; "))
	}
	if len(v.Why) == 0 {
		return fmt.Sprintf("%-17s %s", v.Label(), key)
	}
	return fmt.Sprintf("%-17s %s: %s", v.Label(), key, strings.Join(v.Why, "; "))
}

// Tally counts the keys by the three rules.
type Tally struct {
	Counts
	// Open counts the keys whose frontier verdict is open (KeyVerdict.Open).
	Open int
	// Adaptive counts the keys judged on adaptive discoveries
	// (KeyVerdict.Adaptive) and those of them that agree by each rule:
	// verdicts on the points those discoveries measured.
	Adaptive Counts
	// Unfinished counts the keys not judged because their discovery has
	// not finished (KeyVerdict.Unfinished); Counts leaves them out.
	Unfinished int
	// SomeArms counts the keys judged on part of their arms, the others
	// not in their discoveries (KeyVerdict.OnSomeArms), and those of them
	// that agree by each rule: verdicts on the arms those discoveries ran.
	SomeArms Counts
}

// Counts are keys judged and how many of them agree by each rule.
type Counts struct {
	Keys, Strict, ByPeak, ByFrontier int
}

// add counts one key's verdict.
func (c *Counts) add(v KeyVerdict) {
	c.Keys++
	c.Strict += count(v.Strict)
	c.ByPeak += count(v.ByPeak)
	c.ByFrontier += count(v.ByFrontier)
}

// Add counts one key's verdict.
func (t *Tally) Add(v KeyVerdict) {
	if v.Unfinished {
		t.Unfinished++
		return
	}
	t.Counts.add(v)
	t.Open += count(len(v.Open) > 0)
	if v.Adaptive {
		t.Adaptive.add(v)
	}
	if v.OnSomeArms() {
		t.SomeArms.add(v)
	}
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
	if a := t.Adaptive; a.Keys > 0 {
		s += fmt.Sprintf("; %d judged on full discoveries, %d on adaptive ones (on the points they measured: %d agree, %d by the peak, %d by the frontier)",
			t.Keys-a.Keys, a.Keys, a.Strict, a.ByPeak, a.ByFrontier)
	}
	if p := t.SomeArms; p.Keys > 0 {
		s += fmt.Sprintf("; %s judged on part of %s (on the arms %s ran: %d agree, %d by the peak, %d by the frontier)",
			plural.Count(p.Keys, "key", "keys"), plural.Word(p.Keys, "its arms", "their arms"), plural.Word(p.Keys, "its discovery", "their discoveries"),
			p.Strict, p.ByPeak, p.ByFrontier)
	}
	if t.Unfinished > 0 {
		s += fmt.Sprintf("; %s", map[bool]string{true: "1 key not judged (its discovery has not finished: resume it)",
			false: fmt.Sprintf("%d keys not judged (their discoveries have not finished: resume them)", t.Unfinished)}[t.Unfinished == 1])
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
//
// d says how the discovery chose the arm's points. A concurrency it
// recorded as skipped (adaptive discovery did not need it) where the arm
// has no result is NotMeasured, not failed; one with results that failed
// stays failed. A concurrency it has not finished is Unfinished, whatever
// results an earlier attempt left (a probe whose full-length run was
// interrupted). A point whose results are all probes (none superseded
// by a full-length run) is marked Probe.
//
// An arm not in the discovery (d.Absent) is Absent, every point
// NotMeasured, whatever results r holds: the discovery did not run it.
func WindowOf(name string, r *Result, concs []int, d Discovery) Window {
	w := Window{Arm: name, Adaptive: d.Adaptive, Absent: d.Absent}
	if d.Absent {
		for _, c := range concs {
			w.Points = append(w.Points, WindowPoint{Conc: c, NotMeasured: true})
		}
		return w
	}
	at := map[int]*Point{}
	if r != nil {
		for i := range r.Points {
			at[r.Points[i].Conc] = &r.Points[i]
		}
	}
	for _, c := range concs {
		p := at[c]
		if slices.Contains(d.Unfinished, c) {
			w.Points = append(w.Points, WindowPoint{Conc: c, Unfinished: true})
			continue
		}
		if p == nil && slices.Contains(d.Skipped, c) {
			w.Points = append(w.Points, WindowPoint{Conc: c, NotMeasured: true})
			continue
		}
		if p == nil || !p.Usable {
			w.Points = append(w.Points, WindowPoint{Conc: c, Failed: true, Probe: p != nil && probesOnly(r.Arm, c)})
			continue
		}
		wp := WindowPoint{Conc: c, Throughput: *p.Throughput, Probe: p.Probe}
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

// Discovery is how a discovery chose an arm's points (WindowOf): the
// zero value is a full discovery, every point of the grid run.
type Discovery struct {
	// Adaptive is true for an adaptive discovery (it ran only the points
	// its knee search asked for).
	Adaptive bool
	// Skipped are the concurrencies it recorded as not run (adaptive),
	// or did not plan (a discovery of part of the conc-list, --conc-list).
	Skipped []int
	// Unfinished are the concurrencies it has not finished: the discovery
	// was killed or interrupted while it ran them, or before it got to
	// them, or (probes) between two steps of a search that may still run
	// them at the full length (campaign.Coverage.Unfinished).
	Unfinished []int
	// Absent is true for an arm the discovery does not have: its journal
	// records the arms it ran (campaign.Coverage.Arms), and not this one.
	// A discovery that does not record them (no journal, or one written
	// before it did) is read as having every arm of its key.
	Absent bool
}

// probesOnly reports whether every result of arm a at conc that is not
// superseded is a probe.
func probesOnly(a *Arm, conc int) bool {
	found := false
	for _, s := range a.Samples {
		if s.Conc != conc || s.Superseded {
			continue
		}
		if !s.Probe {
			return false
		}
		found = true
	}
	return found
}
