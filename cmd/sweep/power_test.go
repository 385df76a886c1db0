package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/simproto"
	"sweep/metrics/power"
	"sweep/sweep/run"
)

// readJSONMap reads a JSON object file.
func readJSONMap(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

// pointResult returns the result JSON of the point in out.
func pointResult(t *testing.T, out string) (string, map[string]any) {
	t.Helper()
	rec := readRunRecord(t, out)
	require.NotEmpty(t, rec.ResultFile)
	return rec.ResultFile, readJSONMap(t, rec.ResultFile)
}

// TestRunSimulatedPower: a simulated point carries valid power from the
// simulated amd-smi (the MI325X recipe), and `sweep result power` on its
// files patches a copy of its result with the very same fields; the
// telemetry faults give InferenceX's reason codes, failing the point only
// under REQUIRE_POWER.
func TestRunSimulatedPower(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	t.Setenv("ENABLE_AGENTX_POWER", "")
	t.Setenv("REQUIRE_POWER", "")
	powerKeys := []string{"power_metric_schema_version", "power_valid", "avg_power_w", "avg_total_gpu_power_w", "total_gpu_energy_j",
		"joules_per_successful_query", "joules_per_input_token", "joules_per_output_token", "joules_per_total_token"}

	t.Run("valid", func(t *testing.T) {
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, simRunArgs(out)...)
		require.Equal(t, 0, code, "stdout %s\nstderr %s", stdout, stderr)
		path, res := pointResult(t, out)
		assert.Equal(t, 1.0, res["power_valid"])
		assert.Greater(t, res["joules_per_output_token"], 0.0)
		side := readJSONMap(t, filepath.Join(out, power.ValidationFile))
		assert.Equal(t, true, side["power_valid"])
		assert.Equal(t, 8.0, side["observed_gpu_count"])
		acc := side["accumulator_check"].(map[string]any)
		assert.Equal(t, true, acc["within_tolerance"], "energy counters agree with the stream: %v", acc)
		assert.FileExists(t, filepath.Join(out, "gpu_metrics_energy_end.csv"))
		rec := readRunRecord(t, out)
		require.Contains(t, rec.Processes, "gpu-monitor")
		assertNoSurvivors(t, rec)

		// The adapter as a command, on the same files, patches the same fields.
		cp := filepath.Join(t.TempDir(), "agg.json")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(cp, data, 0o644))
		code, stdout, stderr = runCLI(t, "result", "power", "--result-dir", out, "--agg-result", cp, "--expected-num-gpus", "8")
		require.Equal(t, 0, code, "stdout %s\nstderr %s", stdout, stderr)
		again := readJSONMap(t, cp)
		for _, k := range powerKeys {
			assert.Equal(t, res[k], again[k], k)
		}
	})

	// On the compressed wall clock the simulated tools stamp wall-clock
	// seconds (stretched about the origin the runner gives them and the
	// client), so the point has a power lane as a virtual-clock one does.
	t.Run("wall clock", func(t *testing.T) {
		noSimulatedLoading(t)
		out := t.TempDir()
		started := time.Now().Unix()
		code, stdout, stderr := runCLI(t, simRunArgs(out, "--sim-clock", "wall")...)
		require.Equal(t, 0, code, "stdout %s\nstderr %s", stdout, stderr)
		_, res := pointResult(t, out)
		require.Equal(t, "wall", res["simulation"].(map[string]any)["clock"])
		side := readJSONMap(t, filepath.Join(out, power.ValidationFile))
		assert.Equal(t, 1.0, res["power_valid"], "%v", side["reasons"])
		assert.Greater(t, res["joules_per_output_token"], 0.0)
		// MI325X: 160 W idle, 1000 W at most.
		assert.Greater(t, res["avg_power_w"], 160.0)
		assert.Less(t, res["avg_power_w"], 1000.0)
		acc := side["accumulator_check"].(map[string]any)
		assert.Equal(t, true, acc["within_tolerance"], "energy counters agree with the stream: %v", acc)
		data, err := os.ReadFile(filepath.Join(out, power.TelemetryFile))
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		require.Greater(t, len(lines), 2)
		first, err := strconv.ParseInt(strings.Split(lines[1], ",")[0], 10, 64)
		require.NoError(t, err)
		assert.InDelta(t, started, first, 10, "the first sample is stamped about when the monitor started (%s)", lines[1])
	})

	t.Run("simulated nvidia-smi", func(t *testing.T) {
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, simRunArgs(out, "--sim-gpu", "h200")...)
		require.Equal(t, 0, code, "stdout %s\nstderr %s", stdout, stderr)
		_, res := pointResult(t, out)
		assert.Equal(t, 1.0, res["power_valid"])
		data, err := os.ReadFile(filepath.Join(out, power.TelemetryFile))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		assert.Equal(t, "timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]", lines[0])
		assert.Regexp(t, `^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, 7, \d+\.\d\d W, \d+, \d+ MHz, 3201 MHz, \d+ %, \d+ %$`, lines[len(lines)-1], "the final noheader sample, 8 GPUs")
		assert.NoFileExists(t, filepath.Join(out, "gpu_metrics_energy_start.csv"), "energy snapshots are AMD's")
	})

	t.Run("stalled monitor, REQUIRE_POWER", func(t *testing.T) {
		t.Setenv("SWEEP_SIM_SMI_FAULT", "stall=150:160")
		t.Setenv("REQUIRE_POWER", "1")
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, simRunArgs(out)...)
		assert.Equal(t, exitError, code, "stdout %s\nstderr %s", stdout, stderr)
		_, res := pointResult(t, out)
		assert.Equal(t, 0.0, res["power_valid"])
		assert.NotContains(t, res, "avg_power_w")
		assert.Equal(t, false, res["valid"])
		assert.Contains(t, res["invalid_reasons"], "power: sampling_gap_exceeded (REQUIRE_POWER)")
		side := readJSONMap(t, filepath.Join(out, power.ValidationFile))
		assert.Equal(t, []any{"sampling_gap_exceeded"}, side["reasons"])
		rec := readRunRecord(t, out)
		require.NotNil(t, rec.Failed())
		assert.Equal(t, "power", rec.Failed().Name)
	})

	t.Run("missing GPU, best effort", func(t *testing.T) {
		t.Setenv("SWEEP_SIM_SMI_FAULT", "missing-gpu=3")
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, simRunArgs(out)...)
		require.Equal(t, 0, code, "stdout %s\nstderr %s", stdout, stderr)
		_, res := pointResult(t, out)
		assert.Equal(t, 0.0, res["power_valid"])
		assert.Equal(t, true, res["valid"], "invalid telemetry does not fail the point without REQUIRE_POWER")
		side := readJSONMap(t, filepath.Join(out, power.ValidationFile))
		assert.Equal(t, []any{"expected_gpu_count_mismatch"}, side["reasons"])
		assert.Contains(t, stderr, "power telemetry invalid: expected_gpu_count_mismatch (expected 8 GPUs, observed 7: GPU 3 absent) (best effort; see power_validation.json)\n")
		assert.NotContains(t, stderr, "--power-gpus", "integrating the allocated GPUs gives no absent GPU back")
	})

	// The failure named only expected_gpu_count_mismatch: the counts and
	// the absent GPU were in power_validation.json alone.
	t.Run("missing GPU, REQUIRE_POWER", func(t *testing.T) {
		t.Setenv("SWEEP_SIM_SMI_FAULT", "missing-gpu=3")
		t.Setenv("REQUIRE_POWER", "1")
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, simRunArgs(out)...)
		assert.Equal(t, exitError, code, "stdout %s\nstderr %s", stdout, stderr)
		const want = "expected_gpu_count_mismatch (expected 8 GPUs, observed 7: GPU 3 absent)"
		assert.Contains(t, stdout, "FAILED at stage power: power telemetry invalid: "+want+" (REQUIRE_POWER) (")
		rec := readRunRecord(t, out)
		require.NotNil(t, rec.Failed())
		assert.Equal(t, "power", rec.Failed().Name)
		_, res := pointResult(t, out)
		assert.Contains(t, res["invalid_reasons"], "power: "+want+" (REQUIRE_POWER)")
		side := readJSONMap(t, filepath.Join(out, power.ValidationFile))
		assert.Equal(t, []any{"expected_gpu_count_mismatch"}, side["reasons"], "the sidecar keeps InferenceX's reasons")
	})

	// InferenceX expects TP*PP*PCP GPUs while the monitor records the whole
	// (simulated, 8-GPU) node: a TP4 point is never power-valid unless
	// --power-gpus allocated integrates only its GPUs, which the line
	// saying it is invalid names (it named no fix), as the failure under
	// REQUIRE_POWER does.
	const hint = "; --power-gpus allocated (sweep run, discover, official) or SWEEP_POWER_GPUS=allocated integrates only the point's 4 GPUs"
	const tp4Mismatch = "power telemetry invalid: expected_gpu_count_mismatch (expected 4 GPUs, observed 8: GPUs 4, 5, 6, 7 not expected)"
	for _, mode := range []string{"", "allocated"} {
		t.Run("tp4 on 8 GPUs "+mode, func(t *testing.T) {
			out := t.TempDir()
			args := simRunArgs(out, "--tp", "4", "--ep", "1")
			if mode != "" {
				args = append(args, "--power-gpus", mode)
			}
			code, stdout, stderr := runCLI(t, args...)
			require.Equal(t, 0, code, "stdout %s\nstderr %s", stdout, stderr)
			_, res := pointResult(t, out)
			side := readJSONMap(t, filepath.Join(out, power.ValidationFile))
			if mode == "" {
				assert.Equal(t, 0.0, res["power_valid"])
				assert.Equal(t, []any{"expected_gpu_count_mismatch"}, side["reasons"])
				assert.Equal(t, 8.0, side["observed_gpu_count"])
				assert.NotContains(t, side, "gpu_filter")
				assert.Contains(t, stderr, tp4Mismatch+" (best effort; see power_validation.json)"+hint+"\n")
			} else {
				assert.Equal(t, 1.0, res["power_valid"], "%v", side["reasons"])
				assert.Equal(t, []any{"0", "1", "2", "3"}, side["gpu_filter"])
				assert.NotContains(t, stderr, "--power-gpus allocated (")
			}
		})
	}
	t.Run("tp4 on 8 GPUs, REQUIRE_POWER", func(t *testing.T) {
		t.Setenv("REQUIRE_POWER", "1")
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, simRunArgs(out, "--tp", "4", "--ep", "1")...)
		assert.Equal(t, exitError, code, "stdout %s\nstderr %s", stdout, stderr)
		assert.Contains(t, stdout, "FAILED at stage power: "+tp4Mismatch+" (REQUIRE_POWER)"+hint+" (")
		assert.Contains(t, stderr, "sweep: stage power: "+tp4Mismatch+" (REQUIRE_POWER)"+hint+"\n")
		_, res := pointResult(t, out)
		assert.Contains(t, res["invalid_reasons"], "power: expected_gpu_count_mismatch (expected 4 GPUs, observed 8: GPUs 4, 5, 6, 7 not expected) (REQUIRE_POWER)",
			"the result file's reason stays InferenceX's, without sweep's flags")
	})

	t.Run("lane off", func(t *testing.T) {
		t.Setenv("ENABLE_AGENTX_POWER", "0")
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, simRunArgs(out)...)
		require.Equal(t, 0, code, "stdout %s\nstderr %s", stdout, stderr)
		_, res := pointResult(t, out)
		assert.NotContains(t, res, "power_valid")
		assert.NoFileExists(t, filepath.Join(out, power.TelemetryFile))
	})
}

