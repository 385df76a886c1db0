package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/power"
)

// amdDisaggKey is InferenceX's one AMD multi-node agentic key: one
// prefill and one decode worker of 8 MI355X GPUs each, sglang_router's PD
// mode in front.
const amdDisaggKey = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"

// disaggRunArgs is a short simulated point of the AMD disaggregated key:
// 120 s of profile on the wall clock compressed 20x (the workers are
// separate processes, so the virtual clock cannot run them).
func disaggRunArgs(out string, extra ...string) []string {
	args := []string{"run", "--config-key", amdDisaggKey, "--tp", "8", "--ep", "1", "--conc", "4", "--out", out,
		"--simulate", "--duration", "120", "--time-scale", "20", "--stop-grace", "3s"}
	return overrideFlags(args, extra...)
}

// TestRunSimulatedDisaggregatedPoint runs a multi-node disaggregated point
// end to end on this host: the job's prefill and decode workers as
// simulated engines, the PD router in front, the built-in client against
// the router, and the result with InferenceX's multi-node fields.
func TestRunSimulatedDisaggregatedPoint(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	noSimulatedLoading(t)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, disaggRunArgs(out)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "prefill0, decode0 behind the PD router")
	assert.Contains(t, stdout, "layout:     prefill 1 x tp8 ep1, decode 1 x tp8 ep1, 16 GPUs")
	rec := readRunRecord(t, out)
	require.True(t, rec.OK)
	for _, p := range []string{"prefill0", "decode0", "router", "client"} {
		assert.Contains(t, rec.Processes, p)
	}
	assertNoSurvivors(t, rec)

	// The workers run the plan's commands on loopback ports, the router
	// fronts them in PD mode.
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		return string(b)
	}
	pre, dec, router := read("prefill0_command.txt"), read("decode0_command.txt"), read("router_command.txt")
	assert.Contains(t, pre, "--disaggregation-mode prefill")
	assert.Contains(t, dec, "--disaggregation-mode decode")
	assert.Contains(t, dec, "--disaggregation-transfer-backend mori")
	assert.Contains(t, router, "--pd-disaggregation")
	port := func(cmd string) string {
		f := strings.Fields(cmd)
		for i, a := range f {
			if a == "--port" && i+1 < len(f) {
				return f[i+1]
			}
		}
		return ""
	}
	assert.Contains(t, router, "--prefill http://127.0.0.1:"+port(pre))
	assert.Contains(t, router, "--decode http://127.0.0.1:"+port(dec))

	b, err := os.ReadFile(rec.ResultFile)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(rec.ResultFile, "_conc4.json"), "InferenceX's <RESULT_FILENAME>_conc<N>.json: %s", rec.ResultFile)
	var res map[string]any
	require.NoError(t, json.Unmarshal(b, &res))
	want := map[string]any{
		"conc": 4.0, "is_multinode": true, "disagg": true, "framework": "sglang-disagg", "kv_p2p_transfer": "mori",
		"tp": 16.0, "prefill_tp": 8.0, "decode_tp": 8.0, "prefill_num_workers": 1.0, "decode_num_workers": 1.0,
		"prefill_ep": 1.0, "decode_ep": 1.0, "num_prefill_gpu": 8.0, "num_decode_gpu": 8.0,
		"prefill_dp_attention": "false", "decode_dp_attention": "false", "simulated": true, "valid": true,
	}
	for k, v := range want {
		assert.Equal(t, v, res[k], "%s", k)
	}
	assert.Positive(t, res["num_requests_successful"], "numbers come from requests that ran")

	// The client recorded both workers' metrics (and the router's).
	assertMetricsRecorded(t, filepath.Join(out, "aiperf_artifacts", "server_metrics_export.json"),
		"http://127.0.0.1:"+port(pre)+"/metrics", "http://127.0.0.1:"+port(dec)+"/metrics")

	// Power: a monitor per node (its worker's simulated amd-smi), summed
	// as InferenceX's multi-node power path sums them, with the per-role
	// keys. MI355X GPUs draw 220 W idle, 1400 W at most.
	for _, w := range []string{"prefill0", "decode0"} {
		assert.Contains(t, rec.Processes, "gpu-monitor-"+w)
		assert.FileExists(t, filepath.Join(out, "power", w, power.TelemetryFile))
	}
	side := readJSONMap(t, filepath.Join(out, power.ValidationFile))
	require.Equal(t, 1.0, res["power_valid"], "%v", side["reasons"])
	assert.Equal(t, 16.0, side["expected_gpu_count"])
	assert.Len(t, side["per_gpu_role"], 16)
	num := func(k string) float64 {
		v, ok := res[k].(float64)
		require.True(t, ok, "%s: %v", k, res[k])
		return v
	}
	for _, k := range []string{"avg_power_w", "prefill_avg_power_w", "decode_avg_power_w"} {
		assert.Greater(t, num(k), 220.0, k)
		assert.Less(t, num(k), 1400.0, k)
	}
	total := num("total_gpu_energy_j")
	assert.InDelta(t, total, num("prefill_gpu_energy_j")+num("decode_gpu_energy_j"), 0.002, "the roles sum to the deployment")
	assert.InDelta(t, num("avg_power_w")*16, num("avg_total_gpu_power_w"), 0.02)
	assert.InDelta(t, (num("prefill_avg_power_w")+num("decode_avg_power_w"))/2, num("avg_power_w"), 0.002)
	assert.InDelta(t, total/num("num_requests_successful"), num("joules_per_successful_query"), 1e-3*num("joules_per_successful_query"))
	assert.Greater(t, num("decode_joules_per_output_token"), 0.0)
	assert.Less(t, num("decode_joules_per_output_token"), num("joules_per_output_token"))
	assert.Greater(t, num("prefill_joules_per_input_token"), 0.0)

	// sweep result aggregate on the point's directory sums the same.
	again := filepath.Join(t.TempDir(), "again.json")
	code, _, stderr = runCLI(t, "result", "aggregate", out, "--out", again)
	require.Equal(t, 0, code, stderr)
	agg := readJSONMap(t, again)
	for _, k := range []string{"power_valid", "total_gpu_energy_j", "joules_per_output_token", "prefill_gpu_energy_j", "decode_avg_power_w", "decode_joules_per_output_token"} {
		assert.Equal(t, res[k], agg[k], k)
	}
}

