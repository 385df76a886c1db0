package result

import (
	"encoding/json"
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
		Parallelism: configs.Parallelism{TP: 8, PP: 1, DCPSize: 1, PCPSize: 1, EP: 8, DPAttn: true}, Conc: 32,
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

	plain := FactsFromRow(&matrix.Row{Kind: matrix.AgenticSingleNode, Parallelism: configs.Parallelism{TP: 2, PP: 1, DCPSize: 1, PCPSize: 1, EP: 1}, Conc: 1, Framework: "vllm"}, "x", nil, 0)
	assert.Equal(t, "none", plain.SpecDecoding)
	assert.Equal(t, "none", plain.KVOffloading)
	assert.Nil(t, plain.KVOffloadBackendMeta)
	assert.Equal(t, "false", plain.DPAttention)
}

// A row's arm identity is the identity its result files carry, and its
// label is the knees' label.
func TestRowIdentity(t *testing.T) {
	row := &matrix.Row{
		Kind: matrix.AgenticSingleNode, Model: "Qwen/Qwen3.5-397B-A17B-FP8", ModelPrefix: "qwen3.5", Precision: "fp8",
		Framework: "sglang", Runner: "mi325x", SpecDecoding: "mtp", Conc: 32,
		Parallelism: configs.Parallelism{TP: 8, PP: 1, DCPSize: 1, PCPSize: 1, EP: 8, DPAttn: true}, KVOffloading: "dram",
	}
	id := RowIdentity(row)
	assert.Equal(t, "qwen3.5 mi325x sglang fp8 mtp tp8 ep8 dpa kv:dram", id.Label())
	assert.Equal(t, "tp8 ep8 dpa kv:dram c32", id.PointLabel(row.Conc))

	res, _ := newResult(FactsFromRow(row, "x", nil, 0))
	path := Path(t.TempDir(), "x")
	require.NoError(t, WriteResult(path, res))
	f, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, f.Identity.ArmKey(), id.ArmKey())
	want, _ := f.Identity.MarshalJSON()
	got, _ := id.MarshalJSON()
	assert.JSONEq(t, string(want), string(got))
	var back Identity
	require.NoError(t, json.Unmarshal(got, &back))
	assert.Equal(t, id, back, "an identity reads back as written")
	assert.Error(t, json.Unmarshal([]byte(`{"tp": 8, "gpu": "x"}`), &back), "unknown keys are errors")

	plain := RowIdentity(&matrix.Row{Kind: matrix.AgenticSingleNode, Parallelism: configs.Parallelism{TP: 2, PP: 1, EP: 1}, Conc: 1})
	assert.Equal(t, "tp2", plain.Parallelism(), "defaults (ep1, no dpa, pp1, kv none) are left out")
}
