package simengine

import (
	"math"
	"math/rand/v2"
)

// acceptor draws the number of draft tokens a verify step accepts.
// Position i (0-based) is accepted with probability rates[i] given that
// every earlier position was (a conditional rate), so the expected tokens
// per step (accepted + bonus) is 1 + r0 + r0*r1 + ... That is each
// request's own draw: vLLM's synthetic rejection sampler (its
// unconditional rates turned conditional, as its kernel takes them), or
// real drafts. SGLang's simulated acceptance (method set) instead draws
// one length per verify step and gives it to every request of the batch,
// as its generate_simulated_accept_index does: batch draws it.
type acceptor struct {
	rates  []float64
	method string  // Spec.AcceptMethod; "" draws per request
	length float64 // Spec.AcceptLength, clamped to [1, drafts+1]
}

// newAcceptor builds the draw for a Spec. A synthetic acceptance length
// without a method is vLLM's: it resolves to the minimum-variance
// schedule (minVarianceRates); synthetic rates are vLLM's unconditional
// ones, one per draft (a config with another count is refused: Spec.
// normalize; a Spec built in code with fewer accepts no draft past them);
// without either, real drafts accept each position with
// DefaultAcceptRate.
func newAcceptor(s Spec) acceptor {
	k := s.MaxDrafts()
	if !s.Enabled() || k == 0 {
		return acceptor{}
	}
	var rates []float64
	switch {
	case s.AcceptLength > 0:
		rates = conditional(minVarianceRates(s.AcceptLength, k))
	case len(s.AcceptRates) > 0:
		unconditional := make([]float64, k)
		copy(unconditional, s.AcceptRates)
		rates = conditional(unconditional)
	default:
		rates = make([]float64, k)
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

// minVarianceRates is vLLM's resolution of a synthetic acceptance length
// al over k drafts (SpeculativeConfig._acceptance_length_to_rates): the
// unconditional rates of the minimum-variance schedule, every draft
// accepted up to al-1's whole part, the next with its fraction, none
// after (2.6 over 3: 1, 0.6, 0), so a step accepts al-1 rounded down or
// up.
func minVarianceRates(al float64, k int) []float64 {
	drafts := min(max(al, 1), float64(k+1)) - 1
	whole := int(drafts)
	rates := make([]float64, k)
	for i := range rates {
		switch {
		case i < whole:
			rates[i] = 1
		case i == whole:
			rates[i] = drafts - float64(whole)
		}
	}
	return rates
}

// conditional turns unconditional per-position rates (position i's: the
// odds that the first i+1 drafts are all accepted, non-increasing) into
// the rate of position i given every earlier one was accepted.
func conditional(unconditional []float64) []float64 {
	out := make([]float64, len(unconditional))
	prev := 1.0
	for i, u := range unconditional {
		if prev > 0 {
			out[i] = min(u/prev, 1)
		}
		prev = u
	}
	return out
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
