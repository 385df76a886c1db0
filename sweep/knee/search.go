package knee

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"sweep/metrics/result"
)

// SearchOptions tune Next. The zero value means peers' §3.2 defaults.
type SearchOptions struct {
	// Step is the bracketing factor (default 4).
	Step int
	// Analyze tunes the knee found on what is measured (threshold, gain).
	Analyze Options
	// FullSeconds is the length of a full point (default 1200 s,
	// agentx-fast): a probe of Sample.Seconds has the noise of a full
	// point (Analyze.Sigma) times sqrt(FullSeconds/Seconds).
	FullSeconds float64
}

// sigma is the relative noise of a measured sample: Analyze.Sigma, more
// for a probe.
func (o SearchOptions) sigma(s *Sample, ao Options) float64 {
	if !s.Probe || s.Seconds <= 0 || s.Seconds >= o.FullSeconds {
		return ao.Sigma
	}
	return ao.Sigma * math.Sqrt(o.FullSeconds/s.Seconds)
}

// Next is the adaptive discovery of one arm (peers' §3.2): given the
// arm's concurrency grid and what has been measured so far, it returns
// the grid concurrencies to measure next, or nil when the arm is done.
//
//  1. Bracket: the first grid point, then the first grid point at least
//     Step times the last one, and so on, until a step gains less than
//     the gate per doubling (Analyze.Gain, 10 %), a point fails or falls
//     below the previous one by more than 10 % and twice the two points'
//     noise (a cliff, or the server's capacity; with fewer than 3 usable
//     points the fall is checked one grid point above), or the grid
//     ends. The bracketing points are probes (Step.Probe) on a grid of
//     three points or more (on three the verdict needs every one, so
//     the point between them is a probe too, and each probe there is
//     tested as a far one is, below). The top of the grid and the point
//     below it, which the top gate (Analyze's saturation gate) compares,
//     run again at the full length where their noise decides that gate
//     or an ambiguous knee lies at either of them (topGateProbes, below;
//     when the grid point below the top is not measured yet, it is
//     measured first, as the full grid's gate has it; then the top runs
//     again first, and the point below only if its noise still decides
//     the gate, but for an ambiguous knee there, where both do); a
//     bracketing probe with a grid neighbour more than a doubling away
//     (not probeable), whose noise may move the knee by more than the
//     doubling it is read with, runs again at the full length once the
//     search is otherwise done, when the verdict with its reading moved
//     two of its standard deviations up or down is not the same verdict
//     (farProbesDecide, below; one at a time, the lowest first: a
//     full-length reading may settle the verdict without the others).
//     Neither runs again when Analyze reads the arm unsaturated with its
//     gate's posterior at 99 % or more (sureUnsaturated: the posterior
//     weighs each probe by its length against the full-length points;
//     on probes alone, each as a full point).
//  2. Fill: find the knee on what is measured and measure the grid
//     point nearest to its lower doubling neighbour (k/2) when it is
//     missing (when it failed, the one between it and the knee's usable
//     bracket), and the one nearest to 2k unless a point above the knee
//     is measured on the plateau (within Analyze.Drop of the peak: it
//     bounds the knee; a point fallen off a cliff does not, nor one more
//     than a doubling above the knee that reads below the knee: the
//     curve may have risen and fallen between), and, when the next
//     measured point above the peak failed or fell off a cliff with
//     unmeasured grid points between the two, the one nearest their
//     log-middle (peakGap: such a point bounds the peak no more than the
//     knee; the peak, and the knee at Threshold × peak, may lie between);
//     repeat until settled. An arm still gaining at the top of its grid
//     gets the grid point below the top, and the gaps below are filled
//     only when that top gain is within two noise standard deviations of
//     the gate and Analyze is not sure the arm is unsaturated
//     (sureUnsaturated: the gate's posterior over the whole fit at 99 %
//     or more already weighs the gaps' bends); so are they for an arm
//     whose knee lands on its top usable point with nothing left to
//     measure above it (failed points or the grid's end), when the gain into the top lies within two noise
//     standard deviations of the gate either way: knee at the top or
//     unsaturated is the same top gate's verdict. Nothing above a failed or falling point (or above two
//     failed ones) is measured, and no point twice, but for a probe
//     measured again at the full length (its reading replaces the
//     probe's; otherwise a knee that lands on a probe keeps the probe's
//     value): a usable probe whose KV pool came near full
//     (Sample.Unsteady: it has not reached a full point's steady state),
//     at once, in the bracket or the fill, unless the verdict does not
//     hang on it (unsteadyDecides: Analyze reads the same with it at half
//     its reading, or enough points are usable and it moves nothing: a
//     probe past a cliff that reads the collapse is kept, so points above
//     a pool near full run as probes like any other), after the points
//     below it that the search asks for both with it as read and with it
//     at half its reading (they run whatever its full-length reading is),
//     and while too few points are usable for a verdict, after the points
//     below it that the search asks for (and on a grid of three the third
//     point: the verdict needs all three); a failed probe where its
//     failure would end the bracket (a failure at the top of the grid
//     ends none: the bracket ends there anyway) or leave the arm rising
//     into failures, when a short window can make
//     that failure and a full-length point pass (not FailedForGood: a
//     validation read over fewer requests, not the error rate; a
//     full-length failure above it says nothing of the point itself);
//     and, once the knee is settled, the probes among the peak
//     and the usable point below it when the next point above the peak
//     failed or fell off a cliff and their noise decides the gate
//     (Analyze gates such an arm on the gain into the peak, as the top of
//     a grid: with the probes' readings moved two standard deviations one
//     way it calls the arm unsaturated, the other way not), and so the
//     probes among the top of the grid and the usable point below it
//     (topGateProbes; not for an arm Analyze reads unsaturated and is
//     sure of, sureUnsaturated), and those two also when both are probes and the
//     knee read is ambiguous and lies at either of them (a verdict whose
//     bracket reaches the top gate does not rest on probes alone; an ok
//     knee there stands); and, with nothing else left to measure, a
//     bracketing probe with a grid neighbour more than a doubling away
//     whose noise decides the verdict (farProbesDecide: Analyze's
//     verdict with that probe's reading moved two of its standard
//     deviations up or down differs, by SameVerdict, from the one on
//     what is measured; again not for a sure unsaturated verdict); once the top gate's two points are at the full
//     length and their gain lies within the gate's noise, the gaps below
//     them are filled at the full length, as for a still-rising arm,
//     also for a knee below the top: the fit through them decides the
//     gate, and a probe's bias there (which varies with the KV pool's
//     fill, so no per-arm factor removes it) would decide it instead.
//     The fill points are probes where their grid neighbours lie within
//     a doubling (probeable): there a probe's noise moves the knee by at
//     most the doubling it is read with; and on a grid of three. When
//     only some of a knee's fill points must run at the full length,
//     those run first and the others are chosen again with their
//     readings in hand; a still-rising arm's gap fill, whose
//     fit decides the top gate (a 180 s probe weighs 0.15 of a full
//     point there), keeps one length for the whole step.
//
// Next is a pure function of its inputs, so a resumed sweep makes the
// same choices.
func Next(grid []int, measured []Sample, o SearchOptions) []int {
	return NextStep(grid, measured, o).Conc
}

