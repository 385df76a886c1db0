package recipes

import "sweep/configs"

// minimaxM3FP8MI325X replaces benchmarks/single_node/agentic/minimaxm3_fp8_mi325x_mtp.sh
// (GPU-resident KV only, no AITER switches, no expert-parallel handling).
func minimaxM3FP8MI325X() *Recipe {
	return &Recipe{
		Name:           "minimaxm3_fp8_mi325x_mtp",
		Keys:           []string{"minimaxm3-fp8-mi325x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "server_command.txt",
		CopyHIPDevices: true,
		Env:            minimaxM3Env(),
		Parallel:       Parallel{EP: EPIgnored},
		Spec:           minimaxM3Spec(),
		Args: []Arg{
			ParallelArgs,
			Flag("--gpu-memory-utilization", 0.90),
			Flag("--kv-cache-dtype", "fp8"),
			Flag("--block-size", 128),
			Flag("--language-model-only", nil),
			Flag("--attention-backend", "TRITON_ATTN"),
			Flag("--enable-prefix-caching", nil),
			Flag("--enable-chunked-prefill", nil),
			Flag("--max-num-batched-tokens", 32768),
			FlagFn("--max-num-seqs", TwiceConc),
			SpecArgs,
			minimaxM3Parsers,
			Flag("--default-chat-template-kwargs", thinkingEnabled),
			Flag("--trust-remote-code", nil),
			Flag("--stream-interval", 20),
		},
		// --max-num-seqs 2×conc is an upper bound a smaller load never reaches.
		ArmServer: "--max-num-seqs 2×conc only bounds admission and graph capture; a smaller load stays below it",
		Client:    minimaxM3Client,
	}
}
