package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/sweep/campaign"
)

// disaggDiscoverArgs is a short simulated discovery of one arm of the AMD
// disaggregated key (prefill and decode 1 x tp8 ep1) at two
// concurrencies: 120 s of profile per point on the wall clock compressed
// 20x, as disaggRunArgs runs one point.
func disaggDiscoverArgs(out string, extra ...string) []string {
	args := []string{"discover", "--simulate", "--config-keys", amdDisaggKey, "--tp", "8", "--ep", "1",
		"--conc-list", "2", "4", "--official-durations", "--duration", "120", "--stop-grace", "3s", "--out", out}
	return overrideFlags(args, extra...)
}

// commandPort is the value of --port in a recorded command.
func commandPort(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	f := strings.Fields(string(b))
	for i, a := range f {
		if a == "--port" && i+1 < len(f) {
			return f[i+1]
		}
	}
	t.Fatalf("%s has no --port", file)
	return ""
}

// TestDiscoverSimulatedDisaggregatedArm runs one arm of a multi-node
// disaggregated key through the campaign on this host: the prefill and
// decode workers and the PD router start once and serve both
// concurrencies, each point's result is valid with InferenceX's
// multi-node fields and both workers' metrics, the knee table follows,
// and a rerun on the directory runs nothing.
func TestDiscoverSimulatedDisaggregatedArm(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	noSimulatedLoading(t)
	out := filepath.Join(t.TempDir(), "d")
	code, stdout, stderr := runCLI(t, disaggDiscoverArgs(out)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "2 points in 1 arm, 1 server start planned")
	assert.Contains(t, stderr, "server reused")
	assert.Contains(t, stdout, "2 ok, 0 failed, 0 not run; 1 server start")
	assert.Contains(t, stdout, "knees:")

	recs := journalOf(t, out)
	assert.Equal(t, 1, countEvent(recs, campaign.EventServerStart), "one deployment serves the arm")

	// The arm's deployment: both workers and the router, recorded once.
	srv := filepath.Join(out, campaign.ServersDir, "arm01-1")
	pre, dec := commandPort(t, filepath.Join(srv, "prefill0_command.txt")), commandPort(t, filepath.Join(srv, "decode0_command.txt"))
	router, err := os.ReadFile(filepath.Join(srv, "router_command.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(router), "--prefill http://127.0.0.1:"+pre)
	assert.Contains(t, string(router), "--decode http://127.0.0.1:"+dec)

	data, err := os.ReadFile(filepath.Join(out, campaign.SummaryJSON))
	require.NoError(t, err)
	var sum campaign.Summary
	require.NoError(t, json.Unmarshal(data, &sum))
	require.Len(t, sum.Points, 2)
	for i, conc := range []int{2, 4} {
		p := sum.Points[i]
		assert.Equal(t, campaign.StatusOK, p.Status, p.ID)
		assert.True(t, strings.HasSuffix(p.ID, "_conc"+strconv.Itoa(conc)), "InferenceX's <RESULT_FILENAME>_conc<N>: %s", p.ID)
		dir := result.PointDir(out, p.ID)
		b, err := os.ReadFile(filepath.Join(dir, p.ID+".json"))
		require.NoError(t, err)
		var res map[string]any
		require.NoError(t, json.Unmarshal(b, &res))
		want := map[string]any{"conc": float64(conc), "is_multinode": true, "disagg": true, "tp": 16.0,
			"prefill_tp": 8.0, "decode_tp": 8.0, "num_prefill_gpu": 8.0, "num_decode_gpu": 8.0, "simulated": true, "valid": true}
		for k, v := range want {
			assert.Equal(t, v, res[k], "%s: %s", p.ID, k)
		}
		assert.Positive(t, res["num_requests_successful"], "numbers come from requests that ran")

		// Per-role metrics: the client recorded each worker's endpoint.
		assertMetricsRecorded(t, filepath.Join(dir, "aiperf_artifacts", "server_metrics_export.json"),
			"http://127.0.0.1:"+pre+"/metrics", "http://127.0.0.1:"+dec+"/metrics")
	}

	// Resume: the completed points are not run again.
	code, stdout, stderr = runCLI(t, disaggDiscoverArgs(out)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for id, n := range countEvents(journalOf(t, out), campaign.EventPointStart) {
		assert.Equal(t, 1, n, "%s not rerun", id)
	}
}

// TestDiscoverDisaggregatedDryRun: the dry run of a simulated
// disaggregated arm says what its run does: the points run on the wall
// clock at 20x (not the virtual clock), on the prefill and decode
// workers' 16 GPUs over 2 nodes, which the GPU-hours are priced for
// (960 s x 16 GPUs = 4.3 GPU-hours).
func TestDiscoverDisaggregatedDryRun(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "d")
	code, stdout, stderr := runCLI(t, disaggDiscoverArgs(out, "--dry-run")...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `1P×tp8 1D×tp8 kv:dram disagg\s+16 \(2 nodes x 8\)\s+2 4\s+1\s`, stdout)
	assert.Contains(t, stdout, "  this schedule:   1 server start, 4.3 GPU-hours, wall 16m0s on 2 nodes of 8 GPUs\n")
	assert.Contains(t, stdout, "  simulated here:  about ")
	assert.Contains(t, stdout, " of load at time scale 20\n")
	assert.NotContains(t, stdout, "virtual clock")
	assert.NoDirExists(t, out)
}

func TestDiscoverMultiNodeUsageErrors(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"virtual clock", disaggDiscoverArgs(filepath.Join(dir, "a"), "--sim-clock", "virtual"), "the virtual clock is kept by one engine"},
		{"not simulated", []string{"discover", "--config-keys", amdDisaggKey, "--out", filepath.Join(dir, "b")}, "runs them only with --simulate"},
		{"not simulated, dry run", []string{"discover", "--config-keys", amdDisaggKey, "--dry-run", "--out", filepath.Join(dir, "b")}, "runs them only with --simulate"},
		{"slurm executor", disaggDiscoverArgs(filepath.Join(dir, "c"), "--executor", "slurm"), "multi-node arms run with --executor local"},
		{"no such layout", disaggDiscoverArgs(filepath.Join(dir, "d"), "--tp", "3"), "no agentic point matches"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
