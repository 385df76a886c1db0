package recipes

// The argument groups InferenceX's Blackwell (B200/B300) DeepSeek-V4 SGLang
// scripts share (see ArgGroup), so each recipe lists only the flags where
// it differs. The MI355X script shares only the two parsers, with the
// chunked prefill, memory and speculative flags in between, so it spells
// its flags out.

// dsv4BlackwellSGLangChat is DeepSeek-V4's tool-call and reasoning parsers,
// the thinking chat template, the 30-minute watchdog and the speculative
// flags, in the order both Blackwell scripts pass them.
var dsv4BlackwellSGLangChat = ArgGroup("dsv4 blackwell sglang chat",
	Flag("--tool-call-parser", "deepseekv4"),
	Flag("--reasoning-parser", "deepseek-v4"),
	Flag("--chat-template", dsv4BlackwellChatTemplate),
	Flag("--watchdog-timeout", 1800),
	SpecArgs,
)

// dsv4BlackwellSGLangTail ends both Blackwell commands (but B300's
// --skip-server-warmup on offload rows): the metrics and cache report the
// client scrapes, then the HiCache flags on DRAM rows.
var dsv4BlackwellSGLangTail = ArgGroup("dsv4 blackwell sglang tail",
	Flag("--enable-metrics", nil),
	Flag("--enable-cache-report", nil),
	OffloadArgs,
)
