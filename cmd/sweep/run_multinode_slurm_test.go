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
