package recipes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProfileSiteEnvMatchesSample checks that the launcher variables the
// plan leaves out (siteEnv) are exactly what the runner's profile exports,
// for every recorded point.
func TestProfileSiteEnvMatchesSample(t *testing.T) {
	for _, e := range loadSample(t) {
		runner, _ := e.Row["runner"].(string)
		p, err := ProfileFor(runner)
		require.NoError(t, err, e.ConfigKey)
		want := map[string]string{}
		for _, k := range siteEnv {
			if v, ok := e.ServerEnv[k]; ok {
				want[k] = v
			}
		}
		got := map[string]string{}
		for _, k := range siteEnv {
			if v, ok := p.Env[k]; ok {
				got[k] = v
			}
		}
		assert.Equal(t, want, got, "%s on %s", e.ConfigKey, runner)
	}
}

func TestEveryLauncherHasAProfile(t *testing.T) {
	for _, l := range Launchers() {
		p, err := ProfileFor(l.Name + "_00")
		require.NoError(t, err)
		assert.Equal(t, l.Name, p.Name)
		assert.NotEmpty(t, p.DeviceVars, l.Name)
	}
	_, err := ProfileFor("cluster:tpu-v9")
	assert.ErrorContains(t, err, `no runner profile "tpu-v9"`)
}

func TestSallocArgsAndDeviceEnv(t *testing.T) {
	p, err := ProfileFor("cluster:mi325x-amds")
	require.NoError(t, err)
	assert.Equal(t, []string{"--partition=compute", "--gres=gpu:2", "--cpus-per-task=256", "--time=480"}, p.Slurm.Args(2))
	assert.Equal(t, map[string]string{"ROCR_VISIBLE_DEVICES": "2,3", "HIP_VISIBLE_DEVICES": "2,3"}, p.DeviceEnv([]int{2, 3}))
	n, err := ProfileFor("b300-nv_1")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "0"}, n.DeviceEnv([]int{0}))
}
