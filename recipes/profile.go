package recipes

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sweep/configs/matrix"
)

// Container names how a runner's launcher runs the recipe's image.
type Container string

// Container runtimes of InferenceX's launchers.
const (
	// Enroot imports the image into a squash file and runs it through
	// Slurm's Pyxis plugin (srun --container-image).
	Enroot Container = "enroot"
	// Docker runs the image with docker on the allocated node.
	Docker Container = "docker"
)

// Mount is one bind mount a launcher gives the container.
type Mount struct {
	Host, Container string
}

// SlurmAlloc is the allocation a launcher asks Slurm for (salloc). GPUs
// come from the point (TP·PP·PCP) unless Exclusive takes the whole node.
type SlurmAlloc struct {
	Partition string
	// Account is salloc --account ("" for none).
	Account string
	// Nodes, when > 0, is salloc -N.
	Nodes       int
	CPUsPerTask int
	// MemAll asks for all of the node's memory (salloc --mem=0).
	MemAll bool
	// TimeMinutes is salloc --time.
	TimeMinutes int
	// Exclusive takes the whole node (salloc --exclusive).
	Exclusive bool
	// Exclude are nodes salloc must not pick (--exclude=, comma-separated).
	Exclude string
}

// Args returns the salloc flags for a point on gpus GPUs.
func (a SlurmAlloc) Args(gpus int) []string {
	var out []string
	if a.Partition != "" {
		out = append(out, "--partition="+a.Partition)
	}
	if a.Exclude != "" {
		out = append(out, "--exclude="+a.Exclude)
	}
	if a.Account != "" {
		out = append(out, "--account="+a.Account)
	}
	if a.Nodes > 0 {
		out = append(out, "-N", strconv.Itoa(a.Nodes))
	}
	out = append(out, "--gres=gpu:"+strconv.Itoa(gpus))
	if a.Exclusive {
		out = append(out, "--exclusive")
	}
	if a.MemAll {
		out = append(out, "--mem=0")
	}
	if a.CPUsPerTask > 0 {
		out = append(out, "--cpus-per-task="+strconv.Itoa(a.CPUsPerTask))
	}
	if a.TimeMinutes > 0 {
		out = append(out, "--time="+strconv.Itoa(a.TimeMinutes))
	}
	return out
}

// Profile is what a runner's launcher (runners/launch_<name>.sh) adds to a
// point beyond the recipe: the container runtime and its mounts, the Slurm
// allocation, the environment it exports for every framework, and the
// variables that carry the point's GPU ids. A point's engine command and
// environment on runner R are the recipe's plus Profile(R).Env.
type Profile struct {
	// Name is the launcher's runner-name prefix ("mi325x-amds").
	Name string
	// Labels are runners.yaml labels whose runners all use this launcher
	// when the label differs from Name ("cluster:h200-dgxc" for
	// h200-dgxc-slurm_NN).
	Labels []string
	// GPUsPerNode is the node size (runners.yaml hardware).
	GPUsPerNode int
	Container   Container
	Mounts      []Mount
	Slurm       SlurmAlloc
	// Env is exported by the launcher for every point (site cache paths).
	Env map[string]string
	// DeviceVars are the variables that name the point's GPU ids.
	DeviceVars []string
	// ModelPath, when set, is the MODEL_PATH the launcher exports for a
	// row (pre-staged weights); "" leaves the engine loading the model id.
	ModelPath func(*matrix.Row) string
	// ModelIsPath says the launcher also sets MODEL to MODEL_PATH, so the
	// served model name, the tokenizer and the client's --model are the
	// path too (launch_b200-dgxc.sh: "export MODEL=$MODEL_PATH").
	ModelIsPath bool
	// Launch is what the launcher does around the recipe script.
	Launch Launch
	// Source says where the profile's facts come from: the launcher file
	// at LauncherCommit.
	Source string
}

// LauncherFile is the InferenceX launcher the profile was read from.
func (p Profile) LauncherFile() string { return "runners/launch_" + p.Name + ".sh" }

