package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/internal/testkit/syncbuf"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// The launch tests run simulated points the way InferenceX's launchers
// run real ones: through Slurm + Pyxis/enroot (launch_mi325x-amds.sh) and
// docker (launch_mi325x-tw.sh), with the engine and the client in an image
// built here from a root filesystem (busybox and nothing else; the static
// sweep binary reaches it by a mount). `make test` installs enroot, Pyxis
// and docker (scripts/container-tools.sh), enables Pyxis in the one-node
// cluster and starts dockerd.

const (
	launchKey   = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	launchImage = "lmsysorg/sglang:v0.5.16-rocm720-mi30x" // the key's image
)

// requireTool skips (fails with SWEEP_REQUIRE_SLURM=1) when a container
// tool is missing.
func requireTool(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("SWEEP_REQUIRE_SLURM") == "1" {
		t.Fatalf("%s: %v", what, err)
	}
	t.Skipf("%s: %v; `make test` installs it (scripts/container-tools.sh)", what, err)
}

// requirePyxis needs the Slurm test cluster with Pyxis, enroot and
// squashfs-tools.
func requirePyxis(t *testing.T) {
	t.Helper()
	requireSlurm(t)
	for _, tool := range []string{"enroot", "mksquashfs", "unsquashfs", "flock"} {
		_, err := exec.LookPath(tool)
		requireTool(t, tool, err)
	}
	out, err := exec.Command("srun", "--help").CombinedOutput()
	if err == nil && !bytes.Contains(out, []byte("--container-image")) {
		err = errors.New("srun has no --container-image: Pyxis is not in the cluster's plugstack.conf")
	}
	requireTool(t, "Pyxis", err)
}

var staticSweep struct{ path string }

// buildStaticSweep builds sweep with CGO_ENABLED=0 once per test binary
// (TestMain): the binary the tests start as their simulated processes and
// the one a launch mounts into the image (the test binary needs glibc,
// which the image lacks).
func buildStaticSweep() error {
	dir, err := os.MkdirTemp("", "sweep-static-")
	if err != nil {
		return err
	}
	staticSweep.path = filepath.Join(dir, "sweep")
	cmd := exec.Command("go", "build", "-o", staticSweep.path, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of the sweep the tests start: %v\n%s", err, out)
	}
	return nil
}

// removeStaticSweep removes buildStaticSweep's directory (TestMain).
func removeStaticSweep() {
	if staticSweep.path != "" {
		os.RemoveAll(filepath.Dir(staticSweep.path))
	}
}