// Step is what the search asks for next: the concurrencies to measure,
// and whether they are probes. A bracketing point only has to tell which
// way the curve goes (a ×4 step gains far more than the noise until
// saturation), so it runs short on a grid of three points or more, and
// runs again at the full length where the verdict hangs on its noise:
// the top of the grid and the point below it, which the top gate
// compares (topGateProbes), and a point with a grid neighbour more than
// a doubling away (farProbesDecide), but for an arm Analyze reads
// unsaturated with 99 % odds (sureUnsaturated). A fill point runs short where its
// grid neighbours lie within a doubling (probeable), and on a grid of
// three.
//
// A step also says why (outputs only, never read back: a resumed sweep
// makes the same choices whatever they say): Why names, for each of
// Conc, the rule that asks for it with the numbers it read ("c32 again
// at full length: the top gate's gain 9.1 % per doubling from c24 to c32
// lies within 2σ (±12.0 %) of the 10.0 % gate, and the probes' noise
// decides it ..."), and the last step, with no Conc, says in Skipped why
// each grid point not measured is not needed ("above c48: c48 fell off a
// cliff ...", "between c16 and c64, measured: the knee c32 (ok) is
// bounded by c16 and c64, both measured") and in Done the verdict the
// search ends on.
type Step struct {
	Conc  []int
	Probe bool
	// Why is, by concurrency of Conc, the rule that asks for it.
	Why map[int]string
	// Skipped is, by grid concurrency not measured, why the search does
	// not need it; set only on the last step (no Conc).
	Skipped map[int]string
	// Done is the verdict the search ends on, for a person ("knee c32
	// (ok)"); set only on the last step.
	Done string
}

// String is the step's points and kind, as the search's tests compare
// steps: its reasons (Why, Skipped, Done) explain it and are left out.
func (s Step) String() string { return fmt.Sprintf("{%v %v}", s.Conc, s.Probe) }

// NextStep is Next with the kind of points it asks for.
func NextStep(grid []int, measured []Sample, o SearchOptions) Step {
	if o.Step < 2 {
		o.Step = 4
	}
	if o.FullSeconds <= 0 {
		o.FullSeconds = 1200
	}
	ao := o.Analyze.withDefaults()
	grid = slices.Clone(grid)
	slices.Sort(grid)
	grid = slices.Compact(grid)
	if len(grid) == 0 {
		return Step{}
	}
	measured = fullReplacesProbes(measured)
	byConc := samplesByConc(measured)
	// A probe whose KV pool came near full is measured again at the full
	// length when the verdict hangs on it (unsteady), after the points
	// below it that the search asks for both with it as read and with it
	// at unsteadyLow times its reading: those run whatever its full-length
	// reading is (lower: a probe overstates a filling pool), and with them
	// in hand the verdict may no longer hang on it. While too few points
	// are usable for any verdict, after the points below it the search
	// asks for (none can be read either way), and on a grid of three after
	// the third: its verdict needs every point. Other points above it
	// wait: its full-length reading may be a cliff that ends the bracket.
	unsteadyAgain := unsteadyProbes(byConc)
	if len(unsteadyAgain) == 0 {
		return nextOther(grid, measured, byConc, o, ao)
	}
	decides, noVerdict, as, half := unsteadyDecides(measured, unsteadyAgain, ao)
	step := nextOther(grid, measured, byConc, o, ao)
	hangs := "too few points usable for a verdict"
	switch {
	case !decides:
		return step
	case noVerdict:
		if len(step.Conc) > 0 && (slices.Max(step.Conc) < unsteadyAgain[0] || needsEvery(grid)) {
			for c, why := range step.Why {
				step.Why[c] = fmt.Sprintf("%s (first: unsteady %s, with %s, may run again at full length after it)", why, concList(unsteadyAgain), hangs)
			}
			return step
		}
	default:
		low := scaledAt(measured, unsteadyAgain, unsteadyLow)
		if both := belowEitherWay(step, nextOther(grid, low, samplesByConc(low), o, ao), unsteadyAgain[0]); len(both.Conc) > 0 {
			for c, why := range both.Why {
				both.Why[c] = fmt.Sprintf("%s (asked for with unsteady %s as read and at half its reading, so it runs first: that probe may run again at full length after it)", why, concList(unsteadyAgain))
			}
			return both
		}
		hangs = fmt.Sprintf("the verdict hanging on it (%s as read, %s at half its reading)", verdictWhy(as), verdictWhy(half))
	}
	why := "its probe's KV pool came near full (unsteady: short of a full point's steady state), with " + hangs
	out := Step{Conc: unsteadyAgain, Why: map[int]string{}}
	for _, c := range unsteadyAgain {
		out.Why[c] = againWhy(c, why)
	}
	return out
}

// samplesByConc indexes measured by concurrency.
func samplesByConc(measured []Sample) map[int][]*Sample {
	byConc := map[int][]*Sample{}
	for i := range measured {
		s := &measured[i]
		byConc[s.Conc] = append(byConc[s.Conc], s)
	}
	return byConc
}

// scaledAt returns a copy of samples with the readings at concs scaled by
// f.
func scaledAt(samples []Sample, concs []int, f float64) []Sample {
	out := slices.Clone(samples)
	for i := range out {
		if slices.Contains(concs, out[i].Conc) {
			out[i].scaleThroughput(f)
		}
	}
	return out
}

// belowEitherWay is the part of the steps asRead and low (the search's
// next step with the unsteady probes as read and at unsteadyLow times
// their reading) both ask for below the lowest unsteady probe (lowest),
// at the same length: points measured whatever the probes' full-length
// readings are.
func belowEitherWay(asRead, low Step, lowest int) Step {
	if asRead.Probe != low.Probe {
		return Step{}
	}
	var both []int
	why := map[int]string{}
	for _, c := range asRead.Conc {
		if c < lowest && slices.Contains(low.Conc, c) {
			both = append(both, c)
			why[c] = asRead.Why[c]
		}
	}
	return Step{Conc: both, Probe: asRead.Probe && len(both) > 0, Why: why}
}

// nextOther is NextStep's bracket and fill: the step on what is measured,
// its unsteady probes read as they are.
func nextOther(grid []int, measured []Sample, byConc map[int][]*Sample, o SearchOptions, ao Options) Step {
	rd := newReadings(byConc, o, ao)
	step, end := bracket(grid, rd, o, ao)
	if len(step.Conc) > 0 {
		return step
	}
	f := fill(grid, measured, end, rd, ao)
	conc, rising := f.conc, f.rising
	switch {
	case len(conc) == 0:
		return Step{Skipped: skippedWhy(grid, f, rd), Done: doneWhy(f.r)}
	case f.again:
		return Step{Conc: conc, Why: f.why}
	case gapDecidesGate(grid, conc, rd, ao):
		top, below, _ := fullGateNear(grid, rd, ao)
		gain, band, _ := topGain(top, below, rd)
		return Step{Conc: conc, Why: suffixed(f.why, "; at full length: the top gate's two points, read at full length, lie within its noise (the "+
			gateWhy(below, top, gain, band, ao.Gain)+"), so the fit through the gaps decides the gate, and a probe's bias would decide it instead")}
	}
	if probe := fillProbes(grid, conc); probe || rising {
		if !probe {
			f.why = suffixed(f.why, "; at full length, as the whole step: a grid neighbour of one of them lies more than a doubling away, and the still-rising arm's gap fill keeps one length")
		}
		return Step{Conc: conc, Probe: probe, Why: f.why}
	}
	// Around a knee, the points that must run full length run first; the
	// others are chosen again with those readings in hand, as probes.
	var full []int
	for _, c := range conc {
		if !probeable(grid, c) {
			full = append(full, c)
		}
	}
	why := map[int]string{}
	for _, c := range full {
		why[c] = f.why[c] + "; at full length (a grid neighbour lies more than a doubling away), before the fill's probes"
	}
	return Step{Conc: full, Why: why}
}

