package run

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
)

func TestFactsFromRow(t *testing.T) {
	ver := "0.3.2"
	row := &matrix.Row{
		Kind: matrix.AgenticSingleNode, Image: "lmsysorg/sglang:v0.5.16-rocm720-mi30x", Model: "Qwen/Qwen3.5-397B-A17B-FP8",
		ModelPrefix: "qwen3.5", Precision: "fp8", Framework: "sglang", Runner: "cluster:mi325x-amds", SpecDecoding: "mtp",
		TP: 8, PP: 1, DCPSize: 1, PCPSize: 1, EP: 8, DPAttn: true, Conc: 32,
		KVOffloading: "dram", KVOffloadBackend: &matrix.Backend{Name: "hicache", Version: &ver}, TotalCPUDRAMGB: 1600,
		Router: &configs.Component{Name: "sglang-router", Version: "0.3.2"},
	}
	golden := 3.39
	f := FactsFromRow(row, "qwen3.5_tp8_conc32", &golden, 0.1)
	require.NoError(t, f.Check())
	assert.Equal(t, 8, f.NumGPUs())
	assert.Equal(t, "true", f.DPAttention)
	assert.Equal(t, "hicache", f.KVOffloadBackend)
	assert.Equal(t, "0.3.2", f.KVOffloadBackendMeta.Version)
	assert.Equal(t, "sglang-router", f.Router.Name)
	assert.Equal(t, 32, f.Conc)
	assert.Equal(t, &golden, f.GoldenAL)

	plain := FactsFromRow(&matrix.Row{Kind: matrix.AgenticSingleNode, TP: 2, PP: 1, DCPSize: 1, PCPSize: 1, EP: 1, Conc: 1, Framework: "vllm"}, "x", nil, 0)
	assert.Equal(t, "none", plain.SpecDecoding)
	assert.Equal(t, "none", plain.KVOffloading)
	assert.Nil(t, plain.KVOffloadBackendMeta)
	assert.Equal(t, "false", plain.DPAttention)
}
