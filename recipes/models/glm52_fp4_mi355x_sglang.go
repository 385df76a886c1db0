package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// glm52FP4MI355XSGLang replaces
// benchmarks/single_node/agentic/glm5.2_fp4_mi355x_sglang_mtp.sh: EAGLE with
// 5 steps / 6 draft tokens, DSA tilelang kernels and ratio-sized HiCache.
// Its DP-attention path (router on PORT, engine on PORT+1) is dormant in
// the master config: DSA with DP attention hangs a collective under
// long-context prefill on ROCm.
func glm52FP4MI355XSGLang() *recipes.Recipe {
	warmupGrace := func(c *recipes.Ctx) int {
		if c.DPAttn || c.Conc > 16 {
			return 3600
		}
		return 0
	}
	return &recipes.Recipe{
		Name:           "glm5.2_fp4_mi355x_sglang_mtp",
		Keys:           []string{"glm5.2-fp4-mi355x-sglang-agentic-mtp"},
		Engine:         configs.SGLang,
		EngineVersion:  "v0.5.16",
		CommandFile:    "sglang_command.txt",
		CopyHIPDevices: true,
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "900"),
			recipes.Env("SGLANG_OPT_USE_TOPK_V2", "false"),
			recipes.Env("SGLANG_DP_USE_GATHERV", "1").If(recipes.DPAttention),
			recipes.Env("SGLANG_DP_USE_REDUCE_SCATTER", "1").If(recipes.DPAttention),
			recipes.Env("GPU_MAX_HW_QUEUES", "5").If(recipes.DPAttention),
		},
		Parallel: recipes.Parallel{EP: recipes.EPAlways, DPAttention: true},
		Spec:     recipes.Speculation{Algorithm: "EAGLE", Steps: 5, TopK: 1, DraftTokens: 6, Golden: glm52Golden},
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--kv-cache-dtype", "fp8_e4m3"),
			recipes.Flag("--dsa-prefill-backend", "tilelang"),
			recipes.Flag("--dsa-decode-backend", "tilelang"),
			glm52Parsers,
			recipes.Flag("--chunked-prefill-size", 32768),
			recipes.Flag("--mem-fraction-static", 0.85),
			recipes.FlagFn("--max-running-requests", recipes.ConcCapped(256)),
			recipes.FlagFn("--cuda-graph-max-bs", recipes.ConcCapped(256)),
			recipes.SpecArgs,
			recipes.OffloadArgs,
			glm52SGLangTail,
		},
		Offload: []recipes.Offload{recipes.HiCacheRatio(func(c *recipes.Ctx) float64 {
			if c.DPAttn {
				return 0.5
			}
			return 1.5
		})},
		// No ArmServer: --max-running-requests = conc binds (subagent fan-out queues at conc), so a server sized for a larger conc would measure a different point; restart per point.
		Client: recipes.Client{ServerMetrics: true, WarmupGracePeriod: warmupGrace},
	}
}
