package executor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/launch"
)

// recordingNet is a fake launch.Network that records what was reached;
// with down it reaches nothing.
type recordingNet struct {
	down    bool
	reached []string
}

func (n *recordingNet) Reach(_ context.Context, hostport string) error {
	n.reached = append(n.reached, hostport)
	if n.down {
		return fmt.Errorf("dial tcp %s: no network here", hostport)
	}
	return nil
}

// clientSchedule is two MI325X arms (TP 2 and 4) of points replaying
// loader.
func clientSchedule(t *testing.T, loader string) *campaign.Schedule {
	return runnerSchedule(t, "mi325x-amds", loader)
}

// runnerSchedule is clientSchedule on runner.
func runnerSchedule(t *testing.T, runner, loader string) *campaign.Schedule {
	t.Helper()
	var pts []recipes.Point
	for _, tp := range []int{2, 4} {
		for _, c := range []int{1, 4} {
			pts = append(pts, recipes.Point{
				Row: matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "k", Model: "m", Framework: "sglang", Runner: runner,
					Image: "lmsysorg/sglang:v0.5.16", Parallelism: configs.Parallelism{TP: tp, EP: 1}, Conc: c},
				Recipe: "fake", Engine: recipes.Command{Argv: []string{"engine", "--tp", fmt.Sprint(tp)}},
				Client:         &recipes.Command{Argv: []string{"aiperf", "profile", "--public-dataset", loader}},
				ResultFilename: fmt.Sprintf("k_tp%d_conc%d", tp, c),
			})
		}
	}
	s, err := campaign.BuildSchedule(pts, campaign.ScheduleOptions{})
	require.NoError(t, err)
	require.Len(t, s.Arms, 2)
	return s
}

// The arms' client environment is checked once per runner and trace set
// before anything is allocated: a checkout without InferenceX's aiperf and
// a missing uv are named with their fixes, and the network is asked once
// for PyPI and once for the hub, not per arm.
func TestLaunchClientPreflight(t *testing.T) {
	sched := clientSchedule(t, recipes.Loader062126)
	prof := func(r string) (recipes.Profile, error) {
		return recipes.SiteProfile(r, []string{"hub-cache=" + t.TempDir()})
	}
	net := &recordingNet{down: true}
	l := Launch{Profile: prof, Client: &launch.ClientSetup{Checkout: t.TempDir(), UV: filepath.Join(t.TempDir(), "no-uv")}}
	err := l.Preflight(t.Context(), sched, net)
	require.Error(t, err)
	for _, want := range []string{"client environment (before allocating)", "has no utils/aiperf/pyproject.toml", "uv is not installed here",
		"no network to PyPI (pypi.org:443", "no network to the Hugging Face hub"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Equal(t, []string{launch.PyPIHost, launch.HubHost}, net.reached)

	// A whole checkout, uv, and the trace set already in the hub cache:
	// only PyPI is needed (the venv is per job).
	ix := t.TempDir()
	for _, f := range []string{"utils/aiperf/pyproject.toml", "utils/agentic-benchmark/requirements.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ix, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ix, f), nil, 0o644))
	}
	uv := filepath.Join(t.TempDir(), "uv")
	require.NoError(t, os.WriteFile(uv, []byte("#!/bin/sh\n"), 0o755))
	hub := t.TempDir()
	ds, err := recipes.TraceDataset(recipes.Loader062126)
	require.NoError(t, err)
	snap := filepath.Join(recipes.HubDatasetDir(hub, ds), "snapshots", "abc")
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(snap, "t.jsonl"), nil, 0o644))
	l.Profile = func(r string) (recipes.Profile, error) { return recipes.SiteProfile(r, []string{"hub-cache=" + hub}) }
	l.Client = &launch.ClientSetup{Checkout: ix, UV: uv}
	net.reached = nil
	err = l.Preflight(t.Context(), sched, net)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "Hugging Face")
	assert.Equal(t, []string{launch.PyPIHost}, net.reached)
	net.reached, net.down = nil, false
	require.NoError(t, l.Preflight(t.Context(), sched, net))
	assert.Equal(t, []string{launch.PyPIHost}, net.reached, "one check for both arms")

	// Without --inferencex nothing is checked.
	net.reached = nil
	require.NoError(t, Launch{Profile: prof}.Preflight(t.Context(), sched, net))
	assert.Empty(t, net.reached)
}

