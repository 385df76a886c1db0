package models

import "sweep/recipes"

// The argument groups InferenceX's MiniMax-M3 vLLM scripts share (see
// ArgGroup), so each recipe lists only the flags where it differs.

// minimaxM3Parsers are MiniMax-M3's tool-call and reasoning parsers with
// automatic tool choice, in the order the MI300X, MI325X and Hopper
// (H100/H200) scripts pass them. The Blackwell scripts pass the reasoning
// parser first and the MI355X one passes none, so they spell theirs out.
var minimaxM3Parsers = recipes.ArgGroup("minimax-m3 parsers",
	recipes.Flag("--tool-call-parser", "minimax_m3"),
	recipes.Flag("--reasoning-parser", "minimax_m3"),
	recipes.Flag("--enable-auto-tool-choice", nil),
)

// minimaxM3ROCmServing is what the MI300X and MI355X scripts pass after
// the parsers and before the speculative flags: thinking forced on through
// the chat template, 2×conc sequences and 20-token stream chunks.
var minimaxM3ROCmServing = recipes.ArgGroup("minimax-m3 rocm serving",
	recipes.Flag("--default-chat-template-kwargs", thinkingEnabled),
	recipes.FlagFn("--max-num-seqs", recipes.TwiceConc),
	recipes.Flag("--stream-interval", 20),
)
