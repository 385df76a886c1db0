package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// qwen35BlackwellSGLang is the shared shape of InferenceX's four Blackwell
// Qwen3.5 SGLang scripts, benchmarks/single_node/agentic/
// qwen3.5_{fp8,fp4}_{b200,b300}_sglang_mtp.sh: NEXTN speculation, TRT-LLM
// attention and MoE kernels, and HiCache sized from the DRAM budget after
// reserving 1 GB per rank. They differ only in the quantization flags and
// in whether TP2 keeps SGLang's single tokenizer worker (every script but
// the FP8 B200 one passes --tokenizer-worker-num 6 only from TP4 on).
func qwen35BlackwellSGLang(name string, keys []string, quant []recipes.Arg, tokenizerFromTP4 bool) *recipes.Recipe {
	tokenizer := recipes.Flag("--tokenizer-worker-num", 6)
	if tokenizerFromTP4 {
		tokenizer = tokenizer.If(recipes.TPAtLeast(4))
	}
	args := []recipes.Arg{
		recipes.Flag("--trust-remote-code", nil),
		recipes.ParallelArgs,
		recipes.Flag("--enable-symm-mem", nil),
	}
	args = append(args, quant...)
	args = append(args,
		qwen35CacheDtypes,
		recipes.Flag("--attention-backend", "trtllm_mha"),
		recipes.Flag("--moe-runner-backend", "flashinfer_trtllm"),
		recipes.FlagFn("--cuda-graph-max-bs", recipes.ConcCapped(64)),
		recipes.FlagFn("--max-running-requests", recipes.TwiceConc),
		recipes.Flag("--max-prefill-tokens", 16384),
		recipes.Flag("--chunked-prefill-size", 16384),
		recipes.Flag("--mem-fraction-static", 0.80),
		recipes.Flag("--stream-interval", 50),
		recipes.Flag("--scheduler-recv-interval", 10),
		tokenizer,
		qwen35SGLangTail,
		recipes.OffloadArgs,
	)
	return &recipes.Recipe{
		Name:          name,
		Keys:          keys,
		Engine:        configs.SGLang,
		EngineVersion: "v0.5.16",
		CommandFile:   "sglang_command.txt",
		Env: []recipes.EnvVar{
			recipes.Env("TORCH_CUDA_ARCH_LIST", "10.0"),
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("NCCL_NVLS_ENABLE", "1"),
			recipes.Env("SGL_ENABLE_JIT_DEEPGEMM", "false"),
			recipes.Env("SGLANG_ENABLE_FLASHINFER_GEMM", "true"),
			recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "1800"),
		},
		Parallel: recipes.Parallel{DataParallelOne: true, EP: recipes.EPAlways},
		Spec:     qwen35EAGLE("NEXTN"),
		Args:     args,
		Offload:  []recipes.Offload{recipes.HiCacheSized(recipes.HiCacheSizeReserving)},
		// Both conc-dependent flags are upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests 2×conc and --cuda-graph-max-bs min(conc,64) only bound admission and graph capture; a smaller load stays below both",
		Client:    recipes.Client{Loader: recipes.Loader062126256k, ServerMetrics: true},
	}
}

var (
	qwen35FP8Quant = []recipes.Arg{recipes.Flag("--quantization", "fp8")}
	qwen35FP4Quant = []recipes.Arg{recipes.Flag("--quantization", "modelopt_fp4"), recipes.Flag("--fp4-gemm-backend", "flashinfer_cutlass")}
)

// qwen35FP8B300SGLang replaces qwen3.5_fp8_b300_sglang_mtp.sh.
func qwen35FP8B300SGLang() *recipes.Recipe {
	return qwen35BlackwellSGLang("qwen3.5_fp8_b300_sglang_mtp",
		[]string{"qwen3.5-fp8-b300-sglang-agentic-mtp", "qwen3.5-fp8-b300-sglang-agentic-power-ab"}, qwen35FP8Quant, true)
}

// qwen35FP8B200SGLang replaces qwen3.5_fp8_b200_sglang_mtp.sh (six
// tokenizer workers at every TP).
func qwen35FP8B200SGLang() *recipes.Recipe {
	return qwen35BlackwellSGLang("qwen3.5_fp8_b200_sglang_mtp",
		[]string{"qwen3.5-fp8-b200-sglang-agentic-mtp"}, qwen35FP8Quant, false)
}

// qwen35FP4B300SGLang replaces qwen3.5_fp4_b300_sglang_mtp.sh.
func qwen35FP4B300SGLang() *recipes.Recipe {
	return qwen35BlackwellSGLang("qwen3.5_fp4_b300_sglang_mtp",
		[]string{"qwen3.5-fp4-b300-sglang-agentic-mtp", "qwen3.5-fp4-b300-sglang-agentic-power-ab"}, qwen35FP4Quant, true)
}

// qwen35FP4B200SGLang replaces qwen3.5_fp4_b200_sglang_mtp.sh.
func qwen35FP4B200SGLang() *recipes.Recipe {
	return qwen35BlackwellSGLang("qwen3.5_fp4_b200_sglang_mtp",
		[]string{"qwen3.5-fp4-b200-sglang-agentic-mtp"}, qwen35FP4Quant, true)
}
