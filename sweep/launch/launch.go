// Package launch turns a runner profile and a point into the host commands
// that InferenceX's launcher for that runner (runners/launch_<name>.sh,
// single-node branch) runs: the Slurm allocation, the job id read back, the
// enroot import of the image into a squash file under flock, the srun step
// that runs the payload in the image through Pyxis, and the release; or the
// docker run of the docker launchers. Values known only at run time are
// named placeholders (${JOB_ID}, ${PORT}); Plan.Bind fills them.
//
//	pl, err := launch.Build(prof, &point.Row, launch.Options{RunnerName: "mi325x-amds_00"})
//	for _, c := range pl.Commands { fmt.Println(c.Role, c.Argv) }
//
// Exec runs a plan: allocate (or use the given job), import once, run the
// payload, and release on every exit path.
//
// sweep's payload is the mounted sweep binary running the planned point
// (SweepPayload: sweep run --plan), so everything the point runner does
// around the load (GPU-idle wait, engine start and health polling, the
// client, the server log, a GPU monitor started beside the load) happens
// inside the container, with the allocation's devices and the launcher's
// exported variables. Options.Export and Options.Mounts add variables and
// mounts to the container step (a monitor's switch, a host tool's
// directory) without changing any launcher's own flags.
package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/usage"
	"sweep/recipes"
	"sweep/recipes/models"
)

// Roles of the host commands, in launch order.
const (
	RoleStage    = "stage"    // copy the workspace to the node (MI300X)
	RoleImport   = "import"   // enroot import under flock
	RoleAllocate = "allocate" // salloc
	RoleJobID    = "job-id"   // squeue: read the job id back
	RolePrepare  = "prepare"  // docker stop on the node (MI355X), docker rm -f
	RoleRun      = "run"      // srun --container-image / docker run
	RoleCollect  = "collect"  // stream the results back (MI300X)
	RoleRelease  = "release"  // scancel
)

// Placeholders for values known only at run time.
const (
	JobID     = "${JOB_ID}"
	Port      = "${PORT}"
	Workspace = "${GITHUB_WORKSPACE}"
	User      = "${USER}"
)

// DefaultHubCache is the container's HF_HUB_CACHE (InferenceX's workflow
// environment) unless the launcher sets its own: every launch exports it
// to the container step (and an arm's job), where the launcher's hub cache
// mount is.
const DefaultHubCache = "/mnt/hf_hub_cache/"

// Options are what a launch needs beyond the profile and the row.
type Options struct {
	// RunnerName is the runner ("mi325x-amds_03"): salloc's --job-name and
	// MI355X's port digit.
	RunnerName string
	// Workspace is the host directory mounted on the container's workdir
	// (default ${GITHUB_WORKSPACE}).
	Workspace string
	// JobID, when set, is an allocation to use (SLURM_JOB_ID): nothing is
	// allocated or released.
	JobID string
	// Payload is the command run in the container; nil runs the
	// launcher's recipe script (bash benchmarks/single_node/...).
	Payload []string
	// Mounts are extra container mounts (host:container[:flags]), after the
	// launcher's (the sweep binary).
	Mounts []string
	// Export are extra NAME=VALUE pairs for the container.
	Export []string
	// User is squeue's -u (default ${USER}).
	User string
	// Instance, when set, is appended to a docker container's name
	// (PointOptions sets DirTag of the output directory, or OutTag):
	// launches into different directories on one host never share, and
	// so never remove, a container.
	Instance string
	// inJob: the import runs as a step of a batch job that has no stage
	// step (InJob), so it makes the launcher's node directories itself.
	inJob bool
}

// DirTag is a short tag unique to a directory: the first 8 hex digits of
// the SHA-256 of its absolute path.
func DirTag(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	sum := sha256.Sum256([]byte(filepath.Clean(dir)))
	return hex.EncodeToString(sum[:4])
}