// skippedWhy says, for each grid point not measured when the search
// ends (f: its last fill, which asks for nothing), why it is not needed:
// it lies above the ceiling (a cliff, two failures), or where the verdict
// does not hang on it (between two measured points, or above the top
// one), with the verdict and what bounds it.
func skippedWhy(grid []int, f fillOut, rd readings) map[int]string {
	verdict := verdictWhy(f.r)
	switch r := f.r; {
	case r.HasKnee() && r.Status != StatusSaturatedAtMin:
		if lo, hi := gapAround(grid, func(g int) bool { _, ok := rd.tput(g); return ok }, r.Knee); hi > 0 {
			if lo > 0 {
				verdict = fmt.Sprintf("the %s is bounded by c%d and c%d, both measured", verdict, lo, hi)
			} else {
				verdict = fmt.Sprintf("the %s is bounded by c%d above it, measured", verdict, hi)
			}
		} else {
			verdict = fmt.Sprintf("the %s has nothing left to measure above it", verdict)
		}
	case sureUnsaturated(r):
		verdict = fmt.Sprintf("the arm reads %s, sure at %.0f %% or more: the gaps below its top need no filling", verdict, 100*sureOdds)
	case r.Status == StatusUnsaturated:
		verdict = fmt.Sprintf("the arm reads %s, its top gain clear of the gate beyond the noise", verdict)
	case r.Status == StatusInsufficient:
		verdict += ", and none is left to measure below the ceiling"
	default:
		verdict = "the arm reads " + verdict
	}
	out := map[int]string{}
	for _, g := range grid {
		if rd.has(g) {
			continue
		}
		lo, hi := gapAround(grid, rd.has, g)
		switch {
		case g > f.end.ceiling:
			out[g] = fmt.Sprintf("above c%d: %s", f.end.ceiling, f.end.why)
		case lo > 0 && hi > 0:
			out[g] = fmt.Sprintf("between c%d and c%d, measured: %s", lo, hi, verdict)
		case lo > 0:
			out[g] = fmt.Sprintf("above c%d, the highest point measured: %s", lo, verdict)
		default:
			out[g] = fmt.Sprintf("below c%d, the lowest point measured: %s", hi, verdict)
		}
	}
	return out
}

// suffixed returns why with each reason followed by more.
func suffixed(why map[int]string, more string) map[int]string {
	out := make(map[int]string, len(why))
	for c, w := range why {
		out[c] = w + more
	}
	return out
}

// newReadings reads the measured samples by concurrency (byConc).
func newReadings(byConc map[int][]*Sample, o SearchOptions, ao Options) readings {
	// probeFailed: every reading at c is a probe that failed validation,
	// the way a short run fails (not Sample.FailedForGood).
	// A probe that failed a validation a short window can fail is no
	// evidence that the point fails. Where such a failure would end the
	// arm, the point is measured again at the full length, and that
	// reading replaces the probe's.
	probeFailed := func(c int) bool {
		ss := byConc[c]
		for _, s := range ss {
			if !s.Probe || s.Excluded == "" || s.FailedForGood() {
				return false
			}
		}
		return len(ss) > 0
	}
	tput := func(c int) (float64, bool) {
		var vs []float64
		for _, s := range byConc[c] {
			if t := s.Throughput(ao.Metric); s.Excluded == "" && t != nil {
				vs = append(vs, *t)
			}
		}
		if len(vs) == 0 {
			return 0, false
		}
		slices.Sort(vs)
		return vs[len(vs)/2], true
	}
	has := func(c int) bool { return len(byConc[c]) > 0 }
	usable := func() int {
		n := 0
		for c := range byConc {
			if _, ok := tput(c); ok {
				n++
			}
		}
		return n
	}
	// sig is the noise of the throughput at c: the least noisy file's.
	sig := func(c int) float64 {
		sd := math.Inf(1)
		for _, s := range byConc[c] {
			sd = min(sd, o.sigma(s, ao))
		}
		return sd
	}
	probe := func(c int) bool {
		return has(c) && !slices.ContainsFunc(byConc[c], func(s *Sample) bool { return !s.Probe })
	}
	return readings{has: has, tput: tput, sig: sig, probeFailed: probeFailed, probe: probe, usable: usable}
}

// bracket is the search's first stage: from the grid's first point it
// measures every o.Step-th concurrency up (the top of the grid last)
// until the arm stops gaining the gate, fails twice in a row or falls off
// a cliff. It returns the step to measure next, or (an empty step) where
// the bracket ended: the ceiling nothing above which is measured.
func bracket(grid []int, rd readings, o SearchOptions, ao Options) (step Step, end bracketEnd) {
	has, tput, sig, probeFailed, usable := rd.has, rd.tput, rd.sig, rd.probeFailed, rd.usable
	end.ceiling = grid[len(grid)-1] // nothing above two failures in a row or a cliff
	prev, prevT := 0, 0.0
	failed := 0 // the last bracket point, when it failed
	why := "bracket: the grid's first point"
	for c := grid[0]; ; {
		if !has(c) {
			return Step{Conc: []int{c}, Probe: len(grid) >= minPoints, Why: map[int]string{c: why}}, bracketEnd{}
		}
		t, ok := tput(c)
		next := 0
		switch {
		case !ok && failed == 0 && probeFailed(c) && c < grid[len(grid)-1]: // it would stop the bracket (the top ends it anyway)
			return Step{Conc: []int{c}, Why: map[int]string{c: againWhy(c, "its probe failed the way a short window can, and that failure would end the bracket")}}, bracketEnd{}
		case !ok && failed > 0: // two failures in a row: the server's capacity
			end.ceiling, end.why = failed, fmt.Sprintf("c%d and c%d failed in a row (the server's capacity)", failed, c)
		case !ok: // one failure may be transient: try the next grid point
			failed = c
			if i := slices.Index(grid, c); i+1 < len(grid) {
				next = grid[i+1]
				why = fmt.Sprintf("bracket: the grid point after c%d, which failed (one failure may be transient)", c)
			}
		case prev > 0 && fellOff(prevT, t, sig(prev), sig(c)): // a cliff, beyond noise
			if usable() >= minPoints {
				end.ceiling = c
				end.why = fmt.Sprintf("c%d fell off a cliff (%.0f against c%d's %.0f tok/s/GPU, beyond the noise)", c, t, prev, prevT)
			} // else the fill checks the fall one grid point above
		case prev > 0 && doublingGain(prev, prevT, c, t) < ao.Gain:
			// saturating: the fill settles the knee
		default:
			gained := fmt.Sprintf(" above c%d, the first usable point", c)
			if prev > 0 {
				gained = fmt.Sprintf(": c%d gained %s per doubling over c%d (gate %s)", c, pct(doublingGain(prev, prevT, c, t)), prev, pct(ao.Gain))
			}
			failed, prev, prevT = 0, c, t
			if i := slices.IndexFunc(grid, func(g int) bool { return g >= o.Step*c }); i >= 0 {
				next = grid[i]
				why = fmt.Sprintf("bracket: the next ×%d step%s", o.Step, gained)
			} else if c < grid[len(grid)-1] {
				next = grid[len(grid)-1]
				why = "bracket: the top of the grid" + gained
			}
		}
		if next == 0 {
			break
		}
		c = next
	}
	return Step{}, end
}

