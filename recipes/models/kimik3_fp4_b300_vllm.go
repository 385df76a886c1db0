package models

import (
	"fmt"
	"sweep/recipes"

	"sweep/configs"
	"sweep/configs/matrix"
)

// kimiK3B300DSpark is the DSpark drafter the B300 Kimi-K3 script uses at
// n speculative tokens (staged under /data/models, the launcher's writable
// models directory).
func kimiK3B300DSpark(n int) recipes.Speculation {
	return recipes.Speculation{
		VLLM: &recipes.VLLMSpecConfig{
			Method: "dspark", Model: "/data/models/Kimi-K3-DSpark", NumSpeculativeTokens: n,
			AttentionBackend: "TOKENSPEED_MLA", DraftSampleMethod: "probabilistic",
		},
		EvalRejectionSampleMethod: "block",
		Golden: recipes.GoldenRef{
			File:  "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method",
			Model: "kimi-k3", Thinking: configs.ThinkingOn,
		},
	}
}

// kimiK3B300Spec drafts 7 tokens up to conc 8, 3 up to conc 16 and none
// above, as the script does.
func kimiK3B300Spec(r *matrix.Row) recipes.Speculation {
	switch {
	case r.Conc <= 8:
		return kimiK3B300DSpark(7)
	case r.Conc <= 16:
		return kimiK3B300DSpark(3)
	}
	return recipes.Speculation{}
}

// kimiK3B300CaptureSizes are the script's graph sizes: (1+k)·n for n up to
// min(2×conc, 128), then the powers of two from 64 to 8192 above that.
func kimiK3B300CaptureSizes(c *recipes.Ctx, k int) []int {
	dense := min(2*c.Conc, 128)
	var out []int
	for n := 1; n <= dense; n++ {
		out = append(out, n*(1+k))
	}
	for t := 64; t <= 8192; t *= 2 {
		if t > dense*(1+k) {
			out = append(out, t)
		}
	}
	return out
}

// mooncakeRailPlaceholder stands for the RDMA device the B300 Kimi-K3
// script probes at run time (the first ACTIVE mlx5 rail).
const mooncakeRailPlaceholder = "${MOONCAKE_RAIL}"

