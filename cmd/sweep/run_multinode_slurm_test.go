package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/executor/slurm"
)

// multiNodeConfEnv names the multi-node test cluster's slurm.conf
// (scripts/slurm-multinode.sh env); `make test` sets it.
const multiNodeConfEnv = "SWEEP_MULTINODE_SLURM_CONF"

// requireMultiNodeSlurm points SLURM_CONF at the multi-node test cluster
// for the test, or skips when it is not up (fails with
// SWEEP_REQUIRE_SLURM=1).
func requireMultiNodeSlurm(t *testing.T, nodes int) {
	t.Helper()
	conf := os.Getenv(multiNodeConfEnv)
	err := func() error {
		if conf == "" {
			return errors.New(multiNodeConfEnv + " is not set")
		}
		t.Setenv("SLURM_CONF", conf)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := slurm.Available(ctx); err != nil {
			return err
		}
		out, err := exec.CommandContext(ctx, "sinfo", "-h", "-N", "-o", "%N").Output()
		if err != nil {
			return err
		}
		if n := len(strings.Fields(string(out))); n < nodes {
			return fmt.Errorf("sinfo lists %d node(s), the test needs %d", n, nodes)
		}
		return nil
	}()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("no multi-node Slurm cluster (%s=%q): %v; `make test` starts one, or: scripts/slurm-multinode.sh up; export %s=/var/tmp/sweep-slurm-mn/slurm.conf (the SLURM_CONF `scripts/slurm-multinode.sh env` prints)",
		multiNodeConfEnv, conf, err, multiNodeConfEnv)
	if os.Getenv("SWEEP_REQUIRE_SLURM") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// TestRunDisaggregatedPointOnSlurmNodes runs a simulated disaggregated
// point through the multi-node test cluster: the prefill worker on one
// node, the decode worker on another (each in its own network namespace,
// listening at its node's address), the router and the client on the
// first, all as steps of one allocation; the result is valid, both
// workers' /metrics are recorded, and neither a step nor the allocation
// is left afterwards.
func TestRunDisaggregatedPointOnSlurmNodes(t *testing.T) {
	requireMultiNodeSlurm(t, 2)
	t.Setenv(asCLIEnv, "1")
	noSimulatedLoading(t)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, disaggRunArgs(out, "--slurm")...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	m := regexp.MustCompile(`behind the PD router on Slurm job (\d+) \((\S+) (\S+), (\S+) (\S+)\)`).FindStringSubmatch(stderr)
	require.NotNil(t, m, stderr)
	job, node0, addr0, node1, addr1 := m[1], m[2], m[3], m[4], m[5]
	require.NotEqual(t, node0, node1)
	assert.Contains(t, stderr, "released Slurm job "+job)
	rec := readRunRecord(t, out)
	require.True(t, rec.OK)

	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		return string(b)
	}
	flag := func(cmd, name string) string {
		f := strings.Fields(strings.ReplaceAll(cmd, "\\\n", " "))
		for i, a := range f {
			if a == name && i+1 < len(f) {
				return f[i+1]
			}
		}
		return ""
	}
	// Each role is a step of the job on its node; the workers listen at
	// their node's address, which only exists in that node's namespace.
	for _, r := range []struct{ file, node, addr string }{
		{"prefill0_command.txt", node0, addr0},
		{"decode0_command.txt", node1, addr1},
		{"router_command.txt", node0, ""},
		{"benchmark_command.txt", node0, ""},
	} {
		cmd := read(r.file)
		assert.Contains(t, cmd, "--jobid="+job, r.file)
		assert.Contains(t, cmd, "--nodelist="+r.node, r.file)
		if r.addr != "" {
			assert.Equal(t, r.addr, flag(cmd, "--host"), r.file)
		}
	}
	pre, dec := read("prefill0_command.txt"), read("decode0_command.txt")
	preURL := "http://" + net.JoinHostPort(addr0, flag(pre, "--port"))
	decURL := "http://" + net.JoinHostPort(addr1, flag(dec, "--port"))
	router := read("router_command.txt")
	assert.Contains(t, router, "--prefill "+preURL)
	assert.Contains(t, router, "--decode "+decURL)
	assert.Contains(t, read("prefill0.log"), "running on "+preURL)
	assert.Contains(t, read("decode0.log"), "running on "+decURL)

	// A valid result with the multi-node layout, both workers' metrics.
	b, err := os.ReadFile(rec.ResultFile)
	require.NoError(t, err)
	var res map[string]any
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, true, res["valid"])
	assert.Equal(t, true, res["is_multinode"])
	assert.Positive(t, res["num_requests_successful"])
	assertMetricsRecorded(t, filepath.Join(out, "aiperf_artifacts", "server_metrics_export.json"), preURL+"/metrics", decURL+"/metrics")

	// Nothing left: the job has ended and no worker answers any more.
	assertJobEnded(t, job)
	for _, u := range []string{preURL, decURL} {
		h, _ := url.Parse(u)
		c, err := net.DialTimeout("tcp", h.Host, 2*time.Second)
		if err == nil {
			c.Close()
		}
		assert.Error(t, err, "%s still answers after the run", u)
	}
	// The srun of each role and anything in its process group end too
	// (srun's own helper may stay a zombie until init reaps it).
	for name, p := range rec.Processes {
		deadline := time.Now().Add(20 * time.Second)
		for liveInGroup(p.PID) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		assert.False(t, liveInGroup(p.PID), "process group of %s (pid %d) still has a live process", name, p.PID)
	}
}

