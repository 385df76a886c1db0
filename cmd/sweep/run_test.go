package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/internal/cli"
	"sweep/internal/selfexe"
	"sweep/internal/simproto"
	"sweep/simengine"
	"sweep/sweep/point"
	"sweep/sweep/run"
)

// asCLIEnv makes the test binary act as the sweep command, so the point
// runner can start it as `sweep sim-engine` and `sweep loadgen`.
const asCLIEnv = "SWEEP_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if tool, ok := simulatedSMI(os.Args[0]); ok { // linked as a simulated GPU tool
		os.Exit(simengine.SMIMain(tool))
	}
	if code, ok := pendingSlurm(os.Args); ok { // linked as sbatch, scontrol or scancel
		os.Exit(code)
	}
	if os.Getenv(asCLIEnv) == "1" {
		os.Exit(Main())
	}
	// The simulated engines, load clients and Slurm arm programs the tests
	// start run from one build without the race detector: under -race they
	// were the larger part of this package's time. The race detector still
	// covers their packages' own tests and everything this process runs.
	if err := buildStaticSweep(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(selfexe.Env, staticSweep.path)
	// These tests run beside other packages' on two busy cores, where a
	// simulated engine on the wall clock falls behind its schedule: its
	// lag is still recorded and warned of, but does not make the point
	// invalid (TestRunWallClockBehindSchedule sets the limit it checks).
	if _, set := os.LookupEnv(simproto.EnvMaxLag); !set {
		os.Setenv(simproto.EnvMaxLag, "1")
	}
	code := m.Run()
	removeMeasuredKey()
	removeStaticSweep()
	os.Exit(code)
}

// simTestArgs are the settings of a short simulated point: a 300 s
// profile on a clock compressed 50x, 6 s of load. A stronger compression
// starves the simulator of CPU under the race detector on two busy cores:
// it falls behind its clock, requests stretch, and those still running at
// the end are cancelled and counted as failed, as aiperf counts them.
var simTestArgs = []string{"--simulate", "--duration", "300", "--time-scale", "50", "--stop-grace", "3s"}

// noSimulatedLoading starts the simulated engines of a test on the wall
// clock with their port open at once (SWEEP_SIM_LOAD_TIME=0; the warm-up
// before /health turns green stays): each start ran 90 simulated seconds
// of model loading, 1.8 s at the tests' time scale 50 and 4.5 s per
// worker of a disaggregated point at its 20, the prefill worker's and
// then the decode worker's. For tests that do not look at the loading;
// the points measure the same (the load time is no part of a sweep's
// identity either). The virtual clock spends no wall time loading.
func noSimulatedLoading(t *testing.T) {
	t.Helper()
	t.Setenv(simproto.EnvLoadTime, "0")
}

// simRunArgs runs a short simulated point of the MI325X Qwen3.5 recipe.
func simRunArgs(out string, extra ...string) []string {
	args := append([]string{"run", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc", "16", "--out", out}, simTestArgs...)
	return overrideFlags(args, extra...)
}

func readRunRecord(t *testing.T, dir string) *run.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, run.RecordFile))
	require.NoError(t, err)
	var rec run.Record
	require.NoError(t, json.Unmarshal(b, &rec))
	return &rec
}

// assertNoSurvivors checks every process the point started is gone,
// together with its process group.
func assertNoSurvivors(t *testing.T, rec *run.Record) {
	t.Helper()
	require.NotEmpty(t, rec.Processes)
	for name, p := range rec.Processes {
		assert.ErrorIs(t, syscall.Kill(-p.PID, 0), syscall.ESRCH, "process group of %s (pid %d) still exists", name, p.PID)
	}
}

