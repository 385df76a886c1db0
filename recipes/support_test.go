package recipes_test

import (
	"errors"
	"strings"
	"sweep/recipes"
	"sweep/recipes/models"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
)

// pendingKeys are single-node SGLang/vLLM agentic keys of the shipped
// masters that sweep does not plan, with why (InferenceX cannot run them
// either). TestCoverageOfShippedMasters fails when one of them starts
// planning (remove it here) or when another key stops planning.
var pendingKeys = map[string]string{
	"qwen3.5-fp8-h100-sglang-agentic": "InferenceX removed benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh",
}

// TestCoverageOfShippedMasters plans every agentic key of both shipped
// master configs: single-node SGLang and vLLM keys plan, every other key is
// "not supported yet" with its reason.
func TestCoverageOfShippedMasters(t *testing.T) {
	g, err := generator()
	require.NoError(t, err)
	ms, err := matrix.ResolveKeys(g.Masters, []string{"*"})
	require.NoError(t, err)
	all := make([]string, len(ms))
	for i, m := range ms {
		all[i] = m.Key
	}
	rs := rows(t, matrix.TestConfigOptions{ConfigKeys: all})
	var keys []string
	kinds := map[string]bool{} // key -> every row is plannable (Unsupported == "" or multi-node)
	for _, r := range rs {
		if _, seen := kinds[r.ConfigKey]; !seen {
			keys = append(keys, r.ConfigKey)
			kinds[r.ConfigKey] = true
		}
		if recipes.Unsupported(r) != "" && !recipes.IsMultiNodeRow(r) {
			kinds[r.ConfigKey] = false
		}
	}
	cov, err := recipes.Coverage(rs, keys, "", recipes.PlanOptions{Catalog: models.Builtin(), Runners: g.Runners})
	require.NoError(t, err)
	require.Len(t, cov, len(keys))
	counts := map[recipes.Status]int{}
	for _, c := range cov {
		counts[c.Status]++
		switch {
		case pendingKeys[c.Key] != "":
			assert.NotEqual(t, recipes.Planned, c.Status, "%s plans now: remove it from pendingKeys", c.Key)
		case kinds[c.Key]:
			assert.Equal(t, recipes.Planned, c.Status, "%s: %s", c.Key, c.Reason)
		default:
			assert.Equal(t, recipes.NotSupported, c.Status, c.Key)
			assert.True(t, strings.HasPrefix(c.Reason, "not supported yet: "), "%s: %s", c.Key, c.Reason)
		}
	}
	assert.Greater(t, len(cov), 70, "every agentic key of both masters")
	// The 38 multi-node keys plan (PlanMultiNode); what is left is ATOM,
	// TRT-LLM single-node and the key InferenceX cannot run either.
	assert.Equal(t, map[recipes.Status]int{recipes.Planned: 69, recipes.NotSupported: 6}, counts)
	t.Logf("%d agentic keys: %v", len(cov), counts)
}

func TestUnsupportedKeyIsOneProblem(t *testing.T) {
	tests := []struct {
		key, want string
	}{
		{"kimik3-fp4-mi355x-atom-agentic-mtp", "kimik3-fp4-mi355x-atom-agentic-mtp (4 point(s)): recipe: not supported yet: engine ATOM (framework atom); sweep has SGLang and vLLM recipes only"},
		{"minimaxm3-fp4-b300-trtllm-agentic-mtp", "minimaxm3-fp4-b300-trtllm-agentic-mtp (11 point(s)): recipe: not supported yet: engine TRT-LLM (framework trt); sweep has SGLang and vLLM recipes only"},
		{"qwen3.5-fp8-h100-sglang-agentic", "qwen3.5-fp8-h100-sglang-agentic (15 point(s)): recipe: not supported yet: launch_h100-dgxc-slurm.sh would run benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh, which InferenceX removed in #2561 (AgentX support synced with production results at 843c6254f); only the _mtp variant exists"},
		{"dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp", "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp (12 point(s)): recipe: not supported yet: multi-node or disaggregated serving (framework sglang-disagg); PlanMultiNode plans it (sweep plan), single-node plans and runs cover single-node SGLang and vLLM engines only"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			_, err := recipes.Plan(keyRows(t, tc.key), recipes.PlanOptions{Catalog: models.Builtin()})
			pe, ok := errors.AsType[*recipes.PlanError](err)
			require.True(t, ok, "%v", err)
			require.Len(t, pe.Problems, 1)
			assert.ErrorIs(t, err, recipes.ErrNotSupported)
			assert.EqualError(t, err, tc.want)
		})
	}
}

// TestJSONFlagKeepsNumberLiterals checks a JSON flag value is passed as
// InferenceX writes it: key order and the literal 6000.0 (not 6000).
func TestJSONFlagKeepsNumberLiterals(t *testing.T) {
	var p *recipes.Point
	for _, r := range keyRows(t, "minimaxm3-fp4-mi355x-vllm-agentic-mtp") {
		if r.KVOffloadBackend != nil && r.KVOffloadBackend.Name == "lmcache" && r.TP == 4 {
			pts, err := recipes.Plan(matrix.Matrix{r}, recipes.PlanOptions{Catalog: models.Builtin()})
			require.NoError(t, err)
			p = &pts[0]
			break
		}
	}
	require.NotNil(t, p, "no tp4 lmcache row")
	assert.Equal(t, `{"kv_connector":"LMCacheMPConnector","kv_connector_module_path":"lmcache.integration.vllm.lmcache_mp_connector","kv_role":"kv_both",`+
		`"kv_connector_extra_config":{"lmcache.mp.server_urls":"tcp://127.0.0.1:5555,tcp://127.0.0.1:5556,tcp://127.0.0.1:5557,tcp://127.0.0.1:5558","lmcache.mp.mq_timeout":6000.0}}`,
		argValue(p.Engine.Argv, "--kv-transfer-config"))
}
