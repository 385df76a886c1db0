package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// kimiK3FP4MI355X replaces benchmarks/single_node/agentic/kimik3_fp4_mi355x_mtp.sh
// (the MI355X launcher falls back to it from the _vllm_ name): DSpark
// speculation with 2 tokens, a fixed --max-num-seqs 20, graph capture up to
// 60, and vLLM's simple CPU offload on DRAM rows. TP must be 8.
//
// Not modelled: apply_k3_container_patches.sh (Triton, aiter and vLLM
// patches applied inside the container), the MEC firmware probe that sets
// HSA_NO_SCRATCH_RECLAIM=1 on old firmware, and the GPU-clean wait.
func kimiK3FP4MI355X() *recipes.Recipe {
	sizes := make([]int, 60)
	for i := range sizes {
		sizes[i] = i + 1
	}
	return &recipes.Recipe{
		Name:           "kimik3_fp4_mi355x_mtp",
		Keys:           []string{"kimik3-fp4-mi355x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "vllm_command.txt",
		CopyHIPDevices: true,
		Env: []recipes.EnvVar{
			recipes.Env("VLLM_ROCM_AITER_MLA_ASM_PADDING", "asm"),
			recipes.Env("VLLM_ROCM_USE_AITER", "1"),
			recipes.Env("SAFETENSORS_FAST_GPU", "1"),
			recipes.Env("VLLM_ROCM_USE_AITER_MOE_SITUV2_A8W4", "1"),
			recipes.Env("AITER_BF16_FP8_MOE_BOUND", "0"),
			recipes.Env("VLLM_USE_BREAKABLE_CUDAGRAPH", "0"),
			recipes.Env("VLLM_ENGINE_READY_TIMEOUT_S", "7200"),
			recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", "1200"),
		},
		Parallel: recipes.Parallel{EP: recipes.EPAlways},
		Spec: recipes.Speculation{
			VLLM: &recipes.VLLMSpecConfig{
				Model: "Inferact/Kimi-K3-DSpark", NumSpeculativeTokens: 2, Method: "dspark",
				AttentionBackend: "TRITON_MLA", KVCacheDtype: "auto", DraftSampleMethod: "probabilistic",
			},
			EvalRejectionSampleMethod: "block",
			Golden: recipes.GoldenRef{
				File:  "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method",
				Model: "kimi-k3", Thinking: configs.ThinkingOn,
			},
		},
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.Flag("--moe-backend", "auto"),
			recipes.ParallelArgs,
			recipes.Flag("--load-format", "fastsafetensors"),
			recipes.Flag("--gpu-memory-utilization", 0.9),
			recipes.Flag("--language-model-only", nil),
			recipes.Flag("--max-num-seqs", 20),
			recipes.Flag("--enable-auto-tool-choice", nil),
			recipes.Flag("--tool-call-parser", "kimi_k3"),
			recipes.Flag("--reasoning-parser", "kimi_k3"),
			recipes.Flag("--max-model-len", 1048576),
			recipes.Flag("--enable-prefix-caching", nil),
			recipes.Flag("--kv-cache-dtype", "fp8"),
			recipes.Flag("--compilation-config", recipes.VLLMCompilationConfig{
				Mode: 3, CUDAGraphMode: "FULL_AND_PIECEWISE", MaxCUDAGraphCaptureSize: 60,
				CustomOps: []string{"+fused_rms_norm_gated"}, CUDAGraphCaptureSizes: sizes,
			}),
			recipes.SpecArgs,
			recipes.OffloadArgs,
		},
		Offload: []recipes.Offload{recipes.VLLMSimpleCPU(recipes.Env("PYTHONHASHSEED", "42"))},
		// No ArmServer needed: no engine flag depends on conc, so every point of an arm has the same server anyway.
		Client: recipes.Client{},
		Check:  recipes.RequireTP(8),
	}
}
