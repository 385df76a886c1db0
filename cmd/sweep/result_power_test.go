package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const powerCases = "../../metrics/power/testdata/conformance"

// copyPowerCase copies a power conformance case's result directory and
// aggregate into a temporary directory.
func copyPowerCase(t *testing.T, name string) (dir, agg string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "result")
	src := filepath.Join(powerCases, name)
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	agg = filepath.Join(t.TempDir(), "agg.json")
	data, err := os.ReadFile(filepath.Join(src, "agg_input.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(agg, data, 0o644))
	return dir, agg
}

func TestResultPowerCLI(t *testing.T) {
	t.Setenv("TZ", "UTC")
	tests := []struct {
		name, caseName string
		args           []string
		env            string // REQUIRE_POWER
		code           int
		stdout, stderr string
		valid          float64
	}{
		{"valid", "nvidia-h200-2gpu-final-sample-stale-fields", []string{"--expected-num-gpus", "2"}, "", 0,
			"avg_power_w=592.69 avg_total_gpu_power_w=1185.39 total_gpu_energy_j=10817.54 (n=2)", "", 1},
		{"gap, best effort", "nvidia-h100-stall-gap-require-power", []string{"--expected-num-gpus", "1"}, "", 0,
			"", "Power validation failed: sampling_gap_exceeded", 0},
		{"gap, --require-power", "nvidia-h100-stall-gap-require-power", []string{"--expected-num-gpus", "1", "--require-power"}, "", exitError,
			"", "power telemetry invalid (--require-power): sampling_gap_exceeded", 0},
		{"gap, REQUIRE_POWER=true", "nvidia-h100-stall-gap-require-power", []string{"--expected-num-gpus", "1"}, "true", exitError,
			"", "sampling_gap_exceeded", 0},
		{"wrong GPU count", "nvidia-h200-2gpu-final-sample-stale-fields", []string{"--expected-num-gpus", "8"}, "", 0,
			"", "expected_gpu_count_mismatch", 0},
		{"wrong GPU count, --require-power", "nvidia-h200-2gpu-final-sample-stale-fields", []string{"--expected-num-gpus", "8", "--require-power"}, "", exitError,
			"", "power telemetry invalid (--require-power): expected_gpu_count_mismatch (expected 8 GPUs, observed 2: GPUs 2, 3, 4, 5, 6, 7 absent)", 0},
		// A GPU of --power-gpus without samples was left out of the total
		// and the measurement stayed valid, naming nothing.
		{"filtered GPU absent", "nvidia-h200-2gpu-final-sample-stale-fields", []string{"--power-gpus", "0,1,9"}, "", 0,
			"", "Power validation failed: power_gpus_absent (expected 3 GPUs, observed 2: GPU 9 absent)", 0},
		{"filtered GPUs present", "nvidia-h200-2gpu-final-sample-stale-fields", []string{"--power-gpus", "0,1", "--expected-num-gpus", "2"}, "", 0,
			"(n=2)", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("REQUIRE_POWER", tc.env)
			dir, agg := copyPowerCase(t, tc.caseName)
			args := append([]string{"result", "power", "--result-dir", dir, "--agg-result", agg}, tc.args...)
			code, stdout, stderr := runCLI(t, args...)
			assert.Equal(t, tc.code, code, "stdout %s stderr %s", stdout, stderr)
			assert.Contains(t, stdout, tc.stdout)
			assert.Contains(t, stderr, tc.stderr)
			var patched map[string]any
			data, err := os.ReadFile(agg)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &patched))
			assert.Equal(t, tc.valid, patched["power_valid"])
			assert.FileExists(t, filepath.Join(dir, "power_validation.json"))
		})
	}
	code, _, stderr := runCLI(t, "result", "power", "--result-dir", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--agg-result are required")

	// A --power-gpus that is not a list of GPU indexes, each once, was
	// taken: "x" exited 0 with no_usable_power_samples, and 0,0,1 counted
	// GPU 0 twice towards --expected-num-gpus.
	for _, tc := range []struct{ gpus, stderr string }{
		{"x", `"x" is not a GPU index`},
		{"0,-1", `"-1" is not a GPU index`},
		{"0,0,1", "GPU 0 is listed twice"},
		{"0,,1", "an empty GPU id"},
	} {
		t.Run("--power-gpus "+tc.gpus, func(t *testing.T) {
			dir, agg := copyPowerCase(t, "nvidia-h200-2gpu-final-sample-stale-fields")
			before, err := os.ReadFile(agg)
			require.NoError(t, err)
			code, _, stderr := runCLI(t, "result", "power", "--result-dir", dir, "--agg-result", agg, "--power-gpus", tc.gpus, "--expected-num-gpus", "2")
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, tc.stderr)
			after, err := os.ReadFile(agg)
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "the aggregate is not patched")
		})
	}
}

// TestResultAggregatePowerLane: sweep result aggregate runs the power lane
// on a directory whose run had it, with the figures InferenceX's adapter
// wrote for that directory, and exits 1 under REQUIRE_POWER when the
// telemetry is invalid.
func TestResultAggregatePowerLane(t *testing.T) {
	t.Setenv("TZ", "UTC")
	t.Setenv("ENABLE_AGENTX_POWER", "")
	for _, tc := range []struct {
		caseName, require string
		code              int
	}{
		{"nvidia-h200-2gpu-final-sample-stale-fields", "", 0},
		{"nvidia-h100-stall-gap-require-power", "", 0},
		{"nvidia-h100-stall-gap-require-power", "1", exitError},
	} {
		t.Run(tc.caseName+"/"+tc.require, func(t *testing.T) {
			t.Setenv("REQUIRE_POWER", tc.require)
			dir, _ := copyPowerCase(t, tc.caseName)
			out := filepath.Join(t.TempDir(), "agg.json")
			code, stdout, stderr := runCLI(t, "result", "aggregate", dir, "--env-file", filepath.Join(dir, "aggregate_env.json"), "--out", out)
			require.Equal(t, tc.code, code, "stdout %s\nstderr %s", stdout, stderr)
			var got, want map[string]any
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &got))
			data, err = os.ReadFile(filepath.Join(powerCases, tc.caseName, "expected.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &want))
			for _, k := range []string{"power_metric_schema_version", "power_valid", "avg_power_w", "avg_total_gpu_power_w", "total_gpu_energy_j",
				"joules_per_successful_query", "joules_per_input_token", "joules_per_output_token", "joules_per_total_token"} {
				assert.Equal(t, want[k], got[k], k)
			}
			assert.FileExists(t, filepath.Join(dir, "power_validation.json"))
			if tc.code != 0 {
				assert.Contains(t, got["invalid_reasons"], "power: sampling_gap_exceeded (REQUIRE_POWER)")
			}
		})
	}
}
