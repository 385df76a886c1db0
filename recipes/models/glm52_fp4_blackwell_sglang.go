package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// glm52FP4BlackwellSGLang is the shared shape of benchmarks/single_node/
// agentic/glm5.2_fp4_{b200,b300}_sglang_mtp.sh, low-latency arm: EAGLE with
// 3 steps / 4 draft tokens, FP8 KV with cutedsl BF16 GEMMs, 2×conc running
// requests with graphs up to min(2×conc, 64), and HiCache with a fixed
// 270 GB target pool, write-back and direct IO. B200 keeps 0.83 of HBM
// static and sizes the host pool by ratio 0.75 below conc 12.
//
// Not modelled: the scripts' DP-attention arm (router, --dp TP, no graph
// cap), which the master config does not run; dp-attn rows are a plan
// error. The B200 script's checkpoint-completeness check and serialized
// download of the HF id are run-time preparation.
func glm52FP4BlackwellSGLang(gpu string, memFraction float64, cache func(*recipes.Ctx) []recipes.Arg) *recipes.Recipe {
	return &recipes.Recipe{
		Name:          "glm5.2_fp4_" + gpu + "_sglang_mtp",
		Keys:          []string{"glm5.2-fp4-" + gpu + "-sglang-agentic-mtp"},
		Engine:        configs.SGLang,
		EngineVersion: "v0.5.16",
		CommandFile:   "sglang_command.txt",
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("TORCH_CUDA_ARCH_LIST", "10.0"),
			recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "900"),
		},
		Parallel: recipes.Parallel{EP: recipes.EPAlways},
		Spec:     recipes.Speculation{Algorithm: "EAGLE", Steps: 3, TopK: 1, DraftTokens: 4, Golden: glm52Golden},
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--kv-cache-dtype", "fp8_e4m3"),
			recipes.Flag("--bf16-gemm-backend", "cutedsl"),
			recipes.Flag("--max-prefill-tokens", 8192),
			recipes.Flag("--quantization", "modelopt_fp4"),
			glm52Parsers,
			recipes.Flag("--chunked-prefill-size", 8192),
			recipes.Flag("--mem-fraction-static", memFraction),
			recipes.FlagFn("--max-running-requests", recipes.TwiceConc),
			recipes.SpecArgs,
			recipes.FlagFn("--cuda-graph-max-bs", recipes.TwiceConcCapped(64)),
			recipes.OffloadArgs,
			glm52SGLangTail,
		},
		Offload: []recipes.Offload{{Backend: "hicache", Args: func(c *recipes.Ctx) ([]recipes.Arg, error) {
			return append([]recipes.Arg{
				recipes.Flag("--enable-hierarchical-cache", nil),
				recipes.Flag("--hicache-write-policy", "write_back"),
				recipes.Flag("--hicache-io-backend", "direct"),
				recipes.Flag("--hicache-mem-layout", "page_first_direct"),
			}, cache(c)...), nil
		}}},
		// Both conc-dependent flags are upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests 2×conc and --cuda-graph-max-bs min(2×conc,64) only bound admission and graph capture; a smaller load stays below both",
		Client:    recipes.Client{ServerMetrics: true},
	}
}

// glm52FP4B300SGLang replaces glm5.2_fp4_b300_sglang_mtp.sh.
func glm52FP4B300SGLang() *recipes.Recipe {
	return glm52FP4BlackwellSGLang("b300", 0.85, func(*recipes.Ctx) []recipes.Arg { return []recipes.Arg{recipes.Flag("--hicache-size", 270)} })
}

// glm52FP4B200SGLang replaces glm5.2_fp4_b200_sglang_mtp.sh: the 270 GB
// target pool at conc 12 and 16 only, ratio 0.75 below.
func glm52FP4B200SGLang() *recipes.Recipe {
	r := glm52FP4BlackwellSGLang("b200", 0.83, func(c *recipes.Ctx) []recipes.Arg {
		if c.Conc == 12 || c.Conc == 16 {
			return []recipes.Arg{recipes.Flag("--hicache-size", 270)}
		}
		return []recipes.Arg{recipes.Flag("--hicache-ratio", 0.75)}
	})
	// The host pool depends on conc, so a larger conc's server is another point.
	r.ArmServer = ""
	return r
}
