package recipes_test

import (
	"slices"
	"strings"
	"sweep/recipes"
	"sweep/recipes/models"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes/schema"
)

// argValue returns the token after flag in argv; "<bare>" for a flag with
// no value; "" when absent.
func argValue(argv []string, flag string) string {
	i := slices.Index(argv, flag)
	switch {
	case i < 0:
		return ""
	case i+1 >= len(argv) || strings.HasPrefix(argv[i+1], "--"):
		return "<bare>"
	}
	return argv[i+1]
}

// TestRecipeFacts pins each recipe's salient settings to the facts read from
// InferenceX's scripts (recipe-facts: per-key server templates), one row per
// recipe, for the keys the recorded sample does not cover.
func TestRecipeFacts(t *testing.T) {
	type want struct {
		engine  map[string]string // flag -> value ("<bare>", or "" for absent)
		env     map[string]string // engine env ("" for absent)
		client  map[string]string // client flag -> value
		prefix  string            // required metric prefix
		escapes []string          // flags passed unchecked
	}
	tests := []struct {
		key  string
		keep func(*matrix.Row) bool
		want want
	}{
		{"qwen3.5-fp4-mi355x-sglang-agentic-mtp", func(r *matrix.Row) bool { return r.TP == 2 && r.Conc == 20 }, want{
			engine: map[string]string{"--mem-fraction-static": "0.8", "--quantization": "", "--enable-aiter-allreduce-fusion": "", "--mamba-ssm-dtype": "",
				"--cuda-graph-max-bs": "20", "--max-running-requests": "40", "--tokenizer-worker-num": "", "--ep-size": "2"},
			env:    map[string]string{"SGLANG_MAMBA_SSM_DTYPE": "bfloat16", "AITER_FLYDSL_FORCE": "1", "AIPERF_HTTP_TCP_USER_TIMEOUT": "", "SGLANG_SIMULATE_ACC_LEN": "3.39"},
			client: map[string]string{"--apply-chat-template": "<bare>", "--public-dataset": recipes.Loader062126256k},
			prefix: "sglang:",
		}},
		{"qwen3.5-fp8-mi300x-sglang-agentic-mtp", func(r *matrix.Row) bool { return r.EP == 8 && r.Conc == 32 }, want{
			engine: map[string]string{"--tp-size": "8", "--dp-size": "1", "--ep-size": "8", "--mem-fraction-static": "0.75", "--tokenizer-worker-num": "6",
				"--cuda-graph-max-bs": "32", "--max-running-requests": "64", "--chunked-prefill-size": "", "--page-size": "", "--kv-cache-dtype": ""},
			env:    map[string]string{"SGLANG_ENABLE_SPEC_V2": "1", "AIPERF_SERVER_METRICS_URLS": "", "AIPERF_REQUIRED_SERVER_METRIC_PREFIX": ""},
			client: map[string]string{"--apply-chat-template": "", "--server-metrics": "http://localhost:8888/metrics"},
			prefix: "sglang:",
		}},
		{"kimik3-fp4-mi355x-vllm-agentic-mtp", func(r *matrix.Row) bool { return r.Conc == 4 }, want{
			engine: map[string]string{"--max-num-seqs": "20", "--max-model-len": "1048576", "--gpu-memory-utilization": "0.9", "--load-format": "fastsafetensors",
				"--enable-expert-parallel": "", "--kv-transfer-config": ""},
			env:     map[string]string{"VLLM_ENGINE_READY_TIMEOUT_S": "7200", "PYTHONHASHSEED": "", "SAFETENSORS_FAST_GPU": "1"},
			client:  map[string]string{"--server-metrics": "", "--apply-chat-template": "", "--public-dataset": recipes.Loader062126},
			escapes: []string{"--language-model-only"},
		}},
		{"minimaxm3-fp8-mi300x-vllm-agentic-mtp", func(r *matrix.Row) bool { return r.Conc == 10 }, want{
			engine: map[string]string{"--max-num-seqs": "20", "--max-num-batched-tokens": "16384", "--block-size": "128", "--reasoning-parser": "minimax_m3",
				"--speculative-config": `{"method":"eagle3","model":"Inferact/MiniMax-M3-EAGLE3-GQA","num_speculative_tokens":3,"attention_backend":"TRITON_ATTN","rejection_sample_method":"synthetic","synthetic_acceptance_length":2.78}`},
			env:     map[string]string{"NCCL_MIN_NCHANNELS": "112", "VLLM_ROCM_USE_AITER_MHA": "0", "AIPERF_REQUIRED_SERVER_METRIC_PREFIX": "vllm:"},
			client:  map[string]string{"--apply-chat-template": "<bare>"},
			prefix:  "vllm:",
			escapes: []string{"--language-model-only", "--default-chat-template-kwargs", "--stream-interval"},
		}},
		{"glm5.2-fp8-mi325x-sglang-agentic-mtp", func(r *matrix.Row) bool { return r.Conc == 8 }, want{
			engine: map[string]string{"--ep-size": "1", "--dp-size": "", "--max-running-requests": "16", "--cuda-graph-max-bs": "16", "--context-length": "1048576",
				"--chunked-prefill-size": "131072", "--speculative-num-steps": "3", "--kv-cache-dtype": "bfloat16"},
			env:     map[string]string{"SGLANG_SIMULATE_ACC_LEN": "2.99", "AIPERF_REQUIRED_SERVER_METRIC_PREFIX": "sglang:", "AIPERF_SERVER_METRICS_URLS": ""},
			client:  map[string]string{"--benchmark-grace-period": "1800", "--server-metrics": "http://localhost:8888/metrics", "--public-dataset": recipes.Loader062126},
			prefix:  "sglang:",
			escapes: []string{"--dsa-topk-backend"},
		}},
		{"minimaxm3-fp8-mi325x-vllm-agentic-mtp", func(r *matrix.Row) bool { return r.Conc == 18 }, want{
			engine:  map[string]string{"--max-num-seqs": "36", "--max-num-batched-tokens": "32768", "--enable-expert-parallel": ""},
			env:     map[string]string{"VLLM_ROCM_USE_AITER": ""},
			prefix:  "vllm:",
			escapes: []string{"--language-model-only", "--default-chat-template-kwargs", "--stream-interval"},
		}},
		{"minimaxm3-fp4-mi355x-vllm-agentic-mtp", func(r *matrix.Row) bool { return r.TP == 2 && r.Conc == 5 }, want{
			engine:  map[string]string{"--reasoning-parser": "", "--moe-backend": "aiter", "--gpu-memory-utilization": "0.85", "--max-num-seqs": "10"},
			env:     map[string]string{"VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT": "0", "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION": "INT4"},
			prefix:  "vllm:",
			escapes: []string{"--language-model-only", "--default-chat-template-kwargs", "--stream-interval", "--hf-overrides"},
		}},
		{"glm5.2-fp4-mi355x-sglang-agentic-mtp", func(r *matrix.Row) bool { return r.TP == 8 && r.Conc == 4 }, want{
			engine: map[string]string{"--ep-size": "8", "--speculative-num-steps": "5", "--speculative-num-draft-tokens": "6", "--max-running-requests": "4",
				"--enable-cache-report": "", "--enable-hierarchical-cache": ""},
			env:    map[string]string{"SGLANG_SIMULATE_ACC_LEN": "3.61", "AIPERF_REQUIRED_SERVER_METRIC_PREFIX": ""},
			client: map[string]string{"--server-metrics": "http://localhost:8888/metrics", "--warmup-grace-period": "1800"},
		}},
		{"dsv4-fp4-mi355x-sglang-agentic-mtp", func(r *matrix.Row) bool { return r.Conc == 48 }, want{
			engine: map[string]string{"--tp-size": "8", "--ep-size": "", "--max-running-requests": "96", "--cuda-graph-max-bs": "96", "--chunked-prefill-size": "8192",
				"--hicache-ratio": "1.5", "--swa-full-tokens-ratio": "0.1", "--page-size": "256"},
			env:    map[string]string{"SGLANG_SIMULATE_ACC_LEN": "2.49", "SGLANG_DEFAULT_THINKING": "1", "GPU_MAX_HW_QUEUES": ""},
			client: map[string]string{"--warmup-grace-period": "3600"},
		}},
		{"qwen3.5-fp8-b300-sglang-agentic-mtp", func(r *matrix.Row) bool { return r.TP == 4 && r.Conc == 72 }, want{
			engine: map[string]string{"--speculative-algorithm": "NEXTN", "--moe-runner-backend": "flashinfer_trtllm", "--cuda-graph-max-bs": "64",
				"--max-running-requests": "144", "--tokenizer-worker-num": "6", "--page-size": "", "--scheduler-recv-interval": "10"},
			env:     map[string]string{"TORCH_CUDA_ARCH_LIST": "10.0", "SGLANG_SIMULATE_ACC_LEN": "3.39"},
			client:  map[string]string{"--server-metrics": "http://localhost:8888/metrics", "--apply-chat-template": ""},
			escapes: []string{"--enable-symm-mem"},
		}},
		{"qwen3.5-fp8-h200-sglang-agentic-mtp", func(r *matrix.Row) bool { return r.KVOffloading == "none" && r.Conc == 16 }, want{
			engine:  map[string]string{"--ep-size": "8", "--reasoning-parser": "", "--tool-call-parser": "", "--max-running-requests": "", "--enable-cache-report": ""},
			env:     map[string]string{"SGLANG_ENABLE_SPEC_V2": "1", "SGLANG_TIMEOUT_KEEP_ALIVE": ""},
			client:  map[string]string{"--server-metrics": "", "--public-dataset": recipes.LoaderWithSubagents256k},
			escapes: []string{"--enable-flashinfer-allreduce-fusion"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			rs := slices.DeleteFunc(keyRows(t, tc.key), func(r *matrix.Row) bool { return !tc.keep(r) })
			require.Len(t, rs, 1, "the filter picks one row")
			pts, err := recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin()})
			require.NoError(t, err)
			p := pts[0]
			for f, v := range tc.want.engine {
				assert.Equal(t, v, argValue(p.Engine.Argv, f), "engine %s", f)
			}
			for k, v := range tc.want.env {
				assert.Equal(t, v, p.Engine.Env[k], "env %s", k)
			}
			for f, v := range tc.want.client {
				assert.Equal(t, v, argValue(p.Client.Argv, f), "client %s", f)
			}
			assert.Equal(t, tc.want.prefix, p.RequiredMetricPrefix)
			// Flags a partial schema lacks pass unchecked, and only those;
			// once the schema has one, it is checked like any other.
			rc, _ := models.Builtin().Recipe(p.Recipe)
			es := schema.MustLoad(string(rc.Engine), rc.EngineVersion)
			var esc []string
			for _, e := range p.Escapes {
				_, known := es.Lookup(e.Flag)
				assert.False(t, known, "%s is in the schema but passed unchecked", e.Flag)
				esc = append(esc, e.Flag)
			}
			for _, f := range tc.want.escapes {
				if _, known := es.Lookup(f); !known {
					assert.Contains(t, esc, f)
				}
				assert.Contains(t, p.Engine.Argv, f)
			}
		})
	}
}