func TestRunMultiNodeUsageErrors(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"virtual clock", disaggRunArgs(t.TempDir(), "--sim-clock", "virtual"), "the virtual clock is kept by one engine"},
		{"no such point", disaggRunArgs(t.TempDir(), "--conc", "5"), "--tp 8 --ep 8 --dp-attn --conc 192"},
		{"not simulated", []string{"run", "--config-key", amdDisaggKey, "--tp", "8", "--conc", "4", "--out", t.TempDir()}, "on this host they run only with --simulate"},
		{"slurm not simulated", []string{"run", "--slurm", "--config-key", amdDisaggKey, "--tp", "8", "--conc", "4", "--out", t.TempDir()}, "--slurm runs a simulated multi-node point"},
		{"slurm single-node key", []string{"run", "--slurm", "--simulate", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc", "4", "--out", t.TempDir()}, "--slurm runs multi-node keys only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestRunLaunchSubmitsMultiNodeJob: `sweep run --launch` on a multi-node
// key submits the row's job as launch_mi355x-amds.sh does (sbatch of
// job.slurm from --submit-dir, the launcher's variables exported) and
// waits until squeue no longer lists it. sbatch and squeue are stand-ins
// on PATH that record what they were given.
func TestRunLaunchSubmitsMultiNodeJob(t *testing.T) {
	bin, rec := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"sbatch": `echo "$@" > ` + rec + `/argv; echo "$IS_MULTINODE $xP $yD" > ` + rec + `/env; echo '{}' > "${RESULT_FILENAME}_conc4.json"; echo 5150` + "\n",
		"squeue": `n=$(cat ` + rec + `/polls 2>/dev/null || echo 0); echo $((n+1)) > ` + rec + `/polls; [ $n -lt 1 ] && echo RUNNING; exit 0` + "\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755))
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	newCheckout := func() string {
		dir := t.TempDir()
		script := filepath.Join(dir, "benchmarks/multi_node/amd_utils/job.slurm")
		require.NoError(t, os.MkdirAll(filepath.Dir(script), 0o755))
		require.NoError(t, os.WriteFile(script, []byte("#!/bin/bash\n"), 0o644))
		return dir
	}
	out, checkout := t.TempDir(), newCheckout()
	code, stdout, stderr := runCLI(t, "run", "--launch", "--config-key", amdDisaggKey, "--tp", "8", "--ep", "1", "--conc", "4",
		"--out", out, "--submit-dir", checkout)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "launch_mi355x-amds.sh submits with sbatch")
	assert.Contains(t, stdout, "job 5150 finished")
	// The job's result, written in the checkout it was submitted from.
	assert.Regexp(t, `result: `+regexp.QuoteMeta(checkout)+`/dsv4_p1x8_d1x8_conc4_\S+_conc4\.json`, stdout)
	b, err := os.ReadFile(filepath.Join(rec, "argv"))
	require.NoError(t, err)
	argv := strings.TrimSpace(string(b))
	assert.True(t, strings.HasPrefix(argv, "--parsable --exclusive -N 2 -n 2 "), argv)
	assert.Contains(t, argv, "--output "+filepath.Join(out, "logs")+"/slurm_job-%j.out")
	assert.True(t, strings.HasSuffix(argv, " benchmarks/multi_node/amd_utils/job.slurm"), argv)
	b, err = os.ReadFile(filepath.Join(rec, "env"))
	require.NoError(t, err)
	assert.Equal(t, "true 1 1", strings.TrimSpace(string(b)))
	b, err = os.ReadFile(filepath.Join(rec, "polls"))
	require.NoError(t, err)
	assert.Equal(t, "2", strings.TrimSpace(string(b)))

	// A job that wrote no result fails the run, as InferenceX's workflow
	// fails ("No benchmark result files found").
	require.NoError(t, os.WriteFile(filepath.Join(bin, "sbatch"), []byte("#!/bin/sh\necho 5151\n"), 0o755))
	require.NoError(t, os.Remove(filepath.Join(rec, "polls")))
	code, _, stderr = runCLI(t, "run", "--launch", "--config-key", amdDisaggKey, "--tp", "8", "--ep", "1", "--conc", "4",
		"--out", t.TempDir(), "--submit-dir", newCheckout())
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "job 5151 wrote no dsv4_p1x8_d1x8_conc4_")

	// A --submit-dir that is missing, or holds no job.slurm, is a usage
	// error naming it, and nothing is submitted.
	require.NoError(t, os.WriteFile(filepath.Join(bin, "sbatch"), []byte("#!/bin/sh\necho \"$@\" > "+rec+"/argv; echo 5152\n"), 0o755))
	for _, dir := range []string{filepath.Join(t.TempDir(), "nonexist"), t.TempDir()} {
		require.NoError(t, os.RemoveAll(filepath.Join(rec, "argv")))
		code, _, stderr = runCLI(t, "run", "--launch", "--config-key", amdDisaggKey, "--tp", "8", "--ep", "1", "--conc", "4",
			"--out", t.TempDir(), "--submit-dir", dir)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "--submit-dir "+dir)
		assert.NotContains(t, stderr, "fork/exec")
		assert.NoFileExists(t, filepath.Join(rec, "argv"), "nothing submitted")
	}
}
