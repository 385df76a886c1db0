package models

import (
	"sweep/configs"
	"sweep/recipes"
)

// qwen35FP4MI355XSGLang replaces
// benchmarks/single_node/agentic/qwen3.5_fp4_mi355x_sglang_mtp.sh. Unlike
// the MI325X sibling it passes no --quantization, sets the mamba SSM dtype
// through the environment, leaves out AITER all-reduce fusion (unstable for
// TP2/EP2 EAGLE rank consistency) and does not copy HIP_VISIBLE_DEVICES.
func qwen35FP4MI355XSGLang() *recipes.Recipe {
	return &recipes.Recipe{
		Name:          "qwen3.5_fp4_mi355x_sglang_mtp",
		Keys:          []string{"qwen3.5-fp4-mi355x-sglang-agentic-mtp"},
		Engine:        configs.SGLang,
		EngineVersion: "v0.5.17",
		CommandFile:   "sglang_command.txt",
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("SGLANG_USE_AITER", "1"),
			recipes.Env("SGLANG_USE_AITER_UNIFIED_ATTN", "1"),
			recipes.Env("AITER_FLYDSL_FORCE", "1"),
			recipes.Env("SGLANG_MAMBA_SSM_DTYPE", "bfloat16"),
			recipes.Env("SGLANG_TIMEOUT_KEEP_ALIVE", "1800"),
		},
		Parallel: recipes.Parallel{DataParallelOne: true, EP: recipes.EPAlways},
		Spec:     qwen35EAGLE("EAGLE"),
		Args: []recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			recipes.ParallelArgs,
			recipes.Flag("--attention-backend", "aiter"),
			recipes.Flag("--mem-fraction-static", 0.80),
			recipes.Flag("--model-loader-extra-config", map[string]bool{"enable_multithread_load": true}),
			recipes.Flag("--watchdog-timeout", 1200),
			recipes.Flag("--page-size", 16),
			recipes.Flag("--kv-cache-dtype", "fp8_e4m3"),
			qwen35AMDScheduling,
			qwen35SGLangTail,
		},
		// Same sizing as the MI325X recipe: both conc-dependent flags are upper bounds a smaller load never reaches.
		ArmServer: "--max-running-requests 2×conc and --cuda-graph-max-bs min(conc,64) only bound admission and graph capture; a smaller load stays below both",
		Client:    qwen35Client,
	}
}
