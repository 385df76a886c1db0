package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sweep/internal/stats"

	"sweep/sweep/knee"
)

// Compare pairs base's and head's arms and decides. It never fails: what
// cannot be compared becomes a Problem.
func Compare(base, head []*knee.Arm, o Options) *Report {
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.Metric == "" {
		o.Metric = MetricTotal
	}
	rep := &Report{Tolerance: o.Tolerance, Metric: o.Metric, Arms: []*ArmReport{}, Problems: []Problem{}, OnlyInHead: []string{}}
	heads := map[string]*knee.Arm{}
	for _, a := range head {
		heads[a.Identity.ArmKey()] = a
	}
	seen := map[string]bool{}
	var repSS, repDF float64
	for _, b := range base {
		k := b.Identity.ArmKey()
		seen[k] = true
		h := heads[k]
		if h == nil {
			h = otherDeployment(b, head)
		}
		ar, ss, df := pairArm(rep, b, h, o.Metric)
		repSS += ss
		repDF += df
		rep.Arms = append(rep.Arms, ar)
	}
	for _, h := range head {
		if !seen[h.Identity.ArmKey()] {
			rep.OnlyInHead = append(rep.OnlyInHead, h.Identity.Label())
		}
	}
	decide(rep, o, repSS, repDF)
	return rep
}

// otherDeployment is the first of head's arms that differs from b only in
// its multi-node deployment (result.Identity.SummedArmKey), nil when none
// does: what HEAD holds instead of b when the change is a deployment.
func otherDeployment(b *knee.Arm, head []*knee.Arm) *knee.Arm {
	for _, h := range head {
		if h.Identity.SummedArmKey() == b.Identity.SummedArmKey() {
			return h
		}
	}
	return nil
}

// collapseFraction is the share of BASE's highest throughput at a lower
// concurrency below which a point is past BASE's cliff.
const collapseFraction = 0.5