// Visible device variables of the two GPU vendors.
var (
	amdDeviceVars    = []string{"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}
	nvidiaDeviceVars = []string{"CUDA_VISIBLE_DEVICES"}
)

// profiles are the single-node launchers' profiles, one per launcher, as
// read in InferenceX's runners/launch_<name>.sh at commit LauncherCommit.
var profiles = []Profile{
	{
		Name: "mi325x-amds", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"$HF_HUB_CACHE_MOUNT", "$HF_HUB_CACHE"}, {"/dev/kfd", "/dev/kfd"}, {"/dev/dri", "/dev/dri"}},
		Slurm:  SlurmAlloc{Partition: "compute", CPUsPerTask: 256, TimeMinutes: 480},
		Env:    map[string]string{}, DeviceVars: amdDeviceVars,
		Launch: Launch{
			HostEnv: map[string]string{"HF_HUB_CACHE_MOUNT": "/raid/hf-hub-cache/"}, HubCacheMount: fixedHub("/raid/hf-hub-cache/"),
			SquashDir: "/raid/squash", JobID: JobIDFromSalloc, Port: PortFromJobID, StepJobName: true, ImportStrict: true,
			JobEnv:         map[string]string{"XDG_CACHE_HOME": "/tmp/xdg-cache-${JOB_ID}", "TRITON_CACHE_DIR": "/tmp/triton-cache-${JOB_ID}"},
			ContainerFlags: fixedFlags("--container-mount-home", "--container-writable", "--container-remap-root", "--container-workdir=/workspace/"),
			Release:        true,
		},
		Source: "runners/launch_mi325x-amds.sh (InferenceX 843c6254f) and the recorded launcher argv sample",
	},
	{
		Name: "mi300x-amds", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$REMOTE_WORKSPACE", "/workspace/"}, {"$HF_HUB_CACHE_MOUNT", "$HF_HUB_CACHE"}, {"/dev/kfd", "/dev/kfd"}, {"/dev/dri", "/dev/dri"}},
		Slurm:  SlurmAlloc{Partition: "compute", Exclude: "chi-mi300x-049,chi-mi300x-121", CPUsPerTask: 256, TimeMinutes: 180},
		Env:    map[string]string{}, DeviceVars: amdDeviceVars,
		Launch: Launch{
			HostEnv:       map[string]string{"HF_HUB_CACHE_MOUNT": "/raid/hf-hub-cache/", "XDG_RUNTIME_DIR": "/tmp/enroot-runtime-${UID}"},
			HubCacheMount: fixedHub("/raid/hf-hub-cache/"),
			SquashDir:     "/raid/hf-hub-cache/runtime-cache/enroot", JobID: JobIDFromSalloc, Port: PortFromJobID, StepJobName: true,
			ImportPreamble: []string{"export TMPDIR='/raid/hf-hub-cache/runtime-cache/enroot/tmp-${UID}'", "mkdir -p '/raid/hf-hub-cache/runtime-cache/enroot'"},
			ImportStrict:   true, ImportErrStdout: true, StageWorkspace: true, StageTmpDir: "/raid/hf-hub-cache/runtime-cache/enroot/tmp-${UID}",
			ContainerFlags: fixedFlags("--container-mount-home", "--container-writable", "--container-remap-root", "--container-workdir=/workspace/"),
			Release:        true,
		},
		Source: "runners/launch_mi300x-amds.sh (InferenceX 843c6254f): the checkout reaches the node with sbcast and the results come back over srun's stdout",
	},
	{
		Name: "mi355x-amds", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"$HF_HUB_CACHE_MOUNT", "$HF_HUB_CACHE"}, {"/it-share/aiperf-cache/", "/aiperf_mmap_cache"}},
		Slurm:  SlurmAlloc{Partition: "compute", Exclusive: true, CPUsPerTask: 128, TimeMinutes: 500},
		Env: map[string]string{
			"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache",
			"AIPERF_MMAP_CACHE_HOST_PATH":   "/it-share/aiperf-cache/",
			"VLLM_CACHE_ROOT":               "/it-share/gharunners/.cache/vllm",
		},
		DeviceVars: amdDeviceVars,
		Launch: Launch{
			HostEnv:       map[string]string{"AIPERF_MMAP_CACHE_HOST_PATH": "/it-share/aiperf-cache/", "VLLM_CACHE_ROOT": "/it-share/gharunners/.cache/vllm"},
			HubCacheMount: mi355xHub,
			SquashDir:     "/var/lib/squash", JobID: JobIDFromSqueue, Port: PortFromRunnerDigit, StopDocker: true, ImportErrStdout: true,
			ContainerFlags: mi355xContainerFlags,
			Export:         []string{"AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
			Release:        true,
		},
		Source: "runners/launch_mi355x-amds.sh single-node branch (InferenceX 843c6254f): Pyxis/enroot (not docker), salloc --exclusive, docker stop on the node, hub cache /var/lib/hf-hub-cache/ (/it-share for DeepSeek-V4-Pro on vllm/atom and MiniMax-M3)",
	},
	{
		Name: "b300-nv", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "$CONTAINER_MOUNT_DIR"}, {"/scratch/models/", "/scratch/models/"}, {"/data/models/", "/data/models/"}},
		Slurm:  SlurmAlloc{Partition: "batch_1", Account: "benchmark", Nodes: 1, Exclusive: true, MemAll: true, TimeMinutes: 480},
		Env:    map[string]string{}, DeviceVars: nvidiaDeviceVars,
		ModelPath: b300ModelPath,
		Launch: Launch{
			HostEnv:   map[string]string{"HF_HUB_CACHE": "${HOME}/.cache/huggingface", "MODEL_PATH": "$MODEL_PATH"},
			SquashDir: "/data/squash", JobID: JobIDFromSqueueUser, Port: PortFixed, ImportOnHost: true, ImportErrStdout: false,
			ImportPreamble: []string{"enroot_local=\"$(mktemp -d /tmp/enroot-import.XXXXXX)\"", "trap 'rm -rf \"$enroot_local\"' EXIT",
				"export ENROOT_TEMP_PATH=\"$enroot_local/tmp\"", "export ENROOT_CACHE_PATH=\"$enroot_local/cache\"",
				"export ENROOT_DATA_PATH=\"$enroot_local/data\"", "export ENROOT_RUNTIME_PATH=\"$enroot_local/run\"",
				"mkdir -p \"$ENROOT_TEMP_PATH\" \"$ENROOT_CACHE_PATH\" \"$ENROOT_DATA_PATH\" \"$ENROOT_RUNTIME_PATH\""},
			MountDir:       blackwellMountDir("deepseek-v4-blackwell", "deepseek-v4-bw-ultra", "deepseek-v4-b300", "sglang-b300"),
			SrunFlags:      []string{"--mpi=none"},
			ContainerFlags: workdirFlags("--no-container-mount-home", "--container-remap-root"),
			Export:         []string{"PORT=8888"},
		},
		Source: "runners/launch_b300-nv.sh single-node branch (InferenceX 843c6254f): enroot import on the host before salloc, salloc -N 1 --exclusive --mem=0, srun --export=ALL,PORT=8888, MODEL_PATH from the staged-model list, no scancel (left to the workflow)",
	},
	{
		Name: "b200-dgxc", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "$CONTAINER_MOUNT_DIR"}, {"$MODEL_PATH", "$MODEL_PATH"}, {"/lustre/fsw/gharunners/aiperf-cache", "/aiperf_mmap_cache"}},
		Slurm:  SlurmAlloc{Partition: "gpu-2", Account: "benchmark", Exclusive: true, MemAll: true, TimeMinutes: 480},
		Env: map[string]string{
			"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache",
			"AIPERF_MMAP_CACHE_HOST_PATH":   "/lustre/fsw/gharunners/aiperf-cache",
		},
		DeviceVars: nvidiaDeviceVars,
		ModelPath:  b200DGXCModelPath, ModelIsPath: true,
		Launch: Launch{
			HostEnv:   map[string]string{"AIPERF_MMAP_CACHE_HOST_PATH": "/lustre/fsw/gharunners/aiperf-cache", "MODEL_PATH": "$MODEL_PATH", "MODEL": "$MODEL_PATH"},
			SquashDir: "/home/sa-shared/containers", JobID: JobIDFromSqueueUser, Port: PortFixed, ImportErrStdout: true,
			ImportPreamble: []string{"export ENROOT_CACHE_PATH=$HOME/.cache/enroot", "mkdir -p $ENROOT_CACHE_PATH"},
			MountDir:       blackwellMountDir("deepseek-v4-blackwell"),
			ContainerFlags: workdirFlags("--no-container-mount-home"),
			Export:         []string{"PORT=8888", "AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
		},
		Source: "runners/launch_b200-dgxc.sh single-node branch (InferenceX 843c6254f): MODEL_PATH by model prefix and precision, export MODEL=$MODEL_PATH, " +
			"salloc --exclusive --mem=0, srun --export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache, no scancel (left to the workflow); recorded NVIDIA argv sample",
	},
	{
		Name: "h100-dgxc-slurm", Labels: []string{"cluster:h100-dgxc"}, GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"$HF_HUB_CACHE_MOUNT", "$HF_HUB_CACHE"}, {"/mnt/nfs/sa-shared/gharunners/ai-perf-cache", "/aiperf_mmap_cache"}},
		Slurm:  SlurmAlloc{Partition: "hpc-gpu-1", Account: "customer", Exclusive: true, TimeMinutes: 180},
		Env:    map[string]string{"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache"}, DeviceVars: nvidiaDeviceVars,
		Launch: Launch{
			HubCacheMount: fixedHub("/mnt/nfs/sa-shared/gharunners/hf-hub-cache/"),
			SquashDir:     "/mnt/nfs/lustre/containers", JobID: JobIDFromSqueueUser, Port: PortFixed, ImportErrStdout: true,
			ContainerFlags: fixedFlags("--no-container-mount-home", "--container-workdir=/workspace/"),
			Export:         []string{"PORT=8888", "AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
			Release:        true,
		},
		Source: "runners/launch_h100-dgxc-slurm.sh single-node branch (InferenceX 843c6254f): salloc --exclusive --time=180, srun --export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache",
	},
	{
		Name: "h200-dgxc-slurm", Labels: []string{"cluster:h200-dgxc"}, GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "$CONTAINER_MOUNT_DIR/"}, {"$HF_HUB_CACHE_MOUNT", "$HF_HUB_CACHE"}, {"/home/sa-shared/gharunners/ai-perf-cache", "/aiperf_mmap_cache"}},
		Slurm:  SlurmAlloc{Partition: "main", Account: "sa-shared", Exclusive: true, TimeMinutes: 180},
		Env:    map[string]string{"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache"}, DeviceVars: nvidiaDeviceVars,
		Launch: Launch{
			// HF_HUB_CACHE_MOUNT and AIPERF_MMAP_CACHE_HOST_PATH are shell
			// variables of the launcher (the mounts), not exported.
			HubCacheMount: fixedHub("/models/gharunners/hf-hub-cache"),
			SquashDir:     "/data/containers", JobID: JobIDFromSqueueUser, Port: PortFixed, ImportErrStdout: true,
			ImportPreamble: []string{"export ENROOT_CACHE_PATH=$HOME/.cache/enroot", "mkdir -p $ENROOT_CACHE_PATH"},
			MountDir:       blackwellMountDir("deepseek-v4-hopper"),
			ContainerFlags: func(r *matrix.Row, dir string) []string {
				return []string{"--no-container-mount-home", "--container-remap-root", "--container-workdir=" + dir + "/"}
			},
			Export:  []string{"PORT=8888", "AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
			Release: true,
		},
		Source: "runners/launch_h200-dgxc-slurm.sh single-node branch (InferenceX 843c6254f): salloc --exclusive --time=180, srun --export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache; recorded NVIDIA argv sample",
	},
	{
		Name: "mi325x-tw", Labels: []string{"cluster:mi325x-tw"}, GPUsPerNode: 8, Container: Docker,
		Mounts: []Mount{{"$HF_HUB_CACHE_MOUNT", "$HF_HUB_CACHE"}, {"$GITHUB_WORKSPACE", "/workspace/"}},
		Env:    map[string]string{}, DeviceVars: amdDeviceVars,
		Launch: Launch{
			HostEnv:       map[string]string{"HF_HUB_CACHE_MOUNT": "/home/gharunner/hf_hub_cache/", "HF_HUB_CACHE": "/hf_hub_cache"},
			HubCacheMount: fixedHub("/home/gharunner/hf_hub_cache/"), Port: PortFixed,
			Docker: &DockerRun{
				Name:    "bmk-server-${RUNNER_NAME}",
				Devices: []string{"/dev/kfd", "/dev/dri"},
				Flags: []string{"--group-add", "video", "--group-add", "render", "--ipc=host", "--privileged", "--shm-size=32g",
					"--ulimit", "memlock=-1", "--ulimit", "stack=67108864", "--security-opt", "seccomp=unconfined", "--cap-add=SYS_PTRACE"},
				Env: []string{"HF_TOKEN", "HF_HUB_CACHE", "MODEL", "TP", "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "GPU_COUNT", "CONC", "MAX_MODEL_LEN", "ISL", "OSL",
					"RUN_EVAL", "EVAL_ONLY", "RUNNER_TYPE", "RESULT_FILENAME", "RANDOM_RANGE_RATIO", "PORT=8888",
					"DP_ATTENTION", "EP_SIZE", "DP_SIZE", "EVAL_MAX_MODEL_LEN", "SPEC_DECODING", "NUM_SPEC_TOKENS",
					"PROFILE", "SGLANG_TORCH_PROFILER_DIR", "VLLM_TORCH_PROFILER_DIR", "VLLM_RPC_TIMEOUT",
					"PYTHONPYCACHEPREFIX=/tmp/pycache/", "CUDA_DEVICE_ORDER=PCI_BUS_ID"},
			},
		},
		Source: "runners/launch_mi325x-tw.sh (InferenceX 843c6254f): no Slurm, docker run on the GPU node itself",
	},
}

