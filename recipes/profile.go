package recipes

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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
	Partition   string
	CPUsPerTask int
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
	if a.Exclusive {
		out = append(out, "--exclusive")
	}
	out = append(out, "--gres=gpu:"+strconv.Itoa(gpus))
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
	// GPUsPerNode is the node size (runners.yaml hardware).
	GPUsPerNode int
	Container   Container
	Mounts      []Mount
	Slurm       SlurmAlloc
	// Env is exported by the launcher for every point (site cache paths).
	Env map[string]string
	// DeviceVars are the variables that name the point's GPU ids.
	DeviceVars []string
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
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"/mnt/hf_hub_cache", "/mnt/hf_hub_cache"}},
		Slurm:  SlurmAlloc{Exclusive: true},
		Env:    map[string]string{"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache"}, DeviceVars: nvidiaDeviceVars,
		Source: "NVIDIA Slurm launchers (peers.md §4.1: salloc --exclusive, Pyxis/Enroot); mmap cache as the recorded NVIDIA samples",
	},
	{
		Name: "h200-dgxc-slurm", GPUsPerNode: 8, Container: Enroot,
		Mounts: []Mount{{"$GITHUB_WORKSPACE", "/workspace/"}, {"/mnt/hf_hub_cache", "/mnt/hf_hub_cache"}},
		Slurm:  SlurmAlloc{Exclusive: true},
		Env:    map[string]string{"AIPERF_DATASET_MMAP_CACHE_DIR": "/aiperf_mmap_cache"}, DeviceVars: nvidiaDeviceVars,
		Source: "launch_h200-dgxc-slurm.sh as recorded in the NVIDIA argv sample (cluster:h200-dgxc): mmap cache dir only",
	},
}

// Profiles returns every runner profile, sorted by name.
func Profiles() []Profile {
	out := make([]Profile, len(profiles))
	for i, p := range profiles {
		out[i] = p.clone()
	}
	slices.SortFunc(out, func(a, b Profile) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ProfileFor returns the profile of a runner name or label
// ("mi325x-amds_03", "cluster:mi325x-amds").
func ProfileFor(runner string) (Profile, error) {
	prefix, _, _ := strings.Cut(strings.TrimPrefix(runner, "cluster:"), "_")
	for _, p := range profiles {
		if p.Name == prefix {
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
	p.Mounts = slices.Clone(p.Mounts)
	p.Env = maps.Clone(p.Env)
	p.DeviceVars = slices.Clone(p.DeviceVars)
	return p
}