// imageRootfs is the image's root filesystem: busybox as /bin/sh and the
// groups the docker launcher adds.
func imageRootfs(t *testing.T) string {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		bb = "/bin/busybox"
	}
	_, err = os.Stat(bb)
	requireTool(t, "busybox (Debian's busybox-static)", err)
	root := filepath.Join(t.TempDir(), "rootfs")
	for _, d := range []string{"bin", "tmp", "etc", "root", "workspace", "opt/sweep", "mnt/hf_hub_cache", "hf_hub_cache", "dev", "proc", "sys"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	data, err := os.ReadFile(bb)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755))
	for _, l := range []string{"sh", "ls", "cat"} {
		require.NoError(t, os.Symlink("busybox", filepath.Join(root, "bin", l)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "group"), []byte("root:x:0:\nvideo:x:44:\nrender:x:109:\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(root, "tmp"), 0o1777))
	return root
}

// pyxisSite builds the key's image as a squash file where the import step
// finds it valid, and returns the --site settings that fit the one-node
// cluster (its partition and 8 CPUs, no /dev/kfd).
func pyxisSite(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	squash, hub := filepath.Join(dir, "squash"), filepath.Join(dir, "hub")
	require.NoError(t, os.MkdirAll(squash, 0o755))
	require.NoError(t, os.MkdirAll(hub, 0o755))
	out, err := exec.Command("mksquashfs", imageRootfs(t), filepath.Join(squash, launch.SquashName(launchImage)), "-noappend", "-all-root", "-comp", "lzo", "-quiet").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return []string{"--site", "partition=gpu", "--site", "cpus-per-task=1", "--site", "squash-dir=" + squash, "--site", "hub-cache=" + hub, "--site", "devices=none"}
}

// relabelledKey writes launchKey's block of the shipped AMD config with
// the runner label runner in place of its own to a config file, and
// returns its path (--config-files).
func relabelledKey(t *testing.T, runner string) string {
	t.Helper()
	key, err := os.ReadFile("../../configs/amd-master.yaml")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?ms)^` + regexp.QuoteMeta(launchKey) + `:\n.*?\n\n`).Find(key)
	require.NotNil(t, m)
	cfg := filepath.Join(t.TempDir(), "relabelled.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(strings.Replace(string(m), "runner: cluster:mi325x-amds", "runner: "+runner, 1)), 0o644))
	return cfg
}

// launchCmd is `sweep run --launch` of the key's tp2 conc1 point (or the
// --tp/--ep/--conc in extra), run by
// the test binary as the CLI; its output goes to log.
func launchCmd(t *testing.T, runner, out string, log *syncbuf.Buffer, extra ...string) *exec.Cmd {
	args := []string{"run", "--launch", "--simulate", "--builtin-client", "--config-key", launchKey,
		"--runner-name", runner, "--sweep-binary", staticSweep.path, "--stop-grace", "2s", "--out", out}
	if !slices.Contains(extra, "--tp") {
		args = append(args, "--tp", "2", "--ep", "2", "--conc", "1")
	}
	cmd := exec.Command(os.Args[0], append(args, extra...)...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	cmd.Stdout, cmd.Stderr = log, log
	return cmd
}

// jobsNamed lists the Slurm jobs of a runner name (salloc --job-name).
func jobsNamed(t *testing.T, name string) string {
	out, err := exec.Command("squeue", "-h", "--name="+name, "-o", "%A %T").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// assertNothingLeft checks that no job of the runner is left (a job being
// cancelled may show COMPLETING for a moment) and no process runs in out.
func assertNothingLeft(t *testing.T, runner, out string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for jobsNamed(t, runner) != "" && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	assert.Empty(t, jobsNamed(t, runner), "jobs of %s left", runner)
	ps, err := exec.Command("pgrep", "-f", "--", out).Output()
	if err == nil {
		assert.Empty(t, strings.TrimSpace(string(ps)), "processes still run in %s", out)
	}
}

func resultFiles(t *testing.T, dir string) []string {
	m, err := filepath.Glob(filepath.Join(dir, "qwen3.5_tp2_conc1_*.json"))
	require.NoError(t, err)
	return m
}

// TestLaunchThroughPyxis runs a simulated point through the MI325X launch
// path (salloc, the enroot import under flock skipped for a valid squash
// file, srun --container-image): the engine and the client run in the
// image, the result lands on the mounted workspace, and the job is
// released. The client replays the trace set staged in the site's hub
// cache: the container's HF_HUB_CACHE is its mount, as in InferenceX's
// workflow (it once looked in the container's home and replayed the
// synthetic traces).
func TestLaunchThroughPyxis(t *testing.T) {
	requirePyxis(t)
	site := pyxisSite(t)
	const traces = "datasets--semianalysisai--cc-traces-weka-062126-256k"
	hub := strings.TrimPrefix(site[7], "hub-cache=")
	require.NoError(t, os.CopyFS(filepath.Join(hub, traces), os.DirFS(filepath.Join("../../testdata/aggregation/builtin-c4/hf_cache", traces))))
	out := filepath.Join(t.TempDir(), "p")
	var log syncbuf.Buffer
	cmd := launchCmd(t, "mi325x-amds_07", out, &log, site...)
	require.NoError(t, cmd.Run(), log.String())
	s := log.String()
	assert.Contains(t, s, "salloc: Granted job allocation")
	assert.Contains(t, s, "Squash file already exists and is valid, skipping import")
	assert.Contains(t, s, "--container-image="+strings.TrimPrefix(site[5], "squash-dir=")+"/"+launch.SquashName(launchImage))
	assert.Regexp(t, `allocation \d+ released`, s)
	require.Len(t, resultFiles(t, out), 1, s)
	rec, err := run.ReadRecordFile(out)
	require.NoError(t, err)
	require.NotNil(t, rec)
	assert.True(t, rec.OK, s)
	// The engine and client ran in the container: their argv is the mounted
	// sweep's, their files the container's workspace.
	assert.Equal(t, launch.SweepDir+"/sweep", rec.Processes["client"].Argv[0])
	assert.Equal(t, "/workspace", filepath.Dir(rec.ArtifactDir))
	assert.FileExists(t, filepath.Join(out, launch.PlanFile))
	require.NotNil(t, rec.Facts)
	assert.Equal(t, launch.DefaultHubCache, rec.Facts.HFHubCache)
	b, err := os.ReadFile(resultFiles(t, out)[0])
	require.NoError(t, err)
	var res struct {
		Dataset struct{ Loader string } `json:"dataset"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, "semianalysis_cc_traces_weka_062126_256k", res.Dataset.Loader, "the staged trace set, not the synthetic one")
	assertNothingLeft(t, "mi325x-amds_07", out)
}

