package campaign_test

import (
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
// not pass on, sweep's own) are not.
func TestEngineEnv(t *testing.T) {
	point := func(fw configs.Engine, env map[string]string, unset ...string) *campaign.Point {
		return &campaign.Point{ID: string(fw), Plan: recipes.Point{Row: matrix.Row{Framework: fw},
			Engine: recipes.Command{Argv: []string{"serve"}, Env: env, Unset: unset}}}
	}
	sglang := point(configs.SGLang, map[string]string{"SGLANG_USE_AITER": "1"}, "SGLANG_TORCH_PROFILER_DIR")
	vllm := point(configs.VLLM, nil)
	environ := []string{"SGLANG_USE_AITER=0", "SGLANG_TORCH_PROFILER_DIR=/tmp/p", "SGLANG_ENABLE_TORCH_COMPILE=1", "SGL_ENABLE_JIT_DEEPGEMM=0",
		"VLLM_ATTENTION_BACKEND=TRITON_ATTN", "VLLM_RPC_TIMEOUT=100", "SWEEP_SIM_SEED=7", "HOME=/root", "NOT_VLLM_X=1"}
	for _, tc := range []struct {
		name    string
		points  []*campaign.Point
		reaches func(*campaign.Point, string) bool
		want    []campaign.Setting
	}{
		{"sglang: its own, not those its recipe sets or unsets, nor vLLM's", []*campaign.Point{sglang}, nil, []campaign.Setting{
			campaign.EnvSetting("SGLANG_ENABLE_TORCH_COMPILE", "1"), campaign.EnvSetting("SGL_ENABLE_JIT_DEEPGEMM", "0")}},
		{"vllm", []*campaign.Point{vllm}, nil, []campaign.Setting{
			campaign.EnvSetting("VLLM_ATTENTION_BACKEND", "TRITON_ATTN"), campaign.EnvSetting("VLLM_RPC_TIMEOUT", "100")}},
		{"both engines, in name order", []*campaign.Point{vllm, sglang}, nil, []campaign.Setting{
			campaign.EnvSetting("SGLANG_ENABLE_TORCH_COMPILE", "1"), campaign.EnvSetting("SGL_ENABLE_JIT_DEEPGEMM", "0"),
			campaign.EnvSetting("VLLM_ATTENTION_BACKEND", "TRITON_ATTN"), campaign.EnvSetting("VLLM_RPC_TIMEOUT", "100")}},
		{"a launch that passes one by name", []*campaign.Point{vllm}, func(_ *campaign.Point, name string) bool { return name == "VLLM_RPC_TIMEOUT" },
			[]campaign.Setting{campaign.EnvSetting("VLLM_RPC_TIMEOUT", "100")}},
		{"an engine without own variables", []*campaign.Point{point("trt", nil)}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := campaign.EngineEnv(&campaign.Schedule{Points: tc.points}, environ, tc.reaches)
			assert.Equal(t, tc.want, got)
		})
	}
}
