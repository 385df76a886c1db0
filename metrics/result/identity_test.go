package result

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// multiNodeFacts is a disaggregated dsv4 point: prefill workers of
// prefill and decode workers of decode (both tp8 ep1 unless set).
func multiNodeFacts(prefill, decode WorkerShape) RunFacts {
	def := func(w WorkerShape) WorkerShape {
		if w.TP == 0 {
			w.TP = 8
		}
		w.PP, w.DCP, w.PCP, w.EP = max(w.PP, 1), max(w.DCP, 1), max(w.PCP, 1), max(w.EP, 1)
		if w.DPAttention == "" {
			w.DPAttention = "false"
		}
		return w
	}
	return RunFacts{RunnerType: "mi355x-amds", ModelPrefix: "dsv4", Framework: "sglang-disagg", Precision: "fp4",
		SpecDecoding: "mtp", Disagg: true, Multinode: true, KVOffloading: "dram", Conc: 8,
		Prefill: def(prefill), Decode: def(decode)}
}

// Two multi-node deployments whose summed TP, largest EP and DP attention
// agree (InferenceX's "tp", "ep", "dp_attention" of the result) are two
// arms of one config key: the shape per role is part of the identity and
// of the label.
func TestMultiNodeIdentity(t *testing.T) {
	base := multiNodeFacts(WorkerShape{NumWorkers: 1}, WorkerShape{NumWorkers: 1}).Identity()
	for _, tc := range []struct {
		name  string
		facts RunFacts
		label string
	}{
		{"1P2D", multiNodeFacts(WorkerShape{NumWorkers: 1}, WorkerShape{NumWorkers: 2}), "1P×tp8 2D×tp8 kv:dram disagg"},
		{"2P1D", multiNodeFacts(WorkerShape{NumWorkers: 2}, WorkerShape{NumWorkers: 1}), "2P×tp8 1D×tp8 kv:dram disagg"},
		{"per-role EP and DP attention", multiNodeFacts(WorkerShape{NumWorkers: 1, EP: 8, DPAttention: "true"}, WorkerShape{NumWorkers: 1, EP: 8}),
			"1P×tp8·ep8·dpa 1D×tp8·ep8 kv:dram disagg"},
		{"the other role's DP attention", multiNodeFacts(WorkerShape{NumWorkers: 1, EP: 8}, WorkerShape{NumWorkers: 1, EP: 8, DPAttention: "true"}),
			"1P×tp8·ep8 1D×tp8·ep8·dpa kv:dram disagg"},
		{"tp4+tp12", multiNodeFacts(WorkerShape{NumWorkers: 1, TP: 4}, WorkerShape{NumWorkers: 1, TP: 12}), "1P×tp4 1D×tp12 kv:dram disagg"},
		{"pp2", multiNodeFacts(WorkerShape{NumWorkers: 1, PP: 2}, WorkerShape{NumWorkers: 1}), "1P×tp8·pp2 1D×tp8 kv:dram disagg"},
		{"aggregated workers", multiNodeFacts(WorkerShape{NumWorkers: 2, EP: 8, DPAttention: "true"}, WorkerShape{}), "2×tp8·ep8·dpa kv:dram disagg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.facts.Identity()
			assert.Equal(t, tc.label, id.Parallelism())
			assert.NotEqual(t, base.ArmKey(), id.ArmKey(), "another deployment is another arm (base %s)", base.Parallelism())
			assert.Equal(t, base.GroupKey(), id.GroupKey(), "of the same config key")
			data, err := json.Marshal(id)
			require.NoError(t, err)
			var back Identity
			require.NoError(t, json.Unmarshal(data, &back))
			assert.Equal(t, id.ArmKey(), back.ArmKey(), "the shape reads back: %s", data)
		})
	}
	assert.Equal(t, "1P×tp8 1D×tp8 kv:dram disagg", base.Parallelism())
	assert.Equal(t, "16", base.Get("tp"), "the result's own tp is InferenceX's sum")
	assert.Equal(t, base.ArmKey(), multiNodeFacts(WorkerShape{NumWorkers: 1}, WorkerShape{NumWorkers: 1}).Identity().ArmKey())
}

// A single-node identity has no multi-node shape and is written with the
// 13 keys it always had (knees' and compare's JSON goldens hold them).
func TestSingleNodeIdentityJSON(t *testing.T) {
	id := RunFacts{RunnerType: "mi325x", ModelPrefix: "qwen3.5", Framework: "sglang", Precision: "fp8", SpecDecoding: "mtp",
		TP: 8, EP: 8, DPAttention: "true", PP: 1, DCP: 1, PCP: 1, KVOffloading: "dram"}.Identity()
	data, err := json.Marshal(id)
	require.NoError(t, err)
	assert.JSONEq(t, `{"infmax_model_prefix":"qwen3.5","hw":"mi325x","framework":"sglang","precision":"fp8","spec_decoding":"mtp",
		"scenario_type":"agentic-coding","disagg":false,"is_multinode":false,"tp":8,"ep":8,"dp_attention":"true","kv_offloading":"dram","pp":1}`,
		string(data))
	assert.Equal(t, "tp8 ep8 dpa kv:dram", id.Parallelism())
}
