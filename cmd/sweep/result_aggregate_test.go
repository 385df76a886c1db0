package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics"
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

	emptyArtifacts := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(emptyArtifacts, "aiperf_artifacts"), 0o755))
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no records", []string{emptyArtifacts, "--env-file", filepath.Join(dir, "env.json")}, exitError, "nothing to aggregate"},
		{"no such dir", []string{filepath.Join(t.TempDir(), "nothere")}, exitUsage, "nothere does not exist"},
		{"a file", []string{filepath.Join(dir, "env.json")}, exitUsage, "env.json is a file, not a directory"},
		{"no point", []string{t.TempDir()}, exitUsage, "holds no point: it has neither run.json nor aiperf_artifacts/"},
		{"NaN golden", []string{dir, "--golden-al", "NaN"}, exitUsage, "--golden-al NaN: want an acceptance length in (0, +Inf), e.g. 3.39"},
		{"Inf golden", []string{dir, "--golden-al", "+Inf"}, exitUsage, "--golden-al +Inf: want an acceptance length in (0, +Inf), e.g. 3.39"},
		{"NaN tolerance", []string{dir, "--al-tolerance", "NaN"}, exitUsage, "--al-tolerance NaN: want an absolute tolerance in (0, +Inf), e.g. 0.05"},
		{"Inf tolerance", []string{dir, "--al-tolerance", "Inf"}, exitUsage, "--al-tolerance Inf: want an absolute tolerance in (0, +Inf), e.g. 0.05"},
		{"missing env file", []string{dir, "--env-file", filepath.Join(t.TempDir(), "none.json")}, exitUsage, "none.json: no such file"},
		{"truncated env file", []string{dir, "--env-file", writeEnv(t, `{"TP": "8", `)}, exitUsage, "env.json:1:13: the JSON ends early"},
		{"env file not an object", []string{dir, "--env-file", writeEnv(t, `["TP"]`)}, exitUsage, "env.json:1:1: a JSON array where an object belongs"},
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
	assert.Equal(t, true, want["simulated"], "with --env-file too: it replaces the facts only")
	assert.Equal(t, want, got, "run.json's facts give the numbers the env file gives")
}

// pointDirWithRecord is a point directory of sweep run: the conformance
// case's artifacts and a run.json recording the facts its env file gives,
// rec's simulation, client and scrape health, and rec's result file.
func pointDirWithRecord(t *testing.T, rec run.Record) (dir, envFile string) {
	t.Helper()
	src := filepath.Join(aggCases, "sglang-mtp-tp8-dpattn-hicache")
	dir = t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "aiperf_artifacts"), os.DirFS(filepath.Join(src, "aiperf_artifacts"))))
	envFile = filepath.Join(src, "env.json")
	env, err := result.EnvFromFile(envFile, map[string]string{"RESULT_DIR": dir, "AGENTIC_OUTPUT_DIR": dir})
	require.NoError(t, err)
	facts, err := result.FromEnv(env)
	require.NoError(t, err)
	rec.Name, rec.Facts = facts.ResultFilename, &facts
	data, err := json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, run.RecordFile), data, 0o644))
	return dir, envFile
}

