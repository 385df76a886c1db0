package models

import "sweep/recipes"

// The argument groups InferenceX's Qwen3.5 SGLang scripts share (see
// ArgGroup), so each recipe lists only the flags where it differs.

// qwen35SGLangTail ends every Qwen3.5 SGLang command but the Hopper
// (H100/H200) ones: the served tokenizer, Qwen3's reasoning and tool-call
// parsers, the speculative flags and the metrics the client scrapes. The
// Hopper scripts pass no parsers and no cache report, and --enable-metrics
// before the speculative flags, so they spell their tail out.
var qwen35SGLangTail = recipes.ArgGroup("qwen3.5 sglang tail",
	recipes.FlagFn("--tokenizer-path", func(c *recipes.Ctx) string { return c.Model }),
	recipes.Flag("--reasoning-parser", "qwen3"),
	recipes.Flag("--tool-call-parser", "qwen3_coder"),
	recipes.SpecArgs,
	recipes.Flag("--enable-metrics", nil),
	recipes.Flag("--enable-cache-report", nil),
)

// qwen35AMDScheduling is the scheduler sizing of the MI325X and MI355X
// Qwen3.5 SGLang scripts: graphs up to min(conc,64), 2×conc running
// requests, 32k prefill chunks, and six tokenizer workers from TP4 on.
var qwen35AMDScheduling = recipes.ArgGroup("qwen3.5 amd scheduling",
	recipes.FlagFn("--cuda-graph-max-bs", recipes.ConcCapped(64)),
	recipes.FlagFn("--max-running-requests", recipes.TwiceConc),
	recipes.Flag("--max-prefill-tokens", 32768),
	recipes.Flag("--chunked-prefill-size", 32768),
	recipes.Flag("--scheduler-recv-interval", 30),
	recipes.Flag("--stream-interval", 50),
	recipes.Flag("--tokenizer-worker-num", 6).If(recipes.TPAtLeast(4)),
)

// qwen35CacheDtypes is the cache precision of the MI325X, Blackwell and
// Hopper (H100/H200) Qwen3.5 SGLang scripts, passed right after the
// quantization: FP8 E4M3 KV and a BF16 Mamba SSM state. The MI355X script
// sets the SSM dtype through the environment instead, and the MI300X one
// keeps the default KV dtype.
var qwen35CacheDtypes = recipes.ArgGroup("qwen3.5 cache dtypes",
	recipes.Flag("--kv-cache-dtype", "fp8_e4m3"),
	recipes.Flag("--mamba-ssm-dtype", "bfloat16"),
)
