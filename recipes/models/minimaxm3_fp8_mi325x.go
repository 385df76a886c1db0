package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// minimaxM3FP8MI325X replaces benchmarks/single_node/agentic/minimaxm3_fp8_mi325x_mtp.sh
// (GPU-resident KV only, no AITER switches, no expert-parallel handling).
func minimaxM3FP8MI325X() *recipes.Recipe {
	return &recipes.Recipe{
		Name:           "minimaxm3_fp8_mi325x_mtp",
		Keys:           []string{"minimaxm3-fp8-mi325x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "server_command.txt",
		CopyHIPDevices: true,
		Env:            minimaxM3Env(),
		Parallel:       recipes.Parallel{EP: recipes.EPIgnored},
		Spec:           minimaxM3Spec(),
		Args: []recipes.Arg{
			recipes.ParallelArgs,
			recipes.Flag("--gpu-memory-utilization", 0.90),
			recipes.Flag("--kv-cache-dtype", "fp8"),
			recipes.Flag("--block-size", 128),
			recipes.Flag("--language-model-only", nil),
			recipes.Flag("--attention-backend", "TRITON_ATTN"),
			recipes.Flag("--enable-prefix-caching", nil),
			recipes.Flag("--enable-chunked-prefill", nil),
			recipes.Flag("--max-num-batched-tokens", 32768),
			recipes.FlagFn("--max-num-seqs", recipes.TwiceConc),
			recipes.SpecArgs,
			minimaxM3Parsers,
			recipes.Flag("--default-chat-template-kwargs", thinkingEnabled),
			recipes.Flag("--trust-remote-code", nil),
			recipes.Flag("--stream-interval", 20),
		},
		// --max-num-seqs 2×conc is an upper bound a smaller load never reaches.
		ArmServer: "--max-num-seqs 2×conc only bounds admission and graph capture; a smaller load stays below it",
		Client:    minimaxM3Client,
	}
}
