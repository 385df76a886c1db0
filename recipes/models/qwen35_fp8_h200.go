package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// qwen35FP8H200 replaces benchmarks/single_node/agentic/qwen3.5_fp8_h200_mtp.sh,
// which serves both H200 Qwen3.5 keys (the launcher falls back from the
// _sglang_ name).
func qwen35FP8H200() *recipes.Recipe {
	return qwen35FP8Hopper("qwen3.5_fp8_h200_mtp", []string{"qwen3.5-fp8-h200-sglang-agentic-mtp", "qwen3.5-fp8-h200-sglang-agentic-hicache-mtp"}, 0.8)
}

// qwen35FP8H100 replaces benchmarks/single_node/agentic/qwen3.5_fp8_h100_mtp.sh
// (the H100 launcher never puts the framework in the name): the H200 script
// with --mem-fraction-static 0.75 for H100's 80 GB.
func qwen35FP8H100() *recipes.Recipe {
	return qwen35FP8Hopper("qwen3.5_fp8_h100_mtp", []string{"qwen3.5-fp8-h100-sglang-agentic-mtp"}, 0.75)
}

// qwen35FP8Hopper is the shared shape of the H100 and H200 Qwen3.5 FP8
// scripts. They pass no parsers and no request or graph sizing, and size
// HiCache as budget / TP / 2 host pools.
//
// Not modelled: the scripts edit SGLang's multi_tokenizer_mixin.py in the
// container before starting the server (cached_tokens_details), which
// sweep cannot do to an engine it does not own.
func qwen35FP8Hopper(name string, keys []string, memFraction float64) *recipes.Recipe {
	return &recipes.Recipe{
		Name:          name,
		Keys:          keys,
		Engine:        configs.SGLang,
		EngineVersion: "v0.5.16",
		CommandFile:   "sglang_command.txt",
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("SGLANG_ENABLE_SPEC_V2", "1"),
		},
		Parallel: recipes.Parallel{DataParallelOne: true, EP: recipes.EPAlways},
		Spec:     qwen35EAGLE("EAGLE"),
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--quantization", "fp8"),
			qwen35CacheDtypes,
			recipes.Flag("--attention-backend", "flashinfer"),
			recipes.Flag("--enable-flashinfer-allreduce-fusion", nil),
			recipes.Flag("--mem-fraction-static", memFraction),
			recipes.Flag("--stream-interval", 50),
			recipes.Flag("--scheduler-recv-interval", 10),
			recipes.Flag("--tokenizer-worker-num", 6),
			recipes.FlagFn("--tokenizer-path", func(c *recipes.Ctx) string { return c.Model }),
			recipes.Flag("--enable-metrics", nil),
			recipes.SpecArgs,
			recipes.OffloadArgs,
		},
		Offload: []recipes.Offload{recipes.HiCacheSized(recipes.HiCacheSizePerPool(2))},
		// No ArmServer needed: no engine flag depends on conc, so every point of an arm has the same server anyway.
		Client: recipes.Client{Loader: recipes.LoaderWithSubagents256k},
	}
}
