package models

import (
	"strconv"
	"sweep/configs"
	"sweep/recipes"
)

// dsv4BlackwellEnv is what both Blackwell DSv4 SGLang scripts export.
func dsv4BlackwellEnv(extra ...recipes.EnvVar) []recipes.EnvVar {
	return append([]recipes.EnvVar{
		recipes.Env("INFMAX_CONTAINER_WORKSPACE", "/workspace"),
		recipes.Env("SGLANG_ENABLE_UNIFIED_RADIX_TREE", "1"),
		recipes.Env("SGLANG_OPT_UNIFIED_CACHE_FREE_OUT_OF_WINDOW_SLOTS", "1"),
		recipes.Env("PYTHONNOUSERSITE", "1"),
		recipes.Env("TORCH_CUDA_ARCH_LIST", "10.0"),
		recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
		recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "900"),
		recipes.Env("SGLANG_JIT_DEEPGEMM_FAST_WARMUP", "1"),
		recipes.Env("SGLANG_OPT_SWA_SPLIT_LEAF_ON_INSERT", "1"),
		recipes.Env("SGLANG_OPT_USE_JIT_NORM", "1"),
		recipes.Env("SGLANG_OPT_USE_JIT_INDEXER_METADATA", "1"),
		recipes.Env("SGLANG_OPT_USE_TOPK_V2", "1"),
		recipes.Env("SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2", "1"),
	}, extra...)
}

// dsv4DPAttnArgs are the DP-attention flags both scripts share, in their
// order around the per-GPU ones (pre and post).
func dsv4DPAttnArgs(pre, post []recipes.Arg) []recipes.Arg {
	out := append([]recipes.Arg{recipes.FlagFn("--tokenizer-worker-num", func(c *recipes.Ctx) int { return c.TP })}, pre...)
	out = append(out,
		recipes.Flag("--enable-dp-attention-local-control-broadcast", nil),
		recipes.Flag("--incremental-streaming-output", nil),
		recipes.Flag("--stream-interval", 20),
		recipes.FlagFn("--dist-init-addr", func(c *recipes.Ctx) string { return "127.0.0.1:" + strconv.Itoa(c.Port+2000) }),
		recipes.FlagFn("--ep-size", func(c *recipes.Ctx) int { return c.EP }),
	)
	return append(out, post...)
}

// dsv4HiCache is the scripts' ratio-sized HiCache (the DRAM budget is not
// consumed) with direct IO and the given write policy.
func dsv4HiCache(ratio func(*recipes.Ctx) int, policy string) recipes.Offload {
	return recipes.Offload{Backend: "hicache", Args: func(c *recipes.Ctx) ([]recipes.Arg, error) {
		return []recipes.Arg{
			recipes.Flag("--enable-hierarchical-cache", nil),
			recipes.Flag("--hicache-ratio", ratio(c)),
			recipes.Flag("--hicache-write-policy", policy),
			recipes.Flag("--hicache-io-backend", "direct"),
			recipes.Flag("--hicache-mem-layout", "page_first_direct"),
		}, nil
	}}
}

// dsv4FP4B300SGLang replaces benchmarks/single_node/agentic/
// dsv4_fp4_b300_sglang_mtp.sh: the compressed attention backend, MXFP4
// FlashInfer MoE, graphs up to min(conc, 64), HiCache ratio 2 at TP8 and 8
// below with write-back and no server warm-up, and DP attention behind
// sglang_router (0.95 of HBM static, 0.94 from conc 512).
//
// Not modelled: the script runs SGLang and the router with the absolute
// path of the container's python3, and exports TRITON_PTXAS_PATH when it
// finds a ptxas binary.
func dsv4FP4B300SGLang() *recipes.Recipe {
	return &recipes.Recipe{
		Name:          "dsv4_fp4_b300_sglang_mtp",
		Keys:          []string{"dsv4-fp4-b300-sglang-agentic-hicache-mtp"},
		Engine:        configs.SGLang,
		EngineVersion: "v0.5.17",
		CommandFile:   "sglang_command.txt",
		Env:           dsv4BlackwellEnv(),
		Parallel:      recipes.Parallel{EP: recipes.EPIgnored, DPAttention: true, DPAttnArgs: dsv4DPAttnArgs(nil, nil)},
		Spec:          recipes.Speculation{Algorithm: "EAGLE", Steps: 3, TopK: 1, DraftTokens: 4, Golden: dsv4Golden},
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--moe-runner-backend", "flashinfer_mxfp4"),
			recipes.Flag("--disable-flashinfer-autotune", nil),
			recipes.FlagFn("--mem-fraction-static", func(c *recipes.Ctx) float64 {
				switch {
				case !c.DPAttn:
					return 0.88
				case c.Conc >= 512:
					return 0.94
				}
				return 0.95
			}),
			recipes.Flag("--swa-full-tokens-ratio", 0.1),
			recipes.FlagFn("--max-running-requests", recipes.TwiceConc),
			recipes.FlagFn("--cuda-graph-max-bs", recipes.ConcCapped(64)),
			recipes.Flag("--allow-auto-truncate", nil),
			recipes.FlagFn("--chunked-prefill-size", func(c *recipes.Ctx) int {
				if c.DPAttn {
					return 16384
				}
				return 8192
			}),
			dsv4BlackwellSGLangChat,
			recipes.Flag("--attention-backend", "compressed"),
			recipes.Flag("--page-size", 256),
			recipes.Flag("--disable-shared-experts-fusion", nil),
			dsv4BlackwellSGLangTail,
			recipes.Flag("--skip-server-warmup", nil).If(recipes.Offloaded),
		},
		Offload: []recipes.Offload{dsv4HiCache(func(c *recipes.Ctx) int {
			if c.TP >= 8 {
				return 2
			}
			return 8
		}, "write_back")},
		// The static memory fraction changes at conc 512, so one arm's server differs across conc.
		Client: recipes.Client{ServerMetrics: true, RequiredMetricPrefix: "sglang:"},
	}
}

