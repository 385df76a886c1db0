package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/sweep/campaign"
)

// TestDiscoverDisaggregatedArmOnSlurmNodes runs one simulated arm of the
// AMD disaggregated key through the multi-node test cluster: one
// allocation for the arm's deployment (the prefill worker on one node,
// the decode worker on another, the router and the client on the
// first), both concurrencies served by it, each point valid with both
// workers' metrics, and the allocation released at the end. It skips
// (or fails with SWEEP_REQUIRE_SLURM=1) as
// TestRunDisaggregatedPointOnSlurmNodes does.
func TestDiscoverDisaggregatedArmOnSlurmNodes(t *testing.T) {
	requireMultiNodeSlurm(t, 2)
	t.Setenv(asCLIEnv, "1")
	noSimulatedLoading(t)
	out := filepath.Join(t.TempDir(), "d")
	code, stdout, stderr := runCLI(t, disaggDiscoverArgs(out, "--slurm")...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	m := regexp.MustCompile(`arm 1: Slurm job (\d+) \((\S+) (\S+), (\S+) (\S+)\)`).FindStringSubmatch(stderr)
	require.NotNil(t, m, stderr)
	job, node0, addr0, node1, addr1 := m[1], m[2], m[3], m[4], m[5]
	require.NotEqual(t, node0, node1)
	assert.Equal(t, 1, strings.Count(stderr, ": Slurm job "), "one allocation for the arm")
	assert.Contains(t, stderr, "released Slurm job "+job)
	assert.Contains(t, stdout, "2 ok, 0 failed, 0 not run; 1 server start")
	assert.Contains(t, stdout, "knees:")

	srv := filepath.Join(out, campaign.ServersDir, "arm01-1")
	read := func(name string) string {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		return string(b)
	}
	for _, r := range []struct{ file, node string }{
		{"prefill0_command.txt", node0}, {"decode0_command.txt", node1}, {"router_command.txt", node0},
	} {
		cmd := read(filepath.Join(srv, r.file))
		assert.Contains(t, cmd, "--jobid="+job, r.file)
		assert.Contains(t, cmd, "--nodelist="+r.node, r.file)
	}
	preURL := "http://" + net.JoinHostPort(addr0, commandPort(t, filepath.Join(srv, "prefill0_command.txt")))
	decURL := "http://" + net.JoinHostPort(addr1, commandPort(t, filepath.Join(srv, "decode0_command.txt")))
	router := read(filepath.Join(srv, "router_command.txt"))
	assert.Contains(t, router, "--prefill "+preURL)
	assert.Contains(t, router, "--decode "+decURL)

	var sum campaign.Summary
	require.NoError(t, json.Unmarshal([]byte(read(filepath.Join(out, campaign.SummaryJSON))), &sum))
	require.Len(t, sum.Points, 2)
	for _, p := range sum.Points {
		assert.Equal(t, campaign.StatusOK, p.Status, p.ID)
		dir := result.PointDir(out, p.ID)
		bench := read(filepath.Join(dir, "benchmark_command.txt"))
		assert.Contains(t, bench, "--jobid="+job, "the client is a step of the allocation")
		assert.Contains(t, bench, "--nodelist="+node0)
		var res map[string]any
		require.NoError(t, json.Unmarshal([]byte(read(filepath.Join(dir, p.ID+".json"))), &res))
		assert.Equal(t, true, res["valid"], p.ID)
		assert.Equal(t, true, res["is_multinode"], p.ID)
		assert.Positive(t, res["num_requests_successful"], p.ID)
		assertMetricsRecorded(t, filepath.Join(dir, "aiperf_artifacts", "server_metrics_export.json"), preURL+"/metrics", decURL+"/metrics")
	}

	// Nothing left: the allocation has ended.
	assertJobEnded(t, job)
}
