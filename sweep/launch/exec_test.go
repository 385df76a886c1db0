package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
)

// shPlan is a plan of /bin/sh commands standing in for salloc, the steps
// and scancel: each appends its name to log.
func shPlan(log string, run string) *Plan {
	sh := func(role, script string) recipes.HostCommand {
		return recipes.HostCommand{Role: role, Argv: []string{"sh", "-c", script}}
	}
	return &Plan{Runner: "r_0", Allocates: true, Commands: []recipes.HostCommand{
		sh(RoleAllocate, "echo 'salloc: Granted job allocation 4242'"),
		sh(RoleImport, "echo import-${JOB_ID} >>"+log),
		sh(RoleRun, run),
		sh(RoleRelease, "echo release-${JOB_ID} >>"+log),
	}}
}

func readLog(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestExecReleasesOnEveryPath(t *testing.T) {
	t.Run("success binds the job id and releases once", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "log")
		var bound *Plan
		res, err := Exec{BeforeRun: func(b *Plan) error { bound = b; return nil }}.Run(t.Context(), shPlan(log, "echo run >>"+log))
		require.NoError(t, err)
		assert.Equal(t, "4242", res.JobID)
		assert.True(t, res.Released)
		assert.Equal(t, "import-4242\nrun\nrelease-4242\n", readLog(t, log))
		assert.Equal(t, []string{"sh", "-c", "echo release-4242 >>" + log}, bound.Commands[3].Argv)
	})
	t.Run("a failed step still releases", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "log")
		res, err := Exec{}.Run(t.Context(), shPlan(log, "exit 3"))
		var se *StepError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, RoleRun, se.Role)
		assert.True(t, res.Released)
		assert.Equal(t, "import-4242\nrelease-4242\n", readLog(t, log))
	})
	t.Run("cancelled mid-step releases", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "log")
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		res, err := Exec{}.Run(ctx, shPlan(log, "sleep 30"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.True(t, res.Released)
		assert.Equal(t, "import-4242\nrelease-4242\n", readLog(t, log))
	})
	t.Run("no job id: nothing to release, a clear error", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "log")
		pl := shPlan(log, "true")
		pl.Commands[0].Argv = []string{"sh", "-c", "echo 'salloc: error: invalid partition'"}
		var stderr bytes.Buffer
		res, err := Exec{Stderr: &stderr}.Run(t.Context(), pl)
		assert.ErrorContains(t, err, "no job id")
		assert.False(t, res.Released)
		_, serr := os.Stat(log)
		assert.True(t, os.IsNotExist(serr), "nothing ran after the failed allocation")
	})
}

// The guard releases when its stdin ends without "done", and not after
// "done".
func TestGuard(t *testing.T) {
	out := filepath.Join(t.TempDir(), "released")
	var stderr bytes.Buffer
	require.NoError(t, Guard(bytes.NewReader(nil), []string{"sh", "-c", "echo yes > " + out}, &stderr))
	assert.FileExists(t, out)
	assert.Contains(t, stderr.String(), "ended without releasing")

	out2 := filepath.Join(t.TempDir(), "released")
	require.NoError(t, Guard(bytes.NewReader([]byte("done\n")), []string{"sh", "-c", "echo yes > " + out2}, &stderr))
	assert.NoFileExists(t, out2)
}

func TestPreflightNamesMissingPrograms(t *testing.T) {
	pl := &Plan{Runner: "x_0", Profile: "x", Commands: []recipes.HostCommand{{Role: RoleAllocate, Argv: []string{"salloc-not-installed-here"}}, {Role: RoleRun, Argv: []string{"sh"}}}}
	err := Preflight(pl)
	assert.ErrorContains(t, err, "needs salloc-not-installed-here on PATH")
	assert.NotContains(t, err.Error(), "sh,")
}

// A collect command's output reaches its host reader (MI300X streams the
// results back over srun's stdout), also after a failed container step.
func TestExecCollectsAfterAFailedRun(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	pl := shPlan(log, "exit 1")
	collect := recipes.HostCommand{Role: RoleCollect, Argv: []string{"sh", "-c", "echo artifacts-${JOB_ID}"},
		StdoutTo: []string{"sh", "-c", "cat > " + filepath.Join(dir, "back")}, MayFail: true}
	pl.Commands = append(pl.Commands[:3], append([]recipes.HostCommand{collect}, pl.Commands[3:]...)...)
	var stdout bytes.Buffer
	_, err := Exec{Stdout: &stdout}.Run(t.Context(), pl)
	require.Error(t, err)
	got, rerr := os.ReadFile(filepath.Join(dir, "back"))
	require.NoError(t, rerr)
	assert.Equal(t, "artifacts-4242\n", string(got))
	assert.Equal(t, "import-4242\nrelease-4242\n", readLog(t, log))
}