// bracketEnd is where the bracket ended: the ceiling nothing above which
// is measured (the grid's top, a cliff, the first of two failures in a
// row) and, below the grid's top, why ("c48 fell off a cliff ...").
type bracketEnd struct {
	ceiling int
	why     string
}

// readings are what NextStep reads of the measured samples, by
// concurrency: whether any is measured, the usable throughput (median),
// its noise, whether every reading is a failed probe, and whether every
// reading is a probe.
type readings struct {
	has         func(int) bool
	tput        func(int) (float64, bool)
	sig         func(int) float64
	probeFailed func(int) bool
	probe       func(int) bool
	usable      func() int // how many concurrencies have a usable reading
}

// fillProbes reports whether the fill points conc run as probes: when
// every one is probeable, or on a grid of three (minPoints). A fill
// point between two neighbours within a doubling only moves the knee by
// one doubling, the tolerance the knee is read with, so its probe's
// noise is bounded as a bracketing probe's is. On a grid of three the
// fill point is the one between the two bracketing probes: it runs as a
// probe too, and as no point there is probeable, each of the three runs
// again at the full length where its noise decides the verdict
// (farProbesDecide) or, unsteady, where the verdict hangs on it.
func fillProbes(grid, conc []int) bool {
	if len(conc) == 0 {
		return false
	}
	if needsEvery(grid) {
		return true
	}
	for _, c := range conc {
		if !probeable(grid, c) {
			return false
		}
	}
	return true
}

// needsEvery reports whether grid has minPoints points: the fewest a
// verdict needs, so the verdict needs every one of them.
func needsEvery(grid []int) bool { return len(grid) == minPoints }

// probeable reports whether a probe's noise at c moves the knee by at
// most the doubling it is read with: only on a grid of more than
// minPoints points (on minPoints the verdict needs every point, so each
// probe there is tested as a far one is), where its grid neighbours lie
// within a doubling of it, so that a knee its noise misplaces lands
// within one doubling. A bracketing point runs as
// a probe on any grid of minPoints points or more; where it is not
// probeable it runs again at the full length when its noise decides the
// verdict (farProbesDecide), and the top of the grid and the point below
// it do where their noise decides the top gate or an ambiguous knee lies
// at either (topGateProbes).
//
// A point above one whose KV pool came near full may run as a probe too:
// such a probe is unsteady (its pool fills as fast or faster) and runs
// again at the full length when the verdict hangs on it, but one that
// already reads a cliff, or reads the same verdict at half its reading,
// settles the point for a quarter of its cost (past the simulated
// MI325X Qwen3.5 TP8 arm's pool at c64, its c256 probe reads 1961
// tok/s/GPU, its 1200 s point 3344: a cliff either way).
func probeable(grid []int, c int) bool {
	i := slices.Index(grid, c)
	if i < 0 || len(grid) < minPoints || needsEvery(grid) || i+1 < len(grid) && grid[i+1] > 2*c {
		return false
	}
	return i == 0 || 2*grid[i-1] >= c
}

// unsteadyProbes returns the concurrencies whose every reading is an
// unsteady probe, to measure again at the full length when the verdict
// hangs on them (that reading replaces the probe's).
func unsteadyProbes(byConc map[int][]*Sample) (again []int) {
	for _, c := range slices.Sorted(maps.Keys(byConc)) {
		ss := byConc[c]
		all := len(ss) > 0
		for _, s := range ss {
			all = all && s.Unsteady()
		}
		if all {
			again = append(again, c)
		}
	}
	return again
}

// fellOff reports a fall from a reading of from to one of to (relative
// noises sFrom and sTo) that is a cliff: more than cliffDrop and more
// than twice the two readings' noise (probes are noisier). Nothing above
// a cliff is measured; smaller falls are noise on a plateau.
func fellOff(from, to, sFrom, sTo float64) bool {
	return to < (1-max(cliffDrop, 2*math.Hypot(sFrom, sTo)))*from
}

// fill returns the points that settle the knee found on what is
// measured: its missing lower doubling neighbour, and the upper one
// unless a point above the knee is measured on the plateau, and between
// the peak and a failed or fallen point above it (peakGap); with the knee at the top of what
// is measured, the grid point just below (the top gate compares the last
// two grid points, as on the full grid) and the next one above; for an
// arm that still gains at its top, the next grid point above, or at the
// top of the grid the point below and, while the gain there is within
// the noise of the gate, the middle of the widest gap, and so for a knee
// at the top of what is measured with nothing to measure above it (the
// same gate decides between a knee at the top and unsaturated, on either
// side of it); with fewer than 3
// usable points, the middle of the widest gap or the next point above.
// Nothing is measured above two failed points above the top usable one.
// rising reports that the arm is still gaining at the top of what is
// measured (Analyze's unsaturated).
//
// again reports that conc are probes to measure again at the full
// length: the lowest failed point above the top usable one, when it is a
// probe and the arm reads as still rising (or has too few usable points
// and no grid point between the two is left to measure: those run
// first, and the verdict with them may not hang on the failure), so that
// the failure decides the verdict; or, with nothing
// left to fill, the probes whose noise decides the verdict (gateProbes,
// topGateProbes, then farProbesDecide). Each point comes with why it is
// asked for (fillOut.why), and the result with the verdict on what is
// measured and where nothing above is measured (fillOut.r, fillOut.end),
// from which the last step says why of the points not measured.
func fill(grid []int, measured []Sample, end bracketEnd, rd readings, ao Options) fillOut {
	has, tput, probeFailed := rd.has, rd.tput, rd.probeFailed
	arm := &Arm{Samples: slices.Clone(measured)}
	slices.SortFunc(arm.Samples, func(a, b Sample) int { return a.Conc - b.Conc })
	r := Analyze(arm, ao)
	out := fillOut{r: r, end: end}
	ceiling := end.ceiling
	top := 0 // the highest usable measured concurrency
	usable := 0
	for _, g := range grid {
		if _, ok := tput(g); ok {
			top = g
			usable++
		}
	}
	// Two failed points above the top usable one are the server's
	// capacity, wherever they were measured: nothing above the first.
	var failedAbove []int
	for _, g := range grid {
		if _, ok := tput(g); g > top && has(g) && !ok {
			failedAbove = append(failedAbove, g)
		}
	}
	// The lowest of them, a failed probe, is measured again at the full
	// length when the verdict hangs on it (the arm reads as still rising,
	// or too few points are usable and no grid point between it and the
	// top usable one is left to measure), whatever failed above it: past
	// a KV cliff the full point may be valid and collapsed where the probe
	// failed, and a failure above at the full length says nothing of it.
	if len(failedAbove) > 0 && probeFailed(failedAbove[0]) {
		gapBelow := slices.ContainsFunc(grid, func(g int) bool { return g > top && g < failedAbove[0] && !has(g) })
		if usable < minPoints && !gapBelow || r.Status == StatusUnsaturated {
			c := failedAbove[0]
			why := "the arm reads as still rising into it"
			if r.Status != StatusUnsaturated {
				why = "too few points are usable for a verdict without it"
			}
			out.conc, out.again = []int{c}, true
			out.why = map[int]string{c: againWhy(c, "its probe failed the way a short window can, and "+why)}
			return out
		}
	}
	if len(failedAbove) >= 2 && failedAbove[0] < ceiling {
		ceiling = failedAbove[0]
		out.end = bracketEnd{ceiling: ceiling, why: fmt.Sprintf("%s failed above the top usable point c%d (the server's capacity)", concList(failedAbove[:2]), top)}
	}
	idx := slices.Index(grid, top)
	below := 0
	if idx > 0 {
		below = grid[idx-1]
	}
	// above is the unmeasured grid point over top nearest to 2·top.
	above := 0
	var over []int
	for _, g := range grid {
		if g > top && g <= ceiling && !has(g) {
			over = append(over, g)
		}
	}
	if top > 0 && len(over) > 0 {
		above = nearest(over, 2*float64(top))
	}
	want, wantWhy := fillWant(grid, r, fillAt{top: top, below: below, above: above, usable: usable, ceiling: ceiling}, rd, ao)
	if len(want) > 0 && usable < minPoints {
		// One point at a time while too few are usable.
		for i, c := range want {
			if c > 0 && c <= ceiling && !has(c) {
				out.conc, out.rising, out.why = []int{c}, r.Status == StatusUnsaturated, map[int]string{c: wantWhy[i]}
				return out
			}
		}
		return out
	}
	out.why = map[int]string{}
	for i, c := range want {
		if c > 0 && c <= ceiling && !has(c) && !slices.Contains(out.conc, c) {
			out.conc = append(out.conc, c)
			out.why[c] = wantWhy[i]
		}
	}
	if len(out.conc) == 0 && probesAgain(grid, arm.Samples, ceiling, rd, ao, &out) {
		return out
	}
	out.rising = r.Status == StatusUnsaturated
	return out
}