// TestLaunchInterruptedAndCancelled: a Ctrl-C (SIGINT) to sweep during the
// load releases the job; a scancel from outside fails the point and sweep
// says so; a kill -9 of sweep leaves the release to its guard; none leaves
// a job or a process behind.
func TestLaunchInterruptedAndCancelled(t *testing.T) {
	requirePyxis(t)
	site := pyxisSite(t)
	for _, tc := range []struct {
		name, runner string
		stop         func(cmd *exec.Cmd, runner string) error
		wantCode     int
	}{
		{"ctrl-c", "mi325x-amds_05", func(cmd *exec.Cmd, _ string) error { return cmd.Process.Signal(syscall.SIGINT) }, exitCancelled},
		{"scancel", "mi325x-amds_06", func(_ *exec.Cmd, runner string) error {
			return exec.Command("scancel", "--name="+runner).Run()
		}, exitError},
		// The release guard (sweep launch-guard) scancels the job.
		{"kill -9", "mi325x-amds_04", func(cmd *exec.Cmd, _ string) error { return cmd.Process.Kill() }, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p")
			var log syncbuf.Buffer
			// A wall clock (20x by default): the load lasts minutes, time to stop it.
			cmd := launchCmd(t, tc.runner, out, &log, append(site, "--sim-clock", "wall")...)
			require.NoError(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			deadline := time.Now().Add(90 * time.Second)
			for !strings.Contains(log.String(), "client: started") && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			require.Contains(t, log.String(), "client: started", "the load never started")
			require.NoError(t, tc.stop(cmd, tc.runner))
			var err error
			select {
			case err = <-exited:
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("sweep did not end:\n%s", log.String())
			}
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, log.String())
			assert.Equal(t, tc.wantCode, ee.ExitCode(), log.String())
			assertNothingLeft(t, tc.runner, out)
			assert.Empty(t, resultFiles(t, out))
			if tc.name == "scancel" {
				// Not a Ctrl-C: sweep says Slurm ended the job (exit 1).
				assert.Regexp(t, `sweep: slurm job \d+ ended CANCELLED while the point ran in it, not stopped by this sweep`, log.String())
			}
			if tc.name == "ctrl-c" {
				// The container's sweep was asked to stop (scancel
				// --signal=TERM) and wrote down how its point ended.
				rec, err := run.ReadRecordFile(out)
				require.NoError(t, err)
				require.NotNil(t, rec)
				i := slices.IndexFunc(rec.Stages, func(s run.Stage) bool { return s.Name == "client" })
				require.GreaterOrEqual(t, i, 0, "stages %+v", rec.Stages)
				assert.Equal(t, "cancelled", rec.Stages[i].Outcome)
				assert.False(t, rec.Finished.IsZero(), "the point's record is complete")
			}
		})
	}
}

