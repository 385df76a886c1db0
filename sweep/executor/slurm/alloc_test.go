package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allocFake is a cluster of two nodes whose holder job runs after
// pending polls and, once cancelled, is reported as state (then forgotten
// when forget).
func allocFake(pending int, after State, forget bool) *fake {
	polls, cancelled := 0, false
	return &fake{reply: func(argv []string) ([]byte, error) {
		switch strings.Join(argv[:2], " ") {
		case "sbatch --parsable":
			return []byte("77\n"), nil
		case "scancel 77":
			cancelled = true
			return nil, nil
		case "scontrol show":
			switch argv[2] {
			case "hostnames":
				return []byte("mn1\nmn2\n"), nil
			case "node":
				return []byte("NodeName=" + argv[4] + " Arch=x86_64 NodeAddr=10.0.0." + argv[4][2:] + " NodeHostName=" + argv[4] + "\n"), nil
			}
			switch {
			case cancelled && forget:
				return nil, &CommandError{Argv: argv, Err: errors.New("exit status 1"), Stderr: "slurm_load_jobs error: Invalid job id specified"}
			case cancelled:
				return []byte("JobId=77 JobState=" + string(after) + " Reason=None NodeList=mn[1-2]\n"), nil
			case polls < pending:
				polls++
				return []byte("JobId=77 JobState=PENDING Reason=Resources NodeList=(null)\n"), nil
			}
			return []byte("JobId=77 JobState=RUNNING Reason=None NodeList=mn[1-2]\n"), nil
		}
		return nil, errors.New("unexpected " + strings.Join(argv, " "))
	}}
}

func TestAllocate(t *testing.T) {
	dir := t.TempDir()
	f := allocFake(2, "CANCELLED", false)
	c := NewClient(f)
	a, err := c.Allocate(t.Context(), AllocSpec{Name: "sweep-x", Nodes: 2, GPUsPerNode: 8, TimeLimit: 90 * time.Second, Dir: dir, Poll: time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, JobID("77"), a.ID)
	assert.Equal(t, []Node{{"mn1", "10.0.0.1"}, {"mn2", "10.0.0.2"}}, a.Nodes)
	// The holder job: the nodes, one task each, a sleep bounded by --time.
	assert.Equal(t, []string{"sbatch", "--parsable", "--job-name=sweep-x", "--gres=gpu:8", "--time=2", "--output=" + filepath.Join(dir, "slurm-alloc-%j.out"),
		"--chdir=" + dir, "--nodes=2", "--ntasks-per-node=1", filepath.Join(dir, "slurm-alloc.sh"), "sleep", "90"}, f.calls[0])
	b, err := os.ReadFile(filepath.Join(dir, "slurm-alloc.sh"))
	require.NoError(t, err)
	assert.Equal(t, WrapperScript, string(b))

	step, err := a.StepArgv("10.0.0.2", "decode0")
	require.NoError(t, err)
	assert.Equal(t, []string{"srun", "--jobid=77", "--nodes=1", "--ntasks=1", "--nodelist=mn2", "--overlap", "--kill-on-bad-exit=1", "--job-name=decode0", "--"}, step)
	_, err = a.StepArgv("10.0.0.9", "x")
	assert.ErrorContains(t, err, "job 77 has no node at 10.0.0.9")

	hosts, err := a.Hosts(2)
	require.NoError(t, err)
	assert.Equal(t, []string{"10.0.0.1", "10.0.0.1", "10.0.0.2"}, hosts, "the router beside the first worker")
	_, err = a.Hosts(3)
	assert.ErrorContains(t, err, "2 node(s) for 3 worker(s)")

	require.NoError(t, c.Release(t.Context(), a))
	assert.Contains(t, f.commands(), "scancel")
	// A job slurmctld has already forgotten is released too.
	require.NoError(t, NewClient(allocFake(0, "", true)).Release(t.Context(), a))
}

func TestAllocateFailures(t *testing.T) {
	ctx := t.Context()
	_, err := NewClient(allocFake(0, "", false)).Allocate(ctx, AllocSpec{Nodes: 2, Dir: t.TempDir()})
	assert.ErrorContains(t, err, "a time limit")

	// Still pending at the start timeout: the job is cancelled, not left.
	f := allocFake(1000, "CANCELLED", false)
	_, err = NewClient(f).Allocate(ctx, AllocSpec{Nodes: 2, TimeLimit: time.Minute, Dir: t.TempDir(), Poll: time.Millisecond, StartTimeout: 20 * time.Millisecond})
	var nse *NotStartedError
	require.ErrorAs(t, err, &nse)
	assert.Equal(t, "Resources", nse.Reason)
	assert.ErrorContains(t, err, "slurm job 77 did not start within")
	assert.Contains(t, f.commands(), "scancel")

	// Cancelled by the caller while pending: cancelled on Slurm too.
	f = allocFake(1000, "CANCELLED", false)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = NewClient(f).Allocate(cctx, AllocSpec{Nodes: 2, TimeLimit: time.Minute, Dir: t.TempDir(), Poll: time.Millisecond})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, f.commands(), "scancel")
}

// TestAllocateReportsPending: a holder job that waits for its nodes is
// reported when first seen, then every PendingEvery, with its reason and
// the time waited; without a StartTimeout it is waited for until it runs.
func TestAllocateReportsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lines []string
		f := allocFake(70, "CANCELLED", false) // 70 polls of 1 s pending
		a, err := NewClient(f).Allocate(t.Context(), AllocSpec{Nodes: 2, TimeLimit: time.Hour, Dir: t.TempDir(), Poll: time.Second,
			Progress: func(line string) { lines = append(lines, line) }})
		require.NoError(t, err)
		assert.Equal(t, JobID("77"), a.ID)
		assert.Equal(t, []string{
			"slurm job 77 PENDING (reason Resources); waited 0s",
			"slurm job 77 PENDING (reason Resources); waited 30s",
			"slurm job 77 PENDING (reason Resources); waited 1m0s",
		}, lines)

		// With a StartTimeout the line says how long it may wait.
		lines = nil
		_, err = NewClient(allocFake(1000, "CANCELLED", false)).Allocate(t.Context(), AllocSpec{Nodes: 2, TimeLimit: time.Hour, Dir: t.TempDir(), Poll: time.Second,
			StartTimeout: 45 * time.Second, Progress: func(line string) { lines = append(lines, line) }})
		assert.Equal(t, "slurm job 77 did not start within 46s (pending reason: Resources); cancelled", err.Error())
		assert.Equal(t, []string{
			"slurm job 77 PENDING (reason Resources); waited 0s of 45s",
			"slurm job 77 PENDING (reason Resources); waited 30s of 45s",
		}, lines)
	})
}

func TestIsAllocFile(t *testing.T) {
	for name, want := range map[string]bool{
		"slurm-alloc.sh": true, "slurm-alloc-65.out": true,
		"slurm-alloc-.out": false, "slurm-alloc-x.out": false, "slurm-alloc-65.log": false, "run.json": false, "slurm-65.out": false,
	} {
		assert.Equal(t, want, IsAllocFile(name), name)
	}
}
