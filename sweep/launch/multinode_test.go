package launch_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/launch"
)

// fakeSlurm puts sbatch, srtctl, squeue and scancel stand-ins first on
// PATH: the submitters record their argv, working directory and
// RESULT_FILENAME and print what the real ones print; squeue lists the job
// as RUNNING for `running` polls (forever when negative); scancel records
// its argv.
func fakeSlurm(t *testing.T, running int) string {
	t.Helper()
	bin, rec := t.TempDir(), t.TempDir()
	script := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755))
	}
	script("sbatch", `echo "$@" > `+rec+`/sbatch.argv; pwd > `+rec+`/sbatch.pwd; echo "$RESULT_FILENAME" > `+rec+`/sbatch.env; echo "4242;cluster"`+"\n")
	script("srtctl", `echo "$@" > `+rec+`/srtctl.argv; echo "Submitted. Job 777 queued"`+"\n")
	script("squeue", `n=$(cat `+rec+`/polls 2>/dev/null || echo 0); echo $((n+1)) > `+rec+`/polls
if [ `+strconv.Itoa(running)+` -lt 0 ] || [ $n -lt `+strconv.Itoa(running)+` ]; then echo RUNNING; fi
`)
	script("scancel", `echo "$@" > `+rec+`/scancel.argv`+"\n")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return rec
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func multiNodePoint(t *testing.T, key string) *recipes.MultiNodePoint {
	t.Helper()
	m, err := configs.DefaultMasters()
	require.NoError(t, err)
	r, err := configs.DefaultRunners()
	require.NoError(t, err)
	g := &matrix.Generator{Masters: m, Runners: r}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}})
	require.NoError(t, err)
	pts, err := recipes.PlanMultiNode(rows[:1], recipes.PlanOptions{})
	require.NoError(t, err)
	return &pts[0]
}

// TestMultiNodeJobSubmitsAndWaits runs the AMD submission as the launcher
// does (sbatch --parsable ... job.slurm from the InferenceX checkout),
// reads the job id and polls squeue until the job has left the queue.
func TestMultiNodeJobSubmitsAndWaits(t *testing.T) {
	rec := fakeSlurm(t, 2)
	p := multiNodePoint(t, "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp")
	checkout := inferencexCheckout(t)
	j := launch.MultiNodeJob{Point: p, Dir: checkout, LogsDir: "/logs", User: "alice", Poll: 10 * time.Millisecond}
	id, err := j.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "4242", id)
	want, err := j.Submit()
	require.NoError(t, err)
	assert.Equal(t, strings.Join(want.Argv[1:], " "), read(t, rec, "sbatch.argv"))
	assert.Contains(t, read(t, rec, "sbatch.argv"), "--account alice")
	assert.Contains(t, read(t, rec, "sbatch.argv"), "--output /logs/slurm_job-%j.out")
	assert.True(t, strings.HasSuffix(read(t, rec, "sbatch.argv"), "benchmarks/multi_node/amd_utils/job.slurm"))
	real, err := filepath.EvalSymlinks(checkout)
	require.NoError(t, err)
	assert.Equal(t, real, read(t, rec, "sbatch.pwd"), "job.slurm is relative to the InferenceX checkout")
	assert.Equal(t, p.ResultFilename, read(t, rec, "sbatch.env"), "sbatch --export=ALL carries the launcher's variables")
	assert.Equal(t, "3", read(t, rec, "polls"), "two RUNNING polls, then gone")
	assert.NoFileExists(t, filepath.Join(rec, "scancel.argv"))
}

// TestMultiNodeJobCancelled: a job still running when the context ends is
// cancelled with scancel.
func TestMultiNodeJobCancelled(t *testing.T) {
	rec := fakeSlurm(t, -1)
	p := multiNodePoint(t, "dsv4-fp4-gb200-dynamo-vllm-agentic-mtp-disagg")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	j := launch.MultiNodeJob{Point: p, Dir: t.TempDir(), Date: "20261205", Poll: 10 * time.Millisecond}
	id, err := j.Run(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "777", id, "srtctl's Job N")
	assert.Equal(t, "777", read(t, rec, "scancel.argv"))
	assert.Contains(t, read(t, rec, "srtctl.argv"), "infmax-20261205")
}

func TestMultiNodeJobNeedsItsValues(t *testing.T) {
	p := multiNodePoint(t, "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp")
	_, err := (&launch.MultiNodeJob{Point: p}).Submit()
	assert.ErrorContains(t, err, "needs ${BENCHMARK_LOGS_DIR}")
	assert.ErrorContains(t, err, "needs ${USER}")
}

// inferencexCheckout is a directory holding the AMD job script sbatch
// submits.
func inferencexCheckout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "benchmarks/multi_node/amd_utils/job.slurm")
	require.NoError(t, os.MkdirAll(filepath.Dir(script), 0o755))
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/bash\n"), 0o644))
	return dir
}

// The submission directory is checked before anything is submitted: it
// must exist, and for sbatch hold the job script, or the error names
// --submit-dir and what is missing (not sbatch's "fork/exec ... no such
// file or directory").
func TestMultiNodeJobChecksTheSubmitDir(t *testing.T) {
	amd := multiNodePoint(t, "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp")
	nv := multiNodePoint(t, "dsv4-fp4-gb200-dynamo-vllm-agentic-mtp-disagg")
	missing := filepath.Join(t.TempDir(), "nonexist")
	empty := t.TempDir()
	for _, tc := range []struct {
		name    string
		point   *recipes.MultiNodePoint
		dir     string
		wantErr string
	}{
		{name: "sbatch: no such directory", point: amd, dir: missing, wantErr: "--submit-dir " + missing + ": not a directory; give the root of the InferenceX checkout"},
		{name: "sbatch: no job.slurm", point: amd, dir: empty, wantErr: "--submit-dir " + empty + " has no benchmarks/multi_node/amd_utils/job.slurm; give the root of the InferenceX checkout"},
		{name: "sbatch: a checkout", point: amd, dir: inferencexCheckout(t)},
		{name: "srtctl: no such directory", point: nv, dir: missing, wantErr: "--submit-dir " + missing + ": not a directory; give the prepared srt-slurm checkout"},
		{name: "srtctl: a directory", point: nv, dir: empty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := fakeSlurm(t, 0)
			j := launch.MultiNodeJob{Point: tc.point, Dir: tc.dir, LogsDir: "/logs", User: "alice", Date: "20261205", Poll: 10 * time.Millisecond}
			_, err := j.Run(t.Context())
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
			assert.NoFileExists(t, filepath.Join(rec, "sbatch.argv"), "nothing submitted")
			assert.NoFileExists(t, filepath.Join(rec, "srtctl.argv"), "nothing submitted")
		})
	}
}
