package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveCluster returns a client of the one-node test cluster that
// `make test` starts (scripts/slurm-cluster.sh), or skips when there is
// none; with SWEEP_REQUIRE_SLURM=1 (make test sets it) a missing cluster
// fails the test instead.
func liveCluster(t *testing.T) *Client {
	t.Helper()
	err := errors.New("SLURM_CONF is not set")
	if os.Getenv("SLURM_CONF") != "" {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err = Available(ctx); err == nil {
			return NewClient(Exec{Timeout: 30 * time.Second})
		}
	}
	if os.Getenv("SWEEP_REQUIRE_SLURM") == "1" {
		t.Fatalf("no Slurm cluster (SLURM_CONF=%q): %v; run scripts/slurm-cluster.sh up", os.Getenv("SLURM_CONF"), err)
	}
	t.Skipf("no Slurm cluster (SLURM_CONF=%q): %v; `make test` starts one", os.Getenv("SLURM_CONF"), err)
	return nil
}

func writeWrapper(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.sh")
	require.NoError(t, os.WriteFile(p, []byte(WrapperScript), 0o755))
	return p
}

func TestClusterJobGetsItsGPUs(t *testing.T) {
	c := liveCluster(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	id, err := c.Submit(t.Context(), JobSpec{Name: "sweep-test-gpus", GPUs: 2, TimeLimit: 2 * time.Minute,
		Output: filepath.Join(dir, "slurm-%j.out"), Script: writeWrapper(t),
		Argv: []string{"sh", "-c", `printf '%s' "$CUDA_VISIBLE_DEVICES" > "$1"`, "sh", out}})
	require.NoError(t, err)
	st, err := c.Wait(t.Context(), id, WaitOptions{Poll: 200 * time.Millisecond, StartTimeout: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, State("COMPLETED"), st.State)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Len(t, strings.Split(string(got), ","), 2, "CUDA_VISIBLE_DEVICES=%q", got)
}

func TestClusterCancelAndExitCode(t *testing.T) {
	c := liveCluster(t)
	script := writeWrapper(t)
	long, err := c.Submit(t.Context(), JobSpec{Name: "sweep-test-cancel", TimeLimit: 2 * time.Minute, Output: os.DevNull,
		Script: script, Argv: []string{"sleep", "120"}})
	require.NoError(t, err)
	failing, err := c.Submit(t.Context(), JobSpec{Name: "sweep-test-exit", TimeLimit: 2 * time.Minute, Output: os.DevNull,
		Script: script, Argv: []string{"sh", "-c", "exit 3"}})
	require.NoError(t, err)
	// Wait until the long job runs, then cancel it from outside.
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := c.Status(t.Context(), long)
		require.NoError(t, err)
		if st.State == "RUNNING" {
			break
		}
		require.True(t, time.Now().Before(deadline), "job %s never ran: %+v", long, st)
		time.Sleep(200 * time.Millisecond)
	}
	require.NoError(t, c.Cancel(t.Context(), long))
	st, err := c.Wait(t.Context(), long, WaitOptions{Poll: 200 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, State("CANCELLED"), st.State)
	st, err = c.Wait(t.Context(), failing, WaitOptions{Poll: 200 * time.Millisecond, StartTimeout: time.Minute})
	require.NoError(t, err)
	assert.Equal(t, State("FAILED"), st.State)
	assert.Equal(t, 3, st.ExitCode)
}
