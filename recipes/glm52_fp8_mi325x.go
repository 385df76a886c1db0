package recipes

import "sweep/configs"

// glm52Golden is GLM-5.2's golden AL curve with thinking on.
var glm52Golden = GoldenRef{File: "glm5.2_mtp", Model: "glm-5.2-fp8", Thinking: configs.ThinkingOn}

// glm52FP8MI325X replaces benchmarks/single_node/agentic/glm5.2_fp8_mi325x_mtp.sh
// (GPU-resident KV only; InferenceX starts the server under setsid and stops
// its process group, which sweep's process groups already do).
func glm52FP8MI325X() *Recipe {
	return &Recipe{
		Name:           "glm5.2_fp8_mi325x_mtp",
		Keys:           []string{"glm5.2-fp8-mi325x-sglang-agentic-mtp"},
		Engine:         configs.SGLang,
		EngineVersion:  "v0.5.16",
		CommandFile:    "sglang_command.txt",
		CopyHIPDevices: true,
		Env: []EnvVar{
			Env("PYTHONNOUSERSITE", "1"),
			Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			Env("SGLANG_TIMEOUT_KEEP_ALIVE", "900"),
			Env("SGLANG_DSA_FUSE_TOPK", "false"),
			Env("SGLANG_OPT_USE_TOPK_V2", "false"),
		},
		Parallel: Parallel{EP: EPAlways},
		Spec:     Speculation{Algorithm: "EAGLE", Steps: 3, TopK: 1, DraftTokens: 4, Golden: glm52Golden},
		Args: []Arg{
			Flag("--trust-remote-code", nil),
			ParallelArgs,
			Flag("--dsa-prefill-backend", "tilelang"),
			Flag("--dsa-decode-backend", "tilelang"),
			Flag("--dsa-topk-backend", "torch"),
			Flag("--kv-cache-dtype", "bfloat16"),
			glm52Parsers,
			Flag("--context-length", 1048576),
			Flag("--max-total-tokens", 1048576),
			Flag("--chunked-prefill-size", 131072),
			Flag("--mem-fraction-static", 0.85),
			FlagFn("--max-running-requests", TwiceConc),
			FlagFn("--cuda-graph-max-bs", TwiceConc),
			SpecArgs,
			glm52SGLangTail,
			Flag("--enable-cache-report", nil),
		},
		// The prefix is exported but the URL is appended to the replay
		// command rather than passed through the environment.
		// 2×conc for both flags: upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests and --cuda-graph-max-bs (both 2×conc) only bound admission and graph capture; a smaller load stays below both",
		Client:    Client{Loader: loader062126, ServerMetrics: true, RequiredMetricPrefix: "sglang:", BenchmarkGracePeriod: 1800},
	}
}
