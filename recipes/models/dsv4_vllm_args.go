package models

import "sweep/recipes"

// The argument groups InferenceX's Blackwell (B200/B300) DeepSeek-V4 vLLM
// scripts share (see ArgGroup), so each recipe lists only the flags where
// it differs. The MI355X script passes the KV dtype without the block
// size and model length, and the parsers in another order, so it spells
// its flags out.

// dsv4VLLMKVLayout is the KV layout both Blackwell scripts pass together:
// FP8 KV in 256-token blocks and the full 1M-token context.
var dsv4VLLMKVLayout = recipes.ArgGroup("dsv4 vllm kv layout",
	recipes.Flag("--kv-cache-dtype", "fp8"),
	recipes.Flag("--block-size", 256),
	recipes.Flag("--max-model-len", 1048576),
)

// dsv4VLLMParsers are DeepSeek-V4's tokenizer mode, tool-call parser with
// automatic tool choice, and reasoning parser, in the Blackwell scripts'
// order.
var dsv4VLLMParsers = recipes.ArgGroup("dsv4 vllm parsers",
	recipes.Flag("--tokenizer-mode", "deepseek_v4"),
	recipes.Flag("--tool-call-parser", "deepseek_v4"),
	recipes.Flag("--enable-auto-tool-choice", nil),
	recipes.Flag("--reasoning-parser", "deepseek_v4"),
)
