package compare

import (
	"fmt"
	"slices"
	"sort"

	"sweep/sweep/knee"
)

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
