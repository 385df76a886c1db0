package recipes

import (
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
}

// Args returns the salloc flags for a point on gpus GPUs.
func (a SlurmAlloc) Args(gpus int) []string {
	var out []string
	if a.Partition != "" {
		out = append(out, "--partition="+a.Partition)
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
	// Source says where the profile's facts come from.
	Source string
}

// Visible device variables of the two GPU vendors.
var (
	amdDeviceVars    = []string{"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}
	nvidiaDeviceVars = []string{"CUDA_VISIBLE_DEVICES"}
)

// profiles are the single-node launchers' profiles, one per launcher.
var profiles = []Profile{
	{
		Name: "mi325x-amds", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"/mnt/hf_hub_cache", "/mnt/hf_hub_cache"}, {"/dev/kfd", "/dev/kfd"}, {"/dev/dri", "/dev/dri"}},
		Slurm:  SlurmAlloc{Partition: "compute", CPUsPerTask: 256, TimeMinutes: 480},
		Env:    map[string]string{}, DeviceVars: amdDeviceVars,
		Source: "launch_mi325x-amds.sh (inferencex.md §6.3); recorded argv sample: no site variables",
	},
	{
		Name: "mi300x-amds", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"/mnt/hf_hub_cache", "/mnt/hf_hub_cache"}, {"/dev/kfd", "/dev/kfd"}, {"/dev/dri", "/dev/dri"}},
		Slurm:  SlurmAlloc{Partition: "compute", CPUsPerTask: 256, TimeMinutes: 480},
		Env:    map[string]string{}, DeviceVars: amdDeviceVars,
		Source: "assumed equal to launch_mi325x-amds.sh (same AMD fleet); no recorded sample",
	},
	{
		Name: "mi355x-amds", GPUsPerNode: 8, Container: Docker,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"/it-share/aiperf-cache/", "/aiperf_mmap_cache"}},
		Slurm:  SlurmAlloc{Exclusive: true},
		Env: map[string]string{
			"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache",
			"AIPERF_MMAP_CACHE_HOST_PATH":   "/it-share/aiperf-cache/",
			"VLLM_CACHE_ROOT":               "/it-share/gharunners/.cache/vllm",
		},
		DeviceVars: amdDeviceVars,
		Source:     "launch_mi355x-amds.sh (inferencex.md §6.3: salloc --exclusive, docker, mmap cache) and the recorded argv sample's site variables",
	},
	{
		Name: "b300-nv", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace"}, {"/scratch/models/", "/scratch/models/"}, {"/data/models/", "/data/models/"}},
		Slurm:  SlurmAlloc{Partition: "batch_1", Account: "benchmark", Nodes: 1, Exclusive: true, MemAll: true, TimeMinutes: 480},
		Env:    map[string]string{}, DeviceVars: nvidiaDeviceVars,
		ModelPath: b300ModelPath,
		Source:    "launch_b300-nv.sh single-node branch (InferenceX 843c6254f): salloc -N 1 --exclusive --mem=0, srun --container-image --export=ALL,PORT=8888, MODEL_PATH from the staged-model list",
	},
	{
		Name: "b200-dgxc", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace"}, {"$MODEL_PATH", "$MODEL_PATH"}, {"/lustre/fsw/gharunners/aiperf-cache", "/aiperf_mmap_cache"}},
		Slurm:  SlurmAlloc{Partition: "gpu-2", Account: "benchmark", Exclusive: true, MemAll: true, TimeMinutes: 480},
		Env: map[string]string{
			"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache",
			"AIPERF_MMAP_CACHE_HOST_PATH":   "/lustre/fsw/gharunners/aiperf-cache",
		},
		DeviceVars: nvidiaDeviceVars,
		ModelPath:  b200DGXCModelPath, ModelIsPath: true,
		Source: "launch_b200-dgxc.sh single-node branch (InferenceX 843c6254f): MODEL_PATH by model prefix and precision, export MODEL=$MODEL_PATH, " +
			"salloc --exclusive --mem=0, srun --export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache; recorded NVIDIA argv sample",
	},
	{
		Name: "h100-dgxc-slurm", Labels: []string{"cluster:h100-dgxc"}, GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"/mnt/nfs/sa-shared/gharunners/hf-hub-cache/", "$HF_HUB_CACHE"}, {"/mnt/nfs/sa-shared/gharunners/ai-perf-cache", "/aiperf_mmap_cache"}},
		Slurm:  SlurmAlloc{Partition: "hpc-gpu-1", Account: "customer", Exclusive: true, TimeMinutes: 180},
		Env:    map[string]string{"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache"}, DeviceVars: nvidiaDeviceVars,
		Source: "launch_h100-dgxc-slurm.sh single-node branch (InferenceX 843c6254f): salloc --exclusive --time=180, srun --export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache",
	},
	{
		Name: "h200-dgxc-slurm", Labels: []string{"cluster:h200-dgxc"}, GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"/models/gharunners/hf-hub-cache", "$HF_HUB_CACHE"}, {"/home/sa-shared/gharunners/ai-perf-cache", "/aiperf_mmap_cache"}},
		Slurm:  SlurmAlloc{Partition: "main", Account: "sa-shared", Exclusive: true, TimeMinutes: 180},
		Env:    map[string]string{"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache"}, DeviceVars: nvidiaDeviceVars,
		Source: "launch_h200-dgxc-slurm.sh single-node branch (InferenceX 843c6254f): salloc --exclusive --time=180, srun --export=ALL,PORT=8888,AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache; recorded NVIDIA argv sample",
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
	return Profile{}, fmt.Errorf("runner %s: no runner profile %q (known: %s)", runner, prefix, strings.Join(names, ", "))
}

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
	fmt.Fprintf(&b, "%s: %s, salloc %s", p.Name, p.Container, strings.Join(p.Slurm.Args(p.GPUsPerNode), " "))
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
	return p
}
