package simengine

import (
	"slices"
	"sweep/configs"
)

// histogram is a Prometheus histogram: per-bucket counts (the last bucket
// is +Inf), sum and count.
type histogram struct {
	bounds []float64
	counts []float64
	sum    float64
	n      float64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]float64, len(bounds)+1)}
}

// observe records v times times.
func (h *histogram) observe(v float64, times int) {
	i, _ := slices.BinarySearch(h.bounds, v) // first bound >= v: le is inclusive
	h.counts[i] += float64(times)
	h.sum += v * float64(times)
	h.n += float64(times)
}

func (h *histogram) add(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.sum += o.sum
	h.n += o.n
}

func (h *histogram) clone() *histogram {
	c := newHistogram(h.bounds)
	c.add(h)
	return c
}

// Bucket boundaries as the engines declare them.
var (
	sglangTTFTBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangITLBuckets  = []float64{0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8}
	sglangE2EBuckets  = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	sglangQueueBucket = []float64{0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000}
	tokenBuckets      = []float64{100, 300, 500, 700, 1000, 1500, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000, 12000, 15000, 20000, 22000, 25000, 30000, 35000, 40000, 66000, 99000, 132000, 300000, 600000, 900000, 1100000}
	vllmTTFTBuckets   = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	vllmITLBuckets    = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	vllmReqBuckets    = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	vllmTokenBuckets  = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000}
)

// stats is what one rank publishes. Live gauges are refreshed after
// every step; SGLang request counters move when a request finishes, vLLM
// token and speculative counters every iteration, as in the engines.
type stats struct {
	// live state
	running, waiting, used, evictable, available, pool, decodeSumSeqLens int
	cacheHitRate                                                         float64

	// SGLang: decode-log-interval window
	winSteps                                 int
	winTokens, winBatch, winAccepted, winGen float64
	winTime                                  float64
	specAcceptLength, specAcceptRate, genTP  float64

	// SGLang tokenizer counters (at request end)
	promptTokens, genTokens, cachedTokens, requests, aborted, verifyCalls float64
	// scheduler counters
	retracted, retractedIn, retractedOut float64
	rtPrefillCompute, rtPrefillCache     float64
	rtDecode                             float64
	fwdPrefill, fwdDecode                float64
	decodePasses                         float64
	lifeBatch, lifeAccepted              float64 // for avg_spec_accept_length

	// vLLM counters (per iteration unless noted)
	vPrompt, vGen, prefixQueries, prefixHits, preemptions float64
	// prompt tokens by source, at a request's first token (vLLM's
	// prompt_tokens_by_source): computed, from the device's prefix cache,
	// from the host tier (a KV connector's transfer)
	srcCompute, srcLocal, srcExternal float64
	success                           map[string]float64 // at request end
	drafts, draftTokens, accepted     float64
	perPos                            []float64

	ttft, itl, e2e, queue, promptHist, genHist         *histogram
	tpot, inference, prefill, decode, iterTok, maxToks *histogram
}

func (s *stats) init(c *Config) {
	s.success = map[string]float64{"stop": 0, "length": 0, "abort": 0}
	if k := c.Spec.MaxDrafts(); c.Spec.Enabled() {
		s.perPos = make([]float64, k)
	}
	if c.Engine == configs.SGLang {
		s.ttft, s.itl, s.e2e = newHistogram(sglangTTFTBuckets), newHistogram(sglangITLBuckets), newHistogram(sglangE2EBuckets)
		s.queue = newHistogram(sglangQueueBucket)
		s.promptHist, s.genHist = newHistogram(tokenBuckets), newHistogram(tokenBuckets)
		return
	}
	s.ttft, s.itl, s.e2e = newHistogram(vllmTTFTBuckets), newHistogram(vllmITLBuckets), newHistogram(vllmReqBuckets)
	s.queue, s.inference = newHistogram(vllmReqBuckets), newHistogram(vllmReqBuckets)
	s.prefill, s.decode = newHistogram(vllmReqBuckets), newHistogram(vllmReqBuckets)
	s.tpot = newHistogram(vllmITLBuckets)
	s.promptHist, s.genHist = newHistogram(vllmTokenBuckets), newHistogram(vllmTokenBuckets)
	s.iterTok, s.maxToks = newHistogram(vllmTokenBuckets), newHistogram(vllmTokenBuckets)
}