// pairArm pairs one BASE arm with its HEAD counterpart (nil when HEAD has
// none), records the problems and returns the arm with its paired points
// and the replicate scatter (sum of squares of log values around each
// point's mean, and its degrees of freedom) of both sides.
func pairArm(rep *Report, b, h *knee.Arm, m Metric) (ar *ArmReport, repSS, repDF float64) {
	label := b.Identity.Label()
	ar = &ArmReport{Arm: label, Identity: b.Identity, Points: []PointReport{}, Differs: []string{},
		Weighting: "every paired point equally, in log space (geometric mean of the ratios)"}
	problem := func(kind, sd string, conc *int, detail string) {
		rep.Problems = append(rep.Problems, Problem{Kind: kind, Arm: label, Side: sd, Conc: conc, Detail: detail})
		ar.Verdict = Incomplete
	}
	if h == nil {
		problem(MissingArm, "head", nil, "HEAD has no result of this arm")
		return ar, 0, 0
	}
	if h.Identity.ArmKey() != b.Identity.ArmKey() {
		problem(MissingArm, "head", nil, fmt.Sprintf("HEAD has no result of this arm; it has %s, another multi-node deployment with the same summed tp and ep, "+
			"a different arm that is never paired with this one: compare results of one deployment", h.Identity.Parallelism()))
		return ar, 0, 0
	}
	bs, hs := newSide(b), newSide(h)
	if b.Simulated != h.Simulated || mixed(b) || mixed(h) {
		problem(SimulatedMismatch, "", nil, fmt.Sprintf("BASE is %s, HEAD is %s: simulated and real results are never compared",
			simText(b), simText(h)))
	}
	unsaid := unsaidSpans(bs, hs, m)
	apart, span, work := knee.SidesRanApart(slices.Collect(maps.Values(unsaid)))
	ar.Differs = differs(b, h, span)
	if bd, hd := b.Values(readDataset), h.Values(readDataset); len(bd) > 0 && len(hd) > 0 && !slices.Equal(bd, hd) {
		problem(DatasetMismatch, "", nil, fmt.Sprintf("BASE replayed %s, HEAD %s: results of different trace sets measure different workloads and are never compared; run both sides on one trace set",
			listOr(bd), listOr(hd)))
	}
	var sumRep, nRep, basePeak float64
	for _, c := range bs.concs {
		conc := c
		bv, bx, bwhy := usable(bs.byConc[c], m)
		hv, hx, hwhy := usable(hs.byConc[c], m)
		switch {
		case len(bv) == 0:
			problem(InvalidResult, "base", &conc, "no valid BASE result: "+strings.Join(bwhy, "; "))
			if len(hs.byConc[c]) > 0 && len(hv) == 0 { // both sides to fix, not one after the other
				problem(InvalidResult, "head", &conc, "no valid HEAD result: "+strings.Join(hwhy, "; "))
			}
			continue
		case len(hs.byConc[c]) == 0:
			problem(MissingPoint, "head", &conc, "HEAD has no result at this concurrency")
			continue
		case len(hv) == 0:
			problem(InvalidResult, "head", &conc, "no valid HEAD result: "+strings.Join(hwhy, "; "))
			continue
		case length(bs.byConc[c]).Differs(length(hs.byConc[c])):
			problem(LengthMismatch, "", &conc, lengthMismatch(length(bs.byConc[c]), length(hs.byConc[c]), c))
			continue
		case apart && unsaid[c] != (knee.PairedSpans{}):
			problem(LengthMismatch, "", &conc, sidesApart(unsaid[c], span, work, len(unsaid), c))
			continue
		}
		for i, s := range bx {
			ar.Excluded = append(ar.Excluded, Excluded{Side: "base", Conc: c, File: s.File, Reason: bwhy[i]})
		}
		for i, s := range hx {
			ar.Excluded = append(ar.Excluded, Excluded{Side: "head", Conc: c, File: s.File, Reason: hwhy[i]})
		}
		mb, mh := stats.Mean(bv), stats.Mean(hv)
		bt := throughputOf(bs.byConc[c])
		pastCliff := bt < collapseFraction*basePeak
		basePeak = max(basePeak, bt)
		ar.Points = append(ar.Points, PointReport{Conc: c, Base: roundSig(mb, 6), Head: roundSig(mh, 6),
			DeltaPct: round(100*(mh/mb-1), 3), BaseN: len(bv), HeadN: len(hv), PastBaseCliff: pastCliff})
		if pastCliff {
			continue
		}
		ar.logs = append(ar.logs, math.Log(mh/mb))
		ar.qs = append(ar.qs, 1/float64(len(bv))+1/float64(len(hv)))
		ar.at = append(ar.at, len(ar.Points)-1)
		for _, v := range [][]float64{bv, hv} {
			ss, df := logScatter(v)
			repSS += ss
			repDF += df
		}
		sumRep += float64(len(bv) + len(hv))
		nRep += 2
	}
	for _, c := range hs.concs {
		if _, ok := bs.byConc[c]; !ok {
			ar.OnlyInHead = append(ar.OnlyInHead, c)
		}
	}
	if nRep > 0 {
		ar.reps = sumRep / nRep
	}
	if past := pastCliffConcs(ar.Points); len(past) > 0 {
		ar.Weighting += fmt.Sprintf(", except %s past BASE's cliff (not judged)", concList(past))
	}
	ar.Differs = append(ar.Differs, flagDiffs(bs, hs, pointConcs(ar.Points))...)
	ar.Frontier = frontier(bs, hs, m, pointConcs(ar.Points))
	return ar, repSS, repDF
}

// throughputOf is the mean total throughput per GPU of a point's valid
// results (whatever the metric compared), 0 without one.
func throughputOf(ss []*knee.Sample) float64 {
	var v []float64
	for _, s := range ss {
		if s.Excluded == "" && s.TotalTPS != nil && *s.TotalTPS > 0 {
			v = append(v, *s.TotalTPS)
		}
	}
	if len(v) == 0 {
		return 0
	}
	return stats.Mean(v)
}

// lengthMismatch is the detail of a point the sides measured at
// different lengths (knee.Length.Differs): one as a short probe and the
// other at the full length, for different benchmark durations, where
// one side's duration is unknown, over a span too short for the other's,
// or, where both are, over spans too far apart.
func lengthMismatch(b, h knee.Length, c int) string {
	if b.Probe != h.Probe {
		short, full := "BASE", "HEAD"
		if !b.Probe {
			short, full = full, short
		}
		return fmt.Sprintf("%s measured it only as a short probe of the adaptive search, %s at the full length: results of different lengths are not compared; measure c%d on %s at the full length (or both as probes)", short, full, c, short)
	}
	what := "ran"
	if b.Probe {
		what = "probed"
	}
	const why = "results of different lengths are not compared (a longer run's sessions get further, its cache warms and its KV pool fills otherwise)"
	if b.Seconds > 0 && h.Seconds > 0 {
		return fmt.Sprintf("BASE %s it for %g s, HEAD for %g s (the client's configured benchmark duration): %s; measure c%d on both sides at one length (the same sweep command, or the same --duration)", what, b.Seconds, h.Seconds, why, c)
	}
	const unsaid = "(no aiperf artifacts beside them, and no run.json that says it)"
	if b.Seconds <= 0 && h.Seconds <= 0 {
		return fmt.Sprintf("BASE and HEAD %s it for durations their results do not say %s over measured spans of %.4g s and %.4g s, more than %g %% apart: runs of different lengths (a slower engine has stretched a span by about a third, not twice); %s; measure c%d on both sides at one length (the same sweep command, or the same --duration), and keep the aiperf artifacts or run.json beside the results",
			what, unsaid, b.Span, h.Span, 100*knee.SpansApart, why, c)
	}
	known, unknown, kl, ul := "BASE", "HEAD", b, h
	if h.Seconds > 0 {
		known, unknown, kl, ul = unknown, known, h, b
	}
	return fmt.Sprintf("%s %s it for %g s (the client's configured benchmark duration), %s for a duration its results do not say %s over a measured span of %.4g s, more than %g %% short of %g s: a shorter run; %s; measure c%d on both sides at one length (the same sweep command, or the same --duration), and keep the aiperf artifacts or run.json beside the results",
		known, what, kl.Seconds, unknown, unsaid, ul.Span, 100*knee.SpanTolerance, kl.Seconds, why, c)
}