// requireDocker needs a docker daemon (DOCKER_HOST; `make test` starts one).
func requireDocker(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("docker")
	if err == nil {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		var out []byte
		if out, err = exec.CommandContext(ctx, "docker", "info").CombinedOutput(); err != nil {
			err = fmt.Errorf("docker info: %v: %s", err, bytes.TrimSpace(out))
		}
	}
	requireTool(t, "docker", err)
}

// dockerImage imports the key's image into docker from the root
// filesystem, removed at the test's end.
func dockerImage(t *testing.T) {
	t.Helper()
	root := imageRootfs(t)
	tar := exec.Command("tar", "-C", root, "-c", ".")
	imp := exec.Command("docker", "import", "-", launchImage)
	pipe, err := tar.StdoutPipe()
	require.NoError(t, err)
	imp.Stdin = pipe
	require.NoError(t, tar.Start())
	out, err := imp.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, tar.Wait())
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", launchImage).Run() })
}

// TestLaunchThroughDocker runs the point through the docker launcher
// (launch_mi325x-tw.sh: docker run on the node) with an image imported
// from the root filesystem; the container is gone afterwards.
func TestLaunchThroughDocker(t *testing.T) {
	requireDocker(t)
	dockerImage(t)
	dir := filepath.Join(t.TempDir(), "p")
	hub := t.TempDir()
	var log syncbuf.Buffer
	cmd := launchCmd(t, "mi325x-tw_4", dir, &log, "--site", "hub-cache="+hub, "--site", "devices=none", "--site", "docker-flags=none")
	require.NoError(t, cmd.Run(), log.String())
	s := log.String()
	assert.Contains(t, s, "run: docker run --rm --network=host --name=bmk-server-mi325x-tw_4")
	assert.Contains(t, s, "container bmk-server-mi325x-tw_4-"+launch.DirTag(dir)+" removed")
	require.Len(t, resultFiles(t, dir), 1, s)
	ps, err := exec.Command("docker", "ps", "-a", "-q", "--filter", "name=bmk-server-mi325x-tw_4").Output()
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(ps)))
}

// assertArmRanInImage checks the discovery arm's two points in out
// (its layout "tp2", "tp4", ... in their names) completed with their
// client in the image.
func assertArmRanInImage(t *testing.T, out, layout string) {
	t.Helper()
	points, err := filepath.Glob(filepath.Join(out, "qwen3.5_"+layout+"_conc*"))
	require.NoError(t, err)
	require.Len(t, points, 2)
	for _, p := range points {
		rec, err := run.ReadRecordFile(p)
		require.NoError(t, err, p)
		require.NotNil(t, rec, p)
		assert.True(t, rec.OK, p)
		assert.Equal(t, launch.SweepDir+"/sweep", rec.Processes["client"].Argv[0], "the client ran in the image")
	}
}

