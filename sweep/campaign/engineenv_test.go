package campaign_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/campaign"
)

// TestEngineEnv: a resume with another VLLM_* or SGLANG_* value than the
// sweep started with went on, mixing points measured under two engine
// settings. The engines' own variables that reach an engine of the sweep
// are in its identity with their values; those that do not (another
// engine's, one the recipe sets or unsets itself, one the launch does
// not pass on, sweep's own) are not. So are the variables of the
// libraries every engine runs on (NCCL_*, RCCL_*, HIP_*, HSA_*, CUDA_*,
// TORCH_*, TRITON_*, AITER_*, ...), whatever the engine, which a resume
// with NCCL_P2P_DISABLE or HSA_NO_SCRATCH_RECLAIM changed went on with;
// never the GPU visibility variables, which the executor sets.
func TestEngineEnv(t *testing.T) {
	point := func(fw configs.Engine, env map[string]string, unset ...string) *campaign.Point {
		return &campaign.Point{ID: string(fw), Plan: recipes.Point{Row: matrix.Row{Framework: fw},
			Engine: recipes.Command{Argv: []string{"serve"}, Env: env, Unset: unset}}}
	}
	sglang := point(configs.SGLang, map[string]string{"SGLANG_USE_AITER": "1"}, "SGLANG_TORCH_PROFILER_DIR")
	vllm := point(configs.VLLM, nil)
	environ := []string{"SGLANG_USE_AITER=0", "SGLANG_TORCH_PROFILER_DIR=/tmp/p", "SGLANG_ENABLE_TORCH_COMPILE=1", "SGL_ENABLE_JIT_DEEPGEMM=0",
		"VLLM_ATTENTION_BACKEND=TRITON_ATTN", "VLLM_RPC_TIMEOUT=100", "SWEEP_SIM_SEED=7", "HOME=/root", "NOT_VLLM_X=1"}
	runtime := []string{"NCCL_P2P_DISABLE=1", "RCCL_MSCCL_ENABLE=0", "HSA_NO_SCRATCH_RECLAIM=1", "HIP_FORCE_DEV_KERNARG=1",
		"ROCR_VISIBLE_DEVICES=0,1", "HIP_VISIBLE_DEVICES=0,1", "CUDA_VISIBLE_DEVICES=0,1", "CUDA_DEVICE_MAX_CONNECTIONS=1",
		"TORCH_NCCL_BLOCKING_WAIT=1", "PYTORCH_TUNABLEOP_ENABLED=1", "TRITON_HIP_USE_BLOCK_PINGPONG=1", "AITER_LOG_MORE=1",
		"XNCCL_P2P_DISABLE=1", "NCCL_IB_HCA=mlx5_0"}
	sets := point(configs.VLLM, map[string]string{"NCCL_IB_HCA": "mlx5_1"}, "TORCH_NCCL_BLOCKING_WAIT")
	// settings are the EnvSettings of NAME=value pairs.
	settings := func(kvs ...string) []campaign.Setting {
		var out []campaign.Setting
		for _, kv := range kvs {
			name, value, _ := strings.Cut(kv, "=")
			out = append(out, campaign.EnvSetting(name, value))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		points  []*campaign.Point
		environ []string // nil: environ
		reaches func(*campaign.Point, string) bool
		want    []campaign.Setting
	}{
		{"sglang: its own, not those its recipe sets or unsets, nor vLLM's", []*campaign.Point{sglang}, nil, nil, []campaign.Setting{
			campaign.EnvSetting("SGLANG_ENABLE_TORCH_COMPILE", "1"), campaign.EnvSetting("SGL_ENABLE_JIT_DEEPGEMM", "0")}},
		{"vllm", []*campaign.Point{vllm}, nil, nil, []campaign.Setting{
			campaign.EnvSetting("VLLM_ATTENTION_BACKEND", "TRITON_ATTN"), campaign.EnvSetting("VLLM_RPC_TIMEOUT", "100")}},
		{"both engines, in name order", []*campaign.Point{vllm, sglang}, nil, nil, []campaign.Setting{
			campaign.EnvSetting("SGLANG_ENABLE_TORCH_COMPILE", "1"), campaign.EnvSetting("SGL_ENABLE_JIT_DEEPGEMM", "0"),
			campaign.EnvSetting("VLLM_ATTENTION_BACKEND", "TRITON_ATTN"), campaign.EnvSetting("VLLM_RPC_TIMEOUT", "100")}},
		{"a launch that passes one by name", []*campaign.Point{vllm}, nil, func(_ *campaign.Point, name string) bool { return name == "VLLM_RPC_TIMEOUT" },
			[]campaign.Setting{campaign.EnvSetting("VLLM_RPC_TIMEOUT", "100")}},
		{"an engine without own variables", []*campaign.Point{point("trt", nil)}, nil, nil, nil},
		{"the libraries', for every engine, never the GPU visibility", []*campaign.Point{sglang}, runtime, nil, settings(
			"AITER_LOG_MORE=1", "CUDA_DEVICE_MAX_CONNECTIONS=1", "HIP_FORCE_DEV_KERNARG=1", "HSA_NO_SCRATCH_RECLAIM=1", "NCCL_IB_HCA=mlx5_0",
			"NCCL_P2P_DISABLE=1", "PYTORCH_TUNABLEOP_ENABLED=1", "RCCL_MSCCL_ENABLE=0", "TORCH_NCCL_BLOCKING_WAIT=1", "TRITON_HIP_USE_BLOCK_PINGPONG=1")},
		{"the libraries' on an engine without own variables", []*campaign.Point{point("trt", nil)}, []string{"NCCL_P2P_DISABLE=1"}, nil,
			settings("NCCL_P2P_DISABLE=1")},
		{"the libraries', not those the recipe sets or unsets", []*campaign.Point{sets}, runtime, nil, settings(
			"AITER_LOG_MORE=1", "CUDA_DEVICE_MAX_CONNECTIONS=1", "HIP_FORCE_DEV_KERNARG=1", "HSA_NO_SCRATCH_RECLAIM=1",
			"NCCL_P2P_DISABLE=1", "PYTORCH_TUNABLEOP_ENABLED=1", "RCCL_MSCCL_ENABLE=0", "TRITON_HIP_USE_BLOCK_PINGPONG=1")},
		{"the libraries', not one the launch does not pass on", []*campaign.Point{vllm}, []string{"NCCL_P2P_DISABLE=1", "HSA_NO_SCRATCH_RECLAIM=1"},
			func(_ *campaign.Point, name string) bool { return name != "NCCL_P2P_DISABLE" }, settings("HSA_NO_SCRATCH_RECLAIM=1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := environ
			if tc.environ != nil {
				env = tc.environ
			}
			got := campaign.EngineEnv(&campaign.Schedule{Points: tc.points}, env, tc.reaches)
			assert.Equal(t, tc.want, got)
		})
	}
}
