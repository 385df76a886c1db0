package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// qwen35Golden is Qwen3.5's golden AL curve (measured on the NVFP4
// checkpoint, applied to every Qwen3.5 precision) with thinking on.
var qwen35Golden = recipes.GoldenRef{File: "qwen3.5_mtp", Model: "qwen3.5-397b-a17b-nvfp4", Thinking: configs.ThinkingOn}

// qwen35EAGLE is the Qwen3.5 MTP head as SGLang runs it: EAGLE, 3 steps,
// top-1, 4 draft tokens.
func qwen35EAGLE(algorithm string) recipes.Speculation {
	return recipes.Speculation{Algorithm: algorithm, Steps: 3, TopK: 1, DraftTokens: 4, Golden: qwen35Golden}
}

// qwen35Client is the replay client of the AMD Qwen3.5 recipes.
var qwen35Client = recipes.Client{
	Loader: recipes.Loader062126256k, ApplyChatTemplate: true,
	ServerMetrics: true, MetricsURLEnv: true, RequiredMetricPrefix: "sglang:",
}

// qwen35FP8MI325X replaces benchmarks/single_node/agentic/qwen3.5_fp8_mi325x_mtp.sh.
func qwen35FP8MI325X() *recipes.Recipe {
	return &recipes.Recipe{
		Name:           "qwen3.5_fp8_mi325x_mtp",
		Keys:           []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
		Engine:         configs.SGLang,
		EngineVersion:  "v0.5.16",
		CommandFile:    "sglang_command.txt",
		CopyHIPDevices: true,
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			recipes.Env("SGLANG_USE_AITER", "1"),
			recipes.Env("SGLANG_USE_AITER_UNIFIED_ATTN", "1"),
			recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "1800"),
		},
		Parallel: recipes.Parallel{DataParallelOne: true, EP: recipes.EPAlways},
		Spec:     qwen35EAGLE("EAGLE"),
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--attention-backend", "aiter"),
			recipes.Flag("--quantization", "fp8"),
			qwen35CacheDtypes,
			// TP2 needs ~0.8075 for the target model; SGLang reserves 15% of
			// the fraction for the draft.
			recipes.FlagFn("--mem-fraction-static", func(c *recipes.Ctx) float64 {
				if c.TP == 2 {
					return 0.95
				}
				return 0.80
			}),
			recipes.Flag("--model-loader-extra-config", map[string]bool{"enable_multithread_load": true}),
			recipes.Flag("--watchdog-timeout", 1200),
			recipes.Flag("--enable-aiter-allreduce-fusion", nil),
			recipes.Flag("--page-size", 16),
			qwen35AMDScheduling,
			qwen35SGLangTail,
		},
		// --max-running-requests (2×conc) and --cuda-graph-max-bs (min(conc,64)) are upper bounds a smaller load never reaches: one server sized for the arm's largest conc serves it.
		ArmServer: "--max-running-requests 2×conc and --cuda-graph-max-bs min(conc,64) only bound admission and graph capture; a smaller load stays below both",
		Client:    qwen35Client,
	}
}
