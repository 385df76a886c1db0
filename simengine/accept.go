package simengine

import (
	"math"
	"math/rand/v2"
)

// acceptor draws the number of draft tokens a verify step accepts.
// Position i (0-based) is accepted with probability rates[i] given that
// every earlier position was, so the expected tokens per step (accepted +
// bonus) is 1 + r0 + r0*r1 + ... That is each request's own draw (vLLM's
// synthetic rejection sampler, or real drafts). SGLang's simulated
// acceptance (method set) instead draws one length per verify step and
// gives it to every request of the batch, as its
// generate_simulated_accept_index does: batch draws it.
type acceptor struct {
	rates  []float64
	method string  // Spec.AcceptMethod; "" draws per request
	length float64 // Spec.AcceptLength, clamped to [1, drafts+1]
}

// newAcceptor builds the draw for a Spec. A synthetic acceptance length
// AL is met exactly in expectation with one constant rate p solving
// 1 + p + ... + p^k = AL (a truncated geometric, like real drafts: early
// positions accepted more often in absolute terms).
func newAcceptor(s Spec) acceptor {
	k := s.MaxDrafts()
	if !s.Enabled() || k == 0 {
		return acceptor{}
	}
	rates := make([]float64, k)
	switch {
	case s.AcceptLength > 0:
		p := solveRate(s.AcceptLength, k)
		for i := range rates {
			rates[i] = p
		}
	case len(s.AcceptRates) > 0:
		for i := range rates {
			rates[i] = s.AcceptRates[min(i, len(s.AcceptRates)-1)]
		}
	default:
		for i := range rates {
			rates[i] = DefaultAcceptRate
		}
	}
	a := acceptor{rates: rates, method: s.AcceptMethod}
	if a.method != "" {
		a.length = min(max(s.AcceptLength, 1), float64(k+1))
	}
	return a
}

// on reports whether verify steps accept drafts (speculative decoding).
func (a acceptor) on() bool { return a.rates != nil }

// batch draws the accepted drafts every request of one verify step takes
// (SGLang's simulated acceptance); shared is false where each request
// draws its own (draw).
func (a acceptor) batch(rng *rand.Rand) (accepted int, shared bool) {
	k := len(a.rates)
	switch a.method {
	case AcceptMatchExpected:
		lower := math.Floor(a.length)
		n := int(lower)
		if n < k+1 && rng.Float64() < a.length-lower {
			n++
		}
		return n - 1, true
	case AcceptMultinomial:
		n := int(math.Round(min(max(a.length+rng.NormFloat64(), 1), float64(k+1))))
		return n - 1, true
	}
	return 0, false
}

// expectedLength is the mean tokens per verify step (accepted + bonus).
func (a acceptor) expectedLength() float64 {
	total, prob := 1.0, 1.0
	for _, r := range a.rates {
		prob *= r
		total += prob
	}
	return total
}

// solveRate finds p in [0, 1] with sum_{i=0..k} p^i = al by bisection.
func solveRate(al float64, k int) float64 {
	if al >= float64(k+1) {
		return 1
	}
	if al <= 1 {
		return 0
	}
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		sum, pw := 1.0, 1.0
		for range k {
			pw *= mid
			sum += pw
		}
		if sum < al {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// draw returns the accepted draft tokens of one verify step; positions
// 0..n-1 were accepted.
func (a acceptor) draw(rng *rand.Rand) int {
	n := 0
	for _, r := range a.rates {
		if rng.Float64() >= r {
			break
		}
		n++
	}
	return n
}