// TestMonitorDiesWithKilledRunner: kill -9 of sweep run during the load
// leaves no GPU monitor (nor simulated tool) running: it is killed with
// its parent.
func TestMonitorDiesWithKilledRunner(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command(os.Args[0], simRunArgs(out, "--duration", "3600")...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	started := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "client: started pid") {
			started = true
			break
		}
	}
	require.True(t, started, "the client never started")
	rec := readRunRecord(t, out)
	mon := rec.Processes["gpu-monitor"]
	require.NotNil(t, mon, "run.json names the monitor before the load")
	require.NoError(t, cmd.Process.Kill())
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for running(mon.PID) {
		require.True(t, time.Now().Before(deadline), "the monitor (pid %d) outlived the killed runner", mon.PID)
		time.Sleep(20 * time.Millisecond)
	}
}

// running reports whether pid exists and is not a zombie (an orphan's
// zombie waits for a reaper that a container may not have).
func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestRunWallClockBehindSchedule: a simulated point on the wall clock
// whose engine falls behind its schedule (late-steps: every step's
// tokens go out 50 ms of wall time late, several simulated seconds at
// the time scale, as on a host too loaded for it) records the lag in
// its result's simulation, warns and is invalid; one on schedule is
// valid. Before, it was valid with no word. SWEEP_SIM_MAX_LAG 1 (these
// tests' own, TestMain) keeps such a point valid, still warning. An
// invalid one fails its validate stage naming the lag: exit 1, run.json
// not ok, and the same command runs it again. Before, it printed "ok",
// exited 0 and a rerun said "already completed".
func TestRunWallClockBehindSchedule(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	for _, tc := range []struct {
		maxLag string
		valid  bool
	}{{"0.1", false}, {"1", true}} {
		t.Run("SWEEP_SIM_MAX_LAG="+tc.maxLag, func(t *testing.T) {
			t.Setenv(simproto.EnvMaxLag, tc.maxLag)
			noSimulatedLoading(t)
			out := t.TempDir()
			code, stdout, stderr := runCLI(t, simRunArgs(out, "--sim-clock", "wall", "--sim-fault", "late-steps:50ms")...)
			_, res := pointResult(t, out)
			sim := res["simulation"].(map[string]any)
			lag, ok := sim["schedule_lag"].(map[string]any)
			require.True(t, ok, "simulation: %v\nstdout %s\nstderr %s (exit %d)", sim, stdout, stderr, code)
			assert.Equal(t, 1.0, lag["share"])
			assert.Equal(t, lag["steps"], lag["late_steps"])
			assert.Equal(t, tc.maxLag, fmt.Sprint(lag["invalid_share"]))
			assert.Equal(t, tc.valid, res["valid"])
			if !tc.valid {
				assert.Contains(t, fmt.Sprint(res["invalid_reasons"]), "the simulated engine fell 100 % behind its schedule")
				assert.Contains(t, fmt.Sprint(res["invalid_reasons"]), "rerun with a lower --time-scale or on an idle host")
			}
			rec := readRunRecord(t, out)
			assert.Contains(t, strings.Join(rec.Warnings, "\n"), "fell 100 % behind its schedule")
			assert.Equal(t, tc.valid, rec.OK, "run.json's ok")
			if tc.valid {
				assert.Equal(t, 0, code, stderr)
				assert.Contains(t, stdout, ": ok (")
			} else {
				assert.Equal(t, 1, code, "exit code of a point judged invalid\nstdout %s\nstderr %s", stdout, stderr)
				assert.Contains(t, stdout, "FAILED at stage validate: the simulated engine fell 100 % behind its schedule")
				f := rec.Failed()
				require.NotNil(t, f, "run.json's failed stage")
				assert.Equal(t, run.StageValidate, f.Name)
			}
			// Re-aggregated, the point is judged on its recorded lag as
			// run judged it: it was valid, the lag not stated.
			code, stdout, stderr = runCLI(t, "result", "aggregate", out)
			require.Equal(t, 0, code, stderr)
			agg := map[string]any{}
			require.NoError(t, json.Unmarshal([]byte(stdout), &agg))
			assert.Equal(t, res["simulation"], agg["simulation"], "sweep result aggregate's simulation, then sweep run's")
			assert.Equal(t, res["valid"], agg["valid"])
			assert.Equal(t, res["invalid_reasons"], agg["invalid_reasons"])
			// The same command again: a valid point is done, an invalid
			// one runs again.
			code, _, stderr = runCLI(t, simRunArgs(out, "--sim-clock", "wall", "--sim-fault", "late-steps:50ms")...)
			if tc.valid {
				assert.Equal(t, 0, code, stderr)
				assert.Contains(t, stderr, "already completed in "+out)
			} else {
				assert.Equal(t, 1, code, stderr)
				assert.NotContains(t, stderr, "already completed")
				assert.Contains(t, stderr, "its earlier run in "+out+" failed at stage validate; running it again")
			}
		})
	}
	t.Run("a bad SWEEP_SIM_MAX_LAG", func(t *testing.T) {
		t.Setenv(simproto.EnvMaxLag, "lots")
		code, _, stderr := runCLI(t, simRunArgs(t.TempDir(), "--sim-clock", "wall")...)
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, `$SWEEP_SIM_MAX_LAG="lots": want the share`)
	})
}