// Each Slurm arm's job carries its client environment with the job id
// still to fill, the checkout and uv mounted into the image; dry-run
// prints the steps.
func TestLaunchArmClientEnv(t *testing.T) {
	sched := clientSchedule(t, recipes.Loader062126256k)
	prof := func(r string) (recipes.Profile, error) { return recipes.SiteProfile(r, nil) }
	uv := filepath.Join(t.TempDir(), "uv")
	require.NoError(t, os.WriteFile(uv, []byte("#!/bin/sh\n"), 0o755))
	dir := t.TempDir()
	l := Launch{Profile: prof, Binary: "/usr/local/bin/sweep", Dir: dir, Client: &launch.ClientSetup{Checkout: "/src/ix", UV: uv}}
	p, err := prof("mi325x-amds")
	require.NoError(t, err)
	js, ce, err := l.step(p, sched.Arms[0])
	require.NoError(t, err)
	assert.Equal(t, &recipes.ClientEnv{Checkout: launch.CheckoutDir, RuntimeDir: "/tmp/inferencex-agentic-${SLURM_JOB_ID}", UV: launch.ToolsDir + "/uv",
		HubCache: "/mnt/hf_hub_cache/", Loader: recipes.Loader062126256k}, ce)
	step := strings.Join(js.Argv, " ")
	assert.Contains(t, step, ",/src/ix:"+launch.CheckoutDir+",")
	assert.Contains(t, step, ","+uv+":"+launch.ToolsDir+"/uv:ro,")

	var b strings.Builder
	require.NoError(t, l.WriteDryRun(&b, sched, true))
	out := b.String()
	assert.Equal(t, 2, strings.Count(out, "    setup:  aiperf-venv: UV_CACHE_DIR=/tmp/inferencex-agentic-${SLURM_JOB_ID}/uv-cache /opt/sweep-tools/uv venv --python 3.11 /tmp/inferencex-agentic-${SLURM_JOB_ID}/venv (skipped when"), out)
	assert.Contains(t, out, "    setup:  trace-download: HF_HUB_CACHE=/mnt/hf_hub_cache/ /tmp/inferencex-agentic-${SLURM_JOB_ID}/venv/bin/hf download --repo-type dataset semianalysisai/cc-traces-weka-062126-256k (skipped when /mnt/hf_hub_cache/datasets--semianalysisai--cc-traces-weka-062126-256k/snapshots/*/* exist)\n")
	assert.Contains(t, out, "    client: /tmp/inferencex-agentic-${SLURM_JOB_ID}/venv/bin/aiperf for every point of the arm\n")

	// One arm's points must replay one trace set.
	mixed := clientSchedule(t, recipes.Loader062126)
	mixed.Arms[0].Points[1].Plan.Client = &recipes.Command{Argv: []string{"aiperf", "--public-dataset", recipes.Loader062126256k}}
	_, _, err = l.step(p, mixed.Arms[0])
	assert.ErrorContains(t, err, "arm 1: its points replay two trace sets")
}

// A docker runner's arm has its client environment per container: the
// checkout and uv are mounted into its docker run, and the job file's
// runtime directory is named for the arm's container.
func TestLaunchContainerArmClientEnv(t *testing.T) {
	sched := runnerSchedule(t, "mi325x-tw", recipes.Loader062126)
	uv := filepath.Join(t.TempDir(), "uv")
	require.NoError(t, os.WriteFile(uv, []byte("#!/bin/sh\n"), 0o755))
	l := Launch{Profile: func(r string) (recipes.Profile, error) { return recipes.SiteProfile(r, nil) }, Binary: "/usr/local/bin/sweep", Dir: t.TempDir(),
		Client: &launch.ClientSetup{Checkout: "/src/ix", UV: uv}}
	cs, err := l.ContainerArms(sched, 0)
	require.NoError(t, err)
	ce, err := cs.Client(sched.Arms[1])
	require.NoError(t, err)
	assert.Equal(t, "/tmp/inferencex-agentic-mi325x-tw-arm02-"+launch.DirTag(l.Dir)+"/venv/bin/aiperf", ce.AiperfProgram())
	pl, err := cs.Plan(sched.Arms[1], []int{4, 5}, []string{"run-arm"})
	require.NoError(t, err)
	run := launch.Oneline(pl.Commands[len(pl.Commands)-2].Argv)
	assert.Contains(t, run, "-v /src/ix:"+launch.CheckoutDir+" ")
	assert.Contains(t, run, "-v "+uv+":"+launch.ToolsDir+"/uv:ro ")

	var b strings.Builder
	require.NoError(t, l.WriteDryRun(&b, sched, false))
	assert.Contains(t, b.String(), "    client: /tmp/inferencex-agentic-mi325x-tw-arm01-"+launch.DirTag(l.Dir)+"/venv/bin/aiperf for every point of the arm\n")
	assert.Contains(t, b.String(), "    setup:  aiperf-install: UV_CACHE_DIR=/tmp/inferencex-agentic-mi325x-tw-arm02-"+launch.DirTag(l.Dir)+"/uv-cache ")
}