func TestRunSimulatedPoint(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	tests := []struct {
		name      string
		args      func(out string) []string
		framework string
		tp, conc  int
		router    bool
	}{
		{name: "sglang TEP8", args: func(out string) []string { return simRunArgs(out) }, framework: "sglang", tp: 8, conc: 16},
		{name: "vllm DEP8 behind vllm-router", framework: "vllm", tp: 8, conc: 64, router: true, args: func(out string) []string {
			return append([]string{"run", "--config-key", "dsv4-fp4-mi355x-vllm-agentic-mtp", "--tp", "8", "--ep", "1", "--dp-attn",
				"--conc", "64", "--out", out}, simTestArgs...)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCLI(t, tc.args(out)...)
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "result:")
			assert.Contains(t, stdout, "accept len: measured")
			assert.Regexp(t, `engine: +simulated on [a-z0-9]+, (virtual clock|time scale [0-9.]+x), seed \d+: the simulated engine's numbers, not a measurement`, stdout)
			assert.Contains(t, stderr, "client: ok")
			rec := readRunRecord(t, out)
			assert.True(t, rec.OK)
			_, hasRouter := rec.Processes["router"]
			assert.Equal(t, tc.router, hasRouter)
			require.NotNil(t, rec.Acceptance)
			assert.Equal(t, "pass", rec.Acceptance.Verdict, "measured %v vs golden %v", rec.Acceptance.Measured, rec.Acceptance.Golden)
			b, err := os.ReadFile(rec.ResultFile)
			require.NoError(t, err)
			var res struct {
				Conc                  int    `json:"conc"`
				TP                    int    `json:"tp"`
				Framework             string `json:"framework"`
				NumRequestsSuccessful int    `json:"num_requests_successful"`
				RequestAccounting     struct {
					Total   int `json:"records_total"`
					Warmup  int `json:"records_warmup_dropped"`
					Errored int `json:"records_error_dropped"`
				} `json:"request_accounting"`
				RequestMetrics struct {
					Throughput struct {
						PerGPU struct {
							Total float64 `json:"total_tput_tps"`
						} `json:"per_gpu"`
					} `json:"throughput"`
				} `json:"request_metrics"`
			}
			require.NoError(t, json.Unmarshal(b, &res))
			assert.Equal(t, tc.conc, res.Conc)
			assert.Equal(t, tc.tp, res.TP)
			assert.Equal(t, tc.framework, res.Framework)
			assert.Positive(t, res.NumRequestsSuccessful, "numbers come from requests that ran")
			assert.Positive(t, res.RequestMetrics.Throughput.PerGPU.Total)
			// It read "N-1 ok of N recorded (warm-up included)", as if one failed.
			acct := res.RequestAccounting
			assert.Zero(t, acct.Errored)
			assert.Positive(t, acct.Warmup, "a warm-up request per lane")
			assert.Contains(t, stdout, fmt.Sprintf("\n  requests:   %d recorded: %d ok and measured, %d warm-up (not measured), 0 failed\n",
				acct.Total, res.NumRequestsSuccessful, acct.Warmup), "the failures counted, the warm-up named")
			assertNoSurvivors(t, rec)
		})
	}
}