// b200DGXCModelPaths are launch_b200-dgxc.sh's pre-staged weights by
// model prefix and precision (the first existing candidate directory where
// the launcher probes several; the launcher's own default here).
var b200DGXCModelPaths = map[string]string{
	"dsv4/fp4":      "/lustre/fsw/models/deepseek-v4-pro",
	"qwen3.5/bf16":  "/lustre/fsw/models/Qwen3.5-397B-A17B",
	"qwen3.5/fp8":   "/lustre/fsw/models/Qwen3.5-397B-A17B-FP8",
	"qwen3.5/fp4":   "/lustre/fsw/models/Qwen3.5-397B-A17B-NVFP4",
	"glm5.2/fp4":    "/lustre/fsw/gharunners/models/GLM-5.2-NVFP4",
	"minimaxm3/fp8": "/lustre/fsw/gharunners/models/MiniMax-M3-MXFP8",
	"minimaxm3/fp4": "/scratch/fsw/models/MiniMax-M3-NVFP4",
	"kimik3/fp4":    "/lustre/fsw/models/Kimi-K3",
}

func b200DGXCModelPath(r *matrix.Row) string {
	if r.ModelPrefix == "qwen3.5" && r.Precision == "fp4" && strings.HasSuffix(r.Model, "NVFP4-V2") {
		return "/scratch/fsw/models/Qwen3.5-397B-A17B-NVFP4-V2"
	}
	return b200DGXCModelPaths[r.ModelPrefix+"/"+r.Precision]
}

