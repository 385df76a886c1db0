package recipes

import (
	"path"

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
func minimaxM3FP4Blackwell(gpu string, draftDir func(*Ctx) string) *Recipe {
	const draft = "Inferact/MiniMax-M3-EAGLE3-GQA"
	return &Recipe{
		Name:          "minimaxm3_fp4_" + gpu + "_mtp",
		Keys:          []string{"minimaxm3-fp4-" + gpu + "-vllm-agentic-mtp"},
		Engine:        configs.VLLM,
		EngineVersion: "v0.27.1",
		CommandFile:   "vllm_command.txt",
		Env: []EnvVar{
			Env("PYTHONNOUSERSITE", "1"),
			Env("VLLM_ENGINE_READY_TIMEOUT_S", "3600"),
			Env("VLLM_FLOAT32_MATMUL_PRECISION", "high"),
			Env("VLLM_FLASHINFER_ALLREDUCE_BACKEND", "trtllm"),
		},
		Parallel: Parallel{EP: EPIgnored},
		Spec: Speculation{
			VLLM:       &VLLMSpecConfig{Method: "eagle3", Model: draft, NumSpeculativeTokens: 3, AttentionBackend: "FLASH_ATTN"},
			DraftModel: func(c *Ctx) string { return draftDir(c) + "/" + path.Base(draft) },
			Golden:     GoldenRef{File: "minimaxm3_eagle3_gqa", Model: "minimax-m3", Thinking: configs.ThinkingOn},
		},
		Args: []Arg{
			ParallelArgs,
			Flag("--gpu-memory-utilization", 0.9),
			Flag("--block-size", 128),
			Flag("--language-model-only", nil),
			Flag("--enable-prefix-caching", nil),
			Flag("--no-enable-flashinfer-autotune", nil),
			Flag("--reasoning-parser", "minimax_m3"),
			Flag("--tool-call-parser", "minimax_m3"),
			Flag("--enable-auto-tool-choice", nil),
			Flag("--default-chat-template-kwargs", thinkingEnabled),
			Flag("--attention-config", minimaxM3AttentionConfig{Backend: "FLASHINFER", UseTRTLLMAttention: true, IndexerKVDtype: "fp8"}),
			Flag("--kv-cache-dtype", "fp8"),
			Flag("--max-cudagraph-capture-size", 512),
			Flag("--max-num-batched-tokens", 16384),
			Flag("--stream-interval", 20),
			Flag("--trust-remote-code", nil),
			SpecArgs,
			OffloadArgs,
		},
		Offload: []Offload{{
			Backend: "vllm-simple",
			Env:     []EnvVar{Env("VLLM_USE_SIMPLE_KV_OFFLOAD", "1")},
			Args: func(c *Ctx) ([]Arg, error) {
				return []Arg{Flag("--kv-transfer-config", kvTransferConfig{
					Connector: "SimpleCPUOffloadConnector", Role: "kv_both",
					Extra: simpleCPUOffloadTotal{CPUBytes: int64(c.TotalCPUDRAMGB()) << 30, Lazy: true},
				})}, nil
			},
		}},
		// No engine flag depends on conc: every point of an arm has the same server.
		Client: Client{},
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
func minimaxM3FP4B300() *Recipe {
	return minimaxM3FP4Blackwell("b300", func(*Ctx) string { return "/data/models" })
}

// minimaxM3FP4B200 replaces minimaxm3_fp4_b200_mtp.sh.
func minimaxM3FP4B200() *Recipe {
	return minimaxM3FP4Blackwell("b200", func(c *Ctx) string { return path.Dir(path.Clean(c.ModelPath)) })
}