// pyxisDiscover runs a simulated discovery of launchKey's arm (--tp, --ep
// and the rest in args) with --executor slurm --launch through Pyxis on
// the test cluster, with site's --site flags, into out; it returns the
// command's output and its error.
func pyxisDiscover(t *testing.T, out string, site []string, args ...string) (string, error) {
	t.Helper()
	argv := append([]string{"discover", "--simulate", "--executor", "slurm", "--launch", "--sweep-binary", staticSweep.path,
		"--slurm-poll", "300ms", "--builtin-client", "--no-report", "--config-keys", launchKey, "--out", out}, args...)
	cmd := exec.Command(os.Args[0], append(argv, site...)...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	var log syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	return log.String(), err
}

// pointEndErrors are the errors of the point-end records of out's journal.
func pointEndErrors(t *testing.T, out string) []string {
	t.Helper()
	recs, err := campaign.ReadJournal(out)
	require.NoError(t, err)
	var ends []string
	for _, r := range recs {
		if r.Event == campaign.EventPointEnd {
			ends = append(ends, r.Error)
		}
	}
	return ends
}

// TestDiscoverLaunchThroughPyxis runs a simulated discovery arm as a Slurm
// job whose step runs in the image (the MI325X launch: the image imported
// under flock in the job, on its node, then srun --container-image): both
// points complete inside the container, on one server, and no job is left.
func TestDiscoverLaunchThroughPyxis(t *testing.T) {
	requirePyxis(t)
	site := pyxisSite(t)
	out := filepath.Join(t.TempDir(), "d")
	s, err := pyxisDiscover(t, out, site, "--tp", "2", "--ep", "2", "--conc-list", "1", "4", "--stop-grace", "2s")
	require.NoError(t, err, s)
	assert.Contains(t, s, "2 ok, 0 failed, 0 not run; 1 server start")
	assertArmRanInImage(t, out, "tp2")
	ids, err := os.ReadFile(filepath.Join(out, "slurm", "jobs.txt"))
	require.NoError(t, err)
	jobLog, err := os.ReadFile(filepath.Join(out, "slurm", "arm01-t1.out"))
	require.NoError(t, err)
	// The image was imported in the job (launch_mi325x-amds.sh's srun
	// import), not by the submitting sweep.
	assert.Contains(t, string(jobLog), "Squash file already exists and is valid, skipping import")
	assert.NotContains(t, s, "Squash file already exists")
	// MI325X's per-job caches were set in the container for the engine
	// and the client, by the job's own id (launch_mi325x-amds.sh).
	id := strings.Fields(string(ids))[0]
	assert.Contains(t, string(jobLog), "job env: TRITON_CACHE_DIR=/tmp/triton-cache-"+id+"\n")
	assert.Contains(t, string(jobLog), "job env: XDG_CACHE_HOME=/tmp/xdg-cache-"+id+"\n")
	// The workflow's HF_HUB_CACHE, the hub cache's mount: where the arm's
	// client looks for its trace set.
	assert.Contains(t, string(jobLog), "job env: HF_HUB_CACHE="+launch.DefaultHubCache+"\n")
	for _, id := range strings.Fields(string(ids)) {
		q, err := exec.Command("squeue", "-h", "-j", id, "-o", "%T").Output()
		if err == nil {
			assert.Empty(t, strings.TrimSpace(string(q)), "job %s left", id)
		}
	}
}

// TestDiscoverLaunchImportFailsInJob: an arm whose image cannot be
// imported on its job's node (here its squash directory cannot be made
// there) fails its points with the import's own last line, and its
// container step never runs.
func TestDiscoverLaunchImportFailsInJob(t *testing.T) {
	requirePyxis(t)
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	site := append(pyxisSite(t), "--site", "squash-dir="+notDir+"/squash")
	out := filepath.Join(t.TempDir(), "d")
	log, err := pyxisDiscover(t, out, site, "--tp", "2", "--ep", "2", "--conc-list", "1", "4", "--retries", "0")
	require.Error(t, err, log)
	ends := pointEndErrors(t, out)
	require.Len(t, ends, 2, log)
	for _, e := range ends {
		assert.Regexp(t, `^slurm job \d+: the image import on its node failed: .*`+regexp.QuoteMeta(notDir+"/squash/")+`.*: Not a directory$`, e)
	}
	jobLog, err := os.ReadFile(filepath.Join(out, "slurm", "arm01-t1.out"))
	require.NoError(t, err)
	assert.NotContains(t, string(jobLog), "run-arm", "the container step never ran")
}

// TestDiscoverLaunchContainerStepFailsInJob: an arm whose container step
// Pyxis refuses (here the hub cache it mounts does not exist on the node),
// after its image was imported, ended its job before any point started:
// its points stayed pending, were resubmitted in new jobs despite
// --retries 0, and ended "not run" with no reason, exit 0. They fail with
// the step's own last line, the job's id and its log, in one job, and the
// command exits 1 as for other failed points.
func TestDiscoverLaunchContainerStepFailsInJob(t *testing.T) {
	requirePyxis(t)
	missing := filepath.Join(t.TempDir(), "no-hub")
	site := append(pyxisSite(t), "--site", "hub-cache="+missing)
	out := filepath.Join(t.TempDir(), "d")
	log, err := pyxisDiscover(t, out, site, "--tp", "2", "--ep", "2", "--conc-list", "1", "4", "--retries", "0")
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, log)
	assert.Equal(t, 1, exit.ExitCode(), log)
	assert.Contains(t, log, "0 ok, 2 failed, 0 not run")
	ids, err := os.ReadFile(filepath.Join(out, "slurm", "jobs.txt"))
	require.NoError(t, err)
	require.Len(t, strings.Fields(string(ids)), 1, "one job, not resubmitted (--retries 0)")
	id := strings.Fields(string(ids))[0]
	jobLog := filepath.Join(out, "slurm", "arm01-t1.out")
	ends := pointEndErrors(t, out)
	require.Len(t, ends, 2, log)
	for _, e := range ends {
		assert.Regexp(t, `^slurm job `+id+` ended FAILED.* before its first point: .*`+regexp.QuoteMeta(missing)+`.* \(log `+regexp.QuoteMeta(jobLog)+`\)$`, e)
		assert.NotContains(t, e, "Exited with exit code", "srun's exit report says no why")
	}
	data, err := os.ReadFile(jobLog)
	require.NoError(t, err)
	assert.Contains(t, string(data), "Squash file already exists and is valid, skipping import", "the import ran and succeeded")
}

