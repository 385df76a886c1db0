package recipes

import "sweep/configs"

// minimaxM3FP8MI300X replaces benchmarks/single_node/agentic/minimaxm3_fp8_mi300x_mtp.sh,
// with LMCache servers (one per TP rank) on DRAM rows.
//
// Not modelled: the LMCache 0.5.3 ROCm wheel install the script does inside
// the container; the sidecar commands assume lmcache is installed.
func minimaxM3FP8MI300X() *Recipe {
	return &Recipe{
		Name:           "minimaxm3_fp8_mi300x_mtp",
		Keys:           []string{"minimaxm3-fp8-mi300x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "server_command.txt",
		CopyHIPDevices: true,
		Env: minimaxM3Env(
			Env("VLLM_ROCM_USE_AITER", "1"),
			Env("VLLM_ROCM_USE_AITER_MHA", "0"),
			Env("TORCH_BLAS_PREFER_HIPBLASLT", "1"),
			Env("NCCL_MIN_NCHANNELS", "112"),
			Env("GPU_MAX_HW_QUEUES", "2"),
		),
		Parallel: Parallel{EP: EPAlways},
		Spec:     minimaxM3Spec(),
		Args: []Arg{
			ParallelArgs,
			Flag("--trust-remote-code", nil),
			Flag("--block-size", 128),
			Flag("--gpu-memory-utilization", 0.90),
			Flag("--enable-chunked-prefill", nil),
			Flag("--max-num-batched-tokens", 16384),
			Flag("--language-model-only", nil),
			Flag("--enable-prefix-caching", nil),
			Flag("--attention-backend", "TRITON_ATTN"),
			Flag("--kv-cache-dtype", "fp8"),
			minimaxM3Parsers,
			minimaxM3ROCmServing,
			SpecArgs,
			OffloadArgs,
		},
		Offload: []Offload{LMCache()},
		// --max-num-seqs 2×conc is an upper bound a smaller load never reaches.
		ArmServer: "--max-num-seqs 2×conc only bounds admission and graph capture; a smaller load stays below it",
		Client:    minimaxM3Client,
	}
}