// Plan is a point's launch on one runner.
type Plan struct {
	Runner string `json:"runner"`
	// Profile names the runner profile; Launcher the InferenceX file and
	// commit it follows.
	Profile  string `json:"profile"`
	Launcher string `json:"launcher"`
	Image    string `json:"image"`
	// SquashFile is the imported image ("" for docker launchers).
	SquashFile string `json:"squash_file,omitempty"`
	// Commands run in order; a failed command stops the launch, then the
	// release commands still run (when the launch allocated).
	Commands []recipes.HostCommand `json:"launch"`
	// Derived says how each placeholder is known ("PORT": "40000 + JOB_ID % 10000").
	Derived map[string]string `json:"derived,omitempty"`
	// Allocates is true when the launch makes (and must release) a job.
	Allocates bool `json:"allocates"`
	// ContainerName is the docker container's name (docker launchers).
	ContainerName string `json:"container_name,omitempty"`
	// JobID is the allocation's job id once known (Options.JobID, or
	// bound); "" before allocating and for docker launchers.
	JobID string `json:"job_id,omitempty"`
	// Notes say what the launch does differently from its launcher and
	// why (recipes.Point.LaunchNotes).
	Notes    []string `json:"notes,omitempty"`
	portRule recipes.PortRule
}

// safeValue is what a path may hold to be written into the import
// script's shell text (an image reference: configs.CheckImage), never
// shell syntax.
var safeValue = regexp.MustCompile(`^[A-Za-z0-9._/:@+=,-]+$`)

// SquashName is the launchers' squash file name of an image: every / : @ #
// replaced by _ (sed 's/[\/:@#]/_/g'), plus .sqsh.
func SquashName(image string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("/:@#", r) {
			return '_'
		}
		return r
	}, image) + ".sqsh"
}

// Build returns the host commands of the row's point on the profile's
// runner.
func Build(p recipes.Profile, row *matrix.Row, o Options) (*Plan, error) {
	if o.RunnerName == "" {
		return nil, errors.New("launch: no runner name (--runner-name)")
	}
	if row.Image == "" {
		return nil, fmt.Errorf("launch: row %s has no image", row.ExpName)
	}
	if err := configs.CheckImage(row.Image); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	if o.Workspace == "" {
		o.Workspace = Workspace
	} else if err := recipes.CheckMountPath("--out", o.Workspace); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	if o.User == "" {
		o.User = User
	}
	if o.Payload == nil {
		script, err := RecipeScript(p, row)
		if err != nil {
			return nil, err
		}
		o.Payload = []string{"bash", script}
	}
	b := &builder{p: p, row: row, o: o, env: map[string]string{}, pl: &Plan{
		Runner: o.RunnerName, Profile: p.Name, Image: row.Image,
		Launcher: p.LauncherFile() + " @ InferenceX " + recipes.LauncherCommit,
	}}
	if p.Launch.Docker != nil {
		return b.docker()
	}
	return b.slurm()
}

type builder struct {
	p   recipes.Profile
	row *matrix.Row
	o   Options
	// env is what the launcher has exported so far.
	env map[string]string
	pl  *Plan
}

func (b *builder) add(role string, argv ...string) *recipes.HostCommand {
	b.pl.Commands = append(b.pl.Commands, recipes.HostCommand{Role: role, Argv: argv, Env: maps.Clone(b.env)})
	return &b.pl.Commands[len(b.pl.Commands)-1]
}

// hostEnv exports the launcher's host variables and GPU_COUNT.
func (b *builder) hostEnv() {
	for k, v := range b.p.Launch.HostEnv {
		b.env[k] = b.expand(v)
	}
	if h := b.p.Launch.HubCacheMount; h != nil {
		if _, ok := b.p.Launch.HostEnv["HF_HUB_CACHE_MOUNT"]; ok || b.p.Name == "mi355x-amds" {
			b.env["HF_HUB_CACHE_MOUNT"] = h(b.row)
		}
	}
	b.env["GPU_COUNT"] = strconv.Itoa(b.gpus())
	if _, ok := b.env["HF_HUB_CACHE"]; !ok {
		// The workflow's (benchmark-tmpl.yml), which srun --export=ALL
		// carries into the container: the engine's weights and the
		// client's trace set are looked up on the hub cache mount, never
		// in the container's home.
		b.env["HF_HUB_CACHE"] = DefaultHubCache
	}
}

// gpus is the point's GPU count: TP·PP·PCP (InferenceX's GPU_COUNT).
func (b *builder) gpus() int { return b.row.GPUs() }

func (b *builder) mountDir() string {
	if b.p.Launch.MountDir != nil {
		return b.p.Launch.MountDir(b.row.Image)
	}
	return "/workspace"
}