// TestDiscoverLaunchMI300XInJob runs a simulated discovery arm on the
// MI300X launch path as a Slurm job through Pyxis: its import, a step of
// the job, makes the node directories launch_mi300x-amds.sh's stage step
// makes (enroot's TMPDIR, tmp-UID under the squash directory, mode 700;
// a fresh one here) before it imports, and the container step mounts the
// sweep directory as its workspace (it mounted /tmp/inferencex-${SLURM_JOB_ID},
// which no step makes in a job: Pyxis refused the step and the arm never
// ran).
func TestDiscoverLaunchMI300XInJob(t *testing.T) {
	requirePyxis(t)
	site := pyxisSite(t)
	squash := strings.TrimPrefix(site[slices.IndexFunc(site, func(s string) bool { return strings.HasPrefix(s, "squash-dir=") })], "squash-dir=")
	out := filepath.Join(t.TempDir(), "d")
	log, err := pyxisDiscover(t, out, site, "--tp", "4", "--ep", "1", "--conc-list", "1", "8", "--stop-grace", "2s", "--retries", "0",
		"--site", "exclude=", "--config-files", relabelledKey(t, "cluster:mi300x-amds"))
	require.NoError(t, err, log)
	assert.Contains(t, log, "2 ok, 0 failed, 0 not run; 1 server start")
	assertArmRanInImage(t, out, "tp4")
	jobLog, err := os.ReadFile(filepath.Join(out, "slurm", "arm01-t1.out"))
	require.NoError(t, err)
	assert.Contains(t, string(jobLog), "Squash file already exists and is valid, skipping import")
	tmp := filepath.Join(squash, "tmp-"+strconv.Itoa(os.Getuid()))
	fi, err := os.Stat(tmp)
	require.NoError(t, err, "the import made enroot's TMPDIR on the node")
	assert.True(t, fi.IsDir())
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

// TestDiscoverLaunchThroughDocker runs a simulated discovery arm of a
// docker runner (launch_mi325x-tw.sh) with --executor local --launch: the
// arm's run-arm runs in docker run on this host with the arm's GPUs, both
// points complete in the container on one server, and no container is
// left.
func TestDiscoverLaunchThroughDocker(t *testing.T) {
	requireDocker(t)
	dockerImage(t)
	cfg := relabelledKey(t, "cluster:mi325x-tw")
	out := filepath.Join(t.TempDir(), "d")
	cmd := exec.Command(os.Args[0], "discover", "--simulate", "--launch", "--sweep-binary", staticSweep.path, "--builtin-client", "--no-report",
		"--config-files", cfg, "--config-keys", launchKey, "--tp", "2", "--ep", "2", "--conc-list", "1", "4", "--gpus", "2", "3", "--stop-grace", "2s",
		"--site", "hub-cache="+t.TempDir(), "--site", "devices=none", "--site", "docker-flags=none", "--out", out)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	var log syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Run(), log.String())
	s := log.String()
	assert.Contains(t, s, "run: docker run --rm --network=host --name=bmk-server-mi325x-tw-arm01")
	assert.Contains(t, s, "-e HIP_VISIBLE_DEVICES=2,3 -e ROCR_VISIBLE_DEVICES=2,3 --entrypoint="+launch.SweepDir+"/sweep "+launchImage+" run-arm --job "+out+"/docker/arm01-t1.json")
	assert.Contains(t, s, "2 ok, 0 failed, 0 not run; 1 server start")
	assertArmRanInImage(t, out, "tp2")
	ps, err := exec.Command("docker", "ps", "-a", "-q", "--filter", "name=bmk-server-mi325x-tw-arm").Output()
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(ps)))
}

