package recipes

import (
	"slices"
	"strings"

	"sweep/configs/matrix"
)

// LauncherCommit is the InferenceX commit whose runners/launch_*.sh the
// profiles were read from.
const LauncherCommit = "843c6254f"

// JobIDSource says how a launcher learns its allocation's job id.
type JobIDSource int

// How launchers read the job id back.
const (
	// JobIDFromSalloc parses salloc's "Granted job allocation N" line.
	JobIDFromSalloc JobIDSource = iota
	// JobIDFromSqueue is the launcher's `squeue --name=RUNNER -h -o %A |
	// head -n1`. sweep adds `-u $USER`, runs it only when salloc printed
	// no id, and refuses when it lists more than one job.
	JobIDFromSqueue
	// JobIDFromSqueueUser is the launcher's squeue with `-u $USER`.
	JobIDFromSqueueUser
)

// PortRule says how a launcher sets the engine's PORT.
type PortRule int

// PORT rules of the launchers.
const (
	// PortFixed is 8888 (benchmark_lib.sh's default; the NVIDIA launchers
	// also pass PORT=8888 on srun --export).
	PortFixed PortRule = iota
	// PortFromJobID is 40000 + JOB_ID % 10000 (MI300X, MI325X).
	PortFromJobID
	// PortFromRunnerDigit is 8888 + the runner name's last digit (MI355X).
	PortFromRunnerDigit
)

// DockerRun is a docker launcher's `docker run` (launch_mi325x-tw.sh,
// launch_h100-cr.sh): no Slurm, the container runs on the runner host.
type DockerRun struct {
	// Name is --name; ${RUNNER_NAME} is replaced by the runner name.
	Name string
	// Devices are --device=D flags (AMD); GPUs, when set, is --gpus (NVIDIA).
	Devices []string
	GPUs    bool
	// Flags follow --network=host --name and the devices, in order.
	Flags []string
	// Env are the -e arguments: NAME passes the host's value, NAME=V sets it.
	Env []string
}

// Launch is what a launcher's single-node branch does around the recipe
// script: the allocation's job id, the image import, the srun flags and the
// release. The launch package turns it into commands.
type Launch struct {
	// HostEnv are the variables the launcher exports on the host before
	// allocating; values may hold $MODEL_PATH and ${UID}, ${HOME}.
	HostEnv map[string]string
	// HubCacheMount is the host's Hugging Face hub cache (HF_HUB_CACHE_MOUNT)
	// for a row; nil when the profile mounts none by that name.
	HubCacheMount func(*matrix.Row) string
	// SquashDir holds the imported images (SQUASH_FILE's directory).
	SquashDir string
	JobID     JobIDSource
	Port      PortRule
	// JobEnv are per-job variables exported after allocating; values may
	// hold ${JOB_ID}.
	JobEnv map[string]string
	// StepJobName adds --job-name=RUNNER to the host-side srun steps.
	StepJobName bool
	// ImportOnHost runs the import on the runner host before allocating
	// (B300) instead of in an srun step of the allocation.
	ImportOnHost bool
	// ImportPreamble are the import script's first lines (enroot paths).
	ImportPreamble []string
	// ImportStrict starts the import script with `set -euo pipefail`.
	ImportStrict bool
	// ImportErrStdout prints the lock failure on stdout, not stderr.
	ImportErrStdout bool
	// StopDocker stops the node's leftover docker containers first (MI355X).
	StopDocker bool
	// StageWorkspace copies the checkout to the node with sbcast and
	// streams the results back (MI300X: compute nodes lack the runner's /home).
	StageWorkspace bool
	// StageTmpDir is a node directory the stage step makes (mode 700)
	// beside XDG_RUNTIME_DIR: MI300X's enroot TMPDIR; may hold ${UID}.
	// An import in an arm's job, which has no stage step, makes both.
	StageTmpDir string
	// MountDir is the container directory the workspace is mounted on for
	// an image ("/workspace" unless the image installs under it); nil:
	// the mounts name the directory.
	MountDir func(image string) string
	// SrunFlags come right after --jobid on the container step.
	SrunFlags []string
	// ContainerFlags come after --container-mounts, before
	// --no-container-entrypoint; dir is MountDir's answer.
	ContainerFlags func(r *matrix.Row, dir string) []string
	// Export are the NAME=VALUE pairs after --export=ALL.
	Export []string
	// Release says the launcher scancels the job itself (B200 and B300
	// leave it to the workflow; sweep releases every allocation anyway).
	Release bool
	// Docker, when set, runs the image with docker instead of Slurm.
	Docker *DockerRun
}

