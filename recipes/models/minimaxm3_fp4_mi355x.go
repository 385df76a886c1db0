package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// minimaxM3FP4MI355X replaces benchmarks/single_node/agentic/minimaxm3_fp4_mi355x_mtp.sh
// (the MI355X launcher falls back to it from the _vllm_ name): AITER MoE,
// quick-reduce INT4, the index-cache override, no reasoning parser, and
// LMCache servers on DRAM rows.
//
// Not modelled: the /dev/shm capacity check before the LMCache servers
// start, and the LMCache wheel install.
func minimaxM3FP4MI355X() *recipes.Recipe {
	return &recipes.Recipe{
		Name:           "minimaxm3_fp4_mi355x_mtp",
		Keys:           []string{"minimaxm3-fp4-mi355x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "server_command.txt",
		CopyHIPDevices: true,
		Env: minimaxM3Env(
			recipes.Env("VLLM_ROCM_USE_AITER", "1"),
			recipes.Env("VLLM_ROCM_USE_AITER_MOE", "1"),
			recipes.Env("VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS", "1"),
			recipes.EnvFn("VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT", func(c *recipes.Ctx) string {
				if c.TP == 4 {
					return "1"
				}
				return "0"
			}),
			recipes.Env("VLLM_ROCM_QUICK_REDUCE_QUANTIZATION", "INT4"),
			recipes.Env("VLLM_ROCM_QUICK_REDUCE_CAST_BF16_TO_FP16", "0"),
			recipes.Env("VLLM_ROCM_QUICK_REDUCE_QUANTIZATION_MIN_SIZE_KB", "256"),
		),
		Parallel: recipes.Parallel{EP: recipes.EPAlways},
		Spec:     minimaxM3Spec(),
		Args: []recipes.Arg{
			recipes.ParallelArgs,
			recipes.Flag("--trust-remote-code", nil),
			recipes.Flag("--block-size", 128),
			recipes.Flag("--gpu-memory-utilization", 0.85),
			recipes.Flag("--enable-chunked-prefill", nil),
			recipes.Flag("--max-num-batched-tokens", 32768),
			recipes.Flag("--language-model-only", nil),
			recipes.Flag("--enable-prefix-caching", nil),
			recipes.Flag("--attention-backend", "TRITON_ATTN"),
			recipes.Flag("--moe-backend", "aiter"),
			recipes.Flag("--kv-cache-dtype", "fp8"),
			recipes.Flag("--tool-call-parser", "minimax_m3"),
			recipes.Flag("--enable-auto-tool-choice", nil),
			minimaxM3ROCmServing,
			recipes.Flag("--hf-overrides", map[string]any{"text_config": map[string]any{"use_index_cache": true, "index_topk_freq": 4}}),
			recipes.SpecArgs,
			recipes.OffloadArgs,
		},
		Offload: []recipes.Offload{recipes.LMCache()},
		// --max-num-seqs 2×conc is an upper bound a smaller load never reaches (vLLM sizes graph capture from it too).
		ArmServer: "--max-num-seqs 2×conc only bounds admission and graph capture; a smaller load stays below it",
		Client:    minimaxM3Client,
	}
}