// TestResultAggregateKeepsWhatTheDirectoryRecords: --env-file replaces
// the run facts only. Before, a simulated point aggregated with
// --env-file read as a real run (simulated false, no client), and no
// re-aggregation stated the scrape_health the point's result had.
func TestResultAggregateKeepsWhatTheDirectoryRecords(t *testing.T) {
	sim := &result.Simulation{TimeScale: 150, Seed: 7, GPU: "b200"}
	// The case's artifacts are aiperf's (run_info.cli_command "aiperf
	// profile ..."), so the client recorded is aiperf.
	client := &result.Client{Name: "aiperf 0.12.0", Program: "/usr/bin/aiperf", Schema: "aiperf@0.12.0", Why: "aiperf on PATH"}
	health := &metrics.ScrapeHealth{IntervalSeconds: 1, Endpoints: []metrics.EndpointHealth{{URL: "http://localhost:1/metrics", Engine: "sglang", Attempts: 9, Successes: 9}}}
	wantHealth := map[string]any{"interval_seconds": 1.0, "endpoints": []any{map[string]any{"url": "http://localhost:1/metrics", "engine": "sglang", "attempts": 9.0, "successes": 9.0, "failures": 0.0, "points": 0.0}}}
	tests := []struct {
		name string
		rec  run.Record
		// resultHealth, when set, is written as the point's own result
		// file, which run.json names.
		resultHealth *metrics.ScrapeHealth
	}{
		{"scrape health in run.json", run.Record{Simulation: sim, Client: client, ScrapeHealth: health}, nil},
		{"scrape health in the point's result (older run.json)", run.Record{Simulation: sim, Client: client}, health},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, envFile := pointDirWithRecord(t, tc.rec)
			if tc.resultHealth != nil {
				res := map[string]any{"conc": 48, "request_metrics": map[string]any{}, "scrape_health": tc.resultHealth}
				data, err := json.Marshal(res)
				require.NoError(t, err)
				path := filepath.Join(dir, "point.json")
				require.NoError(t, os.WriteFile(path, data, 0o644))
				rec, err := run.ReadRecordFile(dir)
				require.NoError(t, err)
				require.NotNil(t, rec)
				rec.ResultFile = path
				data, err = json.Marshal(rec)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, run.RecordFile), data, 0o644))
			}
			for _, args := range [][]string{{dir}, {dir, "--env-file", envFile}} {
				code, stdout, stderr := runCLI(t, append([]string{"result", "aggregate"}, args...)...)
				require.Equal(t, 0, code, stderr)
				var got map[string]any
				require.NoError(t, json.Unmarshal([]byte(stdout), &got))
				assert.Equal(t, true, got["simulated"], "%v", args)
				assert.Equal(t, map[string]any{"time_scale": 150.0, "seed": 7.0, "gpu": "b200"}, got["simulation"], "%v", args)
				require.IsType(t, map[string]any{}, got["client"], "%v", args)
				assert.Equal(t, client.Name, got["client"].(map[string]any)["name"], "%v", args)
				sh, _ := json.Marshal(got["scrape_health"])
				want, _ := json.Marshal(wantHealth)
				assert.JSONEq(t, string(want), string(sh), "%v", args)
			}
		})
	}
}

// TestResultAggregateRefusesUnreadableRecord: a run.json that does not
// parse is a usage error at its line and column with the fix, with or
// without --env-file, and nothing is written. Before, it was passed over
// silently: the result lost that the point was simulated and which
// client made it (and without --env-file the facts were read from the
// process environment, "no run.json").
func TestResultAggregateRefusesUnreadableRecord(t *testing.T) {
	tests := []struct {
		name, data, at string
	}{
		{"truncated", "{\n  \"name\": \"p\",\n  \"ok\": tr", "run.json:3:11: the JSON ends early"},
		{"garbage", "\n\x00garbage", "run.json:2:1: invalid character"},
		{"empty", "", "run.json: empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, envFile := pointDirWithRecord(t, run.Record{Simulation: &result.Simulation{TimeScale: 150}})
			require.NoError(t, os.WriteFile(filepath.Join(dir, run.RecordFile), []byte(tc.data), 0o644))
			out := filepath.Join(t.TempDir(), "r.json")
			for _, args := range [][]string{{dir}, {dir, "--env-file", envFile}} {
				code, stdout, stderr := runCLI(t, append([]string{"result", "aggregate", "--out", out}, args...)...)
				assert.Equal(t, 2, code, "%v: %s", args, stderr)
				assert.Empty(t, stdout)
				assert.Contains(t, stderr, filepath.Join(dir, tc.at), "%v", args)
				assert.Contains(t, stderr, "run the point again (sweep run --force --out "+dir+"), or remove "+filepath.Join(dir, run.RecordFile)+" to aggregate from the artifacts alone", "%v", args)
				assert.NoFileExists(t, out)
			}
		})
	}
}

