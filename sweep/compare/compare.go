package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sweep/internal/stats"

	"sweep/metrics/result"
	"sweep/sweep/abgate"
	"sweep/sweep/knee"
)

// Decision is a verdict: the A/B gate's type, so both gates speak alike.
type Decision = abgate.Decision

// The verdicts are the A/B gate's (abgate.Decision), with IMPROVEMENT
// added for an arm whose whole interval lies above +tolerance (it counts
// as PASS in the overall verdict).
const (
	Pass         = abgate.Passed
	Regression   = abgate.Regression
	Inconclusive = abgate.Inconclusive
	Incomplete   = abgate.Incomplete
	Improvement  = Decision("IMPROVEMENT")
)

// DefaultTolerance is the tolerated loss, in percent.
const DefaultTolerance = 5.0

// minReplicateDF is the fewest degrees of freedom of replicate scatter
// that make replicates the noise source.
const minReplicateDF = 3

// maxReplicatesAdvice caps the advice of an INCONCLUSIVE arm.
const maxReplicatesAdvice = 100

// Options are the inputs of Compare besides the two sides.
type Options struct {
	// Tolerance is the tolerated loss in percent (> 0); 0 means
	// DefaultTolerance.
	Tolerance float64
	// Metric is what points are compared on; "" means MetricTotal.
	Metric Metric
	// Calibration, when not nil, gives the noise of arms that have no
	// replicates (sweep compare --calibrate).
	Calibration *Calibration
}

// Report is the outcome of a comparison, in the documented JSON form.
type Report struct {
	Verdict   Decision     `json:"verdict"`
	Tolerance float64      `json:"tolerance_pct"`
	Metric    Metric       `json:"metric"`
	Arms      []*ArmReport `json:"arms"`
	Problems  []Problem    `json:"problems"`
	// OnlyInHead lists the arms HEAD has and BASE lacks (never problems).
	OnlyInHead []string `json:"only_in_head"`
}

// ArmReport is one arm's comparison.
type ArmReport struct {
	Arm      string          `json:"arm"` // result.Identity.Label
	Identity result.Identity `json:"identity"`
	Verdict  Decision        `json:"verdict"`
	// DeltaPct is the pooled change in percent (nil without a paired
	// point); CIPct its 90 % interval (nil without a noise estimate).
	DeltaPct *float64    `json:"delta_pct"`
	CIPct    *[2]float64 `json:"ci_pct"`
	// NoiseSource says where the noise came from; NoisePct is the
	// relative noise of one result (σ of log value, in percent) and
	// NoiseDF its degrees of freedom.
	NoiseSource string  `json:"noise_source"`
	NoisePct    float64 `json:"noise_pct"`
	NoiseDF     int     `json:"noise_df"`
	// Why says what decided the verdict: the pooled change's interval,
	// or the points whose own interval lies beyond the tolerance.
	Why string `json:"why,omitempty"`
	// ReplicatesNeeded, for an INCONCLUSIVE arm with a noise estimate,
	// is how many results per point and side would likely decide it.
	ReplicatesNeeded int            `json:"replicates_needed,omitempty"`
	Points           []PointReport  `json:"points"`
	Frontier         FrontierReport `json:"frontier"`
	// Differs names what differs between the sides: the image, the
	// recipe fingerprint, what a simulated engine's calibration file set
	// (sweep sim calibrate; not its name), and the engine flags recorded
	// beside the results (ports and addresses aside); empty when nothing
	// does.
	Differs []string `json:"differs"`
	// Excluded names the invalid results left out beside valid ones, and
	// the adaptive search's short probes left out beside full-length
	// results of their point.
	Excluded []Excluded `json:"excluded,omitempty"`
	// OnlyInHead lists the concurrencies only HEAD measured.
	OnlyInHead []int `json:"only_in_head,omitempty"`
	// Weighting says how the points are pooled.
	Weighting string `json:"weighting"`

	logs []float64 // per judged point: ln(head/base)
	qs   []float64 // per judged point: 1/m + 1/n
	at   []int     // per judged point: its index in Points
	reps float64   // mean results per point and side
}

