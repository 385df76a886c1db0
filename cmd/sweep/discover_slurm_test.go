package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/testkit/syncbuf"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/slurm"
)

// requireSlurm skips without the one-node test cluster `make test` starts
// (scripts/slurm-cluster.sh); with SWEEP_REQUIRE_SLURM=1 it fails instead.
func requireSlurm(t *testing.T) {
	t.Helper()
	err := errors.New("SLURM_CONF is not set")
	if os.Getenv("SLURM_CONF") != "" {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err = slurm.Available(ctx); err == nil {
			return
		}
	}
	if os.Getenv("SWEEP_REQUIRE_SLURM") == "1" {
		t.Fatalf("no Slurm cluster (SLURM_CONF=%q): %v", os.Getenv("SLURM_CONF"), err)
	}
	t.Skipf("no Slurm cluster (SLURM_CONF=%q): %v; `make test` starts one", os.Getenv("SLURM_CONF"), err)
}

// TestDiscoverThroughSlurm runs a simulated discovery of one arm as a
// Slurm job on the test cluster, cancels the job from outside (scancel)
// after its first point, and resumes: the completed point is kept, the
// cancelled one fails with the job's state and is rerun on resume, and no
// job or process is left.
func TestDiscoverThroughSlurm(t *testing.T) {
	requireSlurm(t)
	out := filepath.Join(t.TempDir(), "d")
	args := []string{"discover", "--simulate", "--executor", "slurm", "--slurm-poll", "300ms", "--builtin-client", "--no-report",
		"--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc-list", "4", "16", "24",
		"--official-durations", "--duration", "400", "--time-scale", "40", "--stop-grace", "3s", "--retries", "0", "--out", out}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	var log syncbuf.Buffer // the child's output is copied in by exec's goroutines
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Wait for the first point to finish, then scancel its job.
	var first string
	deadline := time.Now().Add(2 * time.Minute)
	for first == "" && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		recs, _ := campaign.ReadJournal(out)
		for _, r := range recs {
			if r.Event == campaign.EventPointEnd && r.Status == campaign.StatusOK {
				first = r.Point
			}
		}
	}
	require.NotEmpty(t, first, "no point finished:\n%s", log.String())
	ids, err := os.ReadFile(filepath.Join(out, "slurm", "jobs.txt"))
	require.NoError(t, err)
	job := strings.Fields(string(ids))[0]
	require.NoError(t, exec.Command("scancel", job).Run())

	select {
	case err = <-exited:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("sweep did not end after scancel:\n%s", log.String())
	}
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "want exit 1 (a point failed), got %v:\n%s", err, log.String())
	assert.Equal(t, exitError, ee.ExitCode(), log.String())
	assert.Contains(t, log.String(), "CANCELLED")
	recs := journalOf(t, out)
	var cancelled string
	for _, r := range recs {
		if r.Event == campaign.EventPointEnd && r.Status == campaign.StatusFailed && strings.Contains(r.Error, "slurm job "+job+" ended CANCELLED") {
			cancelled = r.Point
		}
	}
	require.NotEmpty(t, cancelled, "the cancelled point is failed with the job's state:\n%s", log.String())

	t.Setenv(asCLIEnv, "1")
	resume := append(args[:len(args)-4:len(args)-4], "--retries", "1", "--out", out)
	code, stdout, stderr := runCLI(t, resume...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "3 ok, 0 failed, 0 not run")
	starts := countEvents(journalOf(t, out), campaign.EventPointStart)
	assert.Equal(t, 1, starts[first], "the completed point is kept")
	assert.Equal(t, 2, starts[cancelled], "the cancelled point is rerun")

	// What it cost, over both invocations, priced as planned (a server
	// start 600 s, a point its 400 s + 60; 8 GPUs): the three points, and
	// the cancelled run when the node recorded its time before the job
	// ended.
	sp := spentOf(t, out)
	serverStarts := 0
	for _, n := range countEvents(journalOf(t, out), campaign.EventServerStart) {
		serverStarts += n
	}
	assert.Equal(t, serverStarts, sp.ServerStarts, "the journal's server starts")
	assert.Contains(t, []int{3, 4}, sp.Runs)
	assert.Zero(t, sp.Probes)
	assert.InDelta(t, 8*(float64(sp.ServerStarts)*600+float64(sp.Runs)*460)/3600, sp.GPUHours, 1e-9)

	q, err := exec.Command("squeue", "-h", "-o", "%i %j").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(q), "sweep-arm", "no job left")
	ps, _ := exec.Command("pgrep", "-af", out).Output()
	assert.Empty(t, strings.TrimSpace(string(ps)), "no process of the sweep left")
}

