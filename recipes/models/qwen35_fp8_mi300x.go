package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// qwen35FP8MI300X replaces benchmarks/single_node/agentic/qwen3.5_fp8_mi300x_mtp.sh
// (GPU-resident KV only). It exports the metrics variables only after the
// engine started, and appends no chat template to the client.
func qwen35FP8MI300X() *recipes.Recipe {
	return &recipes.Recipe{
		Name:           "qwen3.5_fp8_mi300x_mtp",
		Keys:           []string{"qwen3.5-fp8-mi300x-sglang-agentic-mtp"},
		Engine:         configs.SGLang,
		EngineVersion:  "v0.5.16",
		CommandFile:    "sglang_command.txt",
		CopyHIPDevices: true,
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("SGLANG_ENABLE_SPEC_V2", "1"),
			recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "1800"),
		},
		Parallel: recipes.Parallel{DataParallelOne: true, EP: recipes.EPAlways},
		Spec:     qwen35EAGLE("EAGLE"),
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--attention-backend", "aiter"),
			recipes.Flag("--enable-aiter-allreduce-fusion", nil),
			recipes.Flag("--mamba-ssm-dtype", "bfloat16"),
			recipes.Flag("--tokenizer-worker-num", 6),
			recipes.FlagFn("--cuda-graph-max-bs", recipes.ConcCapped(64)),
			recipes.FlagFn("--max-running-requests", recipes.TwiceConc),
			recipes.Flag("--max-prefill-tokens", 32768),
			recipes.Flag("--scheduler-recv-interval", 30),
			recipes.Flag("--mem-fraction-static", 0.75),
			qwen35SGLangTail,
		},
		// Both conc-dependent flags are upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests 2×conc and --cuda-graph-max-bs min(conc,64) only bound admission and graph capture; a smaller load stays below both",
		Client: recipes.Client{
			Loader: recipes.Loader062126256k, ServerMetrics: true, MetricsURLEnv: true,
			RequiredMetricPrefix: "sglang:", MetricsEnvAfterStart: true,
		},
	}
}
