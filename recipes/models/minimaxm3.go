package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// minimaxM3Spec is MiniMax-M3's EAGLE3 drafter (GQA variant), 3 tokens.
func minimaxM3Spec() recipes.Speculation {
	return recipes.Speculation{
		VLLM: &recipes.VLLMSpecConfig{
			Method: "eagle3", Model: "Inferact/MiniMax-M3-EAGLE3-GQA", NumSpeculativeTokens: 3, AttentionBackend: "TRITON_ATTN",
		},
		Golden: recipes.GoldenRef{File: "minimaxm3_eagle3_gqa", Model: "minimax-m3", Thinking: configs.ThinkingOn},
	}
}

// minimaxM3Client is the replay client of the MiniMax-M3 recipes.
var minimaxM3Client = recipes.Client{
	ApplyChatTemplate: true, ServerMetrics: true, MetricsURLEnv: true, RequiredMetricPrefix: "vllm:",
}

// minimaxM3Env is the environment every MiniMax-M3 recipe exports.
func minimaxM3Env(extra ...recipes.EnvVar) []recipes.EnvVar {
	return append([]recipes.EnvVar{
		recipes.Env("PYTHONNOUSERSITE", "1"),
		recipes.Env("VLLM_ENGINE_READY_TIMEOUT_S", "3600"),
		recipes.Env("VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", "1800"),
		recipes.Env("VLLM_USE_BREAKABLE_CUDAGRAPH", "0"),
	}, extra...)
}

// thinkingEnabled forces MiniMax-M3's thinking mode through the chat
// template (the golden AL is the thinking-on curve).
var thinkingEnabled = map[string]string{"thinking_mode": "enabled"}