// b300StagedModels are the weights launch_b300-nv.sh finds pre-staged
// under /scratch/models/; any other model goes to /data/models/.
var b300StagedModels = []string{
	"DeepSeek-R1-0528", "DeepSeek-R1-0528-NVFP4-v2", "DeepSeek-V4-Flash", "DeepSeek-V4-Pro", "DeepSeek-V4-Pro-0813",
	"GLM-5-FP8", "GLM-5-NVFP4", "GLM-5.1", "Kimi-K2.5", "Kimi-K2.5-NVFP4", "Kimi-K2.6", "Kimi-K2.6-NVFP4", "Kimi-K3",
	"MiniMax-M2.5", "MiniMax-M2.5-NVFP4", "MiniMax-M2.7", "MiniMax-M2.7-NVFP4", "MiniMax-M3", "MiniMax-M3-NVFP4",
	"Qwen3.5-397B-A17B", "Qwen3.5-397B-A17B-FP8", "Qwen3.5-397B-A17B-NVFP4", "Qwen3.5-397B-A17B-NVFP4-V2", "gpt-oss-120b",
}

func b300ModelPath(r *matrix.Row) string {
	base := r.Model[strings.LastIndex(r.Model, "/")+1:]
	if r.ModelPrefix == "kimik2.5" && r.Precision == "fp4" || !slices.Contains(b300StagedModels, base) {
		return "/data/models/" + base
	}
	return "/scratch/models/" + base
}

