package knee

import "slices"

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

// supersedeProbes returns samples with every probe at a concurrency that
// also has a full-length result marked superseded (Sample.Superseded,
// Excluded ExcludedSuperseded): it stays listed, but never enters a
// reading at that concurrency. A full-length result that failed
// supersedes its probe too: the full run is the measurement the search
// asked for, and a point that fails at the full length after a short
// probe passed is that finding (knee.NextStep reads it so). samples
// itself when nothing is superseded, else a copy.
func supersedeProbes(samples []Sample) []Sample {
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
