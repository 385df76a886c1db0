package models

import (
	"path"
	"sweep/recipes"

	"sweep/configs"
)

// minimaxM3FP4Blackwell is the shared shape of benchmarks/single_node/
// agentic/minimaxm3_fp4_{b200,b300}_mtp.sh (both launchers fall back to
// them from the _vllm_ name): EAGLE3-GQA with a draft head staged beside
// the target weights, FlashInfer TRT-LLM attention with an FP8 indexer,
// flashinfer autotune off, and vLLM's simple CPU offload with the whole
// DRAM budget (GiB) on vllm-simple rows. The draft goes to /data/models on
// B300 and next to $MODEL_PATH on B200.
//
// Not modelled: the B200 script's checkpoint-completeness checks and the
// draft download.
func minimaxM3FP4Blackwell(gpu string, draftDir func(*recipes.Ctx) string) *recipes.Recipe {
	const draft = "Inferact/MiniMax-M3-EAGLE3-GQA"
	return &recipes.Recipe{
		Name:          "minimaxm3_fp4_" + gpu + "_mtp",
		Keys:          []string{"minimaxm3-fp4-" + gpu + "-vllm-agentic-mtp"},
		Engine:        configs.VLLM,
		EngineVersion: "v0.27.1",
		CommandFile:   "vllm_command.txt",
		Env: []recipes.EnvVar{
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("VLLM_ENGINE_READY_TIMEOUT_S", "3600"),
			recipes.Env("VLLM_FLOAT32_MATMUL_PRECISION", "high"),
			recipes.Env("VLLM_FLASHINFER_ALLREDUCE_BACKEND", "trtllm"),
		},
		Parallel: recipes.Parallel{EP: recipes.EPIgnored},
		Spec: recipes.Speculation{
			VLLM:       &recipes.VLLMSpecConfig{Method: "eagle3", Model: draft, NumSpeculativeTokens: 3, AttentionBackend: "FLASH_ATTN"},
			DraftModel: func(c *recipes.Ctx) string { return draftDir(c) + "/" + path.Base(draft) },
			Golden:     recipes.GoldenRef{File: "minimaxm3_eagle3_gqa", Model: "minimax-m3", Thinking: configs.ThinkingOn},
		},
		Args: []recipes.Arg{
			recipes.ParallelArgs,
			recipes.Flag("--gpu-memory-utilization", 0.9),
			recipes.Flag("--block-size", 128),
			recipes.Flag("--language-model-only", nil),
			recipes.Flag("--enable-prefix-caching", nil),
			recipes.Flag("--no-enable-flashinfer-autotune", nil),
			recipes.Flag("--reasoning-parser", "minimax_m3"),
			recipes.Flag("--tool-call-parser", "minimax_m3"),
			recipes.Flag("--enable-auto-tool-choice", nil),
			recipes.Flag("--default-chat-template-kwargs", thinkingEnabled),
			recipes.Flag("--attention-config", minimaxM3AttentionConfig{Backend: "FLASHINFER", UseTRTLLMAttention: true, IndexerKVDtype: "fp8"}),
			recipes.Flag("--kv-cache-dtype", "fp8"),
			recipes.Flag("--max-cudagraph-capture-size", 512),
			recipes.Flag("--max-num-batched-tokens", 16384),
			recipes.Flag("--stream-interval", 20),
			recipes.Flag("--trust-remote-code", nil),
			recipes.SpecArgs,
			recipes.OffloadArgs,
		},
		Offload: []recipes.Offload{{
			Backend: "vllm-simple",
			Env:     []recipes.EnvVar{recipes.Env("VLLM_USE_SIMPLE_KV_OFFLOAD", "1")},
			Args: func(c *recipes.Ctx) ([]recipes.Arg, error) {
				return []recipes.Arg{recipes.Flag("--kv-transfer-config", recipes.KVTransferConfig{
					Connector: "SimpleCPUOffloadConnector", Role: "kv_both",
					Extra: simpleCPUOffloadTotal{CPUBytes: int64(c.TotalCPUDRAMGB()) << 30, Lazy: true},
				})}, nil
			},
		}},
		// No engine flag depends on conc: every point of an arm has the same server.
		Client: recipes.Client{},
	}
}

// minimaxM3AttentionConfig is vLLM's --attention-config object as the
// MiniMax-M3 Blackwell scripts write it.
type minimaxM3AttentionConfig struct {
	Backend            string `json:"backend"`
	UseTRTLLMAttention bool   `json:"use_trtllm_attention"`
	IndexerKVDtype     string `json:"indexer_kv_dtype"`
}

// simpleCPUOffloadTotal is SimpleCPUOffloadConnector's extra config with
// one budget for the whole engine (cpu_bytes_to_use), in InferenceX's key
// order.
type simpleCPUOffloadTotal struct {
	CPUBytes int64 `json:"cpu_bytes_to_use"`
	Lazy     bool  `json:"lazy_offload"`
}

// minimaxM3FP4B300 replaces minimaxm3_fp4_b300_mtp.sh.
func minimaxM3FP4B300() *recipes.Recipe {
	return minimaxM3FP4Blackwell("b300", func(*recipes.Ctx) string { return "/data/models" })
}

// minimaxM3FP4B200 replaces minimaxm3_fp4_b200_mtp.sh.
func minimaxM3FP4B200() *recipes.Recipe {
	return minimaxM3FP4Blackwell("b200", func(c *recipes.Ctx) string { return path.Dir(path.Clean(c.ModelPath)) })
}
