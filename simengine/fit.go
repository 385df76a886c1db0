package simengine

import (
	"errors"
	"math"
	"slices"

	"sweep/configs"
	"sweep/metrics/result"
)

// ErrTooFewPoints is returned by FitStepScale when no point can be fitted.
var ErrTooFewPoints = errors.New("no point left to fit")

// FitStepScale fits the scale of the model's step costs for cfg to the
// points: the median over the points of the scale at which the model's
// time between two of a request's tokens (a decode step of the requests
// decoding beside it over their contexts, stretched by the share of time
// the other requests' prefills take) equals the measured one (the
// token-weighted mean gap × AL, FitPoint.Gap; the median ITL × AL where
// the result has no means to read it from; a disaggregated decode
// worker's own mean step at its own batch, FitPoint.EngineStep and
// EngineBatch, where the point has them). It fills every point's fitted
// step and error.
func FitStepScale(cfg Config, points []FitPoint) (scale, rmsPct float64, err error) {
	capa := newCapacity(cfg)
	// The modelled step between two of a request's tokens: a decode step
	// stretched by the share of time prefills take (scaled with the step
	// costs, so the share is solved for the scale in the fit below). With
	// DP attention a step is a rank's: its share of the requests and of
	// their context (the capacity's per-sequence cost already waits for
	// every rank's experts); it read the whole engine's, which put a
	// simulated DP-attention arm's scale at 0.59.
	//
	// The measured gap is a mean over every gap a request sees, weighted
	// by tokens, so the model is one too: the decode step of the batch a
	// request is decoding in, and the prefills of the other requests that
	// run while it decodes. The point's conc clients (sessions) spread
	// over the ranks, each decoding and prefilling a 1/conc share of the
	// time, so beside a request run 1 - 1/conc of the others' decoding
	// requests and of their prefills (on average over the ranks a
	// session-keyed router sends them to; one rank: exactly). The median
	// ITL it read before saw few of the gaps a prefill stretches when a
	// rank runs a few requests (on the simulated B300 DeepSeek-V4 TP4/EP4
	// DP-attention arm at c8, 31.8 ms for a 40.8 ms mean gap), and
	// counting the others as 1 - 1/(requests in flight per rank) put the
	// prefills' share there at a third of theirs.
	ranks := float64(max(capa.ranks, 1))
	perRank := func(p FitPoint) float64 { return max(p.Running/ranks, 1) }
	others := func(p FitPoint) float64 {
		if p.Conc > 0 {
			return 1 - 1/float64(p.Conc)
		}
		return 1 - 1/max(p.Running, 1)
	}
	// SGLang runs a prefill batch on its own, the decoding requests
	// waiting; vLLM mixes the prefill chunks into the decode steps.
	prefillStalls := cfg.Engine != configs.VLLM
	prefillShare := func(p FitPoint) float64 {
		if p.PrefillPerSecond <= 0 || p.PrefillTokens <= 0 {
			return 0
		}
		// A request's prefill at its computed tokens, and the context
		// they attend to: the records' (the mean of a cost that grows
		// with tokens × context), else the means'.
		before := p.PrefillContext
		if p.PrefillMidContext > 0 {
			before = max(p.PrefillMidContext-p.PrefillTokens/2, 0)
		}
		return p.PrefillPerSecond / p.PrefillTokens * capa.prefillTime(int(p.PrefillTokens), int(before)) / ranks
	}
	// batch is the decode step's batch a request decodes in at scale s:
	// itself and the others' share of the requests decoding. Where
	// prefills stall the decode steps, the requests decoding (counted
	// from their first token to their last) include the ones waiting
	// through a prefill, a share s·q·others of their time, while the
	// decode steps take 1 - s·q of the rank's (q the prefills' share at
	// scale 1): a decode step runs (1 - s·q·others) / (1 - s·q) of them.
	// Taking the requests decoding as the batch put the simulated SGLang
	// arms' scales 1-2 % high (their decode steps' batch 2-5 % low), the
	// requests in flight put the vLLM arm's 2 % low.
	batch := func(p FitPoint, s float64) float64 {
		if p.EngineBatch > 0 {
			return p.EngineBatch // the step's own batch, no prefill in it
		}
		if p.Decoding <= 0 {
			return perRank(p)
		}
		decoding := p.Decoding / ranks
		if prefillStalls {
			sq := s * prefillShare(p)
			decoding *= (1 - sq*others(p)) / (1 - sq)
		}
		return 1 + others(p)*decoding
	}
	model := func(p FitPoint, s float64) float64 {
		n := batch(p, s)
		return s * capa.meanDecodeTime(n, n*p.CtxTokens/p.Running) / (1 - s*others(p)*prefillShare(p))
	}
	// The model holds while the prefills take less than all of a rank's
	// time (and grows without bound towards it).
	maxScale := func(p FitPoint) float64 {
		q := prefillShare(p)
		if !prefillStalls {
			q *= others(p)
		}
		if q <= 0 {
			return maxStepScale
		}
		return min(maxStepScale, (1-1e-9)/q)
	}
	var use []int
	for i, p := range points {
		if p.ITL > 0 && p.AL > 0 && p.Running > 0 {
			use = append(use, i)
		}
	}
	if len(use) == 0 {
		return 0, 0, ErrTooFewPoints
	}
	slices.SortFunc(use, func(a, b int) int { return points[a].Conc - points[b].Conc })
	ratios := make([]float64, 0, len(use))
	for _, i := range use {
		// The scale at which the model meets the measured step: the
		// model grows with the scale, so bisect (on its logarithm,
		// within the bounds a calibration may set).
		p := points[i]
		m := p.measuredStep()
		lo, hi := math.Log(minStepScale), math.Log(maxScale(p))
		for range 60 {
			mid := (lo + hi) / 2
			if model(p, math.Exp(mid)) < m {
				lo = mid
			} else {
				hi = mid
			}
		}
		ratios = append(ratios, math.Exp((lo+hi)/2))
	}
	slices.Sort(ratios)
	scale = ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		scale = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	var sq float64
	for _, i := range use {
		p := &points[i]
		p.MeasuredStep = p.measuredStep()
		p.FittedStep = model(*p, min(scale, maxScale(*p)))
		p.ErrorPct = 100 * (p.FittedStep - p.MeasuredStep) / p.MeasuredStep
		sq += p.ErrorPct * p.ErrorPct
	}
	return scale, math.Sqrt(sq / float64(len(use))), nil
}