func (l Launch) clone() Launch {
	l.HostEnv = cloneMap(l.HostEnv)
	l.JobEnv = cloneMap(l.JobEnv)
	l.ImportPreamble = slices.Clone(l.ImportPreamble)
	l.SrunFlags = slices.Clone(l.SrunFlags)
	l.Export = slices.Clone(l.Export)
	if l.Docker != nil {
		d := *l.Docker
		d.Devices, d.Flags, d.Env = slices.Clone(d.Devices), slices.Clone(d.Flags), slices.Clone(d.Env)
		l.Docker = &d
	}
	return l
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func fixedHub(dir string) func(*matrix.Row) string { return func(*matrix.Row) string { return dir } }

func fixedFlags(flags ...string) func(*matrix.Row, string) []string {
	return func(*matrix.Row, string) []string { return slices.Clone(flags) }
}

// workdirFlags are flags followed by --container-workdir=<mount dir>.
func workdirFlags(flags ...string) func(*matrix.Row, string) []string {
	return func(_ *matrix.Row, dir string) []string {
		return append(slices.Clone(flags), "--container-workdir="+dir)
	}
}

// blackwellMountDir mounts the workspace at /ix for images that install
// their engine editable under /workspace (the launchers' CONTAINER_MOUNT_DIR).
func blackwellMountDir(patterns ...string) func(string) string {
	return func(image string) string {
		for _, p := range patterns {
			if strings.Contains(image, p) {
				return "/ix"
			}
		}
		return "/workspace"
	}
}

// mi355xHub is launch_mi355x-amds.sh's HF_HUB_CACHE_MOUNT: the node-local
// cache, or the NFS share for DeepSeek-V4-Pro on vLLM/ATOM and MiniMax-M3.
func mi355xHub(r *matrix.Row) string {
	if slices.Contains(r.Framework.Facts().MI355X.SharedHubModels, r.Model) ||
		strings.HasPrefix(r.Model, "MiniMaxAI/MiniMax-M3") || strings.HasPrefix(r.Model, "amd/MiniMax-M3") {
		return "/it-share/hf-hub-cache/"
	}
	return "/var/lib/hf-hub-cache/"
}

// mi355xContainerFlags: the home directory is mounted except for ATOM and
// SGLang (SLRUM_HOME_MOUNT in the launcher).
func mi355xContainerFlags(r *matrix.Row, _ string) []string {
	var out []string
	if !r.Framework.Facts().MI355X.NoHomeMount {
		out = append(out, "--container-mount-home")
	}
	return append(out, "--container-writable", "--container-workdir=/workspace/", "--container-remap-root")
}

// HostCommand is one command a launcher runs on the runner host (salloc,
// the image import, srun --container-image, scancel, docker run), with the
// variables the launcher has exported when it runs. ${NAME} in Argv and
// Env is a value known only at run time (the job id, the port from it).
type HostCommand struct {
	// Role is allocate, job-id, prepare, stage, import, run, collect or
	// release.
	Role string            `json:"role"`
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
	// MayFail: the launcher goes on when the command fails.
	MayFail bool `json:"may_fail,omitempty"`
	// StdoutTo is a host command that reads this command's output.
	StdoutTo []string `json:"stdout_to,omitempty"`
	// Stop, when set, asks the command's processes to stop cleanly
	// (scancel --signal=TERM JOB for an srun step, docker kill
	// --signal=TERM NAME): the payload then records what it finished.
	Stop []string `json:"stop,omitempty"`
}