// TestDiscoverThroughSlurmctldRestart stops slurmctld while a simulated
// discovery's job runs its arm and starts it again once the node has run
// every point: the sweep rides out the outage, recovers the job's end
// from Slurm, and finishes with every point ok, each run once, and no job
// or process left.
func TestDiscoverThroughSlurmctldRestart(t *testing.T) {
	requireSlurm(t)
	ctld := slurmctldControl(t)
	out := filepath.Join(t.TempDir(), "d")
	args := []string{"discover", "--simulate", "--executor", "slurm", "--slurm-poll", "300ms", "--builtin-client", "--no-report",
		"--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc-list", "4", "16",
		"--official-durations", "--duration", "120", "--time-scale", "40", "--stop-grace", "3s", "--retries", "0", "--out", out}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	cmd.WaitDelay = 10 * time.Second
	var log syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	t.Cleanup(func() { ctld.restore(t, out) }) // runs first

	// journal waits until n points have a record of kind ev (bounded).
	journal := func(ev string, n int, within time.Duration) bool {
		for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			recs, _ := campaign.ReadJournal(out)
			if len(countEvents(recs, ev)) >= n {
				return true
			}
			select {
			case <-exited:
				return false
			default:
			}
		}
		return false
	}
	require.True(t, journal(campaign.EventPointStart, 1, 2*time.Minute), "no point started:\n%s", log.String())
	ctld.stop(t)
	stopped := time.Now()
	// The node goes on without slurmctld; its events still reach the sweep.
	require.True(t, journal(campaign.EventPointEnd, 2, 2*time.Minute), "the points did not end while slurmctld was down:\n%s", log.String())
	select {
	case <-exited:
		t.Fatalf("the sweep ended while slurmctld was down (%v):\n%s", waitErr, log.String())
	default:
	}
	ctld.start(t)
	t.Logf("slurmctld was down for %s", time.Since(stopped).Round(100*time.Millisecond))

	select {
	case <-exited:
		require.NoError(t, waitErr, log.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("sweep did not end after slurmctld came back:\n%s", log.String())
	}
	assert.Contains(t, log.String(), "2 ok, 0 failed, 0 not run")
	recs := journalOf(t, out)
	for id, n := range countEvents(recs, campaign.EventPointStart) {
		assert.Equal(t, 1, n, "%s ran once", id)
	}
	for _, r := range recs {
		if r.Event == campaign.EventPointEnd {
			assert.Equal(t, campaign.StatusOK, r.Status, "%s: %s", r.Point, r.Error)
		}
	}
	ids, err := os.ReadFile(filepath.Join(out, "slurm", "jobs.txt"))
	require.NoError(t, err)
	require.Len(t, strings.Fields(string(ids)), 1, "one job ran the arm")
	st, err := slurm.NewClient(slurm.Exec{Timeout: 30 * time.Second}).Status(t.Context(), slurm.JobID(strings.TrimSpace(string(ids))))
	require.NoError(t, err)
	assert.Equal(t, slurm.State("COMPLETED"), st.State, "the job's end survived the restart")

	q, err := exec.Command("squeue", "-h", "-o", "%i %j").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(q), "sweep-arm", "no job left")
	ps, _ := exec.Command("pgrep", "-af", out).Output()
	assert.Empty(t, strings.TrimSpace(string(ps)), "no process of the sweep left")
}

// slurmctld stops and starts the test cluster's controller.
type slurmctld struct{ conf string }

func slurmctldControl(t *testing.T) *slurmctld {
	t.Helper()
	var err error
	switch {
	case os.Geteuid() != 0:
		err = errors.New("restarting slurmctld needs root (the test cluster runs as root)")
	default:
		_, err = exec.LookPath("slurmctld")
	}
	if err != nil {
		if os.Getenv("SWEEP_REQUIRE_SLURM") == "1" {
			t.Fatalf("cannot restart slurmctld: %v", err)
		}
		t.Skipf("cannot restart slurmctld: %v", err)
	}
	return &slurmctld{conf: os.Getenv("SLURM_CONF")}
}

// restore starts slurmctld again if the test left it stopped and cancels
// the jobs the sweep in dir submitted, whatever the test's outcome.
func (c *slurmctld) restore(t *testing.T, dir string) {
	if !c.up() {
		c.start(t)
	}
	ids, _ := os.ReadFile(filepath.Join(dir, "slurm", "jobs.txt"))
	for _, id := range strings.Fields(string(ids)) {
		_ = exec.Command("scancel", id).Run()
	}
}

// up reports whether slurmctld answers.
func (c *slurmctld) up() bool {
	out, _ := exec.Command("scontrol", "ping").Output()
	return strings.Contains(string(out), " is UP")
}

func (c *slurmctld) stop(t *testing.T) {
	t.Helper()
	out, err := exec.Command("scontrol", "shutdown", "slurmctld").CombinedOutput()
	require.NoError(t, err, "scontrol shutdown slurmctld: %s", out)
	for deadline := time.Now().Add(30 * time.Second); c.up(); time.Sleep(100 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "slurmctld still answers after scontrol shutdown")
	}
}

func (c *slurmctld) start(t *testing.T) {
	t.Helper()
	out, err := exec.Command("slurmctld", "-f", c.conf).CombinedOutput() // it daemonizes
	require.NoError(t, err, "slurmctld -f %s: %s", c.conf, out)
	for deadline := time.Now().Add(30 * time.Second); !c.up(); time.Sleep(100 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "slurmctld does not answer after its start")
	}
}
