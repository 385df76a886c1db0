package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// dsv4Golden is DeepSeek-V4's golden AL curve with thinking on (the
// recipes force thinking on).
var dsv4Golden = recipes.GoldenRef{File: "dsv4_mtp", Model: "deepseek-v4-pro", Thinking: configs.ThinkingOn}

// dsv4FP4MI355XSGLang replaces
// benchmarks/single_node/agentic/dsv4_fp4_mi355x_sglang_mtp.sh: the DSv4
// attention backend with SWA, ratio-sized HiCache (the DRAM budget is not
// consumed) and a dormant DP-attention path.
func dsv4FP4MI355XSGLang() *recipes.Recipe {
	return &recipes.Recipe{
		Name:           "dsv4_fp4_mi355x_sglang_mtp",
		Keys:           []string{"dsv4-fp4-mi355x-sglang-agentic-mtp"},
		Engine:         configs.SGLang,
		EngineVersion:  "v0.5.17",
		CommandFile:    "sglang_command.txt",
		CopyHIPDevices: true,
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "900"),
			recipes.Env("SGLANG_DEFAULT_THINKING", "1"),
			recipes.Env("SGLANG_DSV4_REASONING_EFFORT", "high"),
			recipes.Env("SGLANG_USE_ROCM700A", "0"),
			recipes.Env("SGLANG_HACK_FLASHMLA_BACKEND", "unified_kv_triton"),
			recipes.Env("AITER_BF16_FP8_MOE_BOUND", "0"),
			recipes.Env("SGLANG_ENABLE_UNIFIED_RADIX_TREE", "1"),
			recipes.Env("SGLANG_OPT_UNIFIED_CACHE_FREE_OUT_OF_WINDOW_SLOTS", "1"),
			recipes.Env("SGLANG_SHARED_EXPERT_TP1", "1").If(recipes.DPAttention),
			recipes.Env("SGLANG_DP_SHARED_EXPERT_LOCAL", "1").If(recipes.DPAttention),
			recipes.Env("SGLANG_DP_USE_GATHERV", "1").If(recipes.DPAttention),
			recipes.Env("SGLANG_DP_USE_REDUCE_SCATTER", "1").If(recipes.DPAttention),
			recipes.Env("GPU_MAX_HW_QUEUES", "5").If(recipes.DPAttention),
		},
		Parallel: recipes.Parallel{
			EP: recipes.EPAboveOne, DPAttention: true,
			DPAttnArgs: []recipes.Arg{recipes.Flag("--enable-prefill-delayer", nil)},
		},
		Spec: recipes.Speculation{Algorithm: "EAGLE", Steps: 3, TopK: 1, DraftTokens: 4, Golden: dsv4Golden},
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--attention-backend", "dsv4"),
			recipes.Flag("--page-size", 256),
			recipes.Flag("--swa-full-tokens-ratio", 0.10),
			recipes.Flag("--kv-cache-dtype", "fp8_e4m3"),
			recipes.Flag("--disable-shared-experts-fusion", nil),
			recipes.Flag("--tool-call-parser", "deepseekv4"),
			recipes.Flag("--reasoning-parser", "deepseek-v4"),
			recipes.FlagFn("--chunked-prefill-size", func(c *recipes.Ctx) int {
				if c.DPAttn {
					return 8192 * c.TP
				}
				return 8192
			}),
			recipes.Flag("--mem-fraction-static", 0.85),
			recipes.FlagFn("--max-running-requests", recipes.TwiceConcCapped(256)),
			recipes.FlagFn("--cuda-graph-max-bs", func(c *recipes.Ctx) int { return min(recipes.TwiceConcCapped(256)(c), 128) }),
			recipes.SpecArgs,
			recipes.OffloadArgs,
			recipes.Flag("--watchdog-timeout", 3600),
			recipes.Flag("--enable-metrics", nil),
		},
		Offload: []recipes.Offload{recipes.HiCacheRatio(func(*recipes.Ctx) float64 { return 1.5 })},
		// min(2×conc,256) and min(2×conc,128) are upper bounds a smaller load never reaches; HiCache is sized by ratio, not conc.
		ArmServer: "--max-running-requests min(2×conc,256) and --cuda-graph-max-bs min(2×conc,128) only bound admission and graph capture; a smaller load stays below both",
		Client: recipes.Client{ServerMetrics: true, WarmupGracePeriod: func(c *recipes.Ctx) int {
			if c.Conc >= 32 {
				return 3600
			}
			return 0
		}},
	}
}