// TestResultAggregateRefusesBeforeWriting: an --out that is not a result
// file, or a directory, is refused (exit 2) before anything is written:
// before, --out replaced any file, and --out DIR failed late ("rename
// ...: file exists") after the power lane had rewritten RESULT_DIR's
// sidecars.
func TestResultAggregateRefusesBeforeWriting(t *testing.T) {
	src := filepath.Join(aggCases, "sglang-mtp-tp8-dpattn-hicache")
	power := "../../metrics/power/testdata/cases/base-valid"
	pointDir := func(t *testing.T) string {
		dir := t.TempDir()
		require.NoError(t, os.CopyFS(filepath.Join(dir, "aiperf_artifacts"), os.DirFS(filepath.Join(src, "aiperf_artifacts"))))
		for _, f := range []string{"gpu_metrics.csv", "agentic_power_timezone_offset.txt"} {
			data, err := os.ReadFile(filepath.Join(power, f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
		}
		return dir
	}
	env := filepath.Join(src, "env.json")
	t.Setenv("ENABLE_AGENTX_POWER", "1")
	t.Setenv("REQUIRE_POWER", "")

	notes := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("mine\n"), 0o644))
	for _, tc := range []struct{ name, out, stderr string }{
		{"a file of another kind", notes, "exists and is not a result file"},
		{"a directory", t.TempDir(), "is a directory: name a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := pointDir(t)
			code, _, stderr := runCLI(t, "result", "aggregate", dir, "--env-file", env, "--out", tc.out)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, tc.stderr)
			assert.NoFileExists(t, filepath.Join(dir, "power_validation.json"), "nothing written")
			data, err := os.ReadFile(notes)
			require.NoError(t, err)
			assert.Equal(t, "mine\n", string(data))
		})
	}

	// A result file is replaced: aggregating again to the same file.
	dir := pointDir(t)
	out := filepath.Join(t.TempDir(), "agg.json")
	for range 2 {
		code, _, stderr := runCLI(t, "result", "aggregate", dir, "--env-file", env, "--out", out)
		require.Equal(t, 0, code, stderr)
	}
	assert.FileExists(t, filepath.Join(dir, "power_validation.json"))
}

// judged is a result's validity and reasons.
type judged struct {
	Valid          bool     `json:"valid"`
	InvalidReasons []string `json:"invalid_reasons"`
}

// aggregateJudged runs sweep result aggregate with args, which must exit
// 0, and reads the result's validity and reasons from its output.
func aggregateJudged(t *testing.T, args ...string) judged {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"result", "aggregate"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var res judged
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	return res
}

// TestResultAggregateDamagedArtifacts: artifacts that disagree with
// themselves make the result invalid, each reason naming the files and
// both values. Before, a point whose profile_export.jsonl was emptied
// after aiperf's exit 0 aggregated valid, with 0 requests.
func TestResultAggregateDamagedArtifacts(t *testing.T) {
	dir, _ := pointDirWithRecord(t, run.Record{})
	jsonl := filepath.Join(dir, "aiperf_artifacts", "profile_export.jsonl")
	require.NoError(t, os.WriteFile(jsonl, nil, 0o644))
	res := aggregateJudged(t, dir)
	assert.False(t, res.Valid)
	summary := filepath.Join(dir, "aiperf_artifacts", "profile_export_aiperf.json")
	assert.Equal(t, []string{
		"artifacts: no_profiled_records: " + jsonl + " holds no successful profiling request (0 records, 0 failed profiling requests): the load left nothing to measure",
		"artifacts: request_count_mismatch: " + jsonl + " has 0 successful profiling records, " + summary + " request_count.avg says 145",
		"artifacts: error_count_mismatch: " + jsonl + " has 0 failed profiling records, " + summary + " error_request_count.avg says 5",
	}, res.InvalidReasons)
}

