package recipes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
)

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

func TestNVIDIAProfiles(t *testing.T) {
	b200, err := ProfileFor("cluster:b200-dgxc")
	require.NoError(t, err)
	assert.Equal(t, []string{"--partition=gpu-2", "--account=benchmark", "--gres=gpu:4", "--exclusive", "--mem=0", "--time=480"}, b200.Slurm.Args(4))
	b300, err := ProfileFor("b300-nv_3")
	require.NoError(t, err)
	assert.Equal(t, []string{"--partition=batch_1", "--account=benchmark", "-N", "1", "--gres=gpu:8", "--exclusive", "--mem=0", "--time=480"}, b300.Slurm.Args(8))
	for _, label := range []string{"cluster:h100-dgxc", "h100-dgxc-slurm_02"} {
		p, err := ProfileFor(label)
		require.NoError(t, err, label)
		assert.Equal(t, "h100-dgxc-slurm", p.Name)
		assert.Equal(t, []string{"--partition=hpc-gpu-1", "--account=customer", "--gres=gpu:8", "--exclusive", "--time=180"}, p.Slurm.Args(8))
	}

	tests := []struct {
		name, runner, model, prefix, precision string
		wantPath, wantModel                    string
	}{
		{"b200 stages by prefix and precision; MODEL becomes the path", "cluster:b200-dgxc", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8",
			"/lustre/fsw/models/Qwen3.5-397B-A17B-FP8", "/lustre/fsw/models/Qwen3.5-397B-A17B-FP8"},
		{"b200 qwen3.5 fp4 V2 checkpoint", "cluster:b200-dgxc", "nvidia/Qwen3.5-397B-A17B-NVFP4-V2", "qwen3.5", "fp4",
			"/scratch/fsw/models/Qwen3.5-397B-A17B-NVFP4-V2", "/scratch/fsw/models/Qwen3.5-397B-A17B-NVFP4-V2"},
		{"b300 model not pre-staged: /data/models, MODEL stays the id", "cluster:b300-nv", "nvidia/GLM-5.2-NVFP4", "glm5.2", "fp4",
			"/data/models/GLM-5.2-NVFP4", "nvidia/GLM-5.2-NVFP4"},
		{"b300 pre-staged", "cluster:b300-nv", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8",
			"/scratch/models/Qwen3.5-397B-A17B-FP8", "Qwen/Qwen3.5-397B-A17B-FP8"},
		{"h100 loads the id", "cluster:h100-dgxc", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8",
			"Qwen/Qwen3.5-397B-A17B-FP8", "Qwen/Qwen3.5-397B-A17B-FP8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := &matrix.Row{Kind: matrix.AgenticSingleNode, Runner: tc.runner, Model: tc.model, ModelPrefix: tc.prefix, Precision: tc.precision,
				Framework: "sglang", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: 1}
			rc := &Recipe{Name: "r", Engine: configs.SGLang}
			cfg, err := PlanOptions{}.withDefaults()
			require.NoError(t, err)
			c, err := cfg.ctx(row, rc)
			require.NoError(t, err)
			assert.Equal(t, tc.wantPath, c.ModelPath)
			assert.Equal(t, tc.wantModel, c.Model)
		})
	}
}

func TestSiteProfile(t *testing.T) {
	p, err := SiteProfile("mi325x-amds_03", []string{"partition=gpu2", "squash-dir=/sq"})
	require.NoError(t, err)
	assert.Equal(t, "mi325x-amds", p.Name)
	assert.Equal(t, "gpu2", p.Slurm.Partition)
	assert.Equal(t, "/sq", p.Launch.SquashDir)
	p, err = SiteProfile("mi325x-amds_03", []string{"squash-dir=/a", "squash-dir=/b"})
	require.NoError(t, err)
	assert.Equal(t, "/b", p.Launch.SquashDir, "the site changes are applied in order")
	_, err = SiteProfile("zz_1", nil)
	assert.ErrorIs(t, err, ErrNoProfile)
	_, err = SiteProfile("mi325x-amds_03", []string{"x=1"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrNoProfile)
}

// --site squash-dir moves the launcher's enroot paths under the squash
// directory with it (MI300X's TMPDIR and the stage step's tmp-UID
// directory), so nothing is made under the cluster's own /raid.
func TestApplySiteSquashDirMovesEnrootPaths(t *testing.T) {
	p, err := ProfileFor("mi300x-amds_00")
	require.NoError(t, err)
	require.NoError(t, p.ApplySite("squash-dir=/data/sq"))
	assert.Equal(t, "/data/sq", p.Launch.SquashDir)
	assert.Equal(t, []string{"export TMPDIR='/data/sq/tmp-${UID}'", "mkdir -p '/data/sq'"}, p.Launch.ImportPreamble)
	assert.Equal(t, "/data/sq/tmp-${UID}", p.Launch.StageTmpDir)
	q, err := ProfileFor("mi300x-amds_00")
	require.NoError(t, err)
	assert.Equal(t, "/raid/hf-hub-cache/runtime-cache/enroot", q.Launch.SquashDir, "the built-in profile is unchanged")
	assert.Equal(t, "export TMPDIR='/raid/hf-hub-cache/runtime-cache/enroot/tmp-${UID}'", q.Launch.ImportPreamble[0])
}

// A mounted host path with ',' or ':' would add mounts of its own to
// Pyxis's --container-mounts list (or docker's -v): refused, naming the key.
func TestSiteMountPathsRefuseSeparators(t *testing.T) {
	for _, tc := range []struct {
		setting string
		wantErr string
	}{
		{setting: "hub-cache=/x,/etc:/host-etc", wantErr: "--site hub-cache=/x,/etc:/host-etc: a mounted path cannot hold ',' or ':'"},
		{setting: "hub-cache=/x:/y", wantErr: "--site hub-cache=/x:/y: a mounted path cannot hold ',' or ':'"},
		{setting: "aiperf-cache=/a,/etc:/e", wantErr: "--site aiperf-cache=/a,/etc:/e: a mounted path cannot hold ',' or ':'"},
		{setting: "aiperf-cache=rel", wantErr: "--site aiperf-cache=rel: want an absolute path"},
		{setting: "hub-cache=/data/hf-hub"},
		{setting: "aiperf-cache=/data/aiperf"},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			_, err := SiteProfile("mi325x-amds_03", []string{tc.setting})
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}
