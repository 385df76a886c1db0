package models

import (
	"slices"
	"sort"
	"sweep/configs"
	"sweep/recipes"
)

// dsv4VLLMAttentionConfig is the Blackwell scripts' --attention-config.
type dsv4VLLMAttentionConfig struct {
	Backend                     string `json:"backend"`
	UsePrefillQueryQuantization bool   `json:"use_prefill_query_quantization"`
	UseFP4IndexerCache          bool   `json:"use_fp4_indexer_cache"`
}

var dsv4VLLMAttention = dsv4VLLMAttentionConfig{Backend: "FLASHINFER_MLA_SPARSE_DSV4", UsePrefillQueryQuantization: true, UseFP4IndexerCache: true}

// cudaGraphsNoMode is a --compilation-config that leaves the compilation
// mode at vLLM's default (no "mode" key).
type cudaGraphsNoMode struct {
	CUDAGraphMode         string `json:"cudagraph_mode"`
	CUDAGraphCaptureSizes []int  `json:"cudagraph_capture_sizes"`
}

// dsv4VLLMMaxNumSeqs is 2×conc, split over the DP ranks with DP attention.
func dsv4VLLMMaxNumSeqs(c *recipes.Ctx) int {
	if c.DPAttn {
		return 2 * c.Conc / c.TP
	}
	return 2 * c.Conc
}

// dsv4VLLMCaptureSizes are the token-sized graph sizes (1..max-num-seqs
// sequences × 4 tokens) plus extra, sorted and unique.
func dsv4VLLMCaptureSizes(c *recipes.Ctx, extra ...int) []int {
	var out []int
	for n := 1; n <= dsv4VLLMMaxNumSeqs(c); n++ {
		out = append(out, 4*n)
	}
	out = append(out, extra...)
	sort.Ints(out)
	return slices.Compact(out)
}

// dsv4VLLMSimpleCPU is the scripts' SimpleCPUOffloadConnector config: the
// budget split over the GPUs (decimal GB) and cross-layer blocks.
type dsv4VLLMSimpleCPU struct {
	CPUBytes     int64  `json:"cpu_bytes_to_use,omitempty"`
	CPUBytesRank int64  `json:"cpu_bytes_to_use_per_rank,omitempty"`
	CrossLayers  string `json:"enable_cross_layers_blocks"`
	Lazy         bool   `json:"lazy_offload"`
}

// dsv4BlackwellVLLM is the shared shape of benchmarks/single_node/agentic/
// dsv4_fp4_{b200,b300}_vllm_mtp.sh: MTP with token-sized FULL_DECODE_ONLY
// graphs, the sparse MLA DSv4 attention backend with an FP4 indexer cache,
// the MegaMoE DeepGEMM backend with expert parallelism, SimpleCPU offload
// on vllm-simple rows, and DP attention behind vllm-router.
//
// Not modelled: the vllm-router and Mooncake pip installs, and the
// scripts' Mooncake branch (no master config row uses it); DCP/PCP sizes
// other than 1.
func dsv4BlackwellVLLM(gpu string, env []recipes.EnvVar, args []recipes.Arg, offload func(*recipes.Ctx) dsv4VLLMSimpleCPU) *recipes.Recipe {
	return &recipes.Recipe{
		Name:          "dsv4_fp4_" + gpu + "_vllm_mtp",
		Keys:          []string{"dsv4-fp4-" + gpu + "-vllm-agentic-mtp"},
		Engine:        configs.VLLM,
		EngineVersion: "v0.27.1",
		CommandFile:   "vllm_command.txt",
		Env: append([]recipes.EnvVar{
			recipes.Env("PYTORCH_ALLOC_CONF", "expandable_segments:True").If(recipes.DPAttention),
			recipes.Env("TORCH_CUDA_ARCH_LIST", "10.0"),
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("VLLM_FLOAT32_MATMUL_PRECISION", "high"),
		}, env...),
		Parallel: recipes.Parallel{
			DataParallelOne: true, EP: recipes.EPIgnored, DPAttention: true,
			DPAttnArgs: []recipes.Arg{recipes.Flag("--prefill-schedule-interval", 8), recipes.Flag("--long-prefill-token-threshold", 512)},
		},
		Spec: recipes.Speculation{VLLM: &recipes.VLLMSpecConfig{Method: "mtp", NumSpeculativeTokens: 3}, Golden: dsv4Golden},
		Args: append(args,
			recipes.Flag("--enable-expert-parallel", nil).If(func(c *recipes.Ctx) bool { return c.EP > 1 }),
			recipes.Flag("--enable-ep-weight-filter", nil).If(func(c *recipes.Ctx) bool { return c.EP > 1 }),
			recipes.Flag("--moe-backend", "deep_gemm_amxf4_mega_moe").If(func(c *recipes.Ctx) bool { return c.EP > 1 }),
			recipes.OffloadArgs,
		),
		Offload: []recipes.Offload{{
			Backend: "vllm-simple",
			Env:     []recipes.EnvVar{recipes.Env("PYTHONHASHSEED", "42")},
			Args: func(c *recipes.Ctx) ([]recipes.Arg, error) {
				return []recipes.Arg{recipes.Flag("--kv-transfer-config", recipes.KVTransferConfig{
					Connector: "SimpleCPUOffloadConnector", Role: "kv_both", Extra: offload(c),
				})}, nil
			},
		}},
		// No ArmServer: --max-num-seqs and the graph sizes follow conc, and on DP-attention arms 2×conc/TP per rank binds.
		Client: recipes.Client{ServerMetrics: true, MetricsURLEnv: true, RequiredMetricPrefix: "vllm:"},
	}
}

