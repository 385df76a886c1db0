package compare

import (
	"fmt"
	"sort"

	"sweep/internal/stats"
	"sweep/sweep/knee"
)

// side is one arm's results on one side, by concurrency, each read at
// one length (knee.OneMeasurement): a probe at a concurrency with a
// full-length result is superseded, a result of another benchmark
// duration than most of the arm's left out; both are excluded, so they
// are listed and never read.
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
	samples := knee.OneMeasurement(a.Samples)
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

// length is a point's length (knee.Length): that of the results a
// reading reads (neither superseded nor of another length: knee.OneMeasurement
// leaves one length at a concurrency), a probe when all of them are,
// with their benchmark duration when one says it and the mean of the
// measured spans of the valid ones. Results of different lengths read differently (a probe
// runs a fraction of a point's length from a cold cache and reads up to
// 2.4 times high where the KV pool fills after it ends; a longer run's
// sessions get further), so points of different lengths are never
// compared.
func length(ss []*knee.Sample) knee.Length {
	l := knee.Length{Probe: true}
	n := 0
	var spans []float64
	for _, s := range ss {
		if s.Superseded || s.OtherMeasurement {
			continue
		}
		n++
		l.Probe = l.Probe && s.Probe
		if s.BenchmarkSeconds > 0 {
			l.Seconds = s.BenchmarkSeconds
		}
		if s.Seconds > 0 && s.Excluded == "" {
			// An invalid result's span (a client cut short) is not the
			// point's.
			spans = append(spans, s.Seconds)
		}
	}
	l.Probe = l.Probe && n > 0
	if len(spans) > 0 {
		l.Span = stats.Mean(spans)
	}
	return l
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
