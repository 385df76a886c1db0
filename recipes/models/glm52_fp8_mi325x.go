package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// glm52Golden is GLM-5.2's golden AL curve with thinking on.
var glm52Golden = recipes.GoldenRef{File: "glm5.2_mtp", Model: "glm-5.2-fp8", Thinking: configs.ThinkingOn}

// glm52FP8MI325X replaces benchmarks/single_node/agentic/glm5.2_fp8_mi325x_mtp.sh
// (GPU-resident KV only; InferenceX starts the server under setsid and stops
// its process group, which sweep's process groups already do).
func glm52FP8MI325X() *recipes.Recipe {
	return &recipes.Recipe{
		Name:           "glm5.2_fp8_mi325x_mtp",
		Keys:           []string{"glm5.2-fp8-mi325x-sglang-agentic-mtp"},
		Engine:         configs.SGLang,
		EngineVersion:  "v0.5.16",
		CommandFile:    "sglang_command.txt",
		CopyHIPDevices: true,
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "900"),
			recipes.Env("SGLANG_DSA_FUSE_TOPK", "false"),
			recipes.Env("SGLANG_OPT_USE_TOPK_V2", "false"),
		},
		Parallel: recipes.Parallel{EP: recipes.EPAlways},
		Spec:     recipes.Speculation{Algorithm: "EAGLE", Steps: 3, TopK: 1, DraftTokens: 4, Golden: glm52Golden},
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--dsa-prefill-backend", "tilelang"),
			recipes.Flag("--dsa-decode-backend", "tilelang"),
			recipes.Flag("--dsa-topk-backend", "torch"),
			recipes.Flag("--kv-cache-dtype", "bfloat16"),
			glm52Parsers,
			recipes.Flag("--context-length", 1048576),
			recipes.Flag("--max-total-tokens", 1048576),
			recipes.Flag("--chunked-prefill-size", 131072),
			recipes.Flag("--mem-fraction-static", 0.85),
			recipes.FlagFn("--max-running-requests", recipes.TwiceConc),
			recipes.FlagFn("--cuda-graph-max-bs", recipes.TwiceConc),
			recipes.SpecArgs,
			glm52SGLangTail,
			recipes.Flag("--enable-cache-report", nil),
		},
		// The prefix is exported but the URL is appended to the replay
		// command rather than passed through the environment.
		// 2×conc for both flags: upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests and --cuda-graph-max-bs (both 2×conc) only bound admission and graph capture; a smaller load stays below both",
		Client:    recipes.Client{Loader: recipes.Loader062126, ServerMetrics: true, RequiredMetricPrefix: "sglang:", BenchmarkGracePeriod: 1800},
	}
}