// TestLaunchMI300XStagesTheWorkspace runs the point through the MI300X
// path, whose nodes lack the runner's filesystem: the workspace goes to the
// node with sbcast, the results come back over srun's output, and the
// node's copy and the local tarball are removed. The key is launchKey
// with the MI300X runners' label (a runner outside a key's label is
// refused), so its image is the one the test imports.
func TestLaunchMI300XStagesTheWorkspace(t *testing.T) {
	requirePyxis(t)
	_, err := exec.LookPath("sbcast")
	requireTool(t, "sbcast", err)
	site := append(pyxisSite(t), "--site", "exclude=", "--config-files", relabelledKey(t, "cluster:mi300x-amds"))
	out := filepath.Join(t.TempDir(), "p")
	var log syncbuf.Buffer
	cmd := launchCmd(t, "mi300x-amds_07", out, &log, append(site, "--tp", "4", "--ep", "1", "--conc", "8")...)
	require.NoError(t, cmd.Run(), log.String())
	s := log.String()
	assert.Contains(t, s, "stage: sbcast --jobid=")
	assert.Contains(t, s, "collect: srun --jobid=")
	m, err := filepath.Glob(filepath.Join(out, "qwen3.5_tp4_conc8_*mi300x-amds_07*.json"))
	require.NoError(t, err)
	require.Len(t, m, 1, "the result came back from the node:\n%s", s)
	rec, err := run.ReadRecordFile(out)
	require.NoError(t, err)
	require.NotNil(t, rec)
	assert.True(t, rec.OK)
	m = regexp.MustCompile(`Granted job allocation (\d+)`).FindStringSubmatch(s)
	require.NotNil(t, m)
	for _, f := range []string{"/tmp/inferencex-" + m[1], "/tmp/inferencex-" + m[1] + ".tar.gz", "/tmp/inferencex-" + m[1] + ".local.tar.gz"} {
		assert.NoFileExists(t, f)
		assert.NoDirExists(t, f)
	}
	assertNothingLeft(t, "mi300x-amds_07", out)
}

