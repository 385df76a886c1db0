package knee

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"sweep/internal/stats"
)

// ExcludedSuperseded is Sample.Excluded of a probe at a concurrency where
// its arm also has a full-length result: the point the search asked for
// again at the full length, whose run supersedes the probe (a probe that
// had failed as well says so after it).
const ExcludedSuperseded = "probe superseded by the full-length run"

// fullLengthAt returns the concurrencies at which samples hold a
// full-length (not probe) result, usable or not.
func fullLengthAt(samples []Sample) map[int]bool {
	full := map[int]bool{}
	for _, s := range samples {
		if !s.Probe {
			full[s.Conc] = true
		}
	}
	return full
}

// SupersedeProbes returns samples with every probe at a concurrency that
// also has a full-length result marked superseded (Sample.Superseded,
// Excluded ExcludedSuperseded): it stays listed, but never enters a
// reading at that concurrency. A full-length result that failed
// supersedes its probe too: the full run is the measurement the search
// asked for, and a point that fails at the full length after a short
// probe passed is that finding (knee.NextStep reads it so). OneMeasurement
// applies it first. samples itself when nothing is superseded, else a
// copy.
func SupersedeProbes(samples []Sample) []Sample {
	full := fullLengthAt(samples)
	if len(full) == 0 || !slices.ContainsFunc(samples, func(s Sample) bool { return s.Probe && !s.Superseded && full[s.Conc] }) {
		return samples
	}
	out := slices.Clone(samples)
	for i := range out {
		s := &out[i]
		if !s.Probe || s.Superseded || !full[s.Conc] {
			continue
		}
		s.Superseded = true
		if s.Excluded == "" {
			s.Excluded = ExcludedSuperseded
		} else {
			s.Excluded = ExcludedSuperseded + " (the probe: " + s.Excluded + ")"
		}
	}
	return out
}

// fullReplacesProbes drops the probes at every concurrency also measured
// at the full length: a failed probe measured again replaces its reading.
func fullReplacesProbes(measured []Sample) []Sample {
	full := fullLengthAt(measured)
	if len(full) == 0 {
		return measured
	}
	return slices.DeleteFunc(slices.Clone(measured), func(s Sample) bool { return s.Probe && full[s.Conc] })
}

// Length is how long a result's client measured, which decides whether
// two results read alike: a short probe of the adaptive search (from a
// cold cache, a fraction of a point's length) or a full-length run, and
// the benchmark duration its client was configured with (Seconds:
// Sample.BenchmarkSeconds, 0 when its result does not say). Results of
// different lengths are neither one point's replicates (OneMeasurement) nor
// compared with each other (sweep compare): agentic sessions get further
// in a longer run, its cache warms and its KV pool fills otherwise (one
// simulated point read 7.5 % apart at 1200 s and 3600 s).
//
// Span is the span the results measured (Sample.Seconds,
// request_metrics.throughput.duration_seconds; 0 when unknown), which
// every result records, also one whose aiperf artifacts are gone (the CI
// uploads most results alone): Differs reads it where one configured
// duration is unknown. Sample.Length leaves it 0, so a Length of a
// sample is a configured length, one key per duration.
type Length struct {
	Probe   bool
	Seconds float64
	Span    float64
}

// SpanTolerance is how far (a share of the configured duration) a
// result's measured span may fall short of a benchmark duration and
// still be a run of it (Length.Differs). A client configured for D
// seconds sends requests until D and the requests still running then end
// after it, so its span is at least about D (in simulated runs 1224 s of
// a 1200 s point, 619.5 s of a 600 s one, 133 s of a 120 s one); how far
// beyond D it reaches depends on the requests' latency (the sweeps of
// sweep/compare's conformance sample span 800 s at c1 and over 10,000 s
// at c256, one point's two sides up to 35 % apart where a change slowed
// the engine), so a span says only that its run was not longer than it:
// it never tells a longer run from one of D.
const SpanTolerance = 0.10

// Length is the sample's length.
func (s *Sample) Length() Length { return Length{Probe: s.Probe, Seconds: s.BenchmarkSeconds} }

// SpansApart is how far apart (a share of the longer) the measured
// spans of two results whose benchmark durations are both unknown may lie
// and still be read as one length (Length.Differs). A span tells a run's
// duration only from below (SpanTolerance), and at one duration two sides'
// spans lie up to 35 % apart where a change slowed the engine (sweep
// compare's conformance sample: 26 % at one point of a planted
// regression), so one point's spans say a different length only when
// they are more than twice apart, which no slowdown the samples show
// explains. Nearer ones are judged with the arm's other points, by their
// work as well (SidesRanApart).
const SpansApart = 0.5

