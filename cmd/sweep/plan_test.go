package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes"
)

func TestNewPlanCmdFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want func(o *planOptions)
		err  string
	}{
		{name: "defaults", args: []string{"--config-keys", "k"}, want: func(o *planOptions) {
			assert.Equal(t, []string{"k"}, o.ConfigKeys)
			assert.Equal(t, "text", o.Format)
			assert.Equal(t, recipes.DefaultPort, o.Plan.Port)
			assert.Equal(t, recipes.DefaultResultDir, o.Plan.ResultDir)
			assert.Equal(t, recipes.DefaultAiperfVersion, o.Plan.AiperfVersion)
			assert.False(t, o.Eval || o.Plan.Fast)
		}},
		{name: "every flag", args: []string{"--config-keys", "a", "b", "--conc", "4", "8", "--eval", "--fast", "--format", "json", "--port", "9000",
			"--model-path", "/m", "--result-dir", "/r", "--aiperf-version", "sa-754356e9", "--duration", "1000", "--runner-config", "r.yaml"},
			want: func(o *planOptions) {
				assert.Equal(t, []string{"a", "b"}, o.ConfigKeys)
				assert.Equal(t, []int{4, 8}, o.Conc)
				assert.True(t, o.Eval && o.Plan.Fast)
				assert.Equal(t, "json", o.Format)
				assert.Equal(t, recipes.PlanOptions{Port: 9000, ModelPath: "/m", ResultDir: "/r", AiperfVersion: "sa-754356e9", Duration: 1000, Fast: true}, o.Plan)
				assert.Equal(t, "r.yaml", o.Inputs.RunnerConfig)
			}},
		{name: "keys required", args: nil, err: "--config-keys is required"},
		{name: "bad format", args: []string{"--config-keys", "k", "--format", "yaml"}, err: `--format "yaml": want text or json`},
		{name: "negative duration", args: []string{"--config-keys", "k", "--duration", "-5"}, err: "--duration -5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOptions(t, newPlanCmd, tc.args...)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				var fe *FlagError
				require.ErrorAs(t, err, &fe, "usage errors exit 2")
				return
			}
			require.NoError(t, err)
			tc.want(got)
		})
	}
}

func TestPlanRun(t *testing.T) {
	t.Run("text, 32 points", func(t *testing.T) {
		var out bytes.Buffer
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
			Format: "text", Plan: recipes.PlanOptions{Port: 8888}})
		require.NoError(t, err)
		assert.Equal(t, 32, strings.Count(out.String(), "=== point "))
		assert.Contains(t, out.String(), "=== point 1/32: qwen3.5-fp8-mi325x-sglang-agentic-mtp  tp=2 ep=2 dpa=false conc=1 kv=none  [benchmark]")
	})
	t.Run("json, eval rows of both h200 keys", func(t *testing.T) {
		var out bytes.Buffer
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &out}, ConfigKeys: []string{"qwen3.5-fp8-h200-*"}, Eval: true, Format: "json"})
		require.NoError(t, err)
		var pts []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out.Bytes(), &pts))
		require.Len(t, pts, 1, "InferenceX picks one eval row for the model/runner/framework group")
		assert.JSONEq(t, `"qwen3.5-fp8-h200-sglang-agentic-hicache-mtp"`, string(pts[0]["config_key"]))
		assert.JSONEq(t, "null", string(pts[0]["client"]))
		assert.JSONEq(t, "null", string(pts[0]["golden_al"]))
	})
	t.Run("fnmatch pattern resolves as in sweep matrix test-config", func(t *testing.T) {
		pattern := "qwen3.5-fp8-mi32?x-sglang-agentic-mtp"
		var planned, matrixOut bytes.Buffer
		require.NoError(t, planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &planned}, ConfigKeys: []string{pattern}, Conc: []int{4}, Format: "json"}))
		var pts []recipes.Point
		require.NoError(t, json.Unmarshal(planned.Bytes(), &pts))
		require.NoError(t, matrixTestConfigRun(t.Context(), &matrixTestConfigOptions{IO: &IOStreams{Out: &matrixOut}, ConfigKey: true,
			TestConfigOptions: matrix.TestConfigOptions{ConfigKeys: []string{pattern}, Conc: []int{4}, EvalOptions: matrix.EvalOptions{NoEvals: true}}}))
		var rows matrix.Matrix
		require.NoError(t, json.Unmarshal(matrixOut.Bytes(), &rows))
		require.Len(t, pts, len(rows))
		for i := range rows {
			assert.Equal(t, *rows[i], pts[i].Row, "point %d plans matrix row %d", i, i)
			assert.Equal(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp", pts[i].Row.ConfigKey)
		}
	})
	t.Run("mistyped key names the closest keys", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"qwen3.5-fp8-mi325x-sglang-agentic-mpt"}, Format: "text"})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
		assert.ErrorContains(t, err, "closest: qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	})
	t.Run("unknown key is a usage error", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"nope"}, Format: "text"})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
	})
	t.Run("unknown aiperf version is a usage error", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
			Format: "text", Plan: recipes.PlanOptions{AiperfVersion: "0.11"}})
		var fe *FlagError
		require.ErrorAs(t, err, &fe)
		assert.ErrorContains(t, err, "known versions: 0.12.0")
	})
	t.Run("key without a recipe fails at plan time", func(t *testing.T) {
		err := planRun(t.Context(), &planOptions{IO: &IOStreams{Out: &bytes.Buffer{}}, ConfigKeys: []string{"kimik3-fp4-mi355x-atom-agentic-mtp"}, Format: "text"})
		require.ErrorContains(t, err, "plan rejected: ")
		assert.ErrorContains(t, err, "kimik3-fp4-mi355x-atom-agentic-mtp tp8 ep1 dpafalse conc1 kv-none: recipe: no recipe: launch_mi355x-amds.sh would run benchmarks/single_node/agentic/kimik3_fp4_mi355x_atom_mtp.sh")
	})
}
