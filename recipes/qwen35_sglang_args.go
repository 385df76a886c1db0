package recipes

// The argument groups InferenceX's Qwen3.5 SGLang scripts share (see
// ArgGroup), so each recipe lists only the flags where it differs.

// qwen35SGLangTail ends every Qwen3.5 SGLang command but the Hopper
// (H100/H200) ones: the served tokenizer, Qwen3's reasoning and tool-call
// parsers, the speculative flags and the metrics the client scrapes. The
// Hopper scripts pass no parsers and no cache report, and --enable-metrics
// before the speculative flags, so they spell their tail out.
var qwen35SGLangTail = ArgGroup("qwen3.5 sglang tail",
	FlagFn("--tokenizer-path", func(c *Ctx) string { return c.Model }),
	Flag("--reasoning-parser", "qwen3"),
	Flag("--tool-call-parser", "qwen3_coder"),
	SpecArgs,
	Flag("--enable-metrics", nil),
	Flag("--enable-cache-report", nil),
)

// qwen35AMDScheduling is the scheduler sizing of the MI325X and MI355X
// Qwen3.5 SGLang scripts: graphs up to min(conc,64), 2×conc running
// requests, 32k prefill chunks, and six tokenizer workers from TP4 on.
var qwen35AMDScheduling = ArgGroup("qwen3.5 amd scheduling",
	FlagFn("--cuda-graph-max-bs", ConcCapped(64)),
	FlagFn("--max-running-requests", TwiceConc),
	Flag("--max-prefill-tokens", 32768),
	Flag("--chunked-prefill-size", 32768),
	Flag("--scheduler-recv-interval", 30),
	Flag("--stream-interval", 50),
	Flag("--tokenizer-worker-num", 6).If(TPAtLeast(4)),
)

// qwen35CacheDtypes is the cache precision of the MI325X, Blackwell and
// Hopper (H100/H200) Qwen3.5 SGLang scripts, passed right after the
// quantization: FP8 E4M3 KV and a BF16 Mamba SSM state. The MI355X script
// sets the SSM dtype through the environment instead, and the MI300X one
// keeps the default KV dtype.
var qwen35CacheDtypes = ArgGroup("qwen3.5 cache dtypes",
	Flag("--kv-cache-dtype", "fp8_e4m3"),
	Flag("--mamba-ssm-dtype", "bfloat16"),
)