func TestRecipeChecks(t *testing.T) {
	rs := keyRows(t, "kimik3-fp4-mi355x-vllm-agentic-mtp")[:1]
	rs[0].TP = 4
	_, err := recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin()})
	assert.ErrorContains(t, err, "recipe kimik3_fp4_mi355x_mtp: kimik3-fp4-mi355x-vllm-agentic-mtp tp4 c1: recipe: tp 4: the recipe runs only tp [8]")

	// A backend the recipe does not list fails at plan time.
	rs = slices.DeleteFunc(keyRows(t, "qwen3.5-fp8-b300-sglang-agentic-mtp"), func(r *matrix.Row) bool { return r.KVOffloading != "dram" })[:1]
	rs[0].KVOffloadBackend.Name = "lmcache"
	_, err = recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin()})
	assert.ErrorContains(t, err, `kv offload backend "lmcache": the recipe supports hicache`)

	// GPU-resident recipes reject offload rows.
	rs = keyRows(t, "qwen3.5-fp8-mi300x-sglang-agentic-mtp")[:1]
	rs[0].KVOffloading, rs[0].TotalCPUDRAMGB = "dram", 100
	rs[0].KVOffloadBackend = &matrix.Backend{Name: "hicache"}
	_, err = recipes.Plan(rs, recipes.PlanOptions{Catalog: models.Builtin()})
	assert.ErrorContains(t, err, `kv offload backend "hicache": the recipe runs GPU-resident KV only`)
}