// expand resolves the profile's $NAMES: the workspace, the hub cache, the
// model path, the mount directory.
func (b *builder) expand(s string) string {
	hub := ""
	if b.p.Launch.HubCacheMount != nil {
		hub = b.p.Launch.HubCacheMount(b.row)
	}
	model := ""
	if b.p.ModelPath != nil {
		model = b.p.ModelPath(b.row)
	}
	// The stage step's copy of the workspace on the node (MI300X); in an
	// arm's job no stage step runs: its nodes share the workspace (the
	// sweep directory) itself.
	remote := "/tmp/inferencex-" + JobID
	if b.o.inJob {
		remote = b.o.Workspace
	}
	return strings.NewReplacer(
		"$GITHUB_WORKSPACE", b.o.Workspace,
		"$REMOTE_WORKSPACE", remote,
		"$HF_HUB_CACHE_MOUNT", hub,
		"$HF_HUB_CACHE", b.hubCacheRaw(),
		"$MODEL_PATH", model,
		"$CONTAINER_MOUNT_DIR", b.mountDir(),
	).Replace(s)
}

func (b *builder) hubCacheRaw() string {
	if v, ok := b.p.Launch.HostEnv["HF_HUB_CACHE"]; ok {
		return v
	}
	return DefaultHubCache
}

func (b *builder) mounts() string {
	var ms []string
	for _, m := range b.p.Mounts {
		ms = append(ms, b.expand(m.Host)+":"+b.expand(m.Container))
	}
	return strings.Join(append(ms, b.o.Mounts...), ",")
}

