package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// minimaxM3FP8MI300X replaces benchmarks/single_node/agentic/minimaxm3_fp8_mi300x_mtp.sh,
// with LMCache servers (one per TP rank) on DRAM rows.
//
// Not modelled: the LMCache 0.5.3 ROCm wheel install the script does inside
// the container; the sidecar commands assume lmcache is installed.
func minimaxM3FP8MI300X() *recipes.Recipe {
	return &recipes.Recipe{
		Name:           "minimaxm3_fp8_mi300x_mtp",
		Keys:           []string{"minimaxm3-fp8-mi300x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "server_command.txt",
		CopyHIPDevices: true,
		Env: minimaxM3Env(
			recipes.Env("VLLM_ROCM_USE_AITER", "1"),
			recipes.Env("VLLM_ROCM_USE_AITER_MHA", "0"),
			recipes.Env("TORCH_BLAS_PREFER_HIPBLASLT", "1"),
			recipes.Env("NCCL_MIN_NCHANNELS", "112"),
			recipes.Env("GPU_MAX_HW_QUEUES", "2"),
		),
		Parallel: recipes.Parallel{EP: recipes.EPAlways},
		Spec:     minimaxM3Spec(),
		Args: []recipes.Arg{
			recipes.ParallelArgs,
			recipes.Flag("--trust-remote-code", nil),
			recipes.Flag("--block-size", 128),
			recipes.Flag("--gpu-memory-utilization", 0.90),
			recipes.Flag("--enable-chunked-prefill", nil),
			recipes.Flag("--max-num-batched-tokens", 16384),
			recipes.Flag("--language-model-only", nil),
			recipes.Flag("--enable-prefix-caching", nil),
			recipes.Flag("--attention-backend", "TRITON_ATTN"),
			recipes.Flag("--kv-cache-dtype", "fp8"),
			minimaxM3Parsers,
			minimaxM3ROCmServing,
			recipes.SpecArgs,
			recipes.OffloadArgs,
		},
		Offload: []recipes.Offload{recipes.LMCache()},
		// --max-num-seqs 2×conc is an upper bound a smaller load never reaches.
		ArmServer: "--max-num-seqs 2×conc only bounds admission and graph capture; a smaller load stays below it",
		Client:    minimaxM3Client,
	}
}