// PointReport is one paired point: each side's mean value (in the
// metric's unit: tok/s/GPU, tok/s/user, seconds or joules per output
// token; 6 significant digits), its change and how many valid results
// each side has; with a noise estimate, the change's interval and the
// point's verdict.
type PointReport struct {
	Conc     int     `json:"conc"`
	Base     float64 `json:"base"`
	Head     float64 `json:"head"`
	DeltaPct float64 `json:"delta_pct"`
	BaseN    int     `json:"base_n"`
	HeadN    int     `json:"head_n"`
	// CIPct is the change's interval: 99 % simultaneously over the arm's
	// judged points (Bonferroni), nil without a noise estimate or past
	// BASE's cliff.
	CIPct *[2]float64 `json:"ci_pct"`
	// Verdict reads CIPct against the tolerance as the arm's interval is
	// read ("" without a noise estimate); a point's REGRESSION makes its
	// arm's.
	Verdict Decision `json:"verdict,omitempty"`
	// NotUniform marks a point the paired scatter left out: its change
	// lies far from the arm's other points' (a change, not noise).
	NotUniform bool `json:"not_uniform,omitempty"`
	// PastBaseCliff marks a point where BASE's throughput per GPU
	// collapsed below half of its highest at a lower concurrency: the
	// engine thrashes there (a KV pool overflowed) and its results vary
	// from run to run far beyond the arm's noise, so the point is listed
	// but not judged: no interval, no verdict, left out of the pooled
	// change and of the noise.
	PastBaseCliff bool `json:"past_base_cliff,omitempty"`
}

// collapseFraction is the share of BASE's highest throughput at a lower
// concurrency below which a point is past BASE's cliff.
const collapseFraction = 0.5

