package gha

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestCollectComparesWithBaseline: the PR-label workflow's collect job
// compares the results with the baseline before it writes the run summary
// (so the verdict table comes first), fails on REGRESSION only behind the
// sweep-fail-on-regression label, and may read the baseline run's
// artifacts.
func TestCollectComparesWithBaseline(t *testing.T) {
	data, err := os.ReadFile("../../.github/workflows/sweep.yml")
	require.NoError(t, err)
	var wf struct {
		Jobs map[string]struct {
			Permissions map[string]string `yaml:"permissions"`
			Steps       []struct {
				Name string            `yaml:"name"`
				Run  string            `yaml:"run"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &wf))
	collect, ok := wf.Jobs["collect"]
	require.True(t, ok, "a collect job")
	assert.Equal(t, "read", collect.Permissions["actions"])
	cmp, sum := -1, -1
	for i, s := range collect.Steps {
		if strings.Contains(s.Run, " compare baseline results --format markdown") {
			cmp = i
			assert.Contains(t, s.Env["FAIL_ON_REGRESSION"], "sweep-fail-on-regression")
			assert.Contains(t, s.Run, `if [ "$FAIL_ON_REGRESSION" = true ]; then`)
		}
		if strings.Contains(s.Run, " ci summary ") {
			sum = i
		}
	}
	require.GreaterOrEqual(t, cmp, 0, "a step runs sweep compare")
	require.GreaterOrEqual(t, sum, 0, "a step writes the run summary")
	assert.Less(t, cmp, sum, "the verdict comes first in the job summary")
}
