package recipes

import (
	"fmt"

	"sweep/configs"
	"sweep/internal/pyjson"
)

// Enabled reports whether the recipe uses speculative decoding.
func (s Speculation) Enabled() bool { return s.Algorithm != "" || s.VLLM != nil }

// NumSpecTokens is the number of speculative tokens per step, the key of
// the golden AL curve (SGLang EAGLE/NEXTN steps; vLLM
// num_speculative_tokens).
func (s Speculation) NumSpecTokens() int {
	if s.VLLM != nil {
		return s.VLLM.NumSpeculativeTokens
	}
	return s.Steps
}

// goldenAL looks the recipe's golden AL up in g.
func (s Speculation) goldenAL(g *configs.GoldenAL) (float64, error) {
	ref := s.Golden
	set, ok := g.Set(ref.File)
	if !ok {
		return 0, fmt.Errorf("golden AL file %s.yaml not found", ref.File)
	}
	k := s.NumSpecTokens()
	al, ok := set.AL(ref.Model, ref.Thinking, k)
	if !ok {
		return 0, fmt.Errorf("golden AL %s: no value for model %s, %s, %d speculative tokens", set.File, ref.Model, ref.Thinking, k)
	}
	return al, nil
}

// GoldenAL is the golden acceptance length a benchmark point of the
// recipe is judged against, looked up in g (nil: the embedded curves,
// which planning uses by default): nil when the recipe has no
// speculative decoding.
func (r *Recipe) GoldenAL(g *configs.GoldenAL) (*float64, error) {
	if !r.Spec.Enabled() {
		return nil, nil
	}
	if g == nil {
		var err error
		if g, err = configs.DefaultGoldenAL(); err != nil {
			return nil, err
		}
	}
	al, err := r.Spec.goldenAL(g)
	if err != nil {
		return nil, err
	}
	return &al, nil
}

// SpecArgs expands the speculative decoding flags. For vLLM, benchmark rows
// get the synthetic acceptance sampler at the golden AL inside
// --speculative-config (rejection_sample_method "synthetic",
// synthetic_acceptance_length AL); eval-only rows run real acceptance.
// SGLang's synthetic acceptance is environment (see syntheticAcceptanceEnv).
var SpecArgs = Arg{Name: "<speculative>", Expand: specArgs}

func specArgs(c *Ctx, r *Recipe) ([]Arg, error) {
	s := r.Spec
	if !s.Enabled() {
		return nil, nil
	}
	switch r.Engine.Facts().Spec {
	case configs.SpecByFlags:
		return []Arg{
			Flag("--speculative-algorithm", s.Algorithm),
			Flag("--speculative-num-steps", s.Steps),
			Flag("--speculative-eagle-topk", s.TopK),
			Flag("--speculative-num-draft-tokens", s.DraftTokens),
		}, nil
	case configs.SpecByConfig:
		if s.VLLM == nil {
			return nil, fmt.Errorf("recipe %s: vLLM speculation needs a VLLMSpecConfig", r.Name)
		}
		cfg := *s.VLLM
		if s.DraftModel != nil {
			cfg.Model = s.DraftModel(c)
		}
		if c.EvalOnly {
			cfg.RejectionSampleMethod = s.EvalRejectionSampleMethod
		} else {
			cfg.RejectionSampleMethod, cfg.SyntheticAcceptanceLength = "synthetic", pyjson.Float(c.GoldenAL)
		}
		return []Arg{Flag("--speculative-config", cfg)}, nil
	}
	return nil, errUnsupportedEngine(r)
}

// syntheticAcceptanceEnv is SGLang's synthetic acceptance: the engine
// accepts draft tokens so that the mean acceptance length is the golden AL.
// Only benchmark rows get it.
func syntheticAcceptanceEnv(c *Ctx, r *Recipe) map[string]string {
	env := r.Engine.Facts().SimulateAcceptanceEnv
	if env == nil || !r.Spec.Enabled() || c.EvalOnly {
		return nil
	}
	return env(c.GoldenAL)
}