// The job id is salloc's granted one; squeue (only this user's jobs by
// name) is asked only when salloc printed none, and must list one job.
func TestExecJobIDFromSallocBeforeSqueue(t *testing.T) {
	for _, tc := range []struct {
		name, salloc, squeue string
		wantID, wantErr      string
		wantLog              string
	}{
		{name: "granted id wins over squeue's first line", salloc: "echo 'salloc: Granted job allocation 500' >&2",
			squeue: "printf '123\\n500\\n'", wantID: "500", wantLog: "import-500\nrun\nrelease-500\n"},
		{name: "no granted id: squeue's only job", salloc: "true",
			squeue: "echo 777", wantID: "777", wantLog: "squeue\nimport-777\nrun\nrelease-777\n"},
		{name: "no granted id: squeue lists two jobs, refused, nothing cancelled", salloc: "true",
			squeue: "printf '123\\n500\\n'", wantErr: "squeue lists 2 jobs of that name (123, 500)", wantLog: "squeue\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			pl := shPlan(log, "echo run >>"+log)
			pl.Commands[0].Argv = []string{"sh", "-c", tc.salloc}
			squeue := recipes.HostCommand{Role: RoleJobID, Argv: []string{"sh", "-c", "echo squeue >>" + log + "; " + tc.squeue}}
			pl.Commands = append(pl.Commands[:1], append([]recipes.HostCommand{squeue}, pl.Commands[1:]...)...)
			res, err := Exec{}.Run(t.Context(), pl)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.False(t, res.Released)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.wantID, res.JobID)
			}
			assert.Equal(t, tc.wantLog, readLog(t, log))
		})
	}
}

// A docker launch's docker rm -f may fail only because the container is
// already gone; any other failure (the daemon unreachable) is reported,
// with docker's reason, instead of a removal that did not happen.
func TestExecDockerReleaseFailure(t *testing.T) {
	for _, tc := range []struct {
		name, rm string
		wantErr  string
	}{
		{name: "removed", rm: "echo bmk-server-x"},
		{name: "already gone", rm: "echo 'Error response from daemon: No such container: bmk-server-x' >&2; exit 1"},
		{name: "daemon unreachable", rm: "echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' >&2; exit 1",
			wantErr: "exit status 1: Cannot connect to the Docker daemon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := &Plan{Runner: "x_0", ContainerName: "bmk-server-x", Commands: []recipes.HostCommand{
				{Role: RoleRun, Argv: []string{"true"}},
				{Role: RoleRelease, Argv: []string{"sh", "-c", tc.rm}, MayFail: true},
			}}
			res, err := Exec{}.Run(t.Context(), pl)
			require.NoError(t, err)
			assert.True(t, res.Released)
			assert.Equal(t, tc.name == "already gone", res.NoContainer, "the release found no container")
			if tc.wantErr == "" {
				assert.NoError(t, res.ReleaseErr)
			} else {
				assert.ErrorContains(t, res.ReleaseErr, tc.wantErr)
			}
		})
	}
}