// kimiK3FP4B300VLLM replaces benchmarks/single_node/agentic/
// kimik3_fp4_b300_vllm_mtp.sh: TP8 with decode context parallelism over
// the row's dcp-size (all-to-all), DSpark speculation by concurrency,
// TOKENSPEED MLA attention, dense-then-power-of-two graph sizes, and a
// Mooncake store of budget/TP GB per rank with recompute on load failure.
//
// Not modelled: the Mooncake wheel install and the RDMA rail probe (the
// store config's device_name is the run-time placeholder ${MOONCAKE_RAIL};
// real runs of Mooncake rows are refused).
func kimiK3FP4B300VLLM() *recipes.Recipe {
	return &recipes.Recipe{
		Name:          "kimik3_fp4_b300_vllm_mtp",
		Keys:          []string{"kimik3-fp4-b300-vllm-agentic-dspark"},
		Engine:        configs.VLLM,
		EngineVersion: "v0.27.1",
		CommandFile:   "vllm_command.txt",
		Env: []recipes.EnvVar{
			recipes.Env("VLLM_ALLREDUCE_USE_FLASHINFER", "1"),
			recipes.Env("VLLM_ENABLE_K3_LATENT_MOE_TAIL_FUSION", "1"),
			recipes.Env("VLLM_USE_V2_MODEL_RUNNER", "1"),
			recipes.Env("VLLM_USE_DIRECT_DCP_A2A", "1"),
			recipes.Env("VLLM_USE_DIRECT_DCP_Q_GATHER", "1"),
			recipes.Env("VLLM_USE_DIRECT_DCP_KV_GATHER", "1"),
			recipes.Env("VLLM_ENGINE_READY_TIMEOUT_S", "3600"),
			recipes.Env("VLLM_RPC_TIMEOUT", "600000"),
			recipes.Env("VLLM_PREFIX_CACHE_RETENTION_INTERVAL", "0"),
			recipes.Env("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "0"),
			recipes.Env("PYTHONNOUSERSITE", "1"),
			recipes.Env("TORCH_CUDA_ARCH_LIST", "10.0"),
			recipes.Env("PYTHONHASHSEED", "42"),
			recipes.Env("VLLM_HTTP_TIMEOUT_KEEP_ALIVE", "900"),
			recipes.Env("AIPERF_HTTP_TCP_USER_TIMEOUT", "900000"),
		},
		Parallel: recipes.Parallel{EP: recipes.EPIgnored},
		Spec:     kimiK3B300DSpark(7),
		SpecFor:  kimiK3B300Spec,
		Args: []recipes.Arg{
			recipes.ParallelArgs,
			recipes.FlagFn("--decode-context-parallel-size", func(c *recipes.Ctx) int { return c.Row.DCPSize }).If(dcpAbove1),
			recipes.Flag("--dcp-comm-backend", "a2a").If(dcpAbove1),
			recipes.FlagFn("--max-num-seqs", recipes.TwiceConc),
			recipes.FlagFn("--gpu-memory-utilization", func(c *recipes.Ctx) float64 {
				if c.Conc >= 56 {
					return 0.90
				}
				return 0.92
			}),
			recipes.Flag("--max-num-batched-tokens", 16384),
			recipes.Flag("--trust-remote-code", nil),
			recipes.Flag("--language-model-only", nil),
			recipes.Flag("--load-format", "fastsafetensors"),
			recipes.Flag("--moe-backend", "auto"),
			recipes.Flag("--no-enable-flashinfer-autotune", nil),
			recipes.Flag("--enable-cumem-allocator", nil),
			recipes.Flag("--enable-prefix-caching", nil),
			recipes.Flag("--prefix-match-unit", 128),
			recipes.Flag("--kv-cache-dtype", "fp8"),
			recipes.Flag("--stream-interval", 10),
			recipes.Flag("--attention-backend", "TOKENSPEED_MLA"),
			recipes.Flag("--attention-config", kimiK3AttentionConfig{MLAPrefillBackend: "TRTLLM_RAGGED", UsePrefillQueryQuantization: true}),
			recipes.SpecArgs,
			recipes.FlagFn("--compilation-config", func(c *recipes.Ctx) cudaGraphsNoMode {
				k := kimiK3B300Spec(c.Row).NumSpecTokens()
				return cudaGraphsNoMode{CUDAGraphMode: "FULL_AND_PIECEWISE", CUDAGraphCaptureSizes: kimiK3B300CaptureSizes(c, k)}
			}),
			recipes.Flag("--disable-uvicorn-access-log", nil),
			recipes.OffloadArgs,
		},
		Offload: []recipes.Offload{recipes.Mooncake(recipes.MooncakeOptions{
			PerRankGB:     func(c *recipes.Ctx) int { return c.TotalCPUDRAMGB() / c.TP },
			DeviceName:    mooncakeRailPlaceholder,
			HighWatermark: "0.95",
			Transfer: recipes.KVTransferConfig{
				Connector: "MooncakeStoreConnector", Role: "kv_both", LoadFailurePolicy: "recompute",
				Extra: mooncakeKimiExtra{LoadAsync: true, LookupAsync: true},
			},
			Env: []recipes.EnvVar{
				recipes.Env("MC_GID_INDEX", "3"),
				recipes.Env("MC_STORE_MEMCPY", "1"),
				recipes.Env("MC_ENABLE_DEST_DEVICE_AFFINITY", "1"),
				recipes.Env("MC_SLICE_SIZE", "1048576"),
				recipes.Env("MC_WORKERS_PER_CTX", "4"),
				recipes.Env("WITH_NVIDIA_PEERMEM", "0"),
				recipes.Env("VLLM_MOONCAKE_LOAD_RECV_THREADS", "4"),
			},
		})},
		// No ArmServer: the speculation depth, --max-num-seqs and the graph sizes all follow conc.
		Client: recipes.Client{},
		Check: func(c *recipes.Ctx) error {
			if err := recipes.RequireTP(8)(c); err != nil {
				return err
			}
			if c.EP > 1 {
				return fmt.Errorf("ep %d: the recipe runs without expert parallelism", c.EP)
			}
			if c.Row.DCPSize > 0 && c.TP%c.Row.DCPSize != 0 {
				return fmt.Errorf("dcp-size %d does not divide tp %d", c.Row.DCPSize, c.TP)
			}
			return nil
		},
	}
}

func dcpAbove1(c *recipes.Ctx) bool { return c.Row.DCPSize > 1 }

// kimiK3AttentionConfig is the B300 Kimi-K3 script's --attention-config.
type kimiK3AttentionConfig struct {
	MLAPrefillBackend           string `json:"mla_prefill_backend"`
	UsePrefillQueryQuantization bool   `json:"use_prefill_query_quantization"`
}

// mooncakeKimiExtra is the connector's extra config of the Kimi-K3 script.
type mooncakeKimiExtra struct {
	LoadAsync     bool `json:"load_async"`
	LookupAsync   bool `json:"lookup_async"`
	EnableOffload bool `json:"enable_offload"`
}