func (b *builder) slurm() (*Plan, error) {
	l := b.p.Launch
	if !safeValue.MatchString(l.SquashDir) {
		return nil, fmt.Errorf("launch: squash directory %q: want an absolute path of letters, digits and ._/-", l.SquashDir)
	}
	squash := strings.TrimSuffix(l.SquashDir, "/") + "/" + SquashName(b.row.Image)
	b.pl.SquashFile = squash
	b.hostEnv()
	b.pl.portRule = l.Port
	if l.Port == recipes.PortFromRunnerDigit {
		b.env["PORT"] = PortOf(l.Port, "", b.o.RunnerName)
	}
	if l.ImportOnHost {
		b.add(RoleImport, "bash", "-c", b.importScript(squash, true, false))
	}
	job := b.o.JobID
	b.pl.JobID = job
	if job == "" {
		b.pl.Allocates = true
		job = JobID
		argv := append([]string{"salloc"}, b.p.Slurm.Args(b.gpus())...)
		argv = append(argv, "--no-shell", "--job-name="+b.o.RunnerName)
		b.add(RoleAllocate, argv...)
		switch l.JobID {
		case recipes.JobIDFromSqueue, recipes.JobIDFromSqueueUser:
			// Only this user's jobs, also where the launcher's squeue has
			// no -u (MI355X): another user's job of the same name must
			// never be taken over. Run only when salloc printed no id.
			b.add(RoleJobID, "squeue", "--name="+b.o.RunnerName, "-u", b.o.User, "-h", "-o", "%A")
		}
	}
	b.pl.Derived = map[string]string{}
	if b.pl.Allocates {
		b.pl.Derived["JOB_ID"] = "the allocation's job id (salloc's \"Granted job allocation N\"; only when it printed none, squeue --name -u USER, which must list exactly one job)"
	}
	switch l.Port {
	case recipes.PortFromJobID:
		if b.pl.Allocates {
			b.env["PORT"] = Port
			b.pl.Derived["PORT"] = "40000 + JOB_ID % 10000"
		} else {
			b.env["PORT"] = PortOf(l.Port, job, b.o.RunnerName)
		}
	}
	for k, v := range l.JobEnv {
		b.env[k] = strings.ReplaceAll(v, JobID, job)
	}
	stepName := func(argv []string) []string {
		if l.StepJobName {
			return append(argv, "--job-name="+b.o.RunnerName)
		}
		return argv
	}
	switch {
	case l.StopDocker && b.p.Slurm.Exclusive:
		b.add(RolePrepare, "srun", "--jobid="+job, "bash", "-c", "docker stop $(docker ps -a -q)").MayFail = true
	case l.StopDocker:
		// On a shared node the containers are other users' work.
		b.pl.Notes = append(b.pl.Notes, "the launcher's `docker stop $(docker ps -a -q)` on the node is left out: the allocation is not exclusive (--site exclusive=false), so the node's containers may be other jobs'")
	}
	remote := "/tmp/inferencex-" + job
	local := "/tmp/inferencex-" + job + ".local.tar.gz"
	if l.StageWorkspace {
		b.add(RoleStage, "tar", "-C", b.o.Workspace, "--exclude=.git", "--exclude=*/.git", "-czf", local, ".")
		b.add(RoleStage, "sbcast", "--jobid="+job, "--force", local, remote+".tar.gz")
		b.add(RoleStage, stepName([]string{"srun", "--jobid=" + job})...)
		last := &b.pl.Commands[len(b.pl.Commands)-1]
		lines := []string{"set -euo pipefail"}
		for _, d := range b.nodeDirs() {
			lines = append(lines, "mkdir -p '"+d+"'", "chmod 700 '"+d+"'")
		}
		lines = append(lines, "rm -rf '"+remote+"'", "mkdir -p '"+remote+"'", "tar -C '"+remote+"' -xzf '"+remote+".tar.gz'")
		last.Argv = append(last.Argv, "bash", "-c", "\n    "+strings.Join(lines, "\n    ")+"\n")
	}
	if !l.ImportOnHost {
		argv := stepName([]string{"srun", "--jobid=" + job})
		var dirs []string
		if b.o.inJob {
			// No stage step runs before it in a job: the import makes the
			// node directories, given as its arguments.
			dirs = b.nodeDirs()
		}
		b.add(RoleImport, append(argv, b.importArgv(squash, dirs)...)...)
	}
	run := append([]string{"srun", "--jobid=" + job}, l.SrunFlags...)
	run = append(run, "--container-image="+squash, "--container-mounts="+strings.ReplaceAll(b.mounts(), JobID, job))
	if l.ContainerFlags != nil {
		run = append(run, l.ContainerFlags(b.row, b.mountDir())...)
	}
	run = append(run, "--no-container-entrypoint", "--export="+strings.Join(append([]string{"ALL"}, append(slices.Clone(l.Export), b.o.Export...)...), ","))
	b.add(RoleRun, append(run, b.o.Payload...)...).Stop = []string{"scancel", "--signal=TERM", job}
	if l.StageWorkspace {
		// The launcher streams back its scripts' artifact list; a sweep
		// payload's whole workspace (aiperf_artifacts/, run.json, ...) is
		// its result, so everything comes back.
		c := b.add(RoleCollect, "srun", "--jobid="+job, "tar", "-C", remote, "-czf", "-", ".")
		c.StdoutTo = []string{"tar", "-C", b.o.Workspace, "-xzf", "-"}
		c.MayFail = true
		b.add(RoleRelease, "srun", "--jobid="+job, "bash", "-c", "rm -rf '"+remote+"' '"+remote+".tar.gz'").MayFail = true
		b.add(RoleRelease, "rm", "-f", local).MayFail = true
	}
	if b.pl.Allocates {
		b.add(RoleRelease, "scancel", job)
	}
	return b.pl, nil
}