// dsv4FP4B200SGLang replaces benchmarks/single_node/agentic/
// dsv4_fp4_b200_sglang_mtp.sh: MXFP4 MoE with the FP4 indexer, graphs up
// to 2×conc, HiCache ratio 8 with write-through, checkpoint prefetch, and
// DP attention with the MegaMoE all-to-all behind sglang_router.
//
// Not modelled: as for B300 (absolute python3 path, TRITON_PTXAS_PATH).
func dsv4FP4B200SGLang() *recipes.Recipe {
	return &recipes.Recipe{
		Name:          "dsv4_fp4_b200_sglang_mtp",
		Keys:          []string{"dsv4-fp4-b200-sglang-agentic-hicache-mtp"},
		Engine:        configs.SGLang,
		EngineVersion: "v0.5.17",
		CommandFile:   "sglang_command.txt",
		Env: dsv4BlackwellEnv(
			recipes.Env("SGLANG_OPT_DEEPGEMM_MEGA_MOE_USE_FP4_ACTS", "1").If(recipes.DPAttention),
			recipes.Env("SGLANG_OPT_DEEPGEMM_MEGA_MOE_USE_MXF4_KIND", "1").If(recipes.DPAttention),
			recipes.Env("SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK", "8320").If(recipes.DPAttention),
		),
		Parallel: recipes.Parallel{EP: recipes.EPIgnored, DPAttention: true, DPAttnArgs: dsv4DPAttnArgs(
			[]recipes.Arg{recipes.Flag("--enable-prefill-delayer", nil), recipes.Flag("--prefill-decode-interval", 10)},
			[]recipes.Arg{recipes.Flag("--moe-a2a-backend", "megamoe"), recipes.Flag("--enable-deepseek-v4-fp4-indexer", nil),
				recipes.Flag("--disable-shared-experts-fusion", nil), recipes.Flag("--disable-flashinfer-autotune", nil)},
		)},
		Spec: recipes.Speculation{Algorithm: "EAGLE", Steps: 3, TopK: 1, DraftTokens: 4, Golden: dsv4Golden},
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--moe-runner-backend", "flashinfer_mxfp4").If(recipes.NoDPAttention),
			recipes.Flag("--enable-deepseek-v4-fp4-indexer", nil).If(recipes.NoDPAttention),
			recipes.Flag("--disable-flashinfer-autotune", nil).If(recipes.NoDPAttention),
			recipes.Flag("--mem-fraction-static", 0.88),
			recipes.FlagFn("--swa-full-tokens-ratio", func(c *recipes.Ctx) float64 {
				if c.DPAttn {
					return 0.02
				}
				return 0.1
			}),
			recipes.FlagFn("--max-running-requests", recipes.TwiceConc),
			recipes.FlagFn("--cuda-graph-max-bs", recipes.TwiceConc),
			recipes.FlagFn("--chunked-prefill-size", func(c *recipes.Ctx) int {
				if c.DPAttn {
					return 8192 * c.TP
				}
				return 8192
			}),
			dsv4BlackwellSGLangChat,
			recipes.Flag("--weight-loader-prefetch-checkpoints", nil),
			dsv4BlackwellSGLangTail,
		},
		Offload: []recipes.Offload{dsv4HiCache(func(*recipes.Ctx) int { return 8 }, "write_through")},
		// Both conc-dependent flags are upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests and --cuda-graph-max-bs 2×conc only bound admission and graph capture; a smaller load stays below both",
		Client:    recipes.Client{ServerMetrics: true, RequiredMetricPrefix: "sglang:"},
	}
}
