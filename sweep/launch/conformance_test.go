package launch

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes"
)

// launcherSample is one point of testdata/launch/launcher-argv-sample.json:
// what launch_mi325x-amds.sh ran with every program stubbed.
type launcherSample struct {
	Runner     string          `json:"runner"`
	RunnerName string          `json:"runner_name"`
	ConfigKey  string          `json:"config_key"`
	Row        json.RawMessage `json:"row"`
	Calls      []struct {
		Program string            `json:"program"`
		Role    string            `json:"role"`
		Argv    []string          `json:"argv"`
		Env     map[string]string `json:"env"`
	} `json:"calls"`
	RecipeScript string `json:"recipe_script"`
}

// TestLauncherArgvSample: Build gives launch_mi325x-amds.sh's host commands
// (argv and the launcher's exported variables) for every recorded point.
// The launcher's EXIT trap scancels a second time; sweep releases once.
func TestLauncherArgvSample(t *testing.T) {
	data, err := os.ReadFile("../../testdata/launch/launcher-argv-sample.json")
	require.NoError(t, err)
	var samples []launcherSample
	require.NoError(t, json.Unmarshal(data, &samples))
	require.Len(t, samples, 4)
	roles := map[string]string{"allocate": RoleAllocate, "image-import": RoleImport, "container-run": RoleRun, "release": RoleRelease}
	for _, s := range samples {
		var row matrix.Row
		require.NoError(t, json.Unmarshal(s.Row, &row), s.ConfigKey)
		prof, err := recipes.ProfileFor(s.Runner)
		require.NoError(t, err)
		pl, err := Build(prof, &row, Options{RunnerName: s.RunnerName})
		require.NoError(t, err, s.ConfigKey)
		script, err := RecipeScript(prof, &row)
		require.NoError(t, err)
		assert.Equal(t, s.RecipeScript, script, s.ConfigKey)

		calls := s.Calls
		n := len(calls)
		require.Equal(t, calls[n-1].Argv, calls[n-2].Argv, "the sample ends with the trap's second scancel")
		calls = calls[:n-1]
		require.Len(t, pl.Commands, len(calls), s.ConfigKey)
		assert.Equal(t, "40000 + JOB_ID % 10000", pl.Derived["PORT"])
		bound := pl.Bind(map[string]string{"PORT": calls[len(calls)-1].Env["PORT"]})
		for i, c := range calls {
			got := bound.Commands[i]
			assert.Equal(t, roles[c.Role], got.Role, "%s call %d", s.ConfigKey, i)
			assert.Equal(t, c.Argv, got.Argv, "%s call %d (%s)", s.ConfigKey, i, c.Role)
			assert.Equal(t, c.Env, got.Env, "%s call %d (%s) env", s.ConfigKey, i, c.Role)
		}
	}
}

func TestPortOf(t *testing.T) {
	assert.Equal(t, "43456", PortOf(recipes.PortFromJobID, "123456", "mi325x-amds_00"))
	assert.Equal(t, "40007", PortOf(recipes.PortFromJobID, "7", ""))
	assert.Equal(t, Port, PortOf(recipes.PortFromJobID, JobID, ""))
	assert.Equal(t, "8891", PortOf(recipes.PortFromRunnerDigit, "", "mi355x-amds_03"))
	assert.Equal(t, Port, PortOf(recipes.PortFromRunnerDigit, "", "mi355x-amds"))
	assert.Equal(t, "8888", PortOf(recipes.PortFixed, "5", "h200-dgxc-slurm_1"))
}