// probesAgain sets out (a fill with nothing left to fill) to the probes
// whose noise decides the verdict out.r, to measure again at the full
// length (gateProbes, topGateProbes, then farProbesDecide), or, for the
// top gate, to the grid point below the top when it is not measured yet
// (the full grid's gate compares the two); it reports whether it found
// any.
func probesAgain(grid []int, samples []Sample, ceiling int, rd readings, ao Options, out *fillOut) bool {
	r := out.r
	if again, why := gateProbes(grid, samples, r, rd, ao); len(again) > 0 {
		out.conc, out.again, out.why = again, true, againEach(again, why)
		return true
	}
	if again, why := topGateProbes(grid, samples, r, rd, ao); len(again) > 0 {
		// The full grid's top gate compares the top with the grid
		// point below it: measured first when missing, the gate may
		// then stand on its probes (or its pair runs again). A grid of
		// three has it measured by now: its verdict needs every point.
		if g := grid[len(grid)-2]; !rd.has(g) && g <= ceiling {
			out.conc, out.rising = []int{g}, r.Status == StatusUnsaturated
			out.why = map[int]string{g: fmt.Sprintf("the grid point below the top c%d, which the top gate compares, measured before probes run again at full length (%s)", grid[len(grid)-1], why)}
			return true
		}
		out.conc, out.again, out.why = again, true, againEach(again, why)
		return true
	}
	if again, why := farProbesDecide(grid, samples, r, rd, ao); len(again) > 0 {
		out.conc, out.again, out.why = again, true, againEach(again, why)
		return true
	}
	return false
}

// fillOut is what fill returns: the points that settle the knee (conc,
// each with why it is asked for), whether the arm still rises at the top
// of what is measured, whether conc are probes to measure again at the
// full length (again); the verdict on what is measured (r), and where
// nothing is measured above (end: the bracket's ceiling, or two failed
// points above the top usable one).
type fillOut struct {
	conc          []int
	rising, again bool
	why           map[int]string
	r             *Result
	end           bracketEnd
}

// fillAt is where the fill stands on the grid: the highest usable
// measured concurrency (top), the grid points just below it and the
// unmeasured one above it nearest to 2·top (0 when none), how many
// concurrencies are usable, and the ceiling nothing is measured above.
type fillAt struct {
	top, below, above, usable, ceiling int
}