// TestResultAggregateJudgesAsRunDid: the stages run.json records as
// failed before the result was aggregated, its schedule lag and the
// point's official mark make the re-aggregated result invalid with the
// reasons sweep run gave. Before, re-aggregating a point whose client
// failed (the engine crashed as the load ended) wrote a valid result.
func TestResultAggregateJudgesAsRunDid(t *testing.T) {
	stage := func(name, outcome, err string) run.Stage { return run.Stage{Name: name, Outcome: outcome, Error: err} }
	lag := &result.Simulation{Clock: "wall", TimeScale: 150, ScheduleLag: &result.ScheduleLag{Share: 0.5, WorstSeconds: 2, Steps: 100, LateSteps: 50, ToleranceSeconds: 0.5, InvalidShare: 0.1}}
	tests := []struct {
		name string
		rec  run.Record
		args []string
		want []string
	}{
		{name: "client failed before the result; the stop after it is not the result's",
			rec: run.Record{Stages: []run.Stage{stage(run.StageEngine, "ok", ""), stage(run.StageClient, "failed", "engine exited as the load ended (exit code 7)"),
				stage(run.StageAggregate, "ok", ""), stage(run.StageValidate, "failed", "engine exited"), stage(run.StageStop, "failed", "engine did not stop")}},
			want: []string{"stage client failed: engine exited as the load ended (exit code 7)"}},
		{name: "killed during the load: no aggregate stage",
			rec:  run.Record{Stages: []run.Stage{stage(run.StageClient, "cancelled", "context canceled"), stage(run.StageStop, "failed", "engine did not stop")}},
			want: []string{"stage client cancelled: context canceled"}},
		{name: "acceptance length failed",
			rec:  run.Record{Stages: []run.Stage{stage(run.StageAcceptance, "failed", "2.990 outside 3.5 ± 0.05"), stage(run.StageAggregate, "ok", "")}},
			want: []string{"stage acceptance-length failed: 2.990 outside 3.5 ± 0.05"}},
		{name: "acceptance length judged again with --golden-al",
			rec:  run.Record{Stages: []run.Stage{stage(run.StageAcceptance, "failed", "2.990 outside 3.5 ± 0.05"), stage(run.StageAggregate, "ok", "")}},
			args: []string{"--golden-al", "2.99"}},
		{name: "schedule lag", rec: run.Record{Simulation: lag},
			want: []string{"the simulated engine fell 50 % behind its schedule (50 of 100 steps ended more than 0.5 s late, the worst 2.00 s): the host was too loaded for time scale 150; rerun with a lower --time-scale or on an idle host"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, envFile := pointDirWithRecord(t, tc.rec)
			for _, args := range [][]string{{dir}, {dir, "--env-file", envFile}} {
				args = append(args, tc.args...)
				res := aggregateJudged(t, args...)
				assert.Equal(t, len(tc.want) == 0, res.Valid, "%v", args)
				assert.Equal(t, append([]string{}, tc.want...), res.InvalidReasons, "%v", args)
			}
		})
	}
}

