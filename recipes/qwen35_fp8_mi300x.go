package recipes

import "sweep/configs"

// qwen35FP8MI300X replaces benchmarks/single_node/agentic/qwen3.5_fp8_mi300x_mtp.sh
// (GPU-resident KV only). It exports the metrics variables only after the
// engine started, and appends no chat template to the client.
func qwen35FP8MI300X() *Recipe {
	return &Recipe{
		Name:           "qwen3.5_fp8_mi300x_mtp",
		Keys:           []string{"qwen3.5-fp8-mi300x-sglang-agentic-mtp"},
		Engine:         configs.SGLang,
		EngineVersion:  "v0.5.16",
		CommandFile:    "sglang_command.txt",
		CopyHIPDevices: true,
		Env: []EnvVar{
			Env("PYTHONNOUSERSITE", "1"),
			Env("SGLANG_ENABLE_SPEC_V2", "1"),
			Env("SGLANG_TIMEOUT_KEEP_ALIVE", "1800"),
		},
		Parallel: Parallel{DataParallelOne: true, EP: EPAlways},
		Spec:     qwen35EAGLE("EAGLE"),
		Args: []Arg{
			Flag("--trust-remote-code", nil),
			ParallelArgs,
			Flag("--attention-backend", "aiter"),
			Flag("--enable-aiter-allreduce-fusion", nil),
			Flag("--mamba-ssm-dtype", "bfloat16"),
			Flag("--tokenizer-worker-num", 6),
			FlagFn("--cuda-graph-max-bs", ConcCapped(64)),
			FlagFn("--max-running-requests", TwiceConc),
			Flag("--max-prefill-tokens", 32768),
			Flag("--scheduler-recv-interval", 30),
			Flag("--mem-fraction-static", 0.75),
			qwen35SGLangTail,
		},
		// Both conc-dependent flags are upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests 2×conc and --cuda-graph-max-bs min(conc,64) only bound admission and graph capture; a smaller load stays below both",
		Client: Client{
			Loader: loader062126256k, ServerMetrics: true, MetricsURLEnv: true,
			RequiredMetricPrefix: "sglang:", MetricsEnvAfterStart: true,
		},
	}
}