func (s *stats) onAdmit(c *Config, q *simRequest, now float64) {
	if c.Engine == configs.SGLang {
		s.queue.observe(now-q.arrival, 1)
		return
	}
	s.prefixQueries += float64(q.prompt)
	s.prefixHits += float64(q.cached)
}

// onTokens records n tokens of q produced at end; verify marks a decode
// (speculative verify) step that accepted the given draft tokens.
func (s *stats) onTokens(c *Config, q *simRequest, n, accepted int, verify bool, end float64) {
	if q.lastToken < 0 {
		s.ttft.observe(end-q.arrival, 1)
		if c.Engine == configs.VLLM {
			s.vPrompt += float64(q.prompt)
			s.srcCompute += float64(q.prompt - q.cached)
			s.srcLocal += float64(q.cached - q.fromHost)
			s.srcExternal += float64(q.fromHost)
		}
	} else if n > 0 {
		gap := end - q.lastToken
		if c.Engine == configs.SGLang {
			s.itl.observe(gap/float64(n), n)
		} else {
			s.itl.observe(gap, 1)
		}
	}
	if c.Engine != configs.VLLM {
		return
	}
	s.vGen += float64(n)
	if verify && s.perPos != nil {
		s.drafts++
		s.draftTokens += float64(len(s.perPos))
		s.accepted += float64(accepted)
		for i := range accepted {
			s.perPos[i]++
		}
	}
}

func (s *stats) onPrefillBatch(c *Config, computed, cached int, dur float64) {
	s.rtPrefillCompute += float64(computed)
	s.rtPrefillCache += float64(cached)
	s.fwdPrefill += dur
	if computed+cached > 0 {
		s.cacheHitRate = float64(cached) / float64(cached+computed)
	}
	if c.Engine == configs.VLLM {
		s.iterTok.observe(float64(computed), 1)
	}
}

func (s *stats) onDecodeBatch(c *Config, batch, accepted int, dur float64) {
	gen := float64(batch + accepted)
	s.rtDecode += gen
	s.fwdDecode += dur
	s.decodePasses++
	s.lifeBatch += float64(batch)
	s.lifeAccepted += float64(accepted)
	if c.Engine == configs.VLLM {
		s.iterTok.observe(gen, 1)
		return
	}
	s.winSteps++
	s.winBatch += float64(batch)
	s.winAccepted += float64(accepted)
	s.winGen += gen
	s.winTime += dur
	if s.winSteps >= c.DecodeLogInterval {
		s.genTP = s.winGen / max(s.winTime, 1e-9)
		if c.Spec.Enabled() {
			s.specAcceptLength = (s.winAccepted + s.winBatch) / s.winBatch
			s.specAcceptRate = s.winAccepted / (s.winBatch * float64(max(c.Spec.MaxDrafts(), 1)))
		}
		s.winSteps, s.winBatch, s.winAccepted, s.winGen, s.winTime = 0, 0, 0, 0, 0
	}
}

func (s *stats) onFinish(c *Config, q *simRequest, end float64) {
	s.e2e.observe(end-q.arrival, 1)
	s.promptHist.observe(float64(q.prompt), 1)
	s.genHist.observe(float64(q.generated), 1)
	if c.Engine == configs.SGLang {
		s.promptTokens += float64(q.prompt)
		s.genTokens += float64(q.generated)
		s.cachedTokens += float64(q.cached)
		s.requests++
		if c.Spec.Enabled() {
			s.verifyCalls += float64(q.verifies)
		}
		return
	}
	s.success[q.reason]++
	s.queue.observe(q.admitted-q.arrival, 1)
	s.inference.observe(end-q.admitted, 1)
	s.prefill.observe(q.firstToken-q.admitted, 1)
	s.decode.observe(end-q.firstToken, 1)
	if q.generated > 1 {
		s.tpot.observe((end-q.firstToken)/float64(q.generated-1), 1)
	}
	s.maxToks.observe(float64(q.maxTokens), 1)
}

func (s *stats) onAbort(c *Config, q *simRequest, now float64) {
	if c.Engine == configs.SGLang {
		s.aborted++
		return
	}
	s.success["abort"]++
}

func (s *stats) onRetract(c *Config, q *simRequest) {
	s.retracted++
	s.preemptions++
	s.retractedIn += float64(q.prompt)
	s.retractedOut += float64(q.generated)
}
