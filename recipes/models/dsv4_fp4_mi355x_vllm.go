package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// dsv4FP4MI355XVLLM replaces benchmarks/single_node/agentic/dsv4_fp4_mi355x_vllm_mtp.sh.
// Its DP-attention arm runs TP1×DP8 behind vllm-router (consistent hash on
// the session id aiperf sends). The master config's "DEP" arm has ep 1, so
// it runs without --enable-expert-parallel, as in InferenceX.
//
// Not modelled: an unconditional 180 s sleep before the engine starts, and
// the pip installs (Pillow, fastapi, uvicorn, vllm-router==0.1.14) the
// script does inside the container.
func dsv4FP4MI355XVLLM() *recipes.Recipe {
	return &recipes.Recipe{
		Name:           "dsv4_fp4_mi355x_vllm_mtp",
		Keys:           []string{"dsv4-fp4-mi355x-vllm-agentic-mtp"},
		Engine:         configs.VLLM,
		EngineVersion:  "v0.27.1",
		CommandFile:    "vllm_command.txt",
		CopyHIPDevices: true,
		Env: []recipes.EnvVar{
			recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
			recipes.Env("VLLM_ENGINE_READY_TIMEOUT_S", "10800"),
			recipes.Env("VLLM_PREFIX_CACHE_RETENTION_INTERVAL", "32768"),
			recipes.Env("VLLM_ROCM_USE_AITER", "1"),
			recipes.Env("VLLM_ROCM_QUICK_REDUCE_QUANTIZATION", "INT4"),
			recipes.Env("VLLM_ROCM_USE_AITER_MOE", "1"),
			recipes.Env("VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS", "1"),
		},
		Parallel: recipes.Parallel{
			DataParallelOne: true, EP: recipes.EPAlways, DPAttention: true,
			DPAttnArgs: []recipes.Arg{recipes.Flag("--prefill-schedule-interval", 8), recipes.Flag("--long-prefill-token-threshold", 16384)},
		},
		Spec: recipes.Speculation{
			VLLM:   &recipes.VLLMSpecConfig{Method: "mtp", NumSpeculativeTokens: 3},
			Golden: dsv4Golden,
		},
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.Flag("--async-scheduling", nil),
			recipes.Flag("--distributed-executor-backend", "mp"),
			recipes.Flag("--kv-cache-dtype", "fp8"),
			recipes.Flag("--max-num-batched-tokens", 8192),
			recipes.ParallelArgs,
			recipes.Flag("--gpu-memory-utilization", 0.86),
			recipes.Flag("--moe-backend", "aiter"),
			recipes.Flag("--compilation-config", recipes.VLLMCompilationConfig{Mode: 3, CUDAGraphMode: "FULL_AND_PIECEWISE"}),
			recipes.SpecArgs,
			recipes.Flag("--tokenizer-mode", "deepseek_v4"),
			recipes.Flag("--tool-call-parser", "deepseek_v4"),
			recipes.Flag("--reasoning-parser", "deepseek_v4"),
			recipes.Flag("--enable-auto-tool-choice", nil),
			recipes.Flag("--enable-prefix-caching", nil),
			recipes.Flag("--disable-hybrid-kv-cache-manager", false),
			// One DP rank per GPU admits conc; the TP engine admits 2×conc.
			recipes.FlagFn("--max-num-seqs", func(c *recipes.Ctx) int {
				if c.DPAttn {
					return c.Conc
				}
				return 2 * c.Conc
			}),
		},
		// No ArmServer: on DP-attention arms --max-num-seqs = conc per rank binds, so a larger server would measure a different point; restart per point.
		Client: recipes.Client{ServerMetrics: true, MetricsURLEnv: true, RequiredMetricPrefix: "vllm:"},
	}
}
