package recipes

import "sweep/configs"

// qwen35Golden is Qwen3.5's golden AL curve (measured on the NVFP4
// checkpoint, applied to every Qwen3.5 precision) with thinking on.
var qwen35Golden = GoldenRef{File: "qwen3.5_mtp", Model: "qwen3.5-397b-a17b-nvfp4", Thinking: configs.ThinkingOn}

// qwen35EAGLE is the Qwen3.5 MTP head as SGLang runs it: EAGLE, 3 steps,
// top-1, 4 draft tokens.
func qwen35EAGLE(algorithm string) Speculation {
	return Speculation{Algorithm: algorithm, Steps: 3, TopK: 1, DraftTokens: 4, Golden: qwen35Golden}
}

// qwen35Client is the replay client of the AMD Qwen3.5 recipes.
var qwen35Client = Client{
	Loader: loader062126256k, ApplyChatTemplate: true,
	ServerMetrics: true, MetricsURLEnv: true, RequiredMetricPrefix: "sglang:",
}

// qwen35FP8MI325X replaces benchmarks/single_node/agentic/qwen3.5_fp8_mi325x_mtp.sh.
func qwen35FP8MI325X() *Recipe {
	return &Recipe{
		Name:           "qwen3.5_fp8_mi325x_mtp",
		Keys:           []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
		Engine:         configs.SGLang,
		EngineVersion:  "v0.5.16",
		CommandFile:    "sglang_command.txt",
		CopyHIPDevices: true,
		Env: []EnvVar{
			Env("PYTHONNOUSERSITE", "1"),
			Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			Env("SGLANG_USE_AITER", "1"),
			Env("SGLANG_USE_AITER_UNIFIED_ATTN", "1"),
			Env("SGLANG_TIMEOUT_KEEP_ALIVE", "1800"),
		},
		Parallel: Parallel{DataParallelOne: true, EP: EPAlways},
		Spec:     qwen35EAGLE("EAGLE"),
		Args: []Arg{
			Flag("--trust-remote-code", nil),
			ParallelArgs,
			Flag("--attention-backend", "aiter"),
			Flag("--quantization", "fp8"),
			qwen35CacheDtypes,
			// TP2 needs ~0.8075 for the target model; SGLang reserves 15% of
			// the fraction for the draft.
			FlagFn("--mem-fraction-static", func(c *Ctx) float64 {
				if c.TP == 2 {
					return 0.95
				}
				return 0.80
			}),
			Flag("--model-loader-extra-config", map[string]bool{"enable_multithread_load": true}),
			Flag("--watchdog-timeout", 1200),
			Flag("--enable-aiter-allreduce-fusion", nil),
			Flag("--page-size", 16),
			qwen35AMDScheduling,
			qwen35SGLangTail,
		},
		// --max-running-requests (2×conc) and --cuda-graph-max-bs (min(conc,64)) are upper bounds a smaller load never reaches: one server sized for the arm's largest conc serves it.
		ArmServer: "--max-running-requests 2×conc and --cuda-graph-max-bs min(conc,64) only bound admission and graph capture; a smaller load stays below both",
		Client:    qwen35Client,
	}
}