// fillWant is fill's choice of points for the verdict r on what is
// measured (some may be measured already or lie above the ceiling: fill
// drops those), each with why (the same index of whys).
func fillWant(grid []int, r *Result, at fillAt, rd readings, ao Options) (want []int, whys []string) {
	has, tput := rd.has, rd.tput
	top, below, above, usable, ceiling := at.top, at.below, at.above, at.usable, at.ceiling
	add := func(c int, why string, args ...any) {
		want, whys = append(want, c), append(whys, fmt.Sprintf(why, args...))
	}
	// gap is the middle of the widest gap below the ceiling, with why.
	gap := func(because string) {
		c := gapMiddle(grid, has, ceiling)
		lo, hi := gapAround(grid, has, c)
		add(c, "fill: the middle of the widest gap, c%d to c%d: %s", lo, hi, because)
	}
	switch {
	case usable < minPoints:
		gap(fmt.Sprintf("%d usable points, a verdict needs %d", usable, minPoints))
		add(above, "fill: the next point above c%d, the top usable one: %d usable points, a verdict needs %d", top, usable, minPoints)
		add(below, "fill: the grid point below c%d, the top usable one: %d usable points, a verdict needs %d", top, usable, minPoints)
	case r.Status == StatusUnsaturated:
		add(above, "fill: the arm still gains at c%d (%s): the next point above, nearest 2×c%d", top, verdictWhy(r), top)
		if above == 0 {
			// At the top of the grid: the top gate needs the point below;
			// only when its gain is within the noise of the gate does a
			// fit without wide gaps decide, as on the full grid, and not
			// when the gate's posterior, over the whole fit, is sure.
			add(below, "top gate: the arm still gains at the top c%d, which the gate compares with the grid point below it", top)
			if (!has(below) || !clearGain(top, below, rd, ao)) && !sureUnsaturated(r) {
				because := fmt.Sprintf("the top c%d's gain is not clear of the gate yet (c%d not measured), and the fit through the gaps decides it", top, below)
				if gain, band, ok := topGain(top, below, rd); ok {
					because = fmt.Sprintf("the top gate's %s, so the fit through the gaps decides it (%s)", gateWhy(below, top, gain, band, ao.Gain), verdictWhy(r))
				}
				gap(because)
			}
		}
	case r.HasKnee():
		half := nearest(grid, float64(r.Knee)/2)
		add(half, "fill: k/2 of the %s, its lower doubling neighbour", verdictWhy(r))
		// A failed point there does not bound the knee from below: its
		// usable bracket lies further down (an arm whose top gains on
		// rising errors has its knee there, the peak anywhere between),
		// so measure between the two.
		if _, ok := tput(half); has(half) && !ok && r.Bracket > 0 && r.Bracket < half {
			add(nearest(grid, math.Sqrt(float64(r.Bracket)*float64(half))), "fill: between c%d, the %s's usable bracket, and c%d, its k/2, which failed", r.Bracket, verdictWhy(r), half)
		}
		if !plateauAbove(grid, tput, r.Knee, (1-ao.Drop)*r.PeakValue) {
			// Only an unbounded upper side can move the knee up: a point
			// above it measured on the plateau (the ×4 bracket's) bounds
			// it; one fallen below the plateau (a cliff) does not, the
			// peak may lie between.
			add(nearest(grid, 2*float64(r.Knee)), "fill: 2k of the %s, its upper doubling neighbour: no point above it is measured on the plateau to bound it", verdictWhy(r))
		}
		// Nor does a point above the peak that failed or fell off a
		// cliff bound the peak: it may lie between the two.
		if c := peakGap(grid, r, rd); c > 0 {
			_, hi := gapAround(grid, has, c)
			fell := "failed"
			if t, ok := tput(hi); ok {
				pt, _ := tput(r.Peak)
				fell = fmt.Sprintf("fell off a cliff (%.0f against the peak's %.0f tok/s/GPU)", t, pt)
			}
			add(c, "peak gap: c%d above the peak c%d %s, so the peak (and the knee with it) may lie between", hi, r.Peak, fell)
		}
		if r.Knee == top {
			add(below, "fill: the %s is the top usable point: the grid point below it", verdictWhy(r))
			add(above, "fill: the %s is the top usable point: the next point above, nearest 2×c%d", verdictWhy(r), top)
			// Capped at the knee (nothing left to measure above it: failed
			// points or the grid's end): the verdict between a knee at the
			// top and unsaturated is the top gate's, as for a still-rising
			// arm. While the gain into the top lies within the noise of the
			// gate either way, the fit decides, so fill the gaps below as
			// the full grid has them.
			if above == 0 && has(below) && nearGate(top, below, rd, ao) {
				gain, band, _ := topGain(top, below, rd)
				gap(fmt.Sprintf("the %s has nothing above it to measure, and the %s: knee at the top or unsaturated is the fit's to decide", verdictWhy(r), gateWhy(below, top, gain, band, ao.Gain)))
			}
		}
		// A knee below a top gate read at the full length within its
		// noise: the fit through the gaps decides knee or unsaturated.
		if t, below, ok := fullGateNear(grid, rd, ao); ok && below == at.below {
			gain, band, _ := topGain(t, below, rd)
			gap(fmt.Sprintf("the top gate's %s, read at full length: the fit through the gaps decides knee or unsaturated", gateWhy(below, t, gain, band, ao.Gain)))
		}
	}
	return want, whys
}

// gapAround returns the measured grid points just below and above c (0
// when none).
func gapAround(grid []int, has func(int) bool, c int) (lo, hi int) {
	for _, g := range grid {
		switch {
		case g < c && has(g):
			lo = g
		case g > c && has(g) && hi == 0:
			hi = g
		}
	}
	return lo, hi
}

// gateProbes returns the probes to measure again at the full length
// before an arm capped below the top of its grid is settled: Analyze
// may gate a capped arm as it gates the top of a grid, on the gain into
// its peak (a still-rising arm that fails above it is unsaturated), so
// when the gain per doubling from the usable point below the peak to the
// peak lies within two standard deviations of the gate, either point is
// a probe, and the verdict with the probes moved by two of their
// standard deviations is unsaturated one way and not the other, the
// probes' noise decides the verdict, and the full length settles it as
// on the full grid.
func gateProbes(grid []int, samples []Sample, r *Result, rd readings, ao Options) ([]int, string) {
	has, tput, sig := rd.has, rd.tput, rd.sig
	if r.Peak == 0 || r.Peak == grid[len(grid)-1] || r.Status == StatusInsufficient || r.Status == StatusSaturatedAtMin {
		return nil, ""
	}
	pt, ok1 := tput(r.Peak)
	capped, below, above := false, 0, 0
	for _, g := range grid {
		_, ok := tput(g)
		switch {
		case g < r.Peak && ok:
			below = g
		case g > r.Peak && has(g) && above == 0:
			above = g
			// the next measured point failed or fell off a cliff
			t, ok := tput(g)
			capped = !ok || fellOff(pt, t, sig(r.Peak), sig(g))
		}
	}
	bt, ok2 := tput(below)
	if !capped || below == 0 || !ok1 || !ok2 || bt <= 0 {
		return nil, ""
	}
	du := math.Log2(float64(r.Peak) / float64(below))
	gain, band := doublingGain(below, bt, r.Peak, pt), 2*math.Hypot(sig(r.Peak), sig(below))/du
	if math.Abs(gain-ao.Gain) >= band {
		return nil, ""
	}
	var out []int
	for _, c := range []int{below, r.Peak} {
		if rd.probe(c) {
			out = append(out, c)
		}
	}
	// Only when the probes' noise decides the gate.
	if len(out) == 0 || !noiseDecidesGate(samples, below, r.Peak, rd, ao) {
		return nil, ""
	}
	fell := "failed"
	if t, ok := tput(above); ok {
		fell = fmt.Sprintf("fell off a cliff (%.0f against the peak's %.0f tok/s/GPU)", t, pt)
	}
	return out, fmt.Sprintf("c%d above the peak c%d %s, so the gate reads the %s, and the probes' noise decides it (unsaturated moved 2σ one way, not the other)",
		above, r.Peak, fell, gateWhy(below, r.Peak, gain, band, ao.Gain))
}

// topGateProbes returns the probes among the top of the grid and the
// usable point below it to measure again at the full length, when their
// noise decides the top gate (noiseDecidesGate): the gate compares the
// two, and a 180 s probe's noise is 2.6 times a full point's (but not
// when r reads the arm unsaturated with 99 % odds, sureUnsaturated: the
// gate's posterior already holds that noise); or
// when both are probes and r, the verdict on what is measured, is an
// ambiguous knee at either of them (kneeInTopGate): a verdict whose
// bracket reaches the top gate then rests on probes alone. For the noise
// it returns one at a time, the top first: with its full-length reading
// the gate may stand and the point below keep its probe (seed 1's
// simulated DeepSeek V4 TP8: c16 alone settles it, 46.5 % → 32.9 % of
// its grid; TestNextStepSureGate); for an ambiguous knee both, its
// bracket being the pair. Where neither holds, the probes stand: with
// their warm-up and drain, two 180 s probes cost under a fifth of the
// full-length pair the full grid measures there.
func topGateProbes(grid []int, samples []Sample, r *Result, rd readings, ao Options) ([]int, string) {
	top, below := topUsable(grid, rd)
	if top == 0 {
		return nil, ""
	}
	var out []int
	for _, c := range []int{below, top} {
		if rd.probe(c) {
			out = append(out, c)
		}
	}
	switch {
	case len(out) == 2 && kneeInTopGate(r, below):
		return out, fmt.Sprintf("the %s lies at the top gate's probes c%d and c%d, and its verdict would rest on probes alone", verdictWhy(r), below, top)
	case len(out) == 0 || sureUnsaturated(r) || !noiseDecidesGate(samples, below, top, rd, ao):
		return nil, ""
	}
	gain, band, _ := topGain(top, below, rd)
	return out[len(out)-1:], // the top when it is a probe
		fmt.Sprintf("the top gate's %s, and the probes' noise decides it (unsaturated moved 2σ one way, not the other)", gateWhy(below, top, gain, band, ao.Gain))
}

