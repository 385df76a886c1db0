package simengine

import "strings"

// kvBits is the width in bits of a KV cache element of dtype (the
// engine's --kv-cache-dtype): 16 for the model's activation dtype ("",
// "auto": BF16 for FP8 and FP4 checkpoints too; SGLang's quantized KV
// cache page: FP8 or FP4 "instead of the default model precision in
// BF16"; vLLM: "auto" uses the model data type) and the 16-bit types, 4
// for the FP4 ones, else 8. It sets the pool's tokens and a decode step's
// KV reads; calibration arms match engines by it (sameSteps).
func kvBits(dtype string) int {
	switch strings.ToLower(dtype) {
	case "", "auto", "bf16", "bfloat16", "float16":
		return 16
	case "fp4_e2m1", "nvfp4", "fp4_mx_block16":
		return 4
	}
	return 8
}
