package recipes

import (
	"fmt"

	"sweep/configs"
	"sweep/internal/pyjson"
)

// Speculation is a recipe's speculative decoding setup. The zero value means
// none.
type Speculation struct {
	// Algorithm, Steps, TopK and DraftTokens are SGLang's
	// --speculative-algorithm (EAGLE, NEXTN), --speculative-num-steps,
	// --speculative-eagle-topk and --speculative-num-draft-tokens.
	Algorithm                string
	Steps, TopK, DraftTokens int
	// VLLM is vLLM's --speculative-config without the synthetic-acceptance
	// keys, which SpecArgs adds on benchmark rows.
	VLLM *VLLMSpecConfig
	// EvalRejectionSampleMethod replaces the synthetic rejection sampler on
	// eval-only rows ("block" for Kimi K3); "" drops the key.
	EvalRejectionSampleMethod string
	// DraftModel, when set, replaces VLLM.Model with a row-dependent path
	// (a draft head staged next to the target's weights).
	DraftModel func(*Ctx) string
	// Golden says where the golden acceptance length is looked up.
	Golden GoldenRef
}

// GoldenRef addresses one golden AL curve: file (without .yaml), model key
// and thinking mode. The number of speculative tokens comes from the
// speculation settings.
type GoldenRef struct {
	File, Model, Thinking string
}

// VLLMSpecConfig is vLLM's --speculative-config object. Empty fields are
// left out.
type VLLMSpecConfig struct {
	Method                string `json:"method,omitempty"`
	Model                 string `json:"model,omitempty"`
	NumSpeculativeTokens  int    `json:"num_speculative_tokens,omitempty"`
	AttentionBackend      string `json:"attention_backend,omitempty"`
	KVCacheDtype          string `json:"kv_cache_dtype,omitempty"`
	DraftSampleMethod     string `json:"draft_sample_method,omitempty"`
	RejectionSampleMethod string `json:"rejection_sample_method,omitempty"`
	// SyntheticAcceptanceLength is written as Python writes a float
	// (3.0, 2.78), as InferenceX's scripts do.
	SyntheticAcceptanceLength pyjson.Float `json:"synthetic_acceptance_length,omitempty"`
}

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

// VLLMCompilationConfig is vLLM's --compilation-config object. Empty fields
// are left out.
type VLLMCompilationConfig struct {
	Mode                    int      `json:"mode"`
	CUDAGraphMode           string   `json:"cudagraph_mode,omitempty"`
	MaxCUDAGraphCaptureSize int      `json:"max_cudagraph_capture_size,omitempty"`
	CustomOps               []string `json:"custom_ops,omitempty"`
	CUDAGraphCaptureSizes   []int    `json:"cudagraph_capture_sizes,omitempty"`
}
