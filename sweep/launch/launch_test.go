package launch

import (
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/recipes/models"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func agenticRow(image, model, prefix, precision, framework string, tp int) *matrix.Row {
	return &matrix.Row{Kind: matrix.AgenticSingleNode, Image: image, Model: model, ModelPrefix: prefix, Precision: precision,
		Framework: configs.Engine(framework), Parallelism: configs.Parallelism{TP: tp, PP: 1, PCPSize: 1, EP: 1}, Conc: 4, SpecDecoding: "mtp", ExpName: prefix + "_tp" + "x"}
}

func roles(pl *Plan) []string {
	var out []string
	for _, c := range pl.Commands {
		out = append(out, c.Role)
	}
	return out
}

func command(t *testing.T, pl *Plan, role string) []string {
	t.Helper()
	i := slices.IndexFunc(pl.Commands, func(c recipes.HostCommand) bool { return c.Role == role })
	require.GreaterOrEqual(t, i, 0, "no %s command in %v", role, roles(pl))
	return pl.Commands[i].Argv
}

// TestSingleNodeProfiles checks each single-node launcher's allocation,
// squash file, container step and release against runners/launch_*.sh at
// 843c6254f.
func TestSingleNodeProfiles(t *testing.T) {
	tests := []struct {
		runner     string
		row        *matrix.Row
		roles      []string
		salloc     []string
		squash     string
		importHead []string // the import command before its script
		run        []string // the container step before the payload
		payload    []string
		runEnv     map[string]string // a subset of the container step's env
	}{
		{
			runner: "mi325x-amds_03",
			row:    agenticRow("lmsysorg/sglang:v0.5.16-rocm720-mi30x", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 4),
			roles:  []string{RoleAllocate, RoleImport, RoleRun, RoleRelease},
			salloc: []string{"salloc", "--partition=compute", "--gres=gpu:4", "--cpus-per-task=256", "--time=480", "--no-shell", "--job-name=mi325x-amds_03"},
			squash: "/raid/squash/lmsysorg_sglang_v0.5.16-rocm720-mi30x.sqsh", importHead: []string{"srun", "--jobid=${JOB_ID}", "--job-name=mi325x-amds_03", "bash", "-c"},
			run: []string{"srun", "--jobid=${JOB_ID}", "--container-image=/raid/squash/lmsysorg_sglang_v0.5.16-rocm720-mi30x.sqsh",
				"--container-mounts=${GITHUB_WORKSPACE}:/workspace/,/raid/hf-hub-cache/:/mnt/hf_hub_cache/,/dev/kfd:/dev/kfd,/dev/dri:/dev/dri",
				"--container-mount-home", "--container-writable", "--container-remap-root", "--container-workdir=/workspace/", "--no-container-entrypoint", "--export=ALL"},
			payload: []string{"bash", "benchmarks/single_node/agentic/qwen3.5_fp8_mi325x_mtp.sh"},
			runEnv: map[string]string{"PORT": "${PORT}", "XDG_CACHE_HOME": "/tmp/xdg-cache-${JOB_ID}", "TRITON_CACHE_DIR": "/tmp/triton-cache-${JOB_ID}", "GPU_COUNT": "4",
				"HF_HUB_CACHE": "/mnt/hf_hub_cache/"},
		},
		{
			runner: "mi300x-amds_01",
			row:    agenticRow("vllm/vllm-openai-rocm:v0.27.1", "MiniMaxAI/MiniMax-M3-MXFP8", "minimaxm3", "fp8", "vllm", 8),
			roles:  []string{RoleAllocate, RoleStage, RoleStage, RoleStage, RoleImport, RoleRun, RoleCollect, RoleRelease, RoleRelease, RoleRelease},
			salloc: []string{"salloc", "--partition=compute", "--exclude=chi-mi300x-049,chi-mi300x-121", "--gres=gpu:8", "--cpus-per-task=256", "--time=180", "--no-shell", "--job-name=mi300x-amds_01"},
			squash: "/raid/hf-hub-cache/runtime-cache/enroot/vllm_vllm-openai-rocm_v0.27.1.sqsh", importHead: []string{"srun", "--jobid=${JOB_ID}", "--job-name=mi300x-amds_01", "bash", "-c"},
			run: []string{"srun", "--jobid=${JOB_ID}", "--container-image=/raid/hf-hub-cache/runtime-cache/enroot/vllm_vllm-openai-rocm_v0.27.1.sqsh",
				"--container-mounts=/tmp/inferencex-${JOB_ID}:/workspace/,/raid/hf-hub-cache/:/mnt/hf_hub_cache/,/dev/kfd:/dev/kfd,/dev/dri:/dev/dri",
				"--container-mount-home", "--container-writable", "--container-remap-root", "--container-workdir=/workspace/", "--no-container-entrypoint", "--export=ALL"},
			payload: []string{"bash", "benchmarks/single_node/agentic/minimaxm3_fp8_mi300x_mtp.sh"},
			runEnv:  map[string]string{"PORT": "${PORT}", "XDG_RUNTIME_DIR": "/tmp/enroot-runtime-${UID}", "HF_HUB_CACHE": "/mnt/hf_hub_cache/"},
		},
		{
			runner: "mi355x-amds_3",
			row:    agenticRow("vllm/vllm-openai-rocm:v0.27.1", "deepseek-ai/DeepSeek-V4-Pro", "dsv4", "fp4", "vllm", 8),
			roles:  []string{RoleAllocate, RoleJobID, RolePrepare, RoleImport, RoleRun, RoleRelease},
			salloc: []string{"salloc", "--partition=compute", "--gres=gpu:8", "--exclusive", "--cpus-per-task=128", "--time=500", "--no-shell", "--job-name=mi355x-amds_3"},
			squash: "/var/lib/squash/vllm_vllm-openai-rocm_v0.27.1.sqsh", importHead: []string{"srun", "--jobid=${JOB_ID}", "bash", "-c"},
			run: []string{"srun", "--jobid=${JOB_ID}", "--container-image=/var/lib/squash/vllm_vllm-openai-rocm_v0.27.1.sqsh",
				"--container-mounts=${GITHUB_WORKSPACE}:/workspace/,/it-share/hf-hub-cache/:/mnt/hf_hub_cache/,/it-share/aiperf-cache/:/aiperf_mmap_cache",
				"--container-mount-home", "--container-writable", "--container-workdir=/workspace/", "--container-remap-root",
				"--no-container-entrypoint", "--export=ALL,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
			payload: []string{"bash", "benchmarks/single_node/agentic/dsv4_fp4_mi355x_vllm_mtp.sh"},
			runEnv: map[string]string{"PORT": "8891", "VLLM_CACHE_ROOT": "/it-share/gharunners/.cache/vllm", "HF_HUB_CACHE_MOUNT": "/it-share/hf-hub-cache/",
				"HF_HUB_CACHE": "/mnt/hf_hub_cache/"},
		},
		{
			runner: "b300-nv_0",
			row:    agenticRow("lmsysorg/sglang:v0.5.16-cu130", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 8),
			roles:  []string{RoleImport, RoleAllocate, RoleJobID, RoleRun, RoleRelease},
			salloc: []string{"salloc", "--partition=batch_1", "--account=benchmark", "-N", "1", "--gres=gpu:8", "--exclusive", "--mem=0", "--time=480", "--no-shell", "--job-name=b300-nv_0"},
			squash: "/data/squash/lmsysorg_sglang_v0.5.16-cu130.sqsh", importHead: []string{"bash", "-c"},
			run: []string{"srun", "--jobid=${JOB_ID}", "--mpi=none", "--container-image=/data/squash/lmsysorg_sglang_v0.5.16-cu130.sqsh",
				"--container-mounts=${GITHUB_WORKSPACE}:/workspace,/scratch/models/:/scratch/models/,/data/models/:/data/models/",
				"--no-container-mount-home", "--container-remap-root", "--container-workdir=/workspace", "--no-container-entrypoint", "--export=ALL,PORT=8888"},
			payload: []string{"bash", "benchmarks/single_node/agentic/qwen3.5_fp8_b300_sglang_mtp.sh"},
			runEnv:  map[string]string{"MODEL_PATH": "/scratch/models/Qwen3.5-397B-A17B-FP8", "HF_HUB_CACHE": "${HOME}/.cache/huggingface"},
		},
		{
			runner: "b200-dgxc_2",
			row:    agenticRow("lmsysorg/sglang:deepseek-v4-blackwell", "deepseek-ai/DeepSeek-V4-Pro", "dsv4", "fp4", "sglang", 8),
			roles:  []string{RoleAllocate, RoleJobID, RoleImport, RoleRun, RoleRelease},
			salloc: []string{"salloc", "--partition=gpu-2", "--account=benchmark", "--gres=gpu:8", "--exclusive", "--mem=0", "--time=480", "--no-shell", "--job-name=b200-dgxc_2"},
			squash: "/home/sa-shared/containers/lmsysorg_sglang_deepseek-v4-blackwell.sqsh", importHead: []string{"srun", "--jobid=${JOB_ID}", "bash", "-c"},
			run: []string{"srun", "--jobid=${JOB_ID}", "--container-image=/home/sa-shared/containers/lmsysorg_sglang_deepseek-v4-blackwell.sqsh",
				"--container-mounts=${GITHUB_WORKSPACE}:/ix,/lustre/fsw/models/deepseek-v4-pro:/lustre/fsw/models/deepseek-v4-pro,/lustre/fsw/gharunners/aiperf-cache:/aiperf_mmap_cache",
				"--no-container-mount-home", "--container-workdir=/ix", "--no-container-entrypoint", "--export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
			payload: []string{"bash", "benchmarks/single_node/agentic/dsv4_fp4_b200_sglang_mtp.sh"},
			runEnv:  map[string]string{"MODEL": "/lustre/fsw/models/deepseek-v4-pro", "MODEL_PATH": "/lustre/fsw/models/deepseek-v4-pro", "HF_HUB_CACHE": "/mnt/hf_hub_cache/"},
		},
		{
			runner: "h200-dgxc-slurm_1",
			row:    agenticRow("vllm/vllm-openai:v0.27.1", "MiniMaxAI/MiniMax-M3-MXFP8", "minimaxm3", "fp8", "vllm", 8),
			roles:  []string{RoleAllocate, RoleJobID, RoleImport, RoleRun, RoleRelease},
			salloc: []string{"salloc", "--partition=main", "--account=sa-shared", "--gres=gpu:8", "--exclusive", "--time=180", "--no-shell", "--job-name=h200-dgxc-slurm_1"},
			squash: "/data/containers/vllm_vllm-openai_v0.27.1.sqsh", importHead: []string{"srun", "--jobid=${JOB_ID}", "bash", "-c"},
			run: []string{"srun", "--jobid=${JOB_ID}", "--container-image=/data/containers/vllm_vllm-openai_v0.27.1.sqsh",
				"--container-mounts=${GITHUB_WORKSPACE}:/workspace/,/models/gharunners/hf-hub-cache:/mnt/hf_hub_cache/,/home/sa-shared/gharunners/ai-perf-cache:/aiperf_mmap_cache",
				"--no-container-mount-home", "--container-remap-root", "--container-workdir=/workspace/", "--no-container-entrypoint", "--export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
			payload: []string{"bash", "benchmarks/single_node/agentic/minimaxm3_fp8_h200_mtp.sh"}, // the launcher falls back to the name without the framework: no _vllm_mtp script at 843c6254f
			runEnv:  map[string]string{"HF_HUB_CACHE": "/mnt/hf_hub_cache/"},
		},
		{
			runner: "h100-dgxc-slurm_0",
			row:    agenticRow("vllm/vllm-openai:v0.27.1", "MiniMaxAI/MiniMax-M3-MXFP8", "minimaxm3", "fp8", "vllm", 8),
			roles:  []string{RoleAllocate, RoleJobID, RoleImport, RoleRun, RoleRelease},
			salloc: []string{"salloc", "--partition=hpc-gpu-1", "--account=customer", "--gres=gpu:8", "--exclusive", "--time=180", "--no-shell", "--job-name=h100-dgxc-slurm_0"},
			squash: "/mnt/nfs/lustre/containers/vllm_vllm-openai_v0.27.1.sqsh", importHead: []string{"srun", "--jobid=${JOB_ID}", "bash", "-c"},
			run: []string{"srun", "--jobid=${JOB_ID}", "--container-image=/mnt/nfs/lustre/containers/vllm_vllm-openai_v0.27.1.sqsh",
				"--container-mounts=${GITHUB_WORKSPACE}:/workspace/,/mnt/nfs/sa-shared/gharunners/hf-hub-cache/:/mnt/hf_hub_cache/,/mnt/nfs/sa-shared/gharunners/ai-perf-cache:/aiperf_mmap_cache",
				"--no-container-mount-home", "--container-workdir=/workspace/", "--no-container-entrypoint", "--export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
			payload: []string{"bash", "benchmarks/single_node/agentic/minimaxm3_fp8_h100_mtp.sh"},
			runEnv:  map[string]string{"HF_HUB_CACHE": "/mnt/hf_hub_cache/"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.runner, func(t *testing.T) {
			prof, err := recipes.ProfileFor(tt.runner)
			require.NoError(t, err)
			assert.Contains(t, prof.Source, prof.LauncherFile())
			assert.Contains(t, prof.Source, recipes.LauncherCommit)
			pl, err := Build(prof, tt.row, Options{RunnerName: tt.runner})
			require.NoError(t, err)
			assert.Equal(t, tt.roles, roles(pl))
			assert.Equal(t, tt.salloc, command(t, pl, RoleAllocate))
			assert.Equal(t, tt.squash, pl.SquashFile)
			imp := command(t, pl, RoleImport)
			require.Len(t, imp, len(tt.importHead)+1)
			assert.Equal(t, tt.importHead, imp[:len(tt.importHead)])
			script := imp[len(imp)-1]
			assert.Contains(t, script, `exec 9>"`+tt.squash+`.lock"`)
			assert.Contains(t, script, "flock -w 600 9 ||")
			assert.Contains(t, script, `if unsquashfs -l "`+tt.squash+`" > /dev/null 2>&1; then`)
			assert.Contains(t, script, `enroot import -o "`+tt.squash+`" docker://`+tt.row.Image+"\n")
			run := command(t, pl, RoleRun)
			assert.Equal(t, tt.run, run[:len(tt.run)])
			assert.Equal(t, tt.payload, run[len(tt.run):])
			runEnv := pl.Commands[slices.IndexFunc(pl.Commands, func(c recipes.HostCommand) bool { return c.Role == RoleRun })].Env
			for k, v := range tt.runEnv {
				assert.Equal(t, v, runEnv[k], k)
			}
			assert.Contains(t, tt.salloc, "--gres=gpu:"+runEnv["GPU_COUNT"], "GPU_COUNT")
			assert.Equal(t, []string{"scancel", "${JOB_ID}"}, pl.Commands[len(pl.Commands)-1].Argv)
			assert.True(t, pl.Allocates)
		})
	}
}

// An allocation given (SLURM_JOB_ID) is used as is: no salloc, no squeue,
// no scancel, and the job's port is known.
func TestReuseAllocation(t *testing.T) {
	prof, err := recipes.ProfileFor("mi325x-amds_00")
	require.NoError(t, err)
	row := agenticRow("lmsysorg/sglang:v0.5.16-rocm720-mi30x", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 2)
	pl, err := Build(prof, row, Options{RunnerName: "mi325x-amds_00", JobID: "5123", Workspace: "/data/ws", Payload: []string{"/opt/sweep/sweep", "run"}, Mounts: []string{"/usr/local/bin:/opt/sweep:ro"}})
	require.NoError(t, err)
	assert.False(t, pl.Allocates)
	assert.Equal(t, []string{RoleImport, RoleRun}, roles(pl))
	run := pl.Commands[1]
	assert.Equal(t, "45123", run.Env["PORT"])
	assert.Equal(t, "/tmp/xdg-cache-5123", run.Env["XDG_CACHE_HOME"])
	assert.Contains(t, run.Argv, "--container-mounts=/data/ws:/workspace/,/raid/hf-hub-cache/:/mnt/hf_hub_cache/,/dev/kfd:/dev/kfd,/dev/dri:/dev/dri,/usr/local/bin:/opt/sweep:ro")
	assert.Equal(t, []string{"/opt/sweep/sweep", "run"}, run.Argv[len(run.Argv)-2:])
}

// The docker launcher (launch_mi325x-tw.sh): docker rm -f, docker run with
// the launcher's flags, and the container removed at the end.
func TestDockerProfile(t *testing.T) {
	prof, err := recipes.ProfileFor("cluster:mi325x-tw")
	require.NoError(t, err)
	row := agenticRow("vllm/vllm-openai-rocm:nightly", "deepseek-ai/DeepSeek-V4-Pro", "dsv4", "fp8", "vllm", 8)
	row.SpecDecoding = "none"
	pl, err := Build(prof, row, Options{RunnerName: "mi325x-tw_0", Workspace: "/ws"})
	require.NoError(t, err)
	assert.Equal(t, []string{RolePrepare, RoleRun, RoleRelease}, roles(pl))
	assert.Equal(t, []string{"docker", "rm", "-f", "bmk-server-mi325x-tw_0"}, pl.Commands[0].Argv)
	run := pl.Commands[1].Argv
	assert.Equal(t, []string{"docker", "run", "--rm", "--network=host", "--name=bmk-server-mi325x-tw_0", "--device=/dev/kfd", "--device=/dev/dri"}, run[:7])
	assert.Equal(t, []string{"-v", "/home/gharunner/hf_hub_cache/:/hf_hub_cache", "-v", "/ws:/workspace/", "-w", "/workspace/"}, run[21:27])
	assert.Equal(t, []string{"--entrypoint=bash", "vllm/vllm-openai-rocm:nightly", "benchmarks/single_node/agentic/dsv4_fp8_mi325x.sh"}, run[len(run)-3:])
	assert.False(t, pl.Allocates)
}

// TestBuildRejectsShellInImage: the launch checks an image as a config's
// is checked (configs.CheckImage, one rule): shell syntax and a leading #
// (a comment) are refused, enroot's registry#image form is not.
func TestBuildRejectsShellInImage(t *testing.T) {
	prof, err := recipes.ProfileFor("mi325x-amds_00")
	require.NoError(t, err)
	for _, tc := range []struct {
		image string
		ok    bool
	}{
		{"img:$(reboot)", false},
		{"#img:v1", false},
		{"img:v1 --privileged", false},
		{"nvcr.io#nvidia/sglang:v0.5.16", true},
		{"lmsysorg/sglang:v0.5.16-rocm720-mi30x", true},
	} {
		row := agenticRow(tc.image, "m", "qwen3.5", "fp8", "sglang", 2)
		_, err = Build(prof, row, Options{RunnerName: "mi325x-amds_00"})
		if tc.ok {
			assert.NoError(t, err, tc.image)
		} else {
			assert.ErrorContains(t, err, "characters a launcher's shell text cannot carry", tc.image)
		}
	}
}

// InJob: the container step has no --jobid (it runs in the batch job)
// and mounts the sweep directory as the workspace and at its own path.
// The import's argv is TestInJobImport's.
func TestInJob(t *testing.T) {
	row := agenticRow("lmsysorg/sglang:v0.5.16-rocm720-mi30x", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 2)
	prof, err := recipes.ProfileFor("cluster:mi325x-amds")
	require.NoError(t, err)
	js, err := InJob(prof, row, Options{RunnerName: "mi325x-amds_00", Mounts: []string{"/b:/opt/sweep:ro"}}, "/shared/d")
	require.NoError(t, err)
	step := js.Argv
	assert.Equal(t, []string{"srun", "--container-image=/raid/squash/lmsysorg_sglang_v0.5.16-rocm720-mi30x.sqsh",
		"--container-mounts=/shared/d:/workspace/,/raid/hf-hub-cache/:/mnt/hf_hub_cache/,/dev/kfd:/dev/kfd,/dev/dri:/dev/dri,/b:/opt/sweep:ro,/shared/d:/shared/d",
		"--container-mount-home", "--container-writable", "--container-remap-root", "--container-workdir=/workspace/", "--no-container-entrypoint", "--export=ALL"}, step)
	// MI325X's per-job caches, by the job's id on the node, and the
	// workflow's HF_HUB_CACHE: the mounted hub cache, where the client
	// looks for its trace set.
	assert.Equal(t, map[string]string{"XDG_CACHE_HOME": "/tmp/xdg-cache-${SLURM_JOB_ID}", "TRITON_CACHE_DIR": "/tmp/triton-cache-${SLURM_JOB_ID}",
		"HF_HUB_CACHE": "/mnt/hf_hub_cache/"}, js.Env)
	// MI300X's container step mounts the stage step's copy of the
	// workspace (/tmp/inferencex-JOB_ID) in its launcher; a job has no
	// stage step, and its node shares the sweep directory: that is
	// mounted, never a path no step made.
	mi300x, err := recipes.ProfileFor("mi300x-amds_00")
	require.NoError(t, err)
	js, err = InJob(mi300x, row, Options{RunnerName: "mi300x-amds_00"}, "/shared/d")
	require.NoError(t, err)
	assert.Contains(t, js.Argv, "--container-mounts=/shared/d:/workspace/,/raid/hf-hub-cache/:/mnt/hf_hub_cache/,/dev/kfd:/dev/kfd,/dev/dri:/dev/dri,/shared/d:/shared/d")
	h200, err := recipes.ProfileFor("h200-dgxc-slurm_0")
	require.NoError(t, err)
	js, err = InJob(h200, row, Options{RunnerName: "h200-dgxc-slurm_0"}, "/shared/d")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"HF_HUB_CACHE": "/mnt/hf_hub_cache/"}, js.Env, "H200's launcher has no per-job variables")
	docker, err := recipes.ProfileFor("mi325x-tw_0")
	require.NoError(t, err)
	_, err = InJob(docker, row, Options{RunnerName: "mi325x-tw_0"}, "/d")
	assert.EqualError(t, err, "launch: runner mi325x-tw runs docker on its node (runners/launch_mi325x-tw.sh), not Slurm jobs: run its arms with --executor local")
}

// InContainer: a docker runner's arm runs its payload in the launcher's
// docker run with the sweep directory mounted at its own path and the
// arm's GPUs exported; a Slurm runner's arm is refused.
func TestInContainer(t *testing.T) {
	prof, err := recipes.ProfileFor("cluster:mi325x-tw")
	require.NoError(t, err)
	row := agenticRow("img:1", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 2)
	pl, err := InContainer(prof, row, Options{RunnerName: "mi325x-tw-arm03", Payload: []string{"/opt/sweep/sweep", "run-arm", "--job", "/s/docker/arm03-t1.json"}}, "/s", []int{4, 5})
	require.NoError(t, err)
	assert.Equal(t, "bmk-server-mi325x-tw-arm03", pl.ContainerName)
	run := command(t, pl, RoleRun)
	assert.Subset(t, run, []string{"-v", "/s:/workspace/", "/s:/s", "-e", "HIP_VISIBLE_DEVICES=4,5", "ROCR_VISIBLE_DEVICES=4,5"})
	assert.Equal(t, []string{"--entrypoint=/opt/sweep/sweep", "img:1", "run-arm", "--job", "/s/docker/arm03-t1.json"}, run[len(run)-5:])
	slurm, err := recipes.ProfileFor("mi325x-amds_00")
	require.NoError(t, err)
	_, err = InContainer(slurm, row, Options{RunnerName: "x", Payload: []string{"true"}}, "/s", nil)
	assert.ErrorContains(t, err, "runner mi325x-amds launches through Slurm")
}

// MI355X's launcher stops every docker container on the node it holds
// exclusively; on a shared allocation those are other jobs' containers, so
// the step is left out and the plan says so.
func TestBuildStopsDockerOnlyOnAnExclusiveNode(t *testing.T) {
	row := agenticRow("vllm/vllm-openai-rocm:v0.27.1", "MiniMaxAI/MiniMax-M3-MXFP8", "minimaxm3", "fp8", "vllm", 8)
	for _, tc := range []struct {
		name      string
		site      []string
		wantStop  bool
		wantNotes int
	}{
		{name: "exclusive (the launcher's)", wantStop: true},
		{name: "exclusive=false", site: []string{"exclusive=false"}, wantNotes: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof, err := recipes.SiteProfile("mi355x-amds_02", tc.site)
			require.NoError(t, err)
			pl, err := Build(prof, row, Options{RunnerName: "mi355x-amds_02"})
			require.NoError(t, err)
			stops := slices.ContainsFunc(pl.Commands, func(c recipes.HostCommand) bool {
				return slices.ContainsFunc(c.Argv, func(a string) bool { return strings.Contains(a, "docker stop") })
			})
			assert.Equal(t, tc.wantStop, stops, "docker stop in %v", roles(pl))
			assert.Len(t, pl.Notes, tc.wantNotes)
		})
	}
}

// A docker launch's container name carries the output directory's tag:
// two launches into different directories never share (and docker rm -f)
// one container; the same directory keeps its name.
func TestDockerContainerNamePerDirectory(t *testing.T) {
	prof, err := recipes.ProfileFor("mi325x-tw_01")
	require.NoError(t, err)
	row := agenticRow("lmsysorg/sglang:v0.5.16-rocm720-mi30x", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 8)
	name := func(dir string) string {
		t.Helper()
		pl, err := Build(prof, row, Options{RunnerName: "mi325x-tw_01", Instance: DirTag(dir), Payload: []string{"true"}})
		require.NoError(t, err)
		assert.Equal(t, []string{"docker", "rm", "-f", pl.ContainerName}, pl.Commands[0].Argv)
		return pl.ContainerName
	}
	a, b := filepath.Join(t.TempDir(), "A"), filepath.Join(t.TempDir(), "B")
	assert.NotEqual(t, name(a), name(b))
	assert.Equal(t, name(a), name(a+"/"))
	assert.Equal(t, "bmk-server-mi325x-tw_01-"+DirTag(a), name(a))
}

// TestPlanPoints: sweep plan --runner-name printed `docker rm -f
// bmk-server-mi325x-tw_4` where the launch removes
// bmk-server-mi325x-tw_4-<tag> (pasting it would remove InferenceX's own
// container on that runner), and planned every point on port 8888 in
// /workspace/results where the launch binds the launcher's port in the
// container's workspace. PlanPoints plans each point as the launch runs
// it (PointOptions, the one rule of the container's name) and says what
// is known only at launch.
func TestPlanPoints(t *testing.T) {
	row := agenticRow("lmsysorg/sglang:v0.5.16-rocm720-mi30x", "Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5", "fp8", "sglang", 2)
	row.ConfigKey, row.Runner, row.EP = "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "mi325x", 2
	po := models.WithBuiltin(recipes.PlanOptions{RunnerName: "mi325x-tw_4"})
	planned := func(runner, workspace string) recipes.Point {
		t.Helper()
		prof, err := recipes.ProfileFor(runner)
		require.NoError(t, err)
		po := po
		po.RunnerName = runner
		points, err := recipes.Plan(matrix.Matrix{row}, po)
		require.NoError(t, err)
		require.NoError(t, PlanPoints(points, po, prof, runner, workspace, "/usr/local/bin/sweep"))
		return points[0]
	}
	notes := func(p recipes.Point) string { return strings.Join(p.LaunchNotes, "\n") }

	ws := filepath.Join(t.TempDir(), "out")
	p := planned("mi325x-tw_4", ws)
	name := "bmk-server-mi325x-tw_4-" + DirTag(ws)
	assert.Equal(t, []string{"docker", "rm", "-f", name}, p.Launch[0].Argv)
	prof, err := recipes.ProfileFor("mi325x-tw_4")
	require.NoError(t, err)
	lo := PointOptions(prof, row, "mi325x-tw_4", ws, "/usr/local/bin/sweep")
	pl, err := Build(prof, row, lo)
	require.NoError(t, err)
	assert.Equal(t, name, pl.ContainerName, "sweep run --launch's container")
	assert.Equal(t, "/workspace", p.ResultDir, "the container's workspace, where the launch writes the result")
	assert.NotContains(t, notes(p), "${PORT}")

	p = planned("mi325x-tw_4", "")
	assert.Equal(t, []string{"docker", "rm", "-f", "bmk-server-mi325x-tw_4-${OUT_TAG}"}, p.Launch[0].Argv)
	assert.Contains(t, notes(p), "${OUT_TAG} in the container's name is 8 hex digits of the SHA-256 of sweep run --launch's absolute --out")

	p = planned("mi325x-amds_03", "")
	assert.Contains(t, notes(p), "the engine's port is the launcher's ${PORT} (40000 + JOB_ID % 10000), known once allocated")
	assert.Contains(t, notes(p), "sweep run --launch adds its own flags to the container's sweep run")

	row = agenticRow("vllm/vllm-openai-rocm:v0.27.1", "deepseek-ai/DeepSeek-V4-Pro", "dsv4", "fp4", "vllm", 8)
	row.ConfigKey, row.Runner = "dsv4-fp4-mi355x-vllm-agentic-mtp", "mi355x"
	p = planned("mi355x-amds_03", "")
	assert.Equal(t, 8891, p.Port, "the launcher's 8888 + the runner's digit")
	assert.Equal(t, "http://localhost:8891/health", p.HealthURL)
	assert.NotContains(t, notes(p), "${PORT}")
}
