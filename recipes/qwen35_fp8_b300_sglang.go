package recipes

// qwen35FP8B300SGLang replaces
// benchmarks/single_node/agentic/qwen3.5_fp8_b300_sglang_mtp.sh (NVIDIA
// B300): NEXTN speculation, TRT-LLM attention and MoE kernels, and HiCache
// sized from the DRAM budget after reserving 1 GB per rank.
func qwen35FP8B300SGLang() *Recipe {
	return &Recipe{
		Name:          "qwen3.5_fp8_b300_sglang_mtp",
		Keys:          []string{"qwen3.5-fp8-b300-sglang-agentic-mtp"},
		Engine:        SGLang,
		EngineVersion: "v0.5.16",
		CommandFile:   "sglang_command.txt",
		Env: []EnvVar{
			Env("TORCH_CUDA_ARCH_LIST", "10.0"),
			Env("PYTHONNOUSERSITE", "1"),
			Env("NCCL_NVLS_ENABLE", "1"),
			Env("SGL_ENABLE_JIT_DEEPGEMM", "false"),
			Env("SGLANG_ENABLE_FLASHINFER_GEMM", "true"),
			Env("SGLANG_TIMEOUT_KEEP_ALIVE", "1800"),
		},
		Parallel: Parallel{DataParallelOne: true, EP: EPAlways},
		Spec:     qwen35EAGLE("NEXTN"),
		Args: []Arg{
			Flag("--trust-remote-code", nil),
			ParallelArgs,
			Flag("--enable-symm-mem", nil).Unverified(schemaGap),
			Flag("--quantization", "fp8"),
			Flag("--kv-cache-dtype", "fp8_e4m3"),
			Flag("--mamba-ssm-dtype", "bfloat16"),
			Flag("--attention-backend", "trtllm_mha"),
			Flag("--moe-runner-backend", "flashinfer_trtllm"),
			FlagFn("--cuda-graph-max-bs", ConcCapped(64)),
			FlagFn("--max-running-requests", TwiceConc),
			Flag("--max-prefill-tokens", 16384),
			Flag("--chunked-prefill-size", 16384),
			Flag("--mem-fraction-static", 0.80),
			Flag("--stream-interval", 50),
			Flag("--scheduler-recv-interval", 10),
			Flag("--tokenizer-worker-num", 6).If(TPAtLeast(4)),
			FlagFn("--tokenizer-path", func(c *Ctx) string { return c.Model }),
			Flag("--reasoning-parser", "qwen3"),
			Flag("--tool-call-parser", "qwen3_coder"),
			SpecArgs,
			Flag("--enable-metrics", nil),
			Flag("--enable-cache-report", nil),
			OffloadArgs,
		},
		Offload: []Offload{HiCacheSized(HiCacheSizeReserving)},
		// Both conc-dependent flags are upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests 2×conc and --cuda-graph-max-bs min(conc,64) only bound admission and graph capture; a smaller load stays below both",
		Client:    Client{Loader: loader062126256k, ServerMetrics: true},
	}
}