// nodeDirs are the node directories the launcher's stage step makes
// (mkdir -p, chmod 700) before the import: the XDG_RUNTIME_DIR it exports
// on the host and its enroot TMPDIR (StageTmpDir; MI300X's, whose
// compute nodes have neither: enroot's runtime and temporary files go
// there).
func (b *builder) nodeDirs() []string {
	var dirs []string
	for _, d := range []string{b.env["XDG_RUNTIME_DIR"], b.expand(b.p.Launch.StageTmpDir)} {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// importArgName is the import script's $0 when it takes the node
// directories as its arguments (bash names it in its own errors).
const importArgName = "sweep-import"

// importArgv is the step's bash running importScript on the node, which
// first makes dirs (mode 700) when there are any: they reach the script
// as its arguments, never as its text.
func (b *builder) importArgv(squash string, dirs []string) []string {
	argv := []string{"bash", "-c", b.importScript(squash, false, len(dirs) > 0)}
	if len(dirs) > 0 {
		argv = append(append(argv, importArgName), dirs...)
	}
	return argv
}

// importScript is the launchers' import under flock: skip a valid squash
// file (unsquashfs -l), else import docker://IMAGE into it. With
// makeArgs, it first makes each of its arguments a directory of mode 700,
// as the launcher's stage step makes its node directories.
func (b *builder) importScript(squash string, onHost, makeArgs bool) string {
	l := b.p.Launch
	lock := squash + ".lock"
	var lines []string
	if l.ImportStrict {
		lines = append(lines, "set -euo pipefail")
	}
	if makeArgs {
		lines = append(lines, `for d in "$@"; do mkdir -p -- "$d" && chmod 700 -- "$d" || exit; done`)
	}
	if !onHost {
		lines = append(lines, l.ImportPreamble...)
	}
	redirect := " >&2"
	if l.ImportErrStdout {
		redirect = ""
	}
	lines = append(lines,
		`exec 9>"`+lock+`"`,
		"flock -w 600 9 || { echo 'Failed to acquire lock for "+squash+"'"+redirect+"; exit 1; }",
		`if unsquashfs -l "`+squash+`" > /dev/null 2>&1; then`,
		"    echo 'Squash file already exists and is valid, skipping import'",
		"else",
		`    rm -f "`+squash+`"`)
	if onHost {
		for _, p := range l.ImportPreamble {
			lines = append(lines, "    "+p)
		}
	}
	lines = append(lines,
		`    enroot import -o "`+squash+`" docker://`+b.row.Image,
		"fi")
	return "\n    " + strings.Join(lines, "\n    ") + "\n"
}

func (b *builder) docker() (*Plan, error) {
	d := b.p.Launch.Docker
	b.hostEnv()
	b.env["PORT"] = "8888"
	name := strings.ReplaceAll(d.Name, "${RUNNER_NAME}", b.o.RunnerName)
	if b.o.Instance != "" {
		name += "-" + b.o.Instance
	}
	b.pl.ContainerName = name
	b.add(RolePrepare, "docker", "rm", "-f", name).MayFail = true
	argv := []string{"docker", "run", "--rm", "--network=host", "--name=" + name}
	for _, dev := range d.Devices {
		argv = append(argv, "--device="+dev)
	}
	if d.GPUs {
		argv = append(argv, "--gpus="+strconv.Itoa(b.gpus()), "--runtime=nvidia")
	}
	argv = append(argv, d.Flags...)
	for _, m := range b.p.Mounts {
		argv = append(argv, "-v", b.expand(m.Host)+":"+b.expand(m.Container))
	}
	for _, m := range b.o.Mounts {
		argv = append(argv, "-v", m)
	}
	argv = append(argv, "-w", b.expand(b.workdirOf()))
	for _, e := range append(slices.Clone(d.Env), b.o.Export...) {
		argv = append(argv, "-e", e)
	}
	if len(b.o.Payload) == 0 {
		return nil, errors.New("launch: empty payload")
	}
	argv = append(argv, "--entrypoint="+b.o.Payload[0], b.row.Image)
	argv = append(argv, b.o.Payload[1:]...)
	b.add(RoleRun, argv...).Stop = []string{"docker", "kill", "--signal=TERM", name}
	b.add(RoleRelease, "docker", "rm", "-f", name).MayFail = true
	return b.pl, nil
}

// workdirOf is the container side of the workspace mount.
func (b *builder) workdirOf() string {
	for _, m := range b.p.Mounts {
		if m.Host == "$GITHUB_WORKSPACE" {
			return m.Container
		}
	}
	return "/workspace/"
}

// ContainerWorkspace is the container directory the workspace is mounted
// on for a row (the payload's working directory).
func ContainerWorkspace(p recipes.Profile, row *matrix.Row) string {
	b := &builder{p: p, row: row}
	return strings.TrimSuffix(b.expand(b.workdirOf()), "/")
}

// PortOf is the engine port a launcher derives: 40000 + JOB_ID % 10000
// (MI300X, MI325X), 8888 + the runner name's last digit (MI355X), else 8888.
// A job id that is not a number leaves the ${PORT} placeholder.
func PortOf(rule recipes.PortRule, jobID, runnerName string) string {
	switch rule {
	case recipes.PortFromJobID:
		n, err := strconv.Atoi(jobID)
		if err != nil {
			return Port
		}
		return strconv.Itoa(40000 + n%10000)
	case recipes.PortFromRunnerDigit:
		if runnerName != "" {
			if d := runnerName[len(runnerName)-1]; d >= '0' && d <= '9' {
				return strconv.Itoa(8888 + int(d-'0'))
			}
		}
		return Port
	}
	return "8888"
}

// RecipeScript is the benchmark script the launcher runs for a row: the
// first of the launcher's candidate names that exists (has a recipe;
// benchmarks/single_node/agentic/...).
func RecipeScript(p recipes.Profile, row *matrix.Row) (string, error) {
	l, err := recipes.LauncherFor(p.Name)
	if err != nil {
		return "", err
	}
	sub := "fixed_seq_len/"
	if row.ScenarioType() == "agentic-coding" {
		sub = "agentic/"
	}
	// The launchers try their names in order and run the first script
	// that exists: the first that has a recipe here.
	names := l.ScriptNames(row)
	name := names[0]
	cat := models.Builtin()
	for _, n := range names {
		if _, ok := cat.Recipe(n); ok {
			name = n
			break
		}
	}
	return "benchmarks/single_node/" + sub + name + ".sh", nil
}

// Bind returns the plan with the run-time values filled in: JOB_ID (and
// the PORT derived from it), GITHUB_WORKSPACE, USER.
func (pl *Plan) Bind(vars map[string]string) *Plan {
	out := *pl
	if id, ok := vars["JOB_ID"]; ok {
		out.JobID = id
	}
	if id, ok := vars["JOB_ID"]; ok && pl.portRule == recipes.PortFromJobID {
		if _, given := vars["PORT"]; !given {
			vars = maps.Clone(vars)
			vars["PORT"] = PortOf(pl.portRule, id, pl.Runner)
		}
	}
	var pairs []string
	for k, v := range vars {
		pairs = append(pairs, "${"+k+"}", v)
	}
	r := strings.NewReplacer(pairs...)
	out.Commands = make([]recipes.HostCommand, len(pl.Commands))
	for i, c := range pl.Commands {
		c.Argv = replaceAll(r, c.Argv)
		c.StdoutTo = replaceAll(r, c.StdoutTo)
		c.Stop = replaceAll(r, c.Stop)
		env := make(map[string]string, len(c.Env))
		for k, v := range c.Env {
			env[k] = r.Replace(v)
		}
		c.Env = env
		out.Commands[i] = c
	}
	return &out
}

func replaceAll(r *strings.Replacer, s []string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = r.Replace(v)
	}
	return out
}

// JobKey names a point's job in per-job paths: the given job id, the
// runner name for docker launchers (they have no job), else the JobID
// placeholder that Bind fills once allocated.
func JobKey(p recipes.Profile, jobID, runner string) string {
	switch {
	case jobID != "":
		return jobID
	case p.Launch.Docker != nil:
		return runner
	}
	return JobID
}

// RunEnv is a variable of the container step's environment ("" if unset).
func (pl *Plan) RunEnv(name string) string {
	for _, c := range pl.Commands {
		if c.Role == RoleRun {
			return c.Env[name]
		}
	}
	return ""
}

// JobStep is an arm's launch as a batch job: the image import, where
// the runner's launcher runs it, the container step's argv (without the
// payload) and the launcher's per-job variables, ${SLURM_JOB_ID} standing
// for the job's id, with the workflow's HF_HUB_CACHE.
type JobStep struct {
	// Import is the image import, one command: with ImportOnHost, bash on
	// the submitting host before the job is submitted (as launch_b300-nv.sh
	// imports before salloc); else an srun step of the job on its node,
	// before the container step (as the other launchers import with srun
	// --jobid), so a node-local squash directory holds the image where the
	// container step looks for it.
	Import       *Plan
	ImportOnHost bool
	Argv         []string
	Env          map[string]string
}

// InJob is the launch of an arm that runs as a batch job (sweep
// discover/official --executor slurm --launch): the image import where
// the launcher runs it (Build decides, from the profile's ImportOnHost),
// the container step's argv without --jobid (srun inside the job uses the
// job's allocation), ending before the payload, and the launcher's
// per-job variables (MI325X's XDG_CACHE_HOME, TRITON_CACHE_DIR) with the
// workflow's HF_HUB_CACHE, which the job sets on its node once its id is
// known. A docker runner's arm is refused (a usage.Refusef naming
// --executor local). An import in the job loses its --jobid too, and
// keeps the launcher's host variables (XDG_RUNTIME_DIR) as an env prefix,
// ${UID} and ${HOME} still to bind (HostVars); with no stage step in the
// job, it first makes the node directories the launcher's stage step
// makes (MI300X's XDG_RUNTIME_DIR and enroot TMPDIR, mode 700), given as
// the script's arguments. dir is mounted at the same
// path in the container too, so the job's absolute file names resolve.
func InJob(p recipes.Profile, row *matrix.Row, o Options, dir string) (*JobStep, error) {
	if p.Launch.Docker != nil {
		return nil, usage.Refusef("launch: runner %s runs docker on its node (%s), not Slurm jobs: run its arms with --executor local", p.Name, p.LauncherFile())
	}
	o.JobID = "${SLURM_JOB_ID}"
	o.Workspace = dir
	o.Payload = []string{}
	o.inJob = true
	o.Mounts = append(o.Mounts, dir+":"+dir)
	pl, err := Build(p, row, o)
	if err != nil {
		return nil, err
	}
	js := &JobStep{Import: &Plan{Runner: pl.Runner, Profile: pl.Profile, Launcher: pl.Launcher, Image: pl.Image, SquashFile: pl.SquashFile}, ImportOnHost: p.Launch.ImportOnHost}
	withoutJobID := func(argv []string) []string {
		return slices.DeleteFunc(slices.Clone(argv), func(a string) bool { return strings.HasPrefix(a, "--jobid=") })
	}
	for _, c := range pl.Commands {
		switch c.Role {
		case RoleImport:
			if !js.ImportOnHost {
				c.Argv = append(hostEnvPrefix(p, c.Env), withoutJobID(c.Argv)...)
			}
			js.Import.Commands = append(js.Import.Commands, c)
		case RoleRun:
			js.Argv = withoutJobID(c.Argv)
			js.Env = map[string]string{}
			for k := range p.Launch.JobEnv {
				js.Env[k] = c.Env[k]
			}
			if h := c.Env["HF_HUB_CACHE"]; !strings.Contains(h, "${") {
				// A launcher's ${HOME}/... is its host shell's: left to
				// the job's own environment.
				js.Env["HF_HUB_CACHE"] = h
			}
		}
	}
	if js.Argv == nil || len(js.Import.Commands) != 1 {
		return nil, fmt.Errorf("launch: runner %s has no import and container step to run in a job", p.Name)
	}
	return js, nil
}

// hostEnvPrefix is `env NAME=VALUE...` of the launcher's host variables
// in env (the values its import step inherits on the host), none when it
// exports none.
func hostEnvPrefix(p recipes.Profile, env map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(p.Launch.HostEnv)) {
		if v, ok := env[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	if out == nil {
		return nil
	}
	return append([]string{"env"}, out...)
}

// InContainer is the launch of an arm that runs in its runner's docker
// container on this host (sweep discover/official --executor local
// --launch with a docker runner): the launcher's docker rm -f, docker run
// and removal, with the sweep directory dir as the workspace and mounted
// at its own path, the arm's GPU ids exported, and payload (the mounted
// sweep's run-arm) as the command. o.RunnerName should name the arm: arms
// run at once, each in a container of its own name. A Slurm runner's arm
// is refused (a usage.Refusef naming --executor slurm).
func InContainer(p recipes.Profile, row *matrix.Row, o Options, dir string, gpus []int) (*Plan, error) {
	if p.Launch.Docker == nil {
		return nil, usage.Refusef("launch: runner %s launches through Slurm (%s): run its arms with --executor slurm", p.Name, p.LauncherFile())
	}
	o.Workspace = dir
	o.Mounts = append(o.Mounts, dir+":"+dir)
	dev := map[string]string{}
	if len(gpus) > 0 {
		dev = p.DeviceEnv(gpus)
	}
	for _, k := range slices.Sorted(maps.Keys(dev)) {
		o.Export = append(o.Export, k+"="+dev[k])
	}
	return Build(p, row, o)
}