// TestRunRefusesThePointAtAnotherLength: sweep run took a completed
// point of another duration (a 300 s point for the default 3600 s one)
// as "already completed; nothing to do", exit 0. It is refused naming
// the difference, the result kept; the same command again is the no-op.
func TestRunRefusesThePointAtAnotherLength(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, simRunArgs(out)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	result := readRunRecord(t, out).ResultFile
	before, err := os.ReadFile(result)
	require.NoError(t, err)

	code, _, stderr = runCLI(t, simRunArgs(out, "--duration", "900")...)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, ", completed, made otherwise than this run makes it (client flag --benchmark-duration: 300, now 900; client flag --unsafe-override: set, now absent); use --force to replace it, or a new directory")
	after, err := os.ReadFile(result)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the result is kept")

	code, _, stderr = runCLI(t, simRunArgs(out)...)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "already completed in "+out+"; nothing to do")
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing flags", []string{"run", "--simulate"}, "missing --config-key, --tp, --conc, --out"},
		{"unknown key", []string{"run", "--config-key", "nope", "--tp", "8", "--conc", "1", "--out", "x"}, `--config-key: config key "nope" not found in the master configs`},
		{"no such point", []string{"run", "--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc", "3", "--out", "x"}, "--tp 8 --ep 8 --conc 64"},
		{"sim flags need simulate", []string{"run", "--config-key", "k", "--tp", "8", "--conc", "1", "--out", "x", "--sim-fault", "hang:1"}, "need --simulate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestRunFaultsSimulated runs the real simulated engine with injected
// faults: each fails naming the stage, shows the log tail, keeps a run
// record and leaves no process behind. A hung engine does not hang the
// GPU tools: the monitor's closing energy snapshot is written (the
// simulated amd-smi's telemetry hung with the engine, so the snapshot
// waited out its 10 s timeout and was lost).
func TestRunFaultsSimulated(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	// A failing real client needs the uncompressed wall clock (100 s of
	// engine start at --time-scale 1): sweep/run's TestRunFaults covers it.
	tests := []struct {
		name   string
		extra  []string
		stage  string
		stderr string
		files  []string // written beside the run record
		// failure is in the failed stage's error and clientLog in
		// benchmark.log, when set.
		failure, clientLog string
	}{
		{"engine never ready", []string{"--sim-fault", "never-ready", "--ready-timeout", "2s"}, run.StageEngine, "not ready", nil, "", ""},
		{"engine dies mid-load", []string{"--sim-fault", "crash:20"}, run.StageClient, "engine exited during the load", nil, "", ""},
		// A hang is declared after 10 simulated minutes, 5 s of wall time
		// at --time-scale 120 (12 s at the tests' 50; the virtual clock
		// runs the point itself the same at either).
		{"engine hangs", []string{"--sim-fault", "hang:20", "--time-scale", "120"}, run.StageClient, "engine stopped answering", []string{"gpu_metrics_energy_end.csv"}, "", ""},
		// The failure said "no two good scrapes of the engine" and the
		// client's log "no server metrics endpoint answered": the parse
		// error was in the result's scrape_health alone.
		{"metrics unreadable while a prefix is required", []string{"--sim-fault", "malformed-metrics"}, run.StageAcceptance, `server metrics artifacts are missing or empty in`, nil,
			"/metrics: text format parsing error in line 2: ", "/metrics answered, but with metrics that do not parse as Prometheus text (virtual clock /sim/log schema: text format parsing error in line 2: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := runCLI(t, simRunArgs(out, tc.extra...)...)
			assert.Equal(t, exitError, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "FAILED at stage "+tc.stage)
			assert.Contains(t, stdout+stderr, tc.stderr)
			// The engine's log tail is shown once (it was printed three
			// times: progress, the FAILED line and the final error).
			assert.LessOrEqual(t, strings.Count(stdout+stderr, "last lines of"), 1, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			rec := readRunRecord(t, out)
			assert.False(t, rec.OK)
			require.NotNil(t, rec.Failed())
			assert.Equal(t, tc.stage, rec.Failed().Name)
			assertNoSurvivors(t, rec)
			for _, f := range tc.files {
				assert.FileExists(t, filepath.Join(out, f))
			}
			assert.Contains(t, rec.Failed().Error, tc.failure)
			if tc.clientLog != "" {
				log, err := os.ReadFile(filepath.Join(out, "benchmark.log"))
				require.NoError(t, err)
				assert.Contains(t, string(log), tc.clientLog)
			}
		})
	}
}

// TestRunWarnsOfSlowMetrics: with /metrics slower than a scrape's
// timeout the point was ok and valid while sweep's scraper had none of
// its scrapes; only the result's scrape_health recorded it. The warning
// is in run.json too now, and the point's summary prints it from there.
func TestRunWarnsOfSlowMetrics(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, simRunArgs(out, "--sim-fault", "slow-metrics:10s")...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	const warning = `warning: poor metrics scraping: 0 of `
	assert.Regexp(t, `\n  warning:    poor metrics scraping: 0 of \d+ scrapes of http://localhost:\d+/metrics succeeded \(last error: scrape [^\n]*context deadline exceeded\): `, stdout, "in the point's summary")
	assert.Contains(t, stderr, "] "+warning, "on the progress lines")
	assert.Contains(t, stdout, "  validation: valid\n", "a warning, not a failure")
	rec := readRunRecord(t, out)
	require.Len(t, rec.Warnings, 1, "run.json records the warning")
	assert.True(t, strings.HasPrefix(rec.Warnings[0], "poor metrics scraping: 0 of "), "run.json's warning: %q", rec.Warnings[0])
	assert.Contains(t, stdout, "\n  warning:    "+rec.Warnings[0]+"\n", "the point's summary prints what run.json records")
}

// TestRunInterruptedBySIGINT runs sweep as its own process and presses
// Ctrl-C during the load.
func TestRunInterruptedBySIGINT(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command(os.Args[0], simRunArgs(out, "--duration", "3600")...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Start())
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	interrupted := false
	for sc.Scan() {
		fmt.Fprintln(&log, sc.Text())
		if !interrupted && strings.Contains(sc.Text(), "client: started pid") {
			time.Sleep(300 * time.Millisecond) // let the load begin
			require.NoError(t, cmd.Process.Signal(os.Interrupt))
			interrupted = true
		}
	}
	err = cmd.Wait()
	require.True(t, interrupted, "client never started:\n%s", log.String())
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr:\n%s", log.String())
	assert.Equal(t, exitCancelled, ee.ExitCode(), "stderr:\n%s", log.String())
	assert.Contains(t, log.String(), "sweep: cancelled")
	rec := readRunRecord(t, out)
	assert.False(t, rec.OK)
	assert.Equal(t, "cancelled", rec.Failed().Outcome)
	assertNoSurvivors(t, rec)
}

// TestRunFlagEdges: --stop-grace 0s used to become 60 s (zero meant the
// default) and --time-scale NaN passed the "<= 0" check.
func TestRunFlagEdges(t *testing.T) {
	base := []string{"--config-key", "k", "--tp", "8", "--conc", "4", "--out", t.TempDir()}
	o, err := parseOptions(t, newRunCmd, append(base, "--stop-grace", "0s")...)
	require.NoError(t, err)
	assert.Equal(t, run.NoGrace, o.Point.StopGrace, "0s is no grace")
	o, err = parseOptions(t, newRunCmd, base...)
	require.NoError(t, err)
	assert.Equal(t, 60*time.Second, o.Point.StopGrace)
	for _, bad := range [][]string{
		{"--stop-grace", "-1s"},
		{"--simulate", "--time-scale", "NaN"},
		{"--simulate", "--time-scale", "+Inf"},
		{"--simulate", "--time-scale", "0"},
		{"--simulate", "--sim-clock", "fast"},
		{"--sim-clock", "wall"},
	} {
		_, err := parseOptions(t, newRunCmd, append(base, bad...)...)
		assert.True(t, cli.IsUsage(err), "%v: %v", bad, err)
	}
}

func TestRunRefusesATopologyThatDoesNotFit(t *testing.T) {
	o := &runOptions{Request: point.Request{Key: point.Key{ConfigKey: "k", TP: 16, EP: 1, Conc: 1}, Mode: run.Mode{Simulate: true}},
		Inputs: matrixInputs{Load: loadPlanted(t, "{tp: 16, ep: 1, kv-offloading: none, conc-list: [1]}")}}
	g, err := o.Inputs.generator()
	require.NoError(t, err)
	_, err = o.PlanRow(g, t.TempDir())
	require.ErrorContains(t, err, "k cannot run on its runner:\nm.yaml:13:13: k.scenarios.agentic-coding[0].search-space[0].tp: tp*pp*pcp-size = 16*1*1 = 16 GPUs does not fit one node")
}

// TestRunAndPlanResolveKeysAlike: sweep run --config-key and sweep plan
// --config-keys resolve a key through the one resolver (matrix.ResolveKeys),
// so they accept and reject the same patterns with the same messages; run
// alone also refuses a pattern naming several keys (a run is one point).
func TestRunAndPlanResolveKeysAlike(t *testing.T) {
	g, err := (&matrixInputs{}).generator()
	require.NoError(t, err)
	for _, tc := range []struct {
		name, key string
		want      string // the one key both resolve to; "" when plan resolves several
		keyErr    string // both fail with this shared KeyError text
		runErr    string // run alone fails: several keys
	}{
		{name: "plain key", key: "qwen3.5-fp8-mi325x-sglang-agentic-mtp", want: "qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
		{name: "fnmatch ?", key: "qwen3.5-fp8-mi32?x-sglang-agentic-mtp", want: "qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
		{name: "fnmatch set", key: "qwen3.5-fp8-mi3[2]5x-sglang-agentic-mt*", want: "qwen3.5-fp8-mi325x-sglang-agentic-mtp"},
		{name: "misspelt key", key: "qwen3.5-fp8-mi325x-sglang-agentic-mpt",
			keyErr: `config key "qwen3.5-fp8-mi325x-sglang-agentic-mpt" not found in the master configs (`},
		{name: "pattern matching nothing", key: "qwen3.5-fp8-mi32?x-sglang-agentic-mpt",
			keyErr: `config key pattern "qwen3.5-fp8-mi32?x-sglang-agentic-mpt" matched no config keys (`},
		{name: "pattern naming two keys", key: "qwen3.5-fp8-h200-sglang-agentic-*", runErr: `--config-key "qwen3.5-fp8-h200-sglang-agentic-*" matches 2 config keys`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, planKeys, planErr := agenticRows(g, []string{tc.key}, nil, matrix.EvalOptions{NoEvals: true})
			runKey, runErr := point.ResolveKey(g.Masters, tc.key)
			switch {
			case tc.keyErr != "":
				for _, err := range []error{planErr, runErr} {
					assert.True(t, cli.IsUsage(err), "%v", err)
					assert.ErrorContains(t, err, tc.keyErr)
				}
				ke, ok := errors.AsType[*matrix.KeyError](runErr)
				require.True(t, ok, "run wraps the shared *matrix.KeyError: %v", runErr)
				if !ke.Pattern {
					assert.Contains(t, ke.Closest, "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "did-you-mean")
				}
				assert.Equal(t, "--config-key: "+planErr.Error(), runErr.Error(), "one message for both commands")
			case tc.runErr != "":
				require.NoError(t, planErr)
				assert.Len(t, planKeys, 2)
				assert.ErrorContains(t, runErr, tc.runErr)
				for _, k := range planKeys {
					assert.ErrorContains(t, runErr, k, "run lists the keys plan resolved")
				}
			default:
				require.NoError(t, planErr)
				require.NoError(t, runErr)
				assert.Equal(t, []string{tc.want}, planKeys)
				assert.Equal(t, tc.want, runKey)
			}
		})
	}
}

// TestRunPlanFixesThePoint: the point's own flags are refused beside --plan.
func TestRunPlanFixesThePoint(t *testing.T) {
	_, err := parseOptions(t, newRunCmd, "--plan", filepath.Join(t.TempDir(), "point.json"), "--out", t.TempDir(), "--tp", "8")
	assert.ErrorContains(t, err, "--tp cannot be combined with --plan")
	_, err = parseOptions(t, newRunCmd, "--plan", filepath.Join(t.TempDir(), "point.json"), "--out", t.TempDir(), "--kv-offloading", "dram")
	assert.ErrorContains(t, err, "--kv-offloading cannot be combined with --plan")
}

// TestRunKVOffloading: a key with a kv:none and a kv:dram point at one
// layout and concurrency (FP4 MI355X tp4 conc32) ran the kv:none one with
// no word said, and nothing ran the other. Without --kv-offloading the
// choice is refused (exit 2) naming the flag; with it the point runs.
// A point of one row (conc40, kv:dram only) still runs without it.
func TestRunKVOffloading(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	const key = "minimaxm3-fp4-mi355x-vllm-agentic-mtp"
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--simulate", "--builtin-client", "--config-key", key, "--tp", "4", "--conc", "32", "--duration", "60", "--out", filepath.Join(dir, "none"))
	require.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, key+" has 2 points tp4 ep1 dp-attn=false conc32 that differ in KV offloading: add the --kv-offloading that picks one of them:\n  --kv-offloading none  (minimaxm3_tp4_conc32_kvnone_spec-mtp)\n  --kv-offloading dram  (minimaxm3_tp4_conc32_kvdram-lmcache_spec-mtp)\n")
	assert.NoDirExists(t, filepath.Join(dir, "none"), "nothing is run")
	for _, tc := range []struct{ conc, kv, want string }{
		{"32", "dram", "point " + key + " tp4 kv:dram c32 "},
		{"32", "none", "point " + key + " tp4 c32 "},
		{"40", "", "point " + key + " tp4 kv:dram c40 "},
	} {
		args := []string{"run", "--simulate", "--builtin-client", "--config-key", key, "--tp", "4", "--conc", tc.conc, "--duration", "60", "--out", filepath.Join(dir, tc.conc+tc.kv)}
		if tc.kv != "" {
			args = append(args, "--kv-offloading", tc.kv)
		}
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, exitOK, code, "%v\nstdout:\n%s\nstderr:\n%s", args, stdout, stderr)
		assert.Contains(t, stdout+stderr, tc.want, "%v", args)
	}
}

// TestRunOtherKVRowIntoOut: sweep run of a key's kv:none row into the
// --out of its completed kv:dram row said only "not empty (...); use
// --force", and --force then deleted the kv:dram result with no word.
// The refusal names the point there, its KV offloading and its result;
// --force says what it deleted.
func TestRunOtherKVRowIntoOut(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	const key = "minimaxm3-fp4-mi355x-vllm-agentic-mtp"
	out := t.TempDir()
	args := func(kv string, extra ...string) []string {
		return append([]string{"run", "--simulate", "--builtin-client", "--config-key", key, "--tp", "4", "--conc", "32", "--duration", "60", "--out", out, "--kv-offloading", kv}, extra...)
	}
	code, stdout, stderr := runCLI(t, args("dram")...)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	dram := readRunRecord(t, out)

	code, _, stderr = runCLI(t, args("none")...)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "--out "+out+": holds point "+dram.Name+" (tp4 ep1 conc32 kv-offloading dram; completed, with its result file), not point minimaxm3_tp4_conc32_kvnone_")
	assert.Contains(t, stderr, "give this run another --out, or --force to delete that run and its result")
	assert.FileExists(t, dram.ResultFile, "a refusal keeps the result")

	code, stdout, stderr = runCLI(t, args("none", "--force")...)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "--force: deleted point "+dram.Name+" (tp4 ep1 conc32 kv-offloading dram; completed, with its result file) from "+out+" to run point minimaxm3_tp4_conc32_kvnone_")
	assert.NoFileExists(t, dram.ResultFile)
}

