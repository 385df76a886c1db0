package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/sweep/run"
)

func TestResultAggregateFlags(t *testing.T) {
	got, err := parseOptions(t, newResultAggregateCmd, "RD", "--env-file", "e.json", "--out", "o.json", "--golden-al", "3.39")
	require.NoError(t, err)
	assert.Equal(t, "RD", got.ResultDir)
	assert.Equal(t, "e.json", got.EnvFile)
	assert.Equal(t, "o.json", got.Out)
	require.NotNil(t, got.GoldenAL)
	assert.Equal(t, 3.39, *got.GoldenAL)
	assert.Equal(t, 0.05, got.ALTolerance)
	assert.False(t, got.ALToleranceGiven)
}

func TestResultAggregateCLI(t *testing.T) {
	dir := filepath.Join(aggCases, "sglang-mtp-tp8-dpattn-hicache")
	out := filepath.Join(t.TempDir(), "agg.json")
	code, stdout, stderr := runCLI(t, "result", "aggregate", dir, "--env-file", filepath.Join(dir, "env.json"), "--out", out, "--golden-al", "3.0")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "Requests: 145 successful / 198 total (48 warmup, 8 error dropped)")
	assert.Contains(t, stderr, "Acceptance length: 2.990 vs golden 3.00 ± 0.05: pass")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var res map[string]any
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Equal(t, "dsv4", res["infmax_model_prefix"])
	assert.Equal(t, "pass", res["acceptance_length"].(map[string]any)["verdict"])

	// To stdout without an output flag.
	code, stdout, _ = runCLI(t, "result", "aggregate", dir, "--env-file", filepath.Join(dir, "env.json"))
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, `"scenario_type": "agentic-coding"`)

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no records", []string{t.TempDir(), "--env-file", filepath.Join(dir, "env.json")}, exitError, "nothing to aggregate"},
		{"bad facts", []string{dir, "--env-file", writeEnv(t, `{"KV_OFFLOADING":"dram"}`)}, exitError, "KV_OFFLOAD_BACKEND is required"},
		{"two dirs", []string{dir, dir}, exitUsage, "want exactly one RESULT_DIR"},
		{"bad golden", []string{dir, "--golden-al", "-1"}, exitUsage, "--golden-al"},
		{"out and out-dir", []string{dir, "--out", "a", "--out-dir", "b"}, exitUsage, "exclusive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"result", "aggregate"}, tc.args...)...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Contains(t, stderr, tc.stderr)
		})
	}
}

// TestResultAggregateSummaryLinesMatchInferenceX compares the summary
// printed to stderr with what InferenceX printed for each conformance case.
func TestResultAggregateSummaryLinesMatchInferenceX(t *testing.T) {
	entries, err := os.ReadDir(aggCases)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join(aggCases, e.Name())
			var proc struct {
				Stdout string `json:"stdout"`
			}
			data, err := os.ReadFile(filepath.Join(dir, "process.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &proc))
			code, _, stderr := runCLI(t, "result", "aggregate", dir, "--env-file", filepath.Join(dir, "env.json"), "--out-dir", t.TempDir())
			require.Equal(t, 0, code, stderr)
			var ours []string
			for _, l := range strings.Split(stderr, "\n") {
				if !strings.HasPrefix(l, "Saved ") && !strings.HasPrefix(l, "  warning:") && !strings.HasPrefix(l, "  Acceptance length:") {
					ours = append(ours, l)
				}
			}
			theirs := strings.Split(proc.Stdout, "\n")[1:] // drop "Saved ... to <path>"
			assert.Equal(t, theirs, ours)
		})
	}
}

// TestResultAggregatePointDir: on sweep run's own point directory the
// facts come from its run.json. Without InferenceX's environment variables
// the command failed (Missing required environment variable: KV_OFFLOADING),
// and with a partial set it wrote hw "", conc 0, tp 1 (8x the per-GPU
// throughput).
func TestResultAggregatePointDir(t *testing.T) {
	src := filepath.Join(aggCases, "sglang-mtp-tp8-dpattn-hicache")
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "aiperf_artifacts"), os.DirFS(filepath.Join(src, "aiperf_artifacts"))))
	env, err := result.EnvFromFile(filepath.Join(src, "env.json"), map[string]string{"RESULT_DIR": dir, "AGENTIC_OUTPUT_DIR": dir})
	require.NoError(t, err)
	facts, err := result.FromEnv(env)
	require.NoError(t, err)
	rec := run.Record{Name: facts.ResultFilename, Facts: &facts,
		Simulation:      &result.Simulation{TimeScale: 150, Seed: 7, GPU: "b200"},
		ValidateOptions: &result.ValidateOptions{FailedRequestThreshold: 0.10}}
	data, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, run.RecordFile), data, 0o644))
	for _, v := range []string{"KV_OFFLOADING", "TP", "EP_SIZE", "CONC", "RUNNER_TYPE"} {
		t.Setenv(v, "")
	}

	code, fromRecord, stderr := runCLI(t, "result", "aggregate", dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "run facts: from "+filepath.Join(dir, run.RecordFile))
	code, fromEnvFile, stderr := runCLI(t, "result", "aggregate", dir, "--env-file", filepath.Join(src, "env.json"))
	require.Equal(t, 0, code, stderr)

	var got, want map[string]any
	require.NoError(t, json.Unmarshal([]byte(fromRecord), &got))
	require.NoError(t, json.Unmarshal([]byte(fromEnvFile), &want))
	assert.Equal(t, "b200-dgxc", got["hw"])
	assert.EqualValues(t, 48, got["conc"])
	assert.EqualValues(t, 8, got["tp"])
	assert.EqualValues(t, 8, got["ep"])
	assert.Equal(t, true, got["simulated"], "run.json's simulation is stated")
	assert.Equal(t, map[string]any{"time_scale": 150.0, "seed": 7.0, "gpu": "b200"}, got["simulation"])
	delete(got, "simulated")
	delete(got, "simulation")
	delete(want, "simulated")
	assert.Equal(t, want, got, "run.json's facts give the numbers the env file gives")
}