// TestResultAggregateForeignArtifacts: a point directory holding another
// run's artifacts is invalid, naming what its run.json asked and what the
// artifacts' summary records. Before, c16's 300 s artifacts in a c4
// 120 s point's directory aggregated valid, c16's throughput labelled c4.
func TestResultAggregateForeignArtifacts(t *testing.T) {
	client := []string{"aiperf", "profile", "--concurrency", "48", "--benchmark-duration", "300"}
	dir, _ := pointDirWithRecord(t, run.Record{Processes: map[string]*run.ProcessOutcome{run.ClientProcess: {Argv: client}}})
	res := aggregateJudged(t, dir)
	assert.False(t, res.Valid)
	assert.Equal(t, []string{"artifacts: duration_mismatch: " + filepath.Join(dir, "aiperf_artifacts", "profile_export_aiperf.json") +
		" input_config says a benchmark duration of 1800 s, the point's client asked for 300 s: these artifacts are another run's"}, res.InvalidReasons)

	// Labelled another concurrency by the env file's CONC.
	env := filepath.Join(t.TempDir(), "env.json")
	data, err := os.ReadFile(filepath.Join(aggCases, "sglang-mtp-tp8-dpattn-hicache", "env.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(env, []byte(strings.Replace(string(data), `"CONC": "48"`, `"CONC": "4"`, 1)), 0o644))
	res = aggregateJudged(t, dir, "--env-file", env)
	assert.Contains(t, res.InvalidReasons, "artifacts: concurrency_mismatch: "+filepath.Join(dir, "aiperf_artifacts", "profile_export_aiperf.json")+
		" input_config says concurrency 48, the point is conc 4: these artifacts are another point's")
}

// TestResultAggregateNamesWhatRan: the result's client says what wrote
// the artifacts, and an aiperf version other than the one the command
// was planned for is invalid. Before, artifacts of aiperf 0.14.2 (or of
// the built-in load generator behind an --aiperf wrapper) aggregated
// valid, named "aiperf 0.12.0".
func TestResultAggregateNamesWhatRan(t *testing.T) {
	planned := &result.Client{Name: "aiperf 0.12.0", Program: "/usr/bin/aiperf", Schema: "aiperf@0.12.0", Why: "aiperf on PATH"}
	summaryOf := func(dir string) string { return filepath.Join(dir, "aiperf_artifacts", "profile_export_aiperf.json") }
	tests := []struct {
		name    string
		edit    func(summary string) string
		client  string
		why     string
		reasons func(dir string) []string
		version string
	}{
		{"as planned", func(s string) string { return s }, "aiperf 0.12.0", "aiperf on PATH", func(string) []string { return []string{} }, "0.12.0"},
		{"another aiperf version", func(s string) string {
			return strings.Replace(s, `"aiperf_version": "0.12.0"`, `"aiperf_version": "0.14.2"`, 1)
		}, "aiperf 0.14.2", "aiperf on PATH; planned as aiperf 0.12.0, but SUMMARY says aiperf 0.14.2 wrote it", func(dir string) []string {
			return []string{"artifacts: aiperf_version_mismatch: " + summaryOf(dir) + " says aiperf_version 0.14.2, the client's command was planned for aiperf@0.12.0 (and its artifacts are read as 0.12.0's)"}
		}, "0.14.2"},
		{"the built-in behind an aiperf wrapper", func(s string) string {
			return strings.Replace(s, `"cli_command": "aiperf profile`, `"cli_command": "sweep loadgen -- profile`, 1)
		}, "built-in (aiperf 0.12.0 artifacts)", "aiperf on PATH; planned as aiperf 0.12.0, but SUMMARY says built-in (aiperf 0.12.0 artifacts) wrote it", func(string) []string { return []string{} }, "0.12.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := pointDirWithRecord(t, run.Record{Client: planned})
			data, err := os.ReadFile(summaryOf(dir))
			require.NoError(t, err)
			edited := tc.edit(string(data))
			require.NoError(t, os.WriteFile(summaryOf(dir), []byte(edited), 0o644))
			code, stdout, stderr := runCLI(t, "result", "aggregate", dir)
			require.Equal(t, 0, code, stderr)
			var res struct {
				Valid          bool          `json:"valid"`
				InvalidReasons []string      `json:"invalid_reasons"`
				Client         result.Client `json:"client"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &res))
			assert.Equal(t, tc.client, res.Client.Name)
			assert.Equal(t, strings.ReplaceAll(tc.why, "SUMMARY", summaryOf(dir)), res.Client.Why)
			assert.Equal(t, tc.version, res.Client.AiperfVersion)
			assert.Equal(t, tc.reasons(dir), res.InvalidReasons)
			assert.Equal(t, len(tc.reasons(dir)) == 0, res.Valid)
		})
	}
}

// TestResultAggregateNaNSummary: a NaN in the summary (aiperf 0.12.0
// writes null for one) exits 2 at the file's line and column, and the
// result is still written from the records, invalid. Before, the point
// was lost: exit 1, "invalid character 'N' looking for beginning of
// value", no result.
func TestResultAggregateNaNSummary(t *testing.T) {
	dir, _ := pointDirWithRecord(t, run.Record{})
	summary := filepath.Join(dir, "aiperf_artifacts", "profile_export_aiperf.json")
	data, err := os.ReadFile(summary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(summary, []byte(strings.Replace(string(data), `"std": 1921.1532572365247`, `"std": NaN`, 1)), 0o644))
	out := filepath.Join(t.TempDir(), "agg.json")
	code, _, stderr := runCLI(t, "result", "aggregate", dir, "--out", out)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, summary+":23:12: a non-finite number (NaN or Infinity), which aiperf 0.12.0 never writes")
	assert.NotContains(t, stderr, "run with --help")
	f, err := result.ReadFile(out)
	require.NoError(t, err, "the result is written")
	assert.False(t, f.Valid)
	assert.Equal(t, 145, f.NumRequestsSuccessful, "from the records")
	assert.Contains(t, f.InvalidReasons, "artifacts: summary_unreadable: "+summary+":23:12: a non-finite number (NaN or Infinity), which aiperf 0.12.0 never writes (its exporter writes null for one): something else wrote or edited the file")
}
