package matrix

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMatrixJSONRoundTrip writes every row of InferenceX's own master
// configs (all four kinds, eval marks, multi-node workers with their key
// order) with its config key, reads it back and checks the rows and the
// bytes are the same.
func TestMatrixJSONRoundTrip(t *testing.T) {
	g := corpusGenerator(t)
	for _, evals := range []EvalOptions{{}, {EvalsOnly: true}} {
		rows, err := g.TestConfig(TestConfigOptions{ConfigKeys: g.Masters.Keys(), EvalOptions: evals})
		require.NoError(t, err)
		kinds := map[Kind]int{}
		for _, r := range rows {
			kinds[r.Kind]++
			require.NotEmpty(t, r.ConfigKey, "row %s has no config key", r.ExpName)
		}
		if !evals.EvalsOnly {
			assert.Len(t, kinds, 4, "the corpus has rows of every kind: %v", kinds)
		}

		keyed := rows.AppendJSON(nil, WithConfigKey())
		var back Matrix
		require.NoError(t, json.Unmarshal(keyed, &back))
		require.Len(t, back, len(rows))
		for i := range rows {
			require.Equal(t, rows[i], back[i], "row %d (%s)", i, rows[i].ExpName)
		}
		assert.Equal(t, string(keyed), string(back.AppendJSON(nil, WithConfigKey())))

		// Without the option the bytes are InferenceX's, and read back
		// without a key.
		plain, err := rows.MarshalJSON()
		require.NoError(t, err)
		assert.NotContains(t, string(plain), "config-key")
		var noKey Matrix
		require.NoError(t, json.Unmarshal(plain, &noKey))
		assert.Empty(t, noKey[0].ConfigKey)
		again, err := noKey.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, string(plain), string(again))
	}
}

func TestRowUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not an object", `[1]`, "want a JSON object"},
		{"unknown key", `{"image": "i", "imgae": "j"}`, `key "imgae": not a matrix row key`},
		{"wrong type", `{"tp": "8"}`, `key "tp"`},
		{"bad scenario", `{"scenario-type": "chat"}`, "scenario-type"},
		{"bad worker key", `{"prefill": {"tpp": 1}, "decode": {}}`, `"tpp" is not a worker key`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Row
			assert.ErrorContains(t, json.Unmarshal([]byte(tc.in), &r), tc.want)
		})
	}
}

// TestResolveKeys is the one resolver every command uses: fnmatch
// patterns as InferenceX's generator reads them, exact keys, and the
// closest keys for a typo.
func TestResolveKeys(t *testing.T) {
	g := corpusGenerator(t)
	keys := func(patterns ...string) ([]string, error) {
		ms, err := ResolveKeys(g.Masters, patterns)
		var out []string
		for _, m := range ms {
			out = append(out, m.Key)
		}
		return out, err
	}
	got, err := keys("qwen3.5-fp8-mi32?x-sglang-agentic-mtp")
	require.NoError(t, err)
	assert.Equal(t, []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"}, got)

	got, err = keys("qwen3.5-fp8-mi325x-sglang-agentic-mtp", "qwen3.5-fp8-mi3[02]5x-sglang-agentic-*")
	require.NoError(t, err)
	assert.Equal(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp", got[0], "first-seen order, no repeats")
	assert.NotContains(t, got[1:], "qwen3.5-fp8-mi325x-sglang-agentic-mtp")

	_, err = keys("qwen3.5-fp8-mi325x-sglang-agentic-mpt")
	ke, ok := err.(*KeyError)
	require.True(t, ok, "want *KeyError, got %T %v", err, err)
	assert.False(t, ke.Pattern)
	assert.Equal(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp", ke.Closest[0])
	assert.ErrorContains(t, err, `config key "qwen3.5-fp8-mi325x-sglang-agentic-mpt" not found in the master configs`)

	_, err = keys("qwen3.5-fp8-mi325x-sglang-agentic-mpt*")
	assert.ErrorContains(t, err, `config key pattern "qwen3.5-fp8-mi325x-sglang-agentic-mpt*" matched no config keys`)
}
