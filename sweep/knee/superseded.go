package knee

import (
	"cmp"
	"fmt"
	"slices"
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
// probe passed is that finding (knee.NextStep reads it so). OneLength
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
// different lengths are neither one point's replicates (OneLength) nor
// compared with each other (sweep compare): agentic sessions get further
// in a longer run, its cache warms and its KV pool fills otherwise (one
// simulated point read 7.5 % apart at 1200 s and 3600 s).
type Length struct {
	Probe   bool
	Seconds float64
}

// Length is the sample's length.
func (s *Sample) Length() Length { return Length{Probe: s.Probe, Seconds: s.BenchmarkSeconds} }

// Differs reports whether l and o are different lengths: one a probe and
// the other not, or two known benchmark durations that differ. An
// unknown duration differs from none.
func (l Length) Differs(o Length) bool {
	return l.Probe != o.Probe || (l.Seconds > 0 && o.Seconds > 0 && l.Seconds != o.Seconds)
}

// ExcludedOtherLength starts Sample.Excluded of a result whose client ran
// for another benchmark duration than the arm's reading at its
// concurrency (Sample.OtherLength).
const ExcludedOtherLength = "another benchmark duration than the point's reading"

// OneLength returns samples with each concurrency read at one length:
// the probes a full-length result supersedes marked (SupersedeProbes);
// then, at a concurrency whose other results ran for more than one
// benchmark duration (Sample.BenchmarkSeconds), those not at the one
// most of the arm's results ran for (of a tie, the longer) marked
// OtherLength, with Excluded ExcludedOtherLength and both durations: they
// stay listed, but never enter a reading, since results of different
// lengths are no replicates (Length). A result of unknown duration is
// kept. Read, Analyze and sweep compare read an arm through it; samples
// itself when nothing is marked, else a copy.
func OneLength(samples []Sample) []Sample {
	samples = SupersedeProbes(samples)
	count := map[Length]int{}
	at := map[int][]Length{} // per concurrency, its known lengths
	for _, s := range samples {
		if s.Superseded || s.BenchmarkSeconds <= 0 {
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
		return ok && !s.Superseded && !s.OtherLength && s.BenchmarkSeconds > 0 && s.Length() != k
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
		s.OtherLength = true
		why := fmt.Sprintf("%s: ran %g s, the point is read at %g s, the arm's most common duration (of a tie, the longer): results of different lengths are no replicates",
			ExcludedOtherLength, s.BenchmarkSeconds, keep[s.Conc].Seconds)
		if s.Excluded != "" {
			why += " (the result: " + s.Excluded + ")"
		}
		s.Excluded = why
	}
	return out
}
