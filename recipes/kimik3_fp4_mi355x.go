package recipes

import "sweep/configs"

// kimiK3FP4MI355X replaces benchmarks/single_node/agentic/kimik3_fp4_mi355x_mtp.sh
// (the MI355X launcher falls back to it from the _vllm_ name): DSpark
// speculation with 2 tokens, a fixed --max-num-seqs 20, graph capture up to
// 60, and vLLM's simple CPU offload on DRAM rows. TP must be 8.
//
// Not modelled: apply_k3_container_patches.sh (Triton, aiter and vLLM
// patches applied inside the container), the MEC firmware probe that sets
// HSA_NO_SCRATCH_RECLAIM=1 on old firmware, and the GPU-clean wait.
func kimiK3FP4MI355X() *Recipe {
	sizes := make([]int, 60)
	for i := range sizes {
		sizes[i] = i + 1
	}
	return &Recipe{
		Name:           "kimik3_fp4_mi355x_mtp",
		Keys:           []string{"kimik3-fp4-mi355x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "vllm_command.txt",
		CopyHIPDevices: true,
		Env: []EnvVar{
			Env("VLLM_ROCM_AITER_MLA_ASM_PADDING", "asm"),
			Env("VLLM_ROCM_USE_AITER", "1"),
			Env("SAFETENSORS_FAST_GPU", "1"),
			Env("VLLM_ROCM_USE_AITER_MOE_SITUV2_A8W4", "1"),
			Env("AITER_BF16_FP8_MOE_BOUND", "0"),
			Env("VLLM_USE_BREAKABLE_CUDAGRAPH", "0"),
			Env("VLLM_ENGINE_READY_TIMEOUT_S", "7200"),
			Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			Env("PYTHONNOUSERSITE", "1"),
			Env("VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", "1200"),
		},
		Parallel: Parallel{EP: EPAlways},
		Spec: Speculation{
			VLLM: &VLLMSpecConfig{
				Model: "Inferact/Kimi-K3-DSpark", NumSpeculativeTokens: 2, Method: "dspark",
				AttentionBackend: "TRITON_MLA", KVCacheDtype: "auto", DraftSampleMethod: "probabilistic",
			},
			EvalRejectionSampleMethod: "block",
			Golden: GoldenRef{
				File:  "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method",
				Model: "kimi-k3", Thinking: configs.ThinkingOn,
			},
		},
		Args: []Arg{
			Flag("--trust-remote-code", nil),
			Flag("--moe-backend", "auto"),
			ParallelArgs,
			Flag("--load-format", "fastsafetensors"),
			Flag("--gpu-memory-utilization", 0.9),
			Flag("--language-model-only", nil),
			Flag("--max-num-seqs", 20),
			Flag("--enable-auto-tool-choice", nil),
			Flag("--tool-call-parser", "kimi_k3"),
			Flag("--reasoning-parser", "kimi_k3"),
			Flag("--max-model-len", 1048576),
			Flag("--enable-prefix-caching", nil),
			Flag("--kv-cache-dtype", "fp8"),
			Flag("--compilation-config", VLLMCompilationConfig{
				Mode: 3, CUDAGraphMode: "FULL_AND_PIECEWISE", MaxCUDAGraphCaptureSize: 60,
				CustomOps: []string{"+fused_rms_norm_gated"}, CUDAGraphCaptureSizes: sizes,
			}),
			SpecArgs,
			OffloadArgs,
		},
		Offload: []Offload{VLLMSimpleCPU(Env("PYTHONHASHSEED", "42"))},
		// No ArmServer needed: no engine flag depends on conc, so every point of an arm has the same server anyway.
		Client: Client{},
		Check:  RequireTP(8),
	}
}