// Differs reports whether l and o are different lengths: one a probe and
// the other not, two known benchmark durations that differ, one known
// duration and, for the other whose duration is unknown, a measured span
// more than SpanTolerance short of it (a shorter run), or, both durations
// unknown, measured spans more than SpansApart apart. Otherwise an
// unknown duration differs from none at one point; an arm's points of
// unknown durations are judged together by SidesRanApart.
func (l Length) Differs(o Length) bool {
	switch {
	case l.Probe != o.Probe:
		return true
	case l.Seconds > 0 && o.Seconds > 0:
		return l.Seconds != o.Seconds
	case l.Seconds <= 0 && o.Seconds <= 0:
		return l.spansApart(o)
	}
	return l.shorterSpan(o) || o.shorterSpan(l)
}

// spansApart reports whether l's and o's measured spans, both known, lie
// more than SpansApart apart (the shorter under SpansApart of the longer).
func (l Length) spansApart(o Length) bool {
	short, long := min(l.Span, o.Span), max(l.Span, o.Span)
	return short > 0 && short < (1-SpansApart)*long
}

// shorterSpan reports whether o, of an unknown duration, measured a span
// too short to be a run of l's known one (SpanTolerance).
func (l Length) shorterSpan(o Length) bool {
	return l.Seconds > 0 && o.Seconds <= 0 && o.Span > 0 && o.Span < (1-SpanTolerance)*l.Seconds
}

// PairedSpans is one point both sides of a comparison measured with
// durations neither side's results say: each side's measured span
// (Length.Span) and throughput (any one measure, as long as both sides
// give the same), all positive.
type PairedSpans struct{ BaseSpan, HeadSpan, BaseTPS, HeadTPS float64 }

// ArmSpansApart is how far apart (a share) the typical measured spans of
// an arm's two sides may lie, where neither side's benchmark duration is
// known, and still be read as one length (SidesRanApart). A span is
// about the configured duration D plus the drain of the requests still
// running at D, which take about a request's latency to end: a longer
// run stretches every span by about the duration it adds and, the server
// unchanged, keeps its throughput, so it delivers that much more work
// (throughput × span); a slower server stretches the drain only and
// lowers its throughput, so it delivers no more work over its longer
// spans (sweep compare's conformance sample: a planted regression at
// -25 % throughput stretched one arm's spans by a median 17 %, up to 35 %
// at one point, while its work fell by a median 10 %; simulated
// slowdowns of -56 % to -90 % stretched spans by at most 12 %). Spans of
// one length lie within about 5 % of each other, point by point.
const ArmSpansApart = 0.15

// SidesRanApart reports whether the two sides of an arm, over the points
// they both measured with durations their results do not say, ran for
// different lengths: their measured spans a median more than
// ArmSpansApart apart, and the work they delivered (throughput × span)
// a median more than ArmSpansApart apart the same way, the longer spans
// delivering more, as a longer run does and a slower server does not.
// span and work are the medians of HEAD's over BASE's (1 without a
// point). A single point's spans further apart than SpansApart are a
// different length on their own (Length.Differs).
func SidesRanApart(ps []PairedSpans) (apart bool, span, work float64) {
	if len(ps) == 0 {
		return false, 1, 1
	}
	spans := make([]float64, len(ps))
	works := make([]float64, len(ps))
	for i, p := range ps {
		spans[i] = math.Log(p.HeadSpan / p.BaseSpan)
		works[i] = math.Log(p.HeadSpan * p.HeadTPS / (p.BaseSpan * p.BaseTPS))
	}
	ls, lw := stats.Median(spans), stats.Median(works)
	limit := math.Log(1 + ArmSpansApart)
	apart = math.Abs(ls) > limit && math.Abs(lw) > limit && (ls > 0) == (lw > 0)
	return apart, math.Exp(ls), math.Exp(lw)
}

// SpansAlike reports whether span, SidesRanApart's median span ratio,
// is one length's: within ArmSpansApart either way.
func SpansAlike(span float64) bool {
	return math.Abs(math.Log(span)) <= math.Log(1+ArmSpansApart)
}

// Setup is how a result was made beyond its arm and its length: its load
// client, trace set, aiperf version and image ("" each where the result
// does not say). Results of one arm made with another setup are not one
// measurement (OneMeasurement): another trace set is another workload,
// and another client or image may read otherwise.
type Setup struct{ Client, Dataset, AiperfVersion, Image string }

// Setup is the sample's setup.
func (s *Sample) Setup() Setup {
	return Setup{Client: s.Client, Dataset: s.Dataset, AiperfVersion: s.AiperfVersion, Image: s.Image}
}

// setupParts are Setup's parts, named as messages name them.
var setupParts = []struct {
	Name string
	Get  func(Setup) string
	Set  func(*Setup, string)
}{
	{"client", func(s Setup) string { return s.Client }, func(s *Setup, v string) { s.Client = v }},
	{"trace set", func(s Setup) string { return s.Dataset }, func(s *Setup, v string) { s.Dataset = v }},
	{"aiperf version", func(s Setup) string { return s.AiperfVersion }, func(s *Setup, v string) { s.AiperfVersion = v }},
	{"image", func(s Setup) string { return s.Image }, func(s *Setup, v string) { s.Image = v }},
}