// kneeInTopGate reports whether r reads an ambiguous knee at the top
// gate's lower point (below) or above it. Only ambiguous ones: an ok
// knee there stands, and running its two points again with probes below
// them moves verdicts that agree with the full grid (TestAdaptiveSearch:
// held out, four synthetic conc-lists arms lost and none saved).
func kneeInTopGate(r *Result, below int) bool {
	return r.Status == StatusAmbiguous && r.Knee >= below
}

// noiseDecidesGate reports whether the probes at below and top decide
// Analyze's saturation gate on the gain from below to top: with their
// readings moved by two of their standard deviations one way (top up,
// below down) the verdict is unsaturated, and the other way it is not.
// Full-length readings stay as read.
func noiseDecidesGate(samples []Sample, below, top int, rd readings, ao Options) bool {
	unsaturated := func(dir float64) bool {
		return analyzeMoved(samples, ao, func(s *Sample) float64 {
			switch {
			case !s.Probe:
				return 1
			case s.Conc == top:
				return math.Exp(dir * 2 * rd.sig(s.Conc))
			case s.Conc == below:
				return math.Exp(-dir * 2 * rd.sig(s.Conc))
			}
			return 1
		}).Status == StatusUnsaturated
	}
	return unsaturated(1) != unsaturated(-1)
}

// sureUnsaturated reports whether r, the verdict on what is measured,
// reads the arm unsaturated with the saturation gate's posterior at
// least sureOdds (99 %: Analyze's reason then asks for no replicate to
// settle it). The posterior holds the readings' noise over every point,
// not the top two alone: Analyze weighs a probe by its length against
// the arm's full-length points (a 180 s probe 0.15 of a 1200 s point) in
// the fit the gate reads. An arm measured as probes alone has no full
// length to weigh them against, so each counts as a full point there and
// its posterior is surer than the probes' noise allows (TestAdaptiveSearch
// measures what reading it sure from 98 % would lose). The
// search's tests of single readings (noiseDecidesGate: the top gate's
// two probes moved twice their noise apart; farProbesDecide: one far
// probe moved twice its noise) ask a harsher question of a gate the data
// already settle: where the top step is a fraction of a doubling (the
// simulated H200 Qwen3.5 TP8 EP8 arm's c12 to c16, 0.4 of one) twice a
// 180 s probe's noise apart moves the gain per doubling by 75 %, so the
// top two ran again at the full length on an arm whose four probes read
// it unsaturated with 99 % odds; and a far probe at c1 or c4 moves the
// fit's bend, so it ran again on an arm whose ten probes read it so. Such
// a verdict keeps its probes. A knee, or an unsaturated verdict under
// 99 %, is tested as before.
func sureUnsaturated(r *Result) bool {
	return r.Status == StatusUnsaturated && r.gateLikely >= sureOdds
}

// topUsable returns the top of the grid, when it has a usable reading,
// and the highest usable point below it (0, 0 when either is missing).
func topUsable(grid []int, rd readings) (top, below int) {
	t := grid[len(grid)-1]
	if _, ok := rd.tput(t); !ok {
		return 0, 0
	}
	for _, g := range grid[:len(grid)-1] {
		if _, ok := rd.tput(g); ok {
			below = g
		}
	}
	if below == 0 {
		return 0, 0
	}
	return t, below
}

// fullGateNear reports whether the top gate is read at the full length
// within its noise: the top of the grid and the usable point below it
// (topUsable) are both full-length readings and their gain lies within
// two standard deviations of the gate (nearGate).
func fullGateNear(grid []int, rd readings, ao Options) (top, below int, ok bool) {
	top, below = topUsable(grid, rd)
	ok = top != 0 && !rd.probe(top) && !rd.probe(below) && nearGate(top, below, rd, ao)
	return top, below, ok
}

// gapDecidesGate reports whether the fill points conc all lie below the
// top gate's two points, those are measured at the full length, and
// their gain lies within the gate's noise (nearGate): then the fit
// through the gaps decides the gate, and they run at the full length (a
// probe's bias, which varies with the KV pool's fill, would decide it).
func gapDecidesGate(grid, conc []int, rd readings, ao Options) bool {
	_, below, ok := fullGateNear(grid, rd, ao)
	if !ok || len(conc) == 0 {
		return false
	}
	for _, c := range conc {
		if c >= below {
			return false
		}
	}
	return true
}

// FailedForGood reports whether s failed (Excluded) the way a
// full-length run fails too, not the way a short window does: its error
// rate is over the limit (aiperf cancels the requests still open when
// the window and its grace period close without a record, so the errors
// it counts are the server's, at any length), or it has no successful
// request (a longer window does not change that). A failure a short
// window makes, one a full-length point can pass, is a validation read
// over fewer requests (the time coverage of a few long requests, the
// acceptance length over fewer verify steps). NextStep never measures a
// failed probe again at the full length but where its failure is a short
// window's, so such a probe's point stays failed.
func (s *Sample) FailedForGood() bool {
	return s.Excluded != "" && (s.Excluded == result.ExcludedNoSuccess || s.ErrorRate > result.DefaultFailedRequestThreshold)
}

// nearest is the grid value closest to x in log2 (the smaller one on a tie).
func nearest(grid []int, x float64) int {
	if x <= 0 {
		return 0
	}
	best, bestD := 0, math.Inf(1)
	for _, g := range grid {
		if d := math.Abs(math.Log2(float64(g)) - math.Log2(x)); d < bestD-1e-9 {
			best, bestD = g, d
		}
	}
	return best
}

// gapMiddle is the unmeasured grid point at or below ceiling in the middle
// (log2) of the widest gap between measured points, or 0.
func gapMiddle(grid []int, has func(int) bool, ceiling int) int {
	var meas []int
	for _, g := range grid {
		if has(g) && g <= ceiling {
			meas = append(meas, g)
		}
	}
	best, width := 0, 0.0
	for i := 1; i < len(meas); i++ {
		lo, hi := meas[i-1], meas[i]
		if w := math.Log2(float64(hi) / float64(lo)); w > width {
			mid := nearest(grid, math.Sqrt(float64(lo)*float64(hi)))
			if mid != lo && mid != hi && !has(mid) {
				best, width = mid, w
			}
		}
	}
	return best
}

// plateauAbove reports whether a usable point above k is measured with
// throughput at least floor (on the plateau) and, when it lies more than
// a doubling above k, at least k's own: a point that reads below the
// knee could be past a hump (the curve rising after k and falling back
// before a cliff), so the peak, and the knee, may lie between. Within a
// doubling of k it bounds the knee within the tolerance it is read with
// either way.
func plateauAbove(grid []int, tput func(int) (float64, bool), k int, floor float64) bool {
	for _, g := range grid {
		t, ok := tput(g)
		if !ok || g <= k || t < floor {
			continue
		}
		if kt, ok := tput(k); g > 2*k && ok && t < kt {
			continue
		}
		return true
	}
	return false
}