// discover --dry-run --launch prints each arm's import and job step (and
// the job's per-job variables); a Slurm runner's arms with the local
// executor and a docker runner's with the Slurm executor are usage
// errors.
func TestDiscoverLaunchDryRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d")
	code, stdout, stderr := runCLI(t, "discover", "--config-keys", launchKey, "--tp", "2", "--ep", "2", "--dry-run", "--executor", "slurm", "--launch",
		"--site", "squash-dir=/data/sq", "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "arm 1 (mi325x-amds, runners/launch_mi325x-amds.sh @ InferenceX 843c6254f):")
	assert.Contains(t, stdout, "step:   srun --container-image=/data/sq/"+launch.SquashName(launchImage)+" --container-mounts="+out+":/workspace/,")
	assert.Contains(t, stdout, " run-arm --job ... --events ...")
	assert.Contains(t, stdout, "    env:    XDG_CACHE_HOME=/tmp/xdg-cache-${SLURM_JOB_ID} (set on the node, ${SLURM_JOB_ID} its job id)")
	assert.Contains(t, stdout, "\nports: arm 1's server listens on 40000 + the job id % 10000, as the launcher puts them (its jobs share nodes), not on the planned port: each job is submitted held and its points planned on that port once it has its id\n")
	// The local executor launches docker runners' arms only.
	code, _, stderr = runCLI(t, "discover", "--config-keys", launchKey, "--dry-run", "--launch", "--out", out)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--launch with --executor local: arm 1: launch: runner mi325x-amds launches through Slurm (runners/launch_mi325x-amds.sh): run its arms with --executor slurm")
	// The Slurm executor launches Slurm runners' arms only, refused
	// before anything is written (each point failed, retried, with a
	// journal, summary and report).
	tw := relabelledKey(t, "cluster:mi325x-tw")
	for _, dry := range []string{"--dry-run", "--simulate"} {
		out := filepath.Join(t.TempDir(), "d")
		code, _, stderr = runCLI(t, "discover", "--config-files", tw, "--config-keys", launchKey, "--tp", "2", "--ep", "2", dry, "--builtin-client",
			"--executor", "slurm", "--launch", "--out", out)
		assert.Equal(t, exitUsage, code, dry)
		assert.Contains(t, stderr, "sweep: --launch with --executor slurm: arm 1: launch: runner mi325x-tw runs docker on its node (runners/launch_mi325x-tw.sh), not Slurm jobs: run its arms with --executor local\n", dry)
		assert.NoDirExists(t, out, dry)
	}
}

// Every planned single-node key plans its --launch: with its shared
// server and with --exact-servers (a server per point), through Slurm, and
// a docker runner's key through docker. An arm whose server restarts per
// point panicked (nil row) in the launch plan.
func TestDiscoverLaunchDryRunEveryKey(t *testing.T) {
	code, stdout, stderr := runCLI(t, "plan", "--coverage", "--format", "json")
	require.Equal(t, 0, code, stderr)
	var cov []recipes.KeyCoverage
	require.NoError(t, json.Unmarshal([]byte(stdout), &cov))
	g, err := (&matrixInputs{}).generator()
	require.NoError(t, err)
	singleNode := 0
	for _, kc := range cov {
		if kc.Status != recipes.Planned {
			continue
		}
		rows, _, err := g.AgenticRows([]string{kc.Key}, nil, matrix.EvalOptions{NoEvals: true})
		require.NoError(t, err)
		if recipes.IsMultiNodeRow(rows[0]) {
			continue // discover launches no multi-node arm
		}
		singleNode++
		for _, exact := range []bool{false, true} {
			args := []string{"discover", "--config-keys", kc.Key, "--dry-run", "--executor", "slurm", "--launch", "--out", filepath.Join(t.TempDir(), "d")}
			if exact {
				args = append(args, "--exact-servers")
			}
			code, stdout, stderr := runCLI(t, args...)
			require.Equal(t, 0, code, "%s: %s", strings.Join(args, " "), stderr)
			assert.Contains(t, stdout, "\n  arm 1 (", "%s: no launch plan", strings.Join(args, " "))
		}
	}
	assert.Greater(t, singleNode, 20, "the configs' planned single-node keys")

	// A docker runner's arms, a server per point.
	code, stdout, stderr = runCLI(t, "discover", "--config-files", relabelledKey(t, "cluster:mi325x-tw"), "--config-keys", launchKey, "--tp", "2", "--ep", "2",
		"--exact-servers", "--dry-run", "--launch", "--site", "docker-flags=none", "--out", filepath.Join(t.TempDir(), "d"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "  arm 1 (mi325x-tw, ")
}