// TestRunRecordsSimFaults: a simulated point's result records the faults
// its engine ran with, from --sim-fault or SWEEP_SIM_FAULT. It recorded
// neither, so a comparison read a slowed engine's numbers as a change.
func TestRunRecordsSimFaults(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	for _, tc := range []struct {
		name string
		env  string
		args []string
	}{
		{"flag", "", []string{"--sim-fault", "slow-steps:5"}},
		{"environment", "slow-steps:5", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SWEEP_SIM_FAULT", tc.env)
			out := t.TempDir()
			code, stdout, stderr := runCLI(t, simRunArgs(out, tc.args...)...)
			require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			r := readResult(t, out)
			require.NotNil(t, r.Simulation)
			assert.Equal(t, "slow-steps:5", r.Simulation.Faults)
		})
	}
}

// signalAtLine runs sweep with args as its own process (the CLI, its
// stdout into stdout when not nil), sends it sig once a line of its
// stderr contains at, and returns its stderr, whether sig was sent, and
// the process's end (cmd.Wait).
func signalAtLine(t *testing.T, args []string, stdout io.Writer, at string, sig os.Signal) (log string, sent bool, err error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	if stdout != nil {
		cmd.Stdout = stdout
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var b strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if !sent && strings.Contains(sc.Text(), at) {
			require.NoError(t, cmd.Process.Signal(sig))
			sent = true
		}
	}
	return b.String(), sent, cmd.Wait()
}