// liveInGroup reports whether a process of process group pgid is alive
// (not a zombie).
func liveInGroup(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		// After the command: state, ppid, pgrp.
		fields := strings.Fields(s[i+1:])
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// pendingSlurmEnv is the directory of pendingSlurm's cluster.
const pendingSlurmEnv = "SWEEP_TEST_PENDING_SLURM"

// pendingSlurm plays a Slurm cluster whose nodes are all down, when the
// test binary runs as sbatch, scontrol or scancel (symlinks in a
// directory first on PATH): a job is submitted as 4242 and stays pending
// until scancel, which records it ($SWEEP_TEST_PENDING_SLURM/cancelled).
func pendingSlurm(argv []string) (code int, ok bool) {
	dir := os.Getenv(pendingSlurmEnv)
	cancelled := filepath.Join(dir, "cancelled")
	switch filepath.Base(argv[0]) {
	case "sbatch":
		_ = os.Remove(cancelled)
		fmt.Println("4242")
	case "scancel":
		_ = os.WriteFile(cancelled, nil, 0o644)
	case "scontrol":
		state := "PENDING Reason=Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_partitions"
		if _, err := os.Stat(cancelled); err == nil {
			state = "CANCELLED Reason=None"
		}
		fmt.Printf("JobId=4242 JobName=sweep JobState=%s NodeList=(null)\n", state)
	default:
		return 0, false
	}
	return 0, true
}

// TestRunSlurmAllocationThatStaysPending: while the allocation waits for
// nodes the point says what it is and what it waits for; past
// --slurm-start-timeout the job is cancelled and the error names the flag;
// the same command then runs again into its directory without --force.
func TestRunSlurmAllocationThatStaysPending(t *testing.T) {
	bin := t.TempDir()
	self, err := os.Executable()
	require.NoError(t, err)
	for _, tool := range []string{"sbatch", "scontrol", "scancel"} {
		require.NoError(t, os.Symlink(self, filepath.Join(bin, tool)))
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(pendingSlurmEnv, t.TempDir())
	out := filepath.Join(t.TempDir(), "mn4")
	args := disaggRunArgs(out, "--slurm", "--slurm-start-timeout", "1s")

	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "point "+amdDisaggKey+" ")
	assert.Contains(t, stderr, "(multi-node, disaggregated, KV transfer")
	assert.Contains(t, stderr, "  allocating 2 node(s) on the Slurm cluster; waiting up to 1s (--slurm-start-timeout)\n")
	assert.Regexp(t, `\] slurm job 4242 PENDING \(reason Nodes_required_for_job_are_DOWN,\S+\); waited \d+s of 1s\n`, stderr) // the first reading within the wait, however loaded the host
	assert.Contains(t, stderr, "sweep: allocating 2 node(s) on the Slurm cluster: slurm job 4242 did not start within")
	assert.Contains(t, stderr, "(pending reason: Nodes_required_for_job_are_DOWN,")
	assert.Contains(t, stderr, "; cancelled; give --slurm-start-timeout a longer wait, or 0 to wait until the nodes are free, and run the same command again\n")
	assert.FileExists(t, filepath.Join(os.Getenv(pendingSlurmEnv), "cancelled"), "the pending job is cancelled")

	code, stdout, stderr = runCLI(t, args...)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.NotContains(t, stderr, "not empty")
	assert.Contains(t, stderr, "its earlier Slurm allocation in "+out+" ended before the run began; allocating again")
	assert.Contains(t, stderr, "slurm job 4242 did not start within")
}
