package recipes

// The argument groups InferenceX's Qwen3.5 SGLang scripts share, so each
// recipe lists only the flags where it differs. Each group expands in place
// to exactly the flags it names, in order: a recipe's argv is the same as
// with the flags written out.

// ArgGroup is a named run of flags that several recipes pass in the same
// order; it expands at its position like ParallelArgs (When on the group
// or on a member still applies).
func ArgGroup(name string, args ...Arg) Arg {
	return Arg{Name: "<" + name + ">", Expand: func(*Ctx, *Recipe) ([]Arg, error) { return args, nil }}
}

// qwen35SGLangTail ends every Qwen3.5 SGLang command but the H200 ones:
// the served tokenizer, Qwen3's reasoning and tool-call parsers, the
// speculative flags and the metrics the client scrapes.
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