// peakGap returns, when the next measured point above r's peak failed
// or fell off a cliff from the peak's reading (fellOff), the unmeasured
// grid point between the two nearest their log-middle; 0 when that point
// is on the plateau or none lies between. A point fallen off a cliff
// bounds the peak no more than it bounds the knee (plateauAbove): the
// peak, and the knee at Threshold × peak with it, may lie between (the
// MI325X Qwen3.5 FP8 MTP TP4 arm peaks at c40 between c32 and a cliff at
// c48). Measured there, a higher reading is the new peak and the gap
// above it is split again; a lower one leaves the peak where it was.
func peakGap(grid []int, r *Result, rd readings) int {
	pt, ok := rd.tput(r.Peak)
	if r.Peak == 0 || !ok {
		return 0
	}
	var gap []int
	for _, g := range grid {
		if g <= r.Peak {
			continue
		}
		if !rd.has(g) {
			gap = append(gap, g)
			continue
		}
		if t, ok := rd.tput(g); len(gap) == 0 || ok && !fellOff(pt, t, rd.sig(r.Peak), rd.sig(g)) {
			return 0
		}
		return nearest(gap, math.Sqrt(float64(r.Peak)*float64(g)))
	}
	return 0
}

// clearGain reports whether the gain per doubling from below to top
// clears the gate by two standard deviations of the ratio of the two
// points (each with its noise: Analyze.Sigma, more for a probe), so
// filling the gaps below is unlikely to flip the top gate.
func clearGain(top, below int, rd readings, ao Options) bool {
	gain, band, ok := topGain(top, below, rd)
	return ok && gain >= ao.Gain+band
}

// nearGate reports whether the gain per doubling from below to top lies
// within two standard deviations of the ratio of the two points of the
// gate, on either side (clearGain's band): the top gate's verdict hinges
// on the fit, not on the two points.
func nearGate(top, below int, rd readings, ao Options) bool {
	gain, band, ok := topGain(top, below, rd)
	return ok && math.Abs(gain-ao.Gain) < band
}

// topGain is the gain per doubling from below to top and two standard
// deviations of it (the two points' noise over the doublings between);
// ok is false when either point is not usable.
func topGain(top, below int, rd readings) (gain, band float64, ok bool) {
	t, ok1 := rd.tput(top)
	b, ok2 := rd.tput(below)
	if !ok1 || !ok2 || b <= 0 {
		return 0, 0, false
	}
	du := math.Log2(float64(top) / float64(below))
	return doublingGain(below, b, top, t), 2 * math.Hypot(rd.sig(top), rd.sig(below)) / du, true
}

// doublingGain is the throughput gain per doubling of concurrency from
// (lo, loT) to (hi, hiT): 0.1 means 10 % more per doubling.
func doublingGain(lo int, loT float64, hi int, hiT float64) float64 {
	return math.Pow(hiT/loT, 1/math.Log2(float64(hi)/float64(lo))) - 1
}

// unsteadyLow is the reading an unsteady probe is tried at against its
// own (unsteadyDecides): half of it. A probe that ends before its pool
// fills reads up to 2.4 times its full point on the simulated engine
// (MiniMax M3 FP4 MI355X TP4 c20: 86009 against 37574 tok/s/GPU).
const unsteadyLow = 0.5

// unsteadyDecides reports whether the verdict on what is measured hangs
// on the unsteady probes at concs: Analyze's verdict with them as read
// and with them at unsteadyLow times their reading differ (a knee more
// than a doubling apart, or another status), or too few points are usable
// for a verdict (noVerdict); as and half are the two verdicts (half nil
// with noVerdict). A probe whose overstated reading moves nothing
// (past a knee the bracket has already bounded, it reads on the plateau or
// off a cliff either way) need not run again at the full length.
func unsteadyDecides(measured []Sample, concs []int, ao Options) (decides, noVerdict bool, as, half *Result) {
	samples := slices.Clone(measured)
	slices.SortFunc(samples, func(a, b Sample) int { return a.Conc - b.Conc })
	as = Analyze(&Arm{Samples: samples}, ao)
	if as.Status == StatusInsufficient {
		return true, true, as, nil
	}
	half = Analyze(&Arm{Samples: scaledAt(samples, concs, unsteadyLow)}, ao)
	return !SameVerdict(as, half), false, as, half
}

// farProbesDecide returns the lowest of the bracket's probes at points
// with a grid neighbour more than a doubling away (usable, every reading
// a probe, not probeable) whose noise decides the verdict: Analyze's
// verdict on samples (sorted by concurrency) with the probe's reading
// moved two of its standard deviations up or down is not the same
// verdict as r, the one on what is measured (SameVerdict). Such probes
// run again at the full length once the search is otherwise done, one at
// a time (a full-length reading may settle the verdict without the
// others; TestNextStepFarProbes): between neighbours within a
// doubling a probe's noise moves the knee by at most the doubling it is
// read with; across a wider gap it may move it further. On a grid of
// three points no point is probeable, so each of its probes is tested:
// the verdict needs every point there. None runs again where r reads
// the arm unsaturated with 99 % odds (sureUnsaturated).
func farProbesDecide(grid []int, samples []Sample, r *Result, rd readings, ao Options) ([]int, string) {
	if sureUnsaturated(r) {
		return nil, ""
	}
	for _, g := range grid {
		if _, ok := rd.tput(g); !ok || !rd.probe(g) || probeable(grid, g) {
			continue
		}
		for _, dir := range []float64{1, -1} {
			moved := analyzeMoved(samples, ao, func(s *Sample) float64 {
				if s.Conc == g {
					return math.Exp(dir * 2 * rd.sig(g))
				}
				return 1
			})
			if !SameVerdict(r, moved) {
				way := "up"
				if dir < 0 {
					way = "down"
				}
				return []int{g}, fmt.Sprintf("a grid neighbour lies more than a doubling away, and its probe moved 2σ (%s) %s reads %s, not %s", pct(2*rd.sig(g)), way, verdictWhy(moved), verdictWhy(r))
			}
		}
	}
	return nil, ""
}

// analyzeMoved is Analyze's verdict on samples (sorted by concurrency)
// with each one's throughput scaled by move's factor for it (1: as
// read): how the search asks whether the verdict hangs on a reading
// moved by its noise (an unsteady probe's bias: scaledAt).
func analyzeMoved(samples []Sample, ao Options, move func(*Sample) float64) *Result {
	ss := slices.Clone(samples)
	for i := range ss {
		if f := move(&ss[i]); f != 1 {
			ss[i].scaleThroughput(f)
		}
	}
	return Analyze(&Arm{Samples: ss}, ao)
}

// SameVerdict reports whether a and b agree: both a knee within one
// doubling of the other's, or the same knee-less status. It is how the
// adaptive search's verdict is scored against the full grid's.
func SameVerdict(a, b *Result) bool {
	if a.HasKnee() != b.HasKnee() {
		return false
	}
	if !a.HasKnee() {
		return a.Status == b.Status
	}
	return a.Knee <= 2*b.Knee && b.Knee <= 2*a.Knee
}