// FitPrefillScale fits the scale of the model's prefill cost for cfg, a
// disaggregated prefill worker's configuration, to the points: the
// median over the points of the measured forward time per request
// (FitPoint.PrefillSeconds) over the model's for the mean request, one
// prefill batch of PrefillTokens computed tokens after PrefillContext
// cached ones (prefillTime at scale 1). The model is linear in the scale.
// It counts a batch's fixed cost per request (a batch that prefills
// several requests pays it once) and attends every request's tokens to
// the mean cached context (a session's first turn, which computes the
// most after the least, makes that an overstatement); the host tier's
// loads, which the worker's forward time includes, are not told apart
// (SGLang exports no count of its host hits). It fills every point's
// measured and fitted prefill time and error.
func FitPrefillScale(cfg Config, points []FitPoint) (scale, rmsPct float64, err error) {
	capa := newCapacity(cfg)
	model := func(p FitPoint) float64 {
		return capa.prefillTime(max(int(math.Round(p.PrefillTokens)), 1), int(p.PrefillContext))
	}
	var ratios []float64
	var use []int
	for i, p := range points {
		if p.PrefillSeconds > 0 && p.PrefillTokens > 0 {
			use = append(use, i)
			ratios = append(ratios, p.PrefillSeconds/model(p))
		}
	}
	if len(use) == 0 {
		return 0, 0, ErrTooFewPoints
	}
	slices.Sort(ratios)
	scale = ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		scale = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	scale = min(max(scale, minStepScale), maxStepScale)
	var sq float64
	for _, i := range use {
		p := &points[i]
		p.MeasuredStep = p.PrefillSeconds
		p.FittedStep = scale * model(*p)
		p.ErrorPct = 100 * (p.FittedStep - p.MeasuredStep) / p.MeasuredStep
		sq += p.ErrorPct * p.ErrorPct
	}
	return scale, math.Sqrt(sq / float64(len(use))), nil
}

// Config is the simulator configuration of the arm as far as its results
// say (sweep/simfit fits its step scale with it): the pool is theirs, speculative decoding (spec "none" or empty:
// off) drafts 3 tokens at the measured acceptance length.
func (a *ArmCalibration) Config(spec string, al float64) (Config, error) {
	c := Config{Engine: a.Engine, ModelPath: a.Model, GPU: a.GPU, TP: a.TP, EP: a.EP, DPAttention: a.DPAttention, MaxTotalTokens: a.PoolTokens, KVCacheDType: a.KVCacheDType}
	if a.DPAttention {
		c.DP = a.TP
	}
	if result.Speculative(spec) {
		c.Spec = Spec{Algorithm: "EAGLE", NumSteps: 3, TopK: 1, NumDraftTokens: 4, AcceptLength: min(max(al, 1), 4)}
	}
	return c.Normalize()
}