// TestExecErrorNamesTheCause: an unreachable image ended "launch import
// (srun --jobid=352): exit status 6", curl's reason only in the output
// above it, and a docker run "exit status 125". A failed step's error
// carries the last line it wrote to stderr that says why: srun's report
// of the exit code and docker's --help hint are passed over.
func TestExecErrorNamesTheCause(t *testing.T) {
	for _, tc := range []struct {
		name, run, want string
	}{
		{name: "curl under enroot import, then srun's exit report",
			run:  "echo '[INFO] Querying registry for permission grant'; echo 'srun: error: vm: task 0: Exited with exit code 6' >&2; echo 'curl: (6) Could not resolve host: registry-1.docker.io' >&2; exit 6",
			want: "launch run (sh -c): exit status 6: curl: (6) Could not resolve host: registry-1.docker.io"},
		{name: "srun's exit report last",
			run:  "echo 'sweep: stage client: loadgen failed' >&2; echo 'srun: error: vm: task 0: Exited with exit code 1' >&2; exit 1",
			want: "launch run (sh -c): exit status 1: sweep: stage client: loadgen failed"},
		{name: "docker's --help hint",
			run:  "printf 'docker: Error response from daemon: No such image: x\\n\\nRun '\\''docker run --help'\\'' for more information\\n' >&2; exit 125",
			want: "launch run (sh -c): exit status 125: docker: Error response from daemon: No such image: x"},
		{name: "a last line without its newline", run: "printf 'no newline' >&2; exit 2", want: "launch run (sh -c): exit status 2: no newline"},
		{name: "a progress bar's last state, as in an import's log",
			run:  "printf '[INFO] 12%%\\r[ERROR] URL https://registry-1.docker.io/v2/x/manifests/1 returned error code: 404 Not Found\\r\\n\\n' >&2; exit 1",
			want: "launch run (sh -c): exit status 1: [ERROR] URL https://registry-1.docker.io/v2/x/manifests/1 returned error code: 404 Not Found"},
		{name: "nothing on stderr", run: "echo only stdout; exit 3", want: "launch run (sh -c): exit status 3"},
		// Slurm 22.05 and Pyxis on the test cluster, a mount's source
		// missing: Pyxis's reason comes first, then what failed after it
		// and the enroot log it echoes.
		{name: "Pyxis refuses the container step",
			run: `printf '%s\n' 'slurmstepd-vm: error: pyxis: --container-mounts: source path does not exist: /data/hub' 'srun: error: vm: task 0: Exited with exit code 1' \
				"slurmstepd-vm: error: pyxis: couldn't create enroot start configuration script" 'slurmstepd-vm: error: pyxis: printing enroot log file:' \
				'slurmstepd-vm: error: pyxis:     [INFO] Extracting squashfs filesystem...' 'slurmstepd-vm: error: pyxis:     ' 'slurmstepd-vm: error: pyxis:     created 0 hardlinks' \
				'slurmstepd-vm: error: pyxis: container was not started successfully by another task' \
				'slurmstepd-vm: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1' 'slurmstepd-vm: error: Failed to invoke spank plugin stack' >&2; exit 1`,
			want: "launch run (sh -c): exit status 1: slurmstepd-vm: error: pyxis: --container-mounts: source path does not exist: /data/hub"},
		{name: "enroot's error in the log Pyxis echoes",
			run: `printf '%s\n' 'slurmstepd: error: pyxis: container start failed with error code: 1' \
				'slurmstepd: error: pyxis: if the image has an unusual entrypoint, try using --no-container-entrypoint' 'slurmstepd: error: pyxis: printing enroot log file:' \
				'slurmstepd: error: pyxis:     [ERROR] /etc/rc.local: No such file or directory' 'slurmstepd: error: pyxis:     exiting' \
				'slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1' >&2; exit 1`,
			want: "launch run (sh -c): exit status 1: slurmstepd: error: pyxis:     [ERROR] /etc/rc.local: No such file or directory"},
		{name: "a time limit, then srun's report of the task's end",
			run: `printf '%s\n' 'srun: Job step aborted: Waiting up to 7 seconds for job step to finish.' 'slurmstepd-vm: error: *** STEP 3.0 ON vm CANCELLED AT 2026-12-07T18:35:19 DUE TO TIME LIMIT ***' \
				'srun: error: vm: task 0: Terminated' >&2; exit 143`,
			want: "launch run (sh -c): exit status 143: slurmstepd-vm: error: *** STEP 3.0 ON vm CANCELLED AT 2026-12-07T18:35:19 DUE TO TIME LIMIT ***"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			_, err := Exec{}.Run(t.Context(), shPlan(log, tc.run))
			var se *StepError
			require.ErrorAs(t, err, &se)
			assert.EqualError(t, err, tc.want)
		})
	}
}

// TestExecJobEndedUnderTheStep: a scancel of a launched point's job said
// "FAILED at stage client: context canceled" and "sweep: cancelled", as a
// Ctrl-C does. A container step that fails while its job has ended (asked
// before the release, which would end it anyway) is a *JobEndedError
// naming the job and its state; a step that fails in a running job stays
// a *StepError.
func TestExecJobEndedUnderTheStep(t *testing.T) {
	for _, tc := range []struct {
		name    string
		state   string
		ended   bool
		wantErr string
	}{
		{name: "cancelled from outside", state: "CANCELLED", ended: true,
			wantErr: "slurm job 4242 ended CANCELLED while the point ran in it, not stopped by this sweep (scancel from outside, or Slurm: its time limit, a node failure); the point did not finish (launch run (sh -c): exit status 130: sweep: cancelled)"},
		{name: "the time limit", state: "TIMEOUT", ended: true, wantErr: "slurm job 4242 ended TIMEOUT while the point ran in it"},
		{name: "the payload failed in a running job", state: "RUNNING", wantErr: "launch run (sh -c): exit status 130: sweep: cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			var asked []string
			ex := Exec{JobEnded: func(_ context.Context, id string) (string, bool) {
				asked = append(asked, id+" released="+fmt.Sprint(strings.Contains(readLog(t, log), "release")))
				return tc.state, tc.ended
			}}
			res, err := ex.Run(t.Context(), shPlan(log, "echo 'sweep: cancelled' >&2; exit 130"))
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.wantErr)
			je, isEnded := errors.AsType[*JobEndedError](err)
			assert.Equal(t, tc.ended, isEnded)
			if isEnded {
				assert.Equal(t, "4242", je.JobID)
				assert.Equal(t, RoleRun, je.Step.Role)
			}
			assert.Equal(t, []string{"4242 released=false"}, asked, "asked once, before the release")
			assert.True(t, res.Released)
		})
	}
	t.Run("not asked when this process stopped the step", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "log")
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		ex := Exec{JobEnded: func(context.Context, string) (string, bool) { t.Error("JobEnded asked"); return "CANCELLED", true }}
		_, err := ex.Run(ctx, shPlan(log, "sleep 30"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}
