package point

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/usage"
	"sweep/recipes"
	"sweep/sweep/run"
)

// generator is a matrix generator over the built-in configs.
func generator(t *testing.T) *matrix.Generator {
	t.Helper()
	m, r, err := configs.Load(nil, "")
	require.NoError(t, err)
	return &matrix.Generator{Masters: m, Runners: r}
}

// TestRunRowCarriesTheRecipeFingerprint: recipe_fingerprint was empty in
// results and RESULT_FILENAME lacked InferenceX's _recipe-<fp> suffix.
func TestRunRowCarriesTheRecipeFingerprint(t *testing.T) {
	k := Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", TP: 2, EP: 2, Conc: 1}
	g := generator(t)
	row, err := k.SelectRow(g)
	require.NoError(t, err)
	assert.Equal(t, matrix.Fingerprint(row), row.RecipeFingerprint)
	// The changelog's throughput rows of this key carry the same value.
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{k.ConfigKey}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	require.NoError(t, err)
	for _, r := range rows {
		if r.TP == 2 && r.EP == 2 && r.Conc == 4 {
			assert.Equal(t, row.RecipeFingerprint, matrix.Fingerprint(r), "concurrency is not part of the fingerprint")
		}
	}
}

// TestRunPlanFileGivesTheSameCommands: a point planned elsewhere
// (`sweep plan --format json`, one element) runs with byte-identical argv
// and environment to the same point run by flags.
func TestRunPlanFileGivesTheSameCommands(t *testing.T) {
	out := t.TempDir()
	r := &Request{Key: Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", TP: 8, EP: 8, Conc: 32, DPAttn: false}}
	r.Plan.Port = 18888
	byFlags, err := r.PlanRow(generator(t), out)
	require.NoError(t, err)
	b, err := json.Marshal([]*recipes.Point{byFlags})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "point.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	fromFile, err := ReadPlanFile(file, out)
	require.NoError(t, err)

	setup := run.Setup{Simulate: true, TimeScale: 50, Executable: "/bin/sweep", AiperfSchema: "aiperf@0.12.0",
		Environ: func(string) (string, bool) { return "", false }}
	a, err := run.FromPlan(byFlags, setup)
	require.NoError(t, err)
	c, err := run.FromPlan(fromFile, setup)
	require.NoError(t, err)
	assert.Equal(t, a.Engine.Argv, c.Engine.Argv)
	assert.Equal(t, a.Engine.Env, c.Engine.Env)
	require.NotNil(t, a.Client)
	assert.Equal(t, a.Client.Argv, c.Client.Argv)
	assert.Equal(t, a.Client.Env, c.Client.Env)
	assert.Equal(t, a.Name, c.Name)

	// A plan for another directory is refused, naming both.
	_, err = ReadPlanFile(file, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--result-dir")
}

func TestRunMistypedKeyNamesTheClosest(t *testing.T) {
	r := &Request{Key: Key{ConfigKey: "qwen3.5-fp8-mi325x-sglang-agentc-mtp", TP: 2, EP: 2, Conc: 1}}
	_, err := r.PlanRow(generator(t), t.TempDir())
	var ue *usage.Error
	require.ErrorAs(t, err, &ue)
	assert.ErrorContains(t, err, `--config-key: config key "qwen3.5-fp8-mi325x-sglang-agentc-mtp" not found in the master configs (`)
	assert.ErrorContains(t, err, "; closest: qwen3.5-fp8-mi325x-sglang-agentic-mtp")
}