// A docker runner's arms are refused as Slurm jobs before anything
// starts, with the fix named, as the caller's usage error; in the dry run
// too, before any arm is printed.
func TestLaunchJobsRefuseDockerRunner(t *testing.T) {
	sched := runnerSchedule(t, "mi325x-tw", recipes.Loader062126)
	l := Launch{Profile: func(r string) (recipes.Profile, error) { return recipes.SiteProfile(r, nil) }, Binary: "/usr/local/bin/sweep", Dir: t.TempDir()}
	const want = "--launch with --executor slurm: arm 1: launch: runner mi325x-tw runs docker on its node (runners/launch_mi325x-tw.sh), not Slurm jobs: run its arms with --executor local"
	prog, err := l.ArmProgram(sched)
	var pe *ProfileError
	require.ErrorAs(t, err, &pe)
	assert.EqualError(t, err, want)
	assert.Nil(t, prog)
	var b strings.Builder
	err = l.WriteDryRun(&b, sched, true)
	require.ErrorAs(t, err, &pe)
	assert.EqualError(t, err, want)
	assert.Empty(t, b.String())

	prog, err = l.ArmProgram(clientSchedule(t, recipes.Loader062126))
	require.NoError(t, err)
	assert.NotNil(t, prog)
}

// An arm's image is imported where its runner's launcher imports it: in
// its job on its node (the job's first step, this host's ${UID} bound,
// MI300X's node directories made first) for MI300X and MI355X, on this
// host before sbatch for B300; the dry run says where.
func TestLaunchImportWhereTheLauncherDoes(t *testing.T) {
	prof := func(r string) (recipes.Profile, error) { return recipes.SiteProfile(r, nil) }
	l := Launch{Profile: prof, Binary: "/usr/local/bin/sweep", Dir: t.TempDir(), Progress: io.Discard}
	uid := strconv.Itoa(os.Getuid())
	for _, tc := range []struct {
		runner, where string
		inJob         []string // the job's import before its script; nil: on this host
		args          []string // the script's $0 and arguments after it
	}{
		{runner: "mi300x-amds", where: "in the job on its node, before the step",
			inJob: []string{"env", "HF_HUB_CACHE_MOUNT=/raid/hf-hub-cache/", "XDG_RUNTIME_DIR=/tmp/enroot-runtime-" + uid, "srun", "--job-name=mi300x-amds", "bash", "-c"},
			args:  []string{"sweep-import", "/tmp/enroot-runtime-" + uid, "/raid/hf-hub-cache/runtime-cache/enroot/tmp-" + uid}},
		{runner: "mi355x-amds", where: "in the job on its node, before the step",
			inJob: []string{"env", "AIPERF_MMAP_CACHE_HOST_PATH=/it-share/aiperf-cache/", "VLLM_CACHE_ROOT=/it-share/gharunners/.cache/vllm", "srun", "bash", "-c"},
			args:  []string{}},
		{runner: "b300-nv", where: "on this host, once before the first job"},
	} {
		t.Run(tc.runner, func(t *testing.T) {
			sched := runnerSchedule(t, tc.runner, recipes.Loader062126)
			var b strings.Builder
			require.NoError(t, l.WriteDryRun(&b, sched, true))
			assert.Contains(t, b.String(), "launch (--launch): per arm, the image import where its launcher runs it (this host before sbatch, or the job's node), then the sbatch job's step\n")
			assert.Equal(t, 2, strings.Count(b.String(), " ("+tc.where+")\n"), "each arm's import says where it runs:\n%s", b.String())
			if tc.inJob == nil {
				return // running it would import on this host
			}
			prog, err := l.ArmProgram(sched)
			require.NoError(t, err)
			cmd, err := prog(t.Context(), sched.Arms[0])
			require.NoError(t, err)
			require.Len(t, cmd.Import, len(tc.inJob)+1+len(tc.args), "%q", cmd.Import)
			assert.Equal(t, tc.inJob, cmd.Import[:len(tc.inJob)])
			assert.Contains(t, cmd.Import[len(tc.inJob)], "enroot import -o ")
			assert.Equal(t, tc.args, cmd.Import[len(tc.inJob)+1:], "the script's arguments")
			assert.Equal(t, "srun", cmd.Argv[0])
		})
	}
}

