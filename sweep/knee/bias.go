package knee

import (
	"maps"
	"math"
	"slices"

	"sweep/internal/stats"
)

// probeBiasScale is the prior scale of an arm's probe bias (the log of
// how far its probes read above its full-length points' curve): the
// spread of the per-arm mean probe/full ratio between arms of the
// simulated corpora (testdata/knee/simcorpus, probes below KV usage
// 0.8: 6.9 % overall, 5.3 % within an arm, so about 4 % between arms).
const probeBiasScale = 0.04

// biasFitPoints is the fewest steady full-length points probeBias fits
// its curve on: one more than the saturating model's three parameters,
// which pass through any three points, so that a bend the model misses
// between them (a hard knee) is not read as the probes' bias.
const biasFitPoints = 4

// probeBias is how far, in log throughput, an arm's probes read above
// the curve of its full-length points: some arms' short probes read high
// across the arm (the simulated MiniMax FP4 MI355X arms by 5-13 %,
// GLM-5.2 by 13 %), not as independent noise. The curve is the
// saturating model fitted on the usable full-length points whose KV pool
// stayed below kvNearFull (the steady regime the probes are read in), up
// to the highest of them (at least biasFitPoints). Each usable probe
// strictly inside their range whose pool stayed below kvNearFull, at a
// concurrency without a full-length reading, reads against it with the
// noise of both (Options.Sigma for the model, Options.Sigma ×
// sqrt(full length / probe length) for the probe). Their weighted mean
// is shrunk toward 0 with the prior probeBiasScale, so a few probes move
// it little; n is how many probes it rests on (0: no estimate, bias 0).
// A probe with a full-length result at its own concurrency (kept by an
// adaptive discovery, superseded: Sample.Superseded) is not read: such a
// probe was run again because it failed or its pool came near full (both
// left out here anyway) or because the saturation gate hung on it, a
// selected few rather than the arm's probes at large, and the search read
// the point without it; reading the pairs would also move knees that
// were found before probes were kept.
func probeBias(samples []Sample, o Options) (bias float64, n int) {
	full := 0.0
	fullAt := map[int][]float64{}
	for i := range samples {
		s := &samples[i]
		if t := s.Throughput(o.Metric); !s.Probe && s.Excluded == "" && t != nil && *t > 0 && !s.poolNearFull() {
			full = max(full, s.Seconds)
			fullAt[s.Conc] = append(fullAt[s.Conc], math.Log(*t))
		}
	}
	var fu, fy, fw []float64
	for _, c := range slices.Sorted(maps.Keys(fullAt)) {
		fu, fy, fw = append(fu, math.Log2(float64(c))), append(fy, stats.Mean(fullAt[c])), append(fw, float64(len(fullAt[c])))
	}
	if len(fy) < biasFitPoints {
		return 0, 0
	}
	top := slices.Index(fy, slices.Max(fy)) // the first highest
	if top+1 < biasFitPoints {
		return 0, 0
	}
	fu, fy, fw = fu[:top+1], fy[:top+1], fw[:top+1]
	m, _, _ := fitSaturating(fu, fy, fw)
	num, den := 0.0, 0.0
	for i := range samples {
		s := &samples[i]
		t := s.Throughput(o.Metric)
		if !s.Probe || s.Excluded != "" || t == nil || *t <= 0 || s.poolNearFull() || len(fullAt[s.Conc]) > 0 {
			continue
		}
		u := math.Log2(float64(s.Conc))
		if u <= fu[0] || u >= fu[len(fu)-1] {
			continue
		}
		sp := o.Sigma
		if s.Seconds > 0 && full > 0 && s.Seconds < full {
			sp *= math.Sqrt(full / s.Seconds)
		}
		v := sq(sp) + sq(o.Sigma)
		num += (math.Log(*t) - m.at(u)) / v
		den += 1 / v
		n++
	}
	if n == 0 {
		return 0, 0
	}
	tau2 := sq(probeBiasScale)
	return num / den * tau2 / (tau2 + 1/den), n
}

// unbiasProbes returns the samples with every probe's throughputs divided
// by exp(bias) (probeBias), and the bias; samples itself when there is
// none.
func unbiasProbes(samples []Sample, o Options) ([]Sample, float64) {
	b, n := probeBias(samples, o)
	if n == 0 || b == 0 {
		return samples, 0
	}
	out := slices.Clone(samples)
	f := math.Exp(-b)
	for i := range out {
		s := &out[i]
		if s.Probe {
			s.scaleThroughput(f)
		}
	}
	return out, b
}