// Excluded is an invalid result left out beside valid results of its point.
type Excluded struct {
	Side   string `json:"side"`
	Conc   int    `json:"conc"`
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Problem kinds.
const (
	MissingArm        = "missing-arm"
	MissingPoint      = "missing-point"
	InvalidResult     = "invalid-result"
	SimulatedMismatch = "simulated-mismatch"
	LengthMismatch    = "length-mismatch"
)

// Problem is what makes a comparison INCOMPLETE.
type Problem struct {
	Kind string `json:"kind"`
	Arm  string `json:"arm"`
	Side string `json:"side,omitempty"` // "base" or "head"
	// Conc is the point's concurrency, nil for an arm-level problem.
	Conc   *int   `json:"conc"`
	Detail string `json:"detail"`
}

// String is the problem as one line: "missing-point: arm ..., conc 20:
// HEAD has no result".
func (p Problem) String() string {
	where := "arm " + p.Arm
	if p.Conc != nil {
		where += fmt.Sprintf(", conc %d", *p.Conc)
	}
	return fmt.Sprintf("%s: %s: %s", p.Kind, where, p.Detail)
}

// side is one arm's results on one side, by concurrency. A probe at a
// concurrency with a full-length result is superseded
// (knee.SupersedeProbes): excluded, so it is listed and never read.
type side struct {
	arm    *knee.Arm
	byConc map[int][]*knee.Sample
	concs  []int
}

func newSide(a *knee.Arm) *side {
	s := &side{arm: a, byConc: map[int][]*knee.Sample{}}
	if a == nil {
		return s
	}
	samples := knee.SupersedeProbes(a.Samples)
	for i := range samples {
		smp := &samples[i]
		if _, ok := s.byConc[smp.Conc]; !ok {
			s.concs = append(s.concs, smp.Conc)
		}
		s.byConc[smp.Conc] = append(s.byConc[smp.Conc], smp)
	}
	sort.Ints(s.concs)
	return s
}

// probes reports whether a point's results are all short probes of the
// adaptive search (a probe beside a full-length result is superseded and
// leaves the point a full-length one). A probe runs a quarter of a
// point's length from a cold cache and reads differently (up to 2.4
// times high where the KV pool fills after it ends), so a point one side
// measured only as probes is never compared with the other's full-length
// one.
func probes(ss []*knee.Sample) bool {
	return len(ss) > 0 && !slices.ContainsFunc(ss, func(s *knee.Sample) bool { return !s.Probe })
}

// usable splits a point's results into those with a usable value and the
// excluded ones with their reasons.
func usable(ss []*knee.Sample, m Metric) (vals []float64, out []*knee.Sample, reasons []string) {
	for _, s := range ss {
		reason := s.Excluded
		if reason == "" && m.value(s) == nil {
			reason = fmt.Sprintf("no positive %s value", m)
		}
		if reason != "" {
			out = append(out, s)
			reasons = append(reasons, reason)
			continue
		}
		vals = append(vals, *m.value(s))
	}
	return vals, out, reasons
}

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
		ar, ss, df := pairArm(rep, b, heads[k], o.Metric)
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
	bs, hs := newSide(b), newSide(h)
	if b.Simulated != h.Simulated || mixed(b) || mixed(h) {
		problem(SimulatedMismatch, "", nil, fmt.Sprintf("BASE is %s, HEAD is %s: simulated and real results are never compared",
			simText(b), simText(h)))
	}
	ar.Differs = differs(b, h)
	var sumRep, nRep, basePeak float64
	for _, c := range bs.concs {
		conc := c
		bv, bx, bwhy := usable(bs.byConc[c], m)
		hv, hx, hwhy := usable(hs.byConc[c], m)
		switch {
		case len(bv) == 0:
			problem(InvalidResult, "base", &conc, "no valid BASE result: "+strings.Join(bwhy, "; "))
			continue
		case len(hs.byConc[c]) == 0:
			problem(MissingPoint, "head", &conc, "HEAD has no result at this concurrency")
			continue
		case len(hv) == 0:
			problem(InvalidResult, "head", &conc, "no valid HEAD result: "+strings.Join(hwhy, "; "))
			continue
		case probes(bs.byConc[c]) != probes(hs.byConc[c]):
			problem(LengthMismatch, "", &conc, lengthMismatch(probes(bs.byConc[c]), c))
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

func pastCliffConcs(ps []PointReport) []int {
	var out []int
	for _, p := range ps {
		if p.PastBaseCliff {
			out = append(out, p.Conc)
		}
	}
	return out
}

// lengthMismatch is the detail of a point one side measured as a short
// probe and the other at the full length.
func lengthMismatch(baseProbe bool, c int) string {
	short, full := "BASE", "HEAD"
	if !baseProbe {
		short, full = full, short
	}
	return fmt.Sprintf("%s measured it only as a short probe of the adaptive search, %s at the full length: results of different lengths are not compared; measure c%d on %s at the full length (or both as probes)", short, full, c, short)
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

// differs names the images, recipe fingerprints and simulated engines'
// calibrations, seeds and injected faults (knee.Sample) that differ
// between the sides.
func differs(b, h *knee.Arm) []string {
	out := []string{}
	for _, f := range []struct {
		name string
		get  func(*knee.Sample) string
	}{
		{"image", func(s *knee.Sample) string { return s.Image }},
		{"recipe_fingerprint", func(s *knee.Sample) string { return s.Fingerprint }},
		{"simulated engine's calibration", func(s *knee.Sample) string { return simOrNone(s, s.SimCalibration) }},
		{"simulated engine's seed", func(s *knee.Sample) string { return s.SimSeed }},
		{"simulated engine's faults", func(s *knee.Sample) string { return simOrNone(s, s.SimFaults) }},
	} {
		bv, hv := b.Values(f.get), h.Values(f.get)
		if !slices.Equal(bv, hv) {
			out = append(out, fmt.Sprintf("%s: %s → %s", f.name, listOr(bv), listOr(hv)))
		}
	}
	return out
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

// logScatter is the sum of squares of ln v around its mean and its degrees
// of freedom (0, 0 for fewer than two values).
func logScatter(v []float64) (ss, df float64) {
	if len(v) < 2 {
		return 0, 0
	}
	ls := make([]float64, len(v))
	for i, x := range v {
		ls[i] = math.Log(x)
	}
	m := stats.Mean(ls)
	for _, l := range ls {
		ss += (l - m) * (l - m)
	}
	return ss, float64(len(v) - 1)
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// roundSig rounds v to digits significant digits: a latency in seconds
// (0.00593) keeps as many as a throughput (21215.6).
func roundSig(v float64, digits int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	return round(v, digits-1-int(math.Floor(math.Log10(math.Abs(v)))))
}
