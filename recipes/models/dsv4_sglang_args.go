package models

import "sweep/recipes"

// The argument groups InferenceX's Blackwell (B200/B300) DeepSeek-V4 SGLang
// scripts share (see ArgGroup), so each recipe lists only the flags where
// it differs. The MI355X script shares only the two parsers, with the
// chunked prefill, memory and speculative flags in between, so it spells
// its flags out.

// dsv4BlackwellChatTemplate is the DeepSeek-V4 thinking template as the
// Blackwell scripts pass it ($SCRIPT_DIR/../chat_templates/...), with the
// InferenceX checkout mounted at /workspace (both keys' images).
const dsv4BlackwellChatTemplate = "/workspace/benchmarks/single_node/agentic/../chat_templates/deepseek_v4_thinking.jinja"

// dsv4BlackwellSGLangChat is DeepSeek-V4's tool-call and reasoning parsers,
// the thinking chat template, the 30-minute watchdog and the speculative
// flags, in the order both Blackwell scripts pass them.
var dsv4BlackwellSGLangChat = recipes.ArgGroup("dsv4 blackwell sglang chat",
	recipes.Flag("--tool-call-parser", "deepseekv4"),
	recipes.Flag("--reasoning-parser", "deepseek-v4"),
	recipes.Flag("--chat-template", dsv4BlackwellChatTemplate),
	recipes.Flag("--watchdog-timeout", 1800),
	recipes.SpecArgs,
)

// dsv4BlackwellSGLangTail ends both Blackwell commands (but B300's
// --skip-server-warmup on offload rows): the metrics and cache report the
// client scrapes, then the HiCache flags on DRAM rows.
var dsv4BlackwellSGLangTail = recipes.ArgGroup("dsv4 blackwell sglang tail",
	recipes.Flag("--enable-metrics", nil),
	recipes.Flag("--enable-cache-report", nil),
	recipes.OffloadArgs,
)