// ProfileFor returns the profile of a runner name or label
// ("mi325x-amds_03", "cluster:mi325x-amds", "cluster:h200-dgxc").
func ProfileFor(runner string) (Profile, error) {
	prefix, _, _ := strings.Cut(strings.TrimPrefix(runner, "cluster:"), "_")
	for _, p := range profiles {
		if p.Name == prefix || slices.Contains(p.Labels, runner) {
			return p.clone(), nil
		}
	}
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return Profile{}, fmt.Errorf("runner %s: %w %q (known: %s)", runner, ErrNoProfile, prefix, strings.Join(names, ", "))
}

// ErrNoProfile marks a runner without a runner profile.
var ErrNoProfile = errors.New("no runner profile")

// DeviceEnv returns the variables that give a process the GPU ids.
func (p Profile) DeviceEnv(gpus []int) map[string]string {
	ids := make([]string, len(gpus))
	for i, g := range gpus {
		ids[i] = strconv.Itoa(g)
	}
	out := map[string]string{}
	for _, v := range p.DeviceVars {
		out[v] = strings.Join(ids, ",")
	}
	return out
}

// String is a one-line summary for plan output.
func (p Profile) String() string {
	var b strings.Builder
	if p.Launch.Docker != nil {
		fmt.Fprintf(&b, "%s: docker run on the runner host", p.Name)
	} else {
		fmt.Fprintf(&b, "%s: %s, salloc %s", p.Name, p.Container, strings.Join(p.Slurm.Args(p.GPUsPerNode), " "))
	}
	if len(p.Env) > 0 {
		keys := slices.Sorted(maps.Keys(p.Env))
		kv := make([]string, len(keys))
		for i, k := range keys {
			kv[i] = k + "=" + p.Env[k]
		}
		fmt.Fprintf(&b, ", env %s", strings.Join(kv, " "))
	}
	fmt.Fprintf(&b, ", GPUs via %s", strings.Join(p.DeviceVars, "/"))
	return b.String()
}

func (p Profile) clone() Profile {
	p.Labels = slices.Clone(p.Labels)
	p.Mounts = slices.Clone(p.Mounts)
	p.Env = maps.Clone(p.Env)
	p.DeviceVars = slices.Clone(p.DeviceVars)
	p.Launch = p.Launch.clone()
	return p
}