// unsaidSpans is, by concurrency, the spans and throughputs of the
// points both sides measured with valid results (of metric m) at one
// kind of length (probes or full runs) and durations neither side's
// results say (knee.PairedSpans), where both record a span and a
// throughput: what knee.SidesRanApart reads.
func unsaidSpans(bs, hs *side, m Metric) map[int]knee.PairedSpans {
	out := map[int]knee.PairedSpans{}
	for _, c := range bs.concs {
		bl, hl := length(bs.byConc[c]), length(hs.byConc[c])
		if bl.Probe != hl.Probe || bl.Seconds > 0 || hl.Seconds > 0 || bl.Span <= 0 || hl.Span <= 0 {
			continue
		}
		bv, _, _ := usable(bs.byConc[c], m)
		hv, _, _ := usable(hs.byConc[c], m)
		bt, ht := throughputOf(bs.byConc[c]), throughputOf(hs.byConc[c])
		if len(bv) == 0 || len(hv) == 0 || bt <= 0 || ht <= 0 {
			continue
		}
		out[c] = knee.PairedSpans{BaseSpan: bl.Span, HeadSpan: hl.Span, BaseTPS: bt, HeadTPS: ht}
	}
	return out
}

// sidesApart is the detail of a point of an arm whose sides ran for
// different lengths by knee.SidesRanApart: p is the point's spans, span
// and work the arm's median ratios over its n points.
func sidesApart(p knee.PairedSpans, span, work float64, n, c int) string {
	return fmt.Sprintf("BASE and HEAD ran this arm for durations their results do not say "+
		"(no aiperf artifacts beside them, and no run.json that says it): HEAD's measured spans are a median %.3gx BASE's over %s "+
		"(%.4g s → %.4g s here) and the work they delivered (throughput × span) a median %.3gx, more than %g %% apart the same way: "+
		"runs of different lengths (a longer run stretches its spans at an unchanged throughput; a slower engine stretches them but delivers no more work); "+
		"results of different lengths are not compared; measure c%d on both sides at one length (the same sweep command, or the same --duration), "+
		"and keep the aiperf artifacts or run.json beside the results",
		span, pointsBoth(n), p.BaseSpan, p.HeadSpan, work, 100*knee.ArmSpansApart, c)
}

// pointsBoth names n points both sides measured.
func pointsBoth(n int) string {
	if n == 1 {
		return "the one point both measured"
	}
	return fmt.Sprintf("the %d points both measured", n)
}

func pointConcs(ps []PointReport) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.Conc
	}
	return out
}

func mixed(a *knee.Arm) bool {
	for _, s := range a.Samples {
		if s.Simulated != a.Samples[0].Simulated {
			return true
		}
	}
	return false
}

func simText(a *knee.Arm) string {
	switch {
	case mixed(a):
		return "a mix of simulated and real results"
	case a.Simulated:
		return "simulated"
	}
	return "real"
}

