package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/aiperf"
	"sweep/metrics/result"
)

// fakeAiperfOnPath puts an "aiperf" on PATH that records that it ran and
// fails; it returns the file it records into.
func fakeAiperfOnPath(t *testing.T) (program, ran string) {
	t.Helper()
	bin := t.TempDir()
	ran = filepath.Join(bin, "ran")
	program = filepath.Join(bin, "aiperf")
	require.NoError(t, os.WriteFile(program, []byte("#!/bin/sh\necho ran >> "+ran+"\nexit 3\n"), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return program, ran
}

func readResult(t *testing.T, dir string) *result.Result {
	t.Helper()
	rec := readRunRecord(t, dir)
	require.NotEmpty(t, rec.ResultFile)
	b, err := os.ReadFile(rec.ResultFile)
	require.NoError(t, err)
	var res result.Result
	require.NoError(t, json.Unmarshal(b, &res))
	return &res
}

// TestRealAiperfNeverRunsOnACompressedClock: with aiperf on PATH, the
// README's `sweep run --simulate` silently ran it against the simulated
// engine on a compressed clock, and its 150x too small latencies made a
// valid result. Now the built-in runs and the first lines say why, the
// result names its client, and a named --aiperf is refused with the fix.
func TestRealAiperfNeverRunsOnACompressedClock(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	fake, ran := fakeAiperfOnPath(t)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, simRunArgs(out, "--conc", "4", "--duration", "120")...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "client: built-in (aiperf 0.12.0 artifacts) (aiperf on PATH ("+fake+") not used: the simulated engine runs on the virtual clock")
	assert.NoFileExists(t, ran, "the aiperf on PATH never ran")
	assert.Contains(t, stdout, "client:     built-in (aiperf 0.12.0 artifacts)")
	res := readResult(t, out)
	require.NotNil(t, res.Client)
	assert.Equal(t, "built-in (aiperf 0.12.0 artifacts)", res.Client.Name)
	assert.Contains(t, res.Client.Why, "not used")
	assert.Equal(t, "0.12.0", res.Client.AiperfVersion)
	require.NotNil(t, res.Submission, "the scenario's stamp is carried into the result")
	assert.Equal(t, "inferencex-agentx-mvp", res.Submission.Scenario)
	assert.False(t, res.Submission.Valid, "a 120 s point runs with --unsafe-override")
	assert.Contains(t, res.Submission.InvalidReasons, "unsafe_override")

	// sweep result aggregate on the point's directory says the same.
	again := filepath.Join(t.TempDir(), "again.json")
	code, _, stderr = runCLI(t, "result", "aggregate", out, "--out", again)
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(again)
	require.NoError(t, err)
	var agg result.Result
	require.NoError(t, json.Unmarshal(b, &agg))
	assert.Equal(t, res.Client, agg.Client)
	assert.Equal(t, res.Submission, agg.Submission)

	for _, clock := range [][]string{nil, {"--sim-clock", "wall"}, {"--sim-clock", "wall", "--time-scale", "2"}} {
		code, _, stderr = runCLI(t, simRunArgs(t.TempDir(), append([]string{"--aiperf", fake}, clock...)...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", clock, stderr)
		assert.Contains(t, stderr, "needs --sim-clock wall --time-scale 1, or use --builtin-client", "%v", clock)
		assert.NoFileExists(t, ran)
	}
}

// TestForcedRerunReadsNoStaleArtifacts: --force kept aiperf_artifacts/, so
// a rerun whose load died at once aggregated the previous run's artifacts,
// and the summary said "validation: valid" while the result said invalid.
func TestForcedRerunReadsNoStaleArtifacts(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, simRunArgs(out, "--conc", "4", "--duration", "120", "--builtin-client")...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.FileExists(t, filepath.Join(out, "aiperf_artifacts", aiperf.SummaryFile))

	code, stdout, stderr = runCLI(t, simRunArgs(out, "--conc", "4", "--duration", "120", "--builtin-client", "--force", "--sim-fault", "crash:1")...)
	require.Equal(t, exitError, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.NoFileExists(t, filepath.Join(out, "aiperf_artifacts", aiperf.SummaryFile), "the first run's summary is gone")
	assert.NoFileExists(t, filepath.Join(out, "aiperf_artifacts", aiperf.ServerMetricsFile))
	assert.NotContains(t, stdout, "validation: valid")
	if rec := readRunRecord(t, out); rec.ResultFile != "" {
		res := readResult(t, out)
		assert.False(t, res.Valid)
		assert.Contains(t, stdout, "validation: invalid: "+res.InvalidReasons[0], "the summary prints the result's verdict")
	}
}
