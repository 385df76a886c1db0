package recipes

import "sweep/configs"

// minimaxM3FP4MI355X replaces benchmarks/single_node/agentic/minimaxm3_fp4_mi355x_mtp.sh
// (the MI355X launcher falls back to it from the _vllm_ name): AITER MoE,
// quick-reduce INT4, the index-cache override, no reasoning parser, and
// LMCache servers on DRAM rows.
//
// Not modelled: the /dev/shm capacity check before the LMCache servers
// start, and the LMCache wheel install.
func minimaxM3FP4MI355X() *Recipe {
	return &Recipe{
		Name:           "minimaxm3_fp4_mi355x_mtp",
		Keys:           []string{"minimaxm3-fp4-mi355x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "server_command.txt",
		CopyHIPDevices: true,
		Env: minimaxM3Env(
			Env("VLLM_ROCM_USE_AITER", "1"),
			Env("VLLM_ROCM_USE_AITER_MOE", "1"),
			Env("VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS", "1"),
			EnvFn("VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT", func(c *Ctx) string {
				if c.TP == 4 {
					return "1"
				}
				return "0"
			}),
			Env("VLLM_ROCM_QUICK_REDUCE_QUANTIZATION", "INT4"),
			Env("VLLM_ROCM_QUICK_REDUCE_CAST_BF16_TO_FP16", "0"),
			Env("VLLM_ROCM_QUICK_REDUCE_QUANTIZATION_MIN_SIZE_KB", "256"),
		),
		Parallel: Parallel{EP: EPAlways},
		Spec:     minimaxM3Spec(),
		Args: []Arg{
			ParallelArgs,
			Flag("--trust-remote-code", nil),
			Flag("--block-size", 128),
			Flag("--gpu-memory-utilization", 0.85),
			Flag("--enable-chunked-prefill", nil),
			Flag("--max-num-batched-tokens", 32768),
			Flag("--language-model-only", nil),
			Flag("--enable-prefix-caching", nil),
			Flag("--attention-backend", "TRITON_ATTN"),
			Flag("--moe-backend", "aiter"),
			Flag("--kv-cache-dtype", "fp8"),
			Flag("--tool-call-parser", "minimax_m3"),
			Flag("--enable-auto-tool-choice", nil),
			minimaxM3ROCmServing,
			Flag("--hf-overrides", map[string]any{"text_config": map[string]any{"use_index_cache": true, "index_topk_freq": 4}}),
			SpecArgs,
			OffloadArgs,
		},
		Offload: []Offload{LMCache()},
		// --max-num-seqs 2×conc is an upper bound a smaller load never reaches (vLLM sizes graph capture from it too).
		ArmServer: "--max-num-seqs 2×conc only bounds admission and graph capture; a smaller load stays below it",
		Client:    minimaxM3Client,
	}
}
