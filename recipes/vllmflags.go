package recipes

import "sweep/internal/pyjson"

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

// VLLMCompilationConfig is vLLM's --compilation-config object. Empty fields
// are left out.
type VLLMCompilationConfig struct {
	Mode                    int      `json:"mode"`
	CUDAGraphMode           string   `json:"cudagraph_mode,omitempty"`
	MaxCUDAGraphCaptureSize int      `json:"max_cudagraph_capture_size,omitempty"`
	CustomOps               []string `json:"custom_ops,omitempty"`
	CUDAGraphCaptureSizes   []int    `json:"cudagraph_capture_sizes,omitempty"`
}
