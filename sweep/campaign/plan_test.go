package campaign_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/campaign"
)

// builtinRows are the single-node agentic rows of a shipped config key.
func builtinRows(t *testing.T, key string) (matrix.Matrix, *configs.Runners) {
	t.Helper()
	m, r, err := configs.Load(nil, "")
	require.NoError(t, err)
	g := &matrix.Generator{Masters: m, Runners: r}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"},
		EvalOptions: matrix.EvalOptions{NoEvals: true}})
	require.NoError(t, err)
	return rows, r
}

func TestSelection(t *testing.T) {
	rows, _ := builtinRows(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	got := campaign.Selection{TP: []int{8}, EP: []int{8}, DPAttn: "false", ConcList: []int{4, 32}}.Select(rows)
	require.Len(t, got, 2)
	for _, r := range got {
		assert.Equal(t, []int{8, 8}, []int{r.TP, r.EP})
		assert.Equal(t, matrix.Fingerprint(r), r.RecipeFingerprint, "stamped as InferenceX's CI stamps rows")
	}
	assert.Len(t, campaign.Selection{}.Select(rows), len(rows), "the zero selection keeps every row")
}

func TestPlanPortsDirectoriesAndProbes(t *testing.T) {
	rows, runners := builtinRows(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	rows = campaign.Selection{TP: []int{8}, ConcList: []int{4, 16}}.Select(rows)
	dir := t.TempDir()
	o := campaign.PlanOptions{Recipe: recipes.PlanOptions{Runners: runners, Fast: true}}
	s, err := campaign.Plan(rows, dir, o)
	require.NoError(t, err)
	require.Len(t, s.Arms, 2, "tp8 ep1 and tp8 ep8")
	for _, a := range s.Arms {
		for _, p := range a.Points {
			assert.Equal(t, recipes.DefaultPort+2*a.Index, p.Plan.Port, "arm %d's port", a.Index)
			assert.Equal(t, filepath.Join(dir, p.ID), p.Plan.ResultDir)
			assert.Nil(t, p.ProbeClient)
		}
	}

	o.ProbeDuration = 300
	o.ArmPort = func(arm int) (int, error) { return 20000 + 10*arm, nil }
	s, err = campaign.Plan(rows, dir, o)
	require.NoError(t, err)
	for _, p := range s.Points {
		assert.Equal(t, 20000+10*p.Arm, p.Plan.Port)
		require.NotNil(t, p.ProbeClient, p.ID)
		assert.Equal(t, 300, p.ProbeDuration)
		assert.Contains(t, fmt.Sprint(p.ProbeClient.Argv), "300", "the probe's client runs 300 s")
		assert.Zero(t, p.Plan.ProbeDuration, "the point itself runs at the full length")
	}

	o.ArmPort = func(int) (int, error) { return 0, fmt.Errorf("no free port") }
	_, err = campaign.Plan(rows, dir, o)
	assert.EqualError(t, err, "no free port")
}