// differs names the images, recipe fingerprints, the benchmark durations
// of the results read (knee.Sample.BenchmarkSeconds: "unknown" where a
// result does not say), the clients, trace sets and aiperf versions of
// the results read (knee.Setup) and simulated engines' calibrations,
// seeds and injected faults (knee.Sample) that differ between the sides.
// A trace set that differs is also a problem (pairArm).
func differs(b, h *knee.Arm, span float64) []string {
	out := []string{}
	for _, f := range []struct {
		name string
		get  func(*knee.Sample) string
	}{
		{"image", func(s *knee.Sample) string { return s.Image }},
		{"recipe_fingerprint", func(s *knee.Sample) string { return s.Fingerprint }},
		{"client's benchmark duration", nil}, // durationDiffers
		{"client", ofReading(func(s knee.Setup) string { return s.Client })},
		{"trace set", readDataset},
		{"aiperf version", ofReading(func(s knee.Setup) string { return s.AiperfVersion })},
		{"simulated engine's calibration", func(s *knee.Sample) string { return simOrNone(s, s.SimCalibration) }},
		{"simulated engine's seed", func(s *knee.Sample) string { return s.SimSeed }},
		{"simulated engine's faults", func(s *knee.Sample) string { return simOrNone(s, s.SimFaults) }},
	} {
		if f.get == nil {
			if d := durationDiffers(b, h, span); d != "" {
				out = append(out, f.name+": "+d)
			}
			continue
		}
		bv, hv := b.Values(f.get), h.Values(f.get)
		if !slices.Equal(bv, hv) {
			out = append(out, fmt.Sprintf("%s: %s → %s", f.name, listOr(bv), listOr(hv)))
		}
	}
	return out
}

// ofReading gets a part of the setup of a result a reading reads: ""
// for one no reading reads (superseded, or another measurement:
// knee.OneMeasurement) or that does not say.
func ofReading(get func(knee.Setup) string) func(*knee.Sample) string {
	return func(s *knee.Sample) string {
		if s.Superseded || s.OtherMeasurement {
			return ""
		}
		return get(s.Setup())
	}
}

// readDataset is the trace set of a result a reading reads (ofReading).
var readDataset = ofReading(func(s knee.Setup) string { return s.Dataset })

// durationDiffers is the benchmark durations of the results read on
// each side (benchmarkDuration) where they differ, "" where they are the
// same. Where no result read on either side says its duration, it says so
// with each side's measured spans (spanRange; results that record no span
// either, as synthetic ones, get no line), the one thing left to tell
// runs of different lengths apart (knee.Length.Differs, a length-mismatch
// beyond knee.SpansApart).
func durationDiffers(b, h *knee.Arm, span float64) string {
	bv, hv := b.Values(benchmarkDuration), h.Values(benchmarkDuration)
	if allUnknown(bv) && allUnknown(hv) {
		bs, hs := spanRange(b), spanRange(h)
		if bs == "" || hs == "" || knee.SpansAlike(span) {
			return ""
		}
		return fmt.Sprintf("%s → %s (measured spans %s → %s, HEAD's a median %.3gx BASE's)", listOr(bv), listOr(hv), bs, hs, span)
	}
	if slices.Equal(bv, hv) {
		return ""
	}
	return fmt.Sprintf("%s → %s", listOr(bv), listOr(hv))
}

// allUnknown reports whether durations (benchmarkDuration's, at least one)
// are all unknown.
func allUnknown(durations []string) bool {
	for _, d := range durations {
		if !strings.HasPrefix(d, "unknown") {
			return false
		}
	}
	return len(durations) > 0
}

// spanRange is the range of the measured spans of the valid results a
// reading reads (knee.Sample.Seconds), "" without one.
func spanRange(a *knee.Arm) string {
	var spans []float64
	for _, s := range a.Samples {
		if !s.Superseded && !s.OtherMeasurement && s.Excluded == "" && s.Seconds > 0 {
			spans = append(spans, s.Seconds)
		}
	}
	if len(spans) == 0 {
		return ""
	}
	lo, hi := slices.Min(spans), slices.Max(spans)
	if lo == hi {
		return fmt.Sprintf("%.4g s", lo)
	}
	return fmt.Sprintf("%.4g-%.4g s", lo, hi)
}

// benchmarkDuration is the benchmark duration a result's client ran for,
// "" for a result no reading reads (superseded, or of another length:
// knee.OneMeasurement), "unknown" with why where the reader was told
// (knee.Sample.DurationUnknown: "unknown (DIR/run.json records result X,
// not Y)").
func benchmarkDuration(s *knee.Sample) string {
	switch {
	case s.Superseded || s.OtherMeasurement:
		return ""
	case s.BenchmarkSeconds <= 0 && s.DurationUnknown != "":
		return "unknown (" + s.DurationUnknown + ")"
	case s.BenchmarkSeconds <= 0:
		return "unknown"
	}
	return fmt.Sprintf("%g s", s.BenchmarkSeconds)
}

// simOrNone is v, or "(none)" for a simulated sample without it: a side
// whose replicates ran with and without a calibration lists both.
func simOrNone(s *knee.Sample, v string) string {
	if v == "" && s.Simulated {
		return "(none)"
	}
	return v
}

func listOr(v []string) string {
	if len(v) == 0 {
		return "(none)"
	}
	return strings.Join(v, ", ")
}