// dsv4FP4B300VLLM replaces dsv4_fp4_b300_vllm_mtp.sh: FlashInfer
// all-reduce instead of the custom one on TP rows, 0.92 of HBM on DEP8
// (0.95 otherwise) with 16384 batched tokens, lazy offload without DP
// attention.
func dsv4FP4B300VLLM() *recipes.Recipe {
	dep8 := func(c *recipes.Ctx) bool { return c.DPAttn && c.TP == 8 }
	return dsv4BlackwellVLLM("b300",
		[]recipes.EnvVar{
			recipes.Env("VLLM_USE_V2_MODEL_RUNNER", "1"),
			recipes.Env("VLLM_ENGINE_READY_TIMEOUT_S", "3600"),
			recipes.Env("VLLM_PREFIX_CACHE_RETENTION_INTERVAL", "32768"),
			recipes.Env("VLLM_DSV4_MEGA_FP8_COMBINE", "1"),
			recipes.Env("NCCL_NVLS_ENABLE", "1"),
			recipes.Env("VLLM_USE_RUST_FRONTEND", "1"),
			recipes.Env("VLLM_ALLREDUCE_USE_FLASHINFER", "1").If(recipes.NoDPAttention),
			recipes.Env("VLLM_FLASHINFER_ALLREDUCE_BACKEND", "auto").If(recipes.NoDPAttention),
		},
		[]recipes.Arg{
			recipes.FlagFn("--gpu-memory-utilization", func(c *recipes.Ctx) float64 {
				if dep8(c) {
					return 0.92
				}
				return 0.95
			}),
			recipes.Flag("--trust-remote-code", nil),
			recipes.Flag("--no-enable-flashinfer-autotune", nil),
			recipes.Flag("--disable-hybrid-kv-cache-manager", false),
			recipes.FlagFn("--max-num-seqs", dsv4VLLMMaxNumSeqs),
			dsv4VLLMKVLayout,
			recipes.Flag("--attention-config", dsv4VLLMAttention),
			recipes.SpecArgs,
			recipes.Flag("--disable-uvicorn-access-log", nil),
			dsv4VLLMParsers,
			recipes.FlagFn("--compilation-config", func(c *recipes.Ctx) recipes.VLLMCompilationConfig {
				return recipes.VLLMCompilationConfig{CUDAGraphMode: "FULL_DECODE_ONLY", CUDAGraphCaptureSizes: dsv4VLLMCaptureSizes(c)}
			}),
			recipes.ParallelArgs,
			recipes.Flag("--disable-custom-all-reduce", nil).If(recipes.NoDPAttention),
			recipes.FlagFn("--max-num-batched-tokens", func(c *recipes.Ctx) int {
				if dep8(c) {
					return 16384
				}
				return 8192
			}).If(recipes.DPAttention),
		},
		func(c *recipes.Ctx) dsv4VLLMSimpleCPU {
			return dsv4VLLMSimpleCPU{CPUBytes: int64(c.TotalCPUDRAMGB()) * 1_000_000_000 / int64(c.TP), CrossLayers: "true", Lazy: !c.DPAttn}
		})
}

// dsv4FP4B200VLLM replaces dsv4_fp4_b200_vllm_mtp.sh: FULL_AND_PIECEWISE
// graphs (plus 100..500 tokens) on TP rows, NUMA binding and the cumem
// allocator, 0.90 of HBM, and per-rank offload bytes.
func dsv4FP4B200VLLM() *recipes.Recipe {
	return dsv4BlackwellVLLM("b200",
		[]recipes.EnvVar{
			recipes.Env("VLLM_ENGINE_READY_TIMEOUT_S", "3600"),
			recipes.Env("VLLM_PREFIX_CACHE_RETENTION_INTERVAL", "32768"),
			recipes.Env("VLLM_USE_V2_MODEL_RUNNER", "1"),
			recipes.Env("VLLM_USE_RUST_FRONTEND", "1"),
			recipes.Env("VLLM_DSV4_MEGA_FP8_COMBINE", "1"),
			recipes.Env("VLLM_RPC_TIMEOUT", "600000"),
		},
		[]recipes.Arg{
			recipes.Flag("--trust-remote-code", nil),
			dsv4VLLMKVLayout,
			recipes.Flag("--gpu-memory-utilization", 0.90),
			recipes.Flag("--numa-bind", nil),
			recipes.Flag("--enable-cumem-allocator", nil),
			recipes.Flag("--no-enable-flashinfer-autotune", nil),
			dsv4VLLMParsers,
			recipes.Flag("--attention-config", dsv4VLLMAttention),
			recipes.SpecArgs,
			recipes.Flag("--disable-hybrid-kv-cache-manager", false),
			recipes.Flag("--disable-uvicorn-access-log", nil),
			recipes.FlagFn("--compilation-config", func(c *recipes.Ctx) any {
				if c.DPAttn {
					return recipes.VLLMCompilationConfig{CUDAGraphMode: "FULL_DECODE_ONLY", CUDAGraphCaptureSizes: dsv4VLLMCaptureSizes(c)}
				}
				return cudaGraphsNoMode{CUDAGraphMode: "FULL_AND_PIECEWISE", CUDAGraphCaptureSizes: dsv4VLLMCaptureSizes(c, 100, 200, 300, 400, 500)}
			}),
			recipes.FlagFn("--max-num-seqs", dsv4VLLMMaxNumSeqs),
			recipes.ParallelArgs,
			recipes.Flag("--max-num-batched-tokens", 8192).If(recipes.DPAttention),
		},
		func(c *recipes.Ctx) dsv4VLLMSimpleCPU {
			return dsv4VLLMSimpleCPU{CPUBytesRank: int64(c.TotalCPUDRAMGB()) * 1_000_000_000 / int64(c.TP), CrossLayers: "true"}
		})
}
