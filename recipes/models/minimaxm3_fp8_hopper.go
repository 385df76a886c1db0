package models

import (
	"strings"
	"sweep/recipes"

	"sweep/configs"
)

// mooncakeHopperEnv is what the H100/H200 MiniMax-M3 recipes export for
// the Mooncake store.
var mooncakeHopperEnv = []recipes.EnvVar{
	recipes.Env("PYTHONHASHSEED", "0"),
	recipes.Env("MC_SLICE_SIZE", "1048576"),
	recipes.Env("MC_WORKERS_PER_CTX", "4"),
	recipes.Env("MC_ENABLE_DEST_DEVICE_AFFINITY", "1"),
}

// mooncakeLoadAsync is the plain MooncakeStoreConnector config.
var mooncakeLoadAsync = recipes.KVTransferConfig{Connector: "MooncakeStoreConnector", Role: "kv_both", Extra: map[string]any{"load_async": true}}

// hfHubCache is the workflow's HF_HUB_CACHE (benchmark-tmpl.yml).
const hfHubCache = "/mnt/hf_hub_cache/"

// minimaxM3HopperSpec is the Hopper recipes' EAGLE3 drafter: FLASH_ATTN
// draft attention and real verification (no rejection method) on eval rows.
func minimaxM3HopperSpec() recipes.Speculation {
	return recipes.Speculation{
		VLLM: &recipes.VLLMSpecConfig{
			Method: "eagle3", Model: "Inferact/MiniMax-M3-EAGLE3-GQA", NumSpeculativeTokens: 3, AttentionBackend: "FLASH_ATTN",
		},
		Golden: recipes.GoldenRef{File: "minimaxm3_eagle3_gqa", Model: "minimax-m3", Thinking: configs.ThinkingOn},
	}
}

// minimaxM3Hopper is the shared shape of benchmarks/single_node/agentic/
// minimaxm3_fp8_{h100,h200}_mtp.sh: EAGLE3 with token-sized graph capture
// (2×conc sequences × 4 tokens), TRITON attention, and Mooncake on DRAM
// rows. H100 also offloads 26 GB of weights per rank to CPU and loads
// safetensors lazily, and leaves 26 GB less per rank to the Mooncake store.
//
// Not modelled: the Mooncake wheel install (pip install
// mooncake-transfer-engine-cuda13==0.3.11.post1) and the draft model
// download.
func minimaxM3Hopper(gpu string, h100 bool) *recipes.Recipe {
	r := &recipes.Recipe{
		Name:          "minimaxm3_fp8_" + gpu + "_mtp",
		Keys:          []string{"minimaxm3-fp8-" + gpu + "-vllm-agentic-mtp"},
		Engine:        configs.VLLM,
		EngineVersion: "v0.27.1",
		CommandFile:   "vllm_command.txt",
		Env: []recipes.EnvVar{
			recipes.Env("VLLM_ENGINE_READY_TIMEOUT_S", "3600"),
			recipes.Env("PYTHONNOUSERSITE", "1"),
		},
		Parallel: recipes.Parallel{DataParallelOne: true, EP: recipes.EPIgnored},
		Spec:     minimaxM3HopperSpec(),
		Client:   recipes.Client{Loader: recipes.Loader062126, ServerMetrics: true, MetricsURLEnv: true, RequiredMetricPrefix: "vllm:"},
		// Both conc-dependent flags are upper bounds a smaller load never reaches.
		ArmServer: "--max-num-seqs 2×conc and --max-cudagraph-capture-size 8×conc only bound admission and graph capture; a smaller load stays below both",
	}
	args := []recipes.Arg{recipes.ParallelArgs, recipes.Flag("--gpu-memory-utilization", 0.90)}
	if h100 {
		args = append(args, recipes.Flag("--cpu-offload-gb", 26))
	}
	args = append(args,
		recipes.Flag("--kv-cache-dtype", "fp8"),
		recipes.Flag("--attention-backend", "TRITON_ATTN"),
		recipes.Flag("--block-size", 128),
		recipes.Flag("--language-model-only", nil),
		recipes.Flag("--enable-prefix-caching", nil),
		recipes.Flag("--enable-prompt-tokens-details", nil),
		recipes.Flag("--default-chat-template-kwargs", thinkingEnabled),
		recipes.FlagFn("--max-num-seqs", recipes.TwiceConc),
		recipes.FlagFn("--max-cudagraph-capture-size", func(c *recipes.Ctx) int { return 2 * c.Conc * 4 }),
		recipes.SpecArgs,
		minimaxM3Parsers,
	)
	if h100 {
		args = append(args, recipes.Flag("--safetensors-load-strategy", "lazy"))
	}
	args = append(args, recipes.Flag("--trust-remote-code", nil), recipes.OffloadArgs)
	r.Args = args
	// (total GiB − 414 GiB checkpoint page cache) / TP − 4 GiB local buffer
	// (− 26 GiB CPU-offloaded weights on H100).
	weights := 0
	if h100 {
		weights = 26
	}
	r.Offload = []recipes.Offload{recipes.Mooncake(recipes.MooncakeOptions{
		PerRankGB: func(c *recipes.Ctx) int {
			gib := int(int64(c.TotalCPUDRAMGB()) * 1_000_000_000 / (1 << 30))
			return (gib-414)/c.TP - weights - 4
		},
		HighWatermark: "0.80", Transfer: mooncakeLoadAsync, Env: mooncakeHopperEnv,
	})}
	if !h100 {
		// The H200 script loads the complete snapshot of the HF cache
		// (HF_HUB_CACHE/models--ORG--NAME/snapshots/REV); H100 loads the id.
		r.ModelPath = func(c *recipes.Ctx) string {
			return hfHubCache + "models--" + strings.ReplaceAll(c.Model, "/", "--") + "/snapshots/" + recipes.HFSnapshotPlaceholder
		}
	}
	return r
}

// minimaxM3FP8H200 replaces minimaxm3_fp8_h200_mtp.sh.
func minimaxM3FP8H200() *recipes.Recipe { return minimaxM3Hopper("h200", false) }

// minimaxM3FP8H100 replaces minimaxm3_fp8_h100_mtp.sh.
func minimaxM3FP8H100() *recipes.Recipe { return minimaxM3Hopper("h100", true) }