// ExcludedOtherSetup starts Sample.Excluded of a result made with another
// setup than most of its arm's results (Sample.OtherMeasurement).
const ExcludedOtherSetup = "made otherwise than the arm's reading"

// ExcludedOtherLength starts Sample.Excluded of a result whose client ran
// for another benchmark duration than the arm's reading at its
// concurrency (Sample.OtherMeasurement).
const ExcludedOtherLength = "another benchmark duration than the point's reading"

// OneMeasurement returns samples with the arm read as one measurement:
// the probes a full-length result supersedes marked (SupersedeProbes);
// then the results made with another setup (Setup: client, trace set,
// aiperf version, image) than the one most of the arm's results were
// made with (per part, among those that say it; of a tie, the last by
// name) marked OtherMeasurement, with Excluded ExcludedOtherSetup naming
// each part that differs; then, at a concurrency whose other results ran
// for more than one benchmark duration (Sample.BenchmarkSeconds), those
// not at the one most of the arm's results ran for (of a tie, the
// longer) marked OtherMeasurement, with Excluded ExcludedOtherLength and
// both durations. They stay listed, but never enter a reading, since
// results of different setups or lengths are no replicates (Length). A
// result that does not say a part (an unknown duration, no client) is
// kept. Read, Analyze and sweep compare read an arm through it; samples
// itself when nothing is marked, else a copy.
func OneMeasurement(samples []Sample) []Sample {
	samples = oneSetup(SupersedeProbes(samples))
	count := map[Length]int{}
	at := map[int][]Length{} // per concurrency, its known lengths
	for _, s := range samples {
		if s.Superseded || s.OtherMeasurement || s.BenchmarkSeconds <= 0 {
			continue
		}
		l := s.Length()
		count[l]++
		if !slices.Contains(at[s.Conc], l) {
			at[s.Conc] = append(at[s.Conc], l)
		}
	}
	keep := map[int]Length{}
	for c, ls := range at {
		if len(ls) > 1 {
			keep[c] = slices.MaxFunc(ls, func(a, b Length) int { return cmp.Or(count[a]-count[b], cmp.Compare(a.Seconds, b.Seconds)) })
		}
	}
	other := func(s *Sample) bool {
		k, ok := keep[s.Conc]
		return ok && !s.Superseded && !s.OtherMeasurement && s.BenchmarkSeconds > 0 && s.Length() != k
	}
	if !slices.ContainsFunc(samples, func(s Sample) bool { return other(&s) }) {
		return samples
	}
	out := slices.Clone(samples)
	for i := range out {
		s := &out[i]
		if !other(s) {
			continue
		}
		s.OtherMeasurement = true
		why := fmt.Sprintf("%s: ran %g s, the point is read at %g s, the arm's most common duration (of a tie, the longer): results of different lengths are no replicates",
			ExcludedOtherLength, s.BenchmarkSeconds, keep[s.Conc].Seconds)
		if s.Excluded != "" {
			why += " (the result: " + s.Excluded + ")"
		}
		s.Excluded = why
	}
	return out
}

// oneSetup marks the results made with another setup than most of the
// arm's (OneMeasurement); samples itself when none is, else a copy.
func oneSetup(samples []Sample) []Sample {
	var keep Setup
	for _, f := range setupParts {
		count := map[string]int{}
		for i := range samples {
			if v := f.Get(samples[i].Setup()); v != "" && !samples[i].Superseded {
				count[v]++
			}
		}
		if len(count) < 2 {
			continue
		}
		f.Set(&keep, slices.MaxFunc(slices.Sorted(maps.Keys(count)), func(a, b string) int { return cmp.Or(count[a]-count[b], strings.Compare(a, b)) }))
	}
	differs := func(s *Sample) []string {
		var out []string
		for _, f := range setupParts {
			if k, v := f.Get(keep), f.Get(s.Setup()); k != "" && v != "" && v != k {
				out = append(out, fmt.Sprintf("%s %s, not %s", f.Name, v, k))
			}
		}
		return out
	}
	mark := func(s *Sample) []string {
		if s.Superseded || s.OtherMeasurement {
			return nil
		}
		return differs(s)
	}
	if keep == (Setup{}) || !slices.ContainsFunc(samples, func(s Sample) bool { return len(mark(&s)) > 0 }) {
		return samples
	}
	out := slices.Clone(samples)
	for i := range out {
		s := &out[i]
		d := mark(s)
		if len(d) == 0 {
			continue
		}
		s.OtherMeasurement = true
		why := fmt.Sprintf("%s: %s (most of the arm's results): results made otherwise are not one measurement", ExcludedOtherSetup, strings.Join(d, "; "))
		if s.Excluded != "" {
			why += " (the result: " + s.Excluded + ")"
		}
		s.Excluded = why
	}
	return out
}