// B300's image import runs on this host before sbatch; when it fails,
// the arm's error names the importer's last line that says why, by the
// rule an import in a job follows (launch.LastCause): a progress bar's
// last state, srun's exit report and blank lines passed over, only the
// exit status when the importer said nothing.
func TestHostImportFailureNamesItsCause(t *testing.T) {
	for _, tc := range []struct {
		name, enroot string // the fake enroot's script
		want         string // the arm's error after "launch import (bash -c): "
	}{
		{name: "the registry's answer after a progress bar",
			enroot: `printf '[INFO] Querying registry for permission grant\n' >&2
printf '[INFO] 12%%\r[ERROR] URL https://registry-1.docker.io/v2/x/manifests/1 returned error code: 404 Not Found\r\n\n' >&2
exit 1`,
			want: "exit status 1: [ERROR] URL https://registry-1.docker.io/v2/x/manifests/1 returned error code: 404 Not Found"},
		{name: "curl's line then srun's exit report",
			enroot: `echo 'curl: (6) Could not resolve host: registry-1.docker.io' >&2
echo 'srun: error: b300-018: task 0: Exited with exit code 6' >&2
exit 6`,
			want: "exit status 6: curl: (6) Could not resolve host: registry-1.docker.io"},
		{name: "nothing said", enroot: "exit 3", want: "exit status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// enroot on this host is the fake; no squash file is valid yet.
			bin := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(bin, "enroot"), []byte("#!/bin/sh\n"+tc.enroot+"\n"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(bin, "unsquashfs"), []byte("#!/bin/sh\nexit 1\n"), 0o755))
			t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
			squash := t.TempDir()
			prof := func(r string) (recipes.Profile, error) {
				return recipes.SiteProfile(r, []string{"squash-dir=" + squash})
			}
			l := Launch{Profile: prof, Binary: "/usr/local/bin/sweep", Dir: t.TempDir(), Progress: io.Discard}
			sched := runnerSchedule(t, "b300-nv", recipes.Loader062126)
			prog, err := l.ArmProgram(sched)
			require.NoError(t, err)
			_, err = prog(t.Context(), sched.Arms[0])
			assert.EqualError(t, err, "image lmsysorg/sglang:v0.5.16: launch import (bash -c): "+tc.want)
		})
	}
}

func TestNewLaunch(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-sweep")
	_, err := NewLaunch("/d", []string{"no-such-fact=1"}, missing, "")
	var pe *ProfileError
	require.ErrorAs(t, err, &pe, "a bad site change is the caller's usage error, found before the binary is looked for")
	_, err = NewLaunch("/d", nil, missing, "")
	assert.ErrorContains(t, err, "--sweep-binary "+missing+": not a file")

	exe, err := os.Executable()
	require.NoError(t, err)
	l, err := NewLaunch("/d", nil, exe, "/ix")
	require.NoError(t, err)
	assert.Equal(t, exe, l.Binary)
	assert.Equal(t, "/d", l.Dir)
	require.NotNil(t, l.Client)
	assert.Equal(t, "/ix", l.Client.Checkout)
	l, err = NewLaunch("/d", nil, exe, "")
	require.NoError(t, err)
	assert.Nil(t, l.Client, "no client environment without a checkout")
	_, err = l.Profile("no-such-runner")
	assert.Error(t, err)
}

// Two sweeps' arms on one docker host get different container names (a
// second sweep's docker rm -f never removes the first's container); one
// sweep's arms differ by their index.
func TestContainerArmNamePerSweepDir(t *testing.T) {
	prof, err := recipes.ProfileFor("mi325x-tw_01")
	require.NoError(t, err)
	a1, a2 := &campaign.Arm{Index: 0}, &campaign.Arm{Index: 1}
	dirA, dirB := filepath.Join(t.TempDir(), "A"), filepath.Join(t.TempDir(), "B")
	for _, tc := range []struct {
		name       string
		x, y       string
		wantDiffer bool
	}{
		{name: "same arm, two sweeps", x: containerArmName(prof, a1, dirA), y: containerArmName(prof, a1, dirB), wantDiffer: true},
		{name: "two arms, one sweep", x: containerArmName(prof, a1, dirA), y: containerArmName(prof, a2, dirA), wantDiffer: true},
		{name: "same arm, same sweep", x: containerArmName(prof, a1, dirA), y: containerArmName(prof, a1, dirA)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.wantDiffer, tc.x != tc.y, "%s vs %s", tc.x, tc.y)
		})
	}
}
