package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/proc"
	"sweep/metrics"
	"sweep/metrics/aiperf"
	"sweep/metrics/result"
)

// The test binary plays the engine and the client; roleEnv picks the part.
const (
	roleEnv  = "POINT_TEST_ROLE"
	faultEnv = "POINT_TEST_FAULT"
	portEnv  = "POINT_TEST_PORT"
	artEnv   = "POINT_TEST_ARTIFACTS" // client: where to write artifacts
	srcEnv   = "POINT_TEST_SOURCE"    // client: artifacts to copy
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "engine":
		fakeEngine()
	case "client":
		fakeClient()
	case "exit": // exits at once with the code in faultEnv
		code, _ := strconv.Atoi(os.Getenv(faultEnv))
		os.Exit(code)
	default:
		os.Exit(m.Run())
	}
}

// testModel is the model the fake engine serves on /v1/models.
const testModel = "test/model"

// fakeEngine serves /health, /v1/models and an SGLang-style /metrics page.
// Faults: never-ready (never listens), die (exits 7 once the client has
// started, noticed by the first /metrics after the baseline), hang (stops
// answering after the baseline scrape), no-metrics (404 on /metrics),
// malformed-metrics (a /metrics page that does not parse),
// other-model and no-models (another server's /v1/models, or none). A GET
// of /crash?pid=N (the client's crash-engine fault) makes it crash as the
// load ends: /health answers 503 at once, and the process exits 7
// crashDelay after client N has exited, so the runner sees the client's
// exit first.
func fakeEngine() {
	fault := os.Getenv(faultEnv)
	fmt.Println("loading weights")
	if fault == "never-ready" {
		fmt.Println("stuck loading")
		time.Sleep(time.Hour)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv(portEnv))
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(3)
	}
	var scrapes atomic.Int64
	var crashing atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if fault == "hang" && scrapes.Load() > 0 {
			time.Sleep(time.Hour)
		}
		if crashing.Load() {
			http.Error(w, "scheduler died", http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/crash", func(w http.ResponseWriter, r *http.Request) {
		crashing.Store(true)
		fmt.Println("fatal: NCCL error: the scheduler died as the load ended")
		client, _ := strconv.Atoi(r.URL.Query().Get("pid"))
		go func() {
			for alivePID(client) {
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(crashDelay)
			os.Exit(7)
		}()
	})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		switch fault {
		case "no-models":
			http.NotFound(w, r)
		case "other-model":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"someone/elses-model","object":"model"}]}`)
		default:
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model"}]}`, testModel)
		}
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1)
		switch {
		case fault == "no-metrics":
			http.NotFound(w, r)
			return
		case fault == "malformed-metrics":
			fmt.Fprint(w, "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{tp_rank=\"0\" 3\n")
			return
		case fault == "die" && n > 1:
			fmt.Println("fatal: HIP error: an illegal memory access was encountered")
			os.Exit(7)
		}
		fmt.Fprintf(w, "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{tp_rank=\"0\"} %d\n", n%4)
	})
	fmt.Println("The server is fired up and ready to roll!")
	_ = http.Serve(ln, mux)
}

// crashDelay is how long after the client's exit the fake engine's crash
// shows (its exit), within engineExitWait: long enough for the test
// process to see the client's exit first on a loaded host. The runner
// orders exits by when it saw each (proc.Process.Ended), however late it
// looks, but a test process starved of CPU across both exits sees them
// together: at 100 ms, 1 run in 80 on a 2-core host at load 11 still
// took the engine's exit for the first (3 in 40 when the runner took
// whichever exit its select picked).
const crashDelay = 500 * time.Millisecond

// fakeClient copies recorded aiperf artifacts into place. Faults: fail
// (exit 2 after writing nothing), no-space (exit 1, its artifacts'
// write refused for want of space), wait (runs until killed: the engine
// fault decides the outcome), interrupt (sends SIGINT to the test process
// that runs the point, then waits), crash-engine (a good run that makes
// the engine crash with its last request, then exits 0),
// crash-before-export (a run whose engine crashes after its last request,
// before the artifacts are written; exits 0), no-export (a
// good run without the server metrics export, as when the engine's
// /metrics did not parse).
func fakeClient() {
	switch os.Getenv(faultEnv) {
	case "fail":
		fmt.Fprintln(os.Stderr, "aiperf: error: server returned 500 for every request")
		os.Exit(2)
	case "no-space": // its artifacts find the disk full, as the built-in client says it
		dst := os.Getenv(artEnv)
		fmt.Fprintf(os.Stderr, "sweep: loadgen: write %s/profile_export.jsonl: write %s/.profile_export.jsonl.sweep-1.tmp: no space left on device\n", dst, dst)
		fmt.Fprintf(os.Stderr, "%s/profile_export.jsonl\n", dst)
		os.Exit(1)
	case "wait":
		fmt.Println("profiling...")
		time.Sleep(time.Hour)
	case "interrupt":
		fmt.Println("profiling...")
		_ = syscall.Kill(os.Getppid(), syscall.SIGINT)
		time.Sleep(time.Hour)
	}
	dst := os.Getenv(artEnv)
	src := os.Getenv(srcEnv)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// aiperf writes the server metrics as CSV too; the recorded case has only the JSON.
	if err := os.WriteFile(filepath.Join(dst, aiperf.ServerMetricsCSV), []byte("metric,value\nsglang:num_requests,150\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv(faultEnv) == "empty-records" { // aiperf's exit 0 over an emptied profile_export.jsonl
		if err := os.WriteFile(filepath.Join(dst, aiperf.RecordsFile), nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if os.Getenv(faultEnv) == "nan-summary" { // a NaN, which aiperf 0.12.0 never writes, at line 23 column 12
		p := filepath.Join(dst, aiperf.SummaryFile)
		data, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(p, bytes.Replace(data, []byte(`"std": 1921.1532572365247`), []byte(`"std": NaN`), 1), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if os.Getenv(faultEnv) == "no-export" {
		if err := os.Remove(filepath.Join(dst, aiperf.ServerMetricsFile)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if os.Getenv(faultEnv) == "crash-before-export" {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%s/crash", os.Getenv(portEnv)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		resp.Body.Close()
		time.Sleep(10 * crashDelay) // writing the artifacts
	}
	if os.Getenv(faultEnv) == "crash-engine" {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%s/crash?pid=%d", os.Getenv(portEnv), os.Getpid()))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		resp.Body.Close()
	}
	fmt.Println("profile complete")
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

const recorded = "../../testdata/aggregation/sglang-mtp-tp8-dpattn-hicache"

// testSpec builds a point whose engine and client are this test binary.
func testSpec(t *testing.T, engineFault, clientFault string) (Spec, Options) {
	t.Helper()
	out := t.TempDir()
	port := strconv.Itoa(freePort(t))
	artifacts := filepath.Join(out, "aiperf_artifacts")
	envFile, err := result.EnvFromFile(filepath.Join(recorded, "env.json"), map[string]string{"<RESULT_DIR>": out, "<AGENTIC_OUTPUT_DIR>": out})
	require.NoError(t, err)
	facts, err := result.FromEnv(envFile)
	require.NoError(t, err)
	golden := 2.99
	self, err := os.Executable()
	require.NoError(t, err)
	spec := Spec{
		ServerSpec: ServerSpec{
			Engine:               proc.Spec{Name: "engine", Argv: []string{self}, Env: map[string]string{roleEnv: "engine", faultEnv: engineFault, portEnv: port, "HF_TOKEN": "hf_secret"}},
			EngineCommandFile:    "sglang_command.txt",
			HealthURL:            "http://127.0.0.1:" + port + "/health",
			ServedModels:         []string{testModel},
			MetricsURLs:          []string{"http://127.0.0.1:" + port + "/metrics"},
			RequiredMetricPrefix: "sglang:",
		},
		LoadSpec: LoadSpec{
			Name: facts.ResultFilename,
			Client: &proc.Spec{Name: "client", Argv: []string{self, "profile"}, Env: map[string]string{
				roleEnv: "client", faultEnv: clientFault, portEnv: port, artEnv: artifacts, srcEnv: filepath.Join(recorded, "aiperf_artifacts"),
			}},
			ArtifactDir: artifacts,
			GoldenAL:    &golden,
			Facts:       facts,
		},
	}
	opts := Options{
		OutDir: out, SkipGPUCheck: true,
		ReadyTimeout: 2 * time.Second, ReadyInterval: 20 * time.Millisecond,
		HangTimeout: 300 * time.Millisecond, StopGrace: 2 * time.Second, ScrapeInterval: 20 * time.Millisecond,
	}
	return spec, opts
}

func stageOutcomes(rec *Record) map[string]string {
	out := map[string]string{}
	for _, s := range rec.Stages {
		out[s.Name] = s.Outcome
	}
	return out
}

// assertNothingLeft checks that no process of the point survives.
func assertNothingLeft(t *testing.T, rec *Record) {
	t.Helper()
	for name, p := range rec.Processes {
		assert.False(t, alivePID(p.PID), "%s (pid %d) survived", name, p.PID)
		assert.Error(t, syscall.Kill(-p.PID, 0), "process group of %s still has members", name)
	}
}

func alivePID(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !containsZombie(string(b))
}

func containsZombie(stat string) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return len(stat) > i+2 && stat[i+2] == 'Z'
		}
	}
	return false
}

func readRecord(t *testing.T, dir string) *Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	require.NoError(t, err)
	var rec Record
	require.NoError(t, json.Unmarshal(b, &rec))
	return &rec
}

func TestRunSuccess(t *testing.T) {
	spec, opts := testSpec(t, "", "")
	rec, err := Run(t.Context(), spec, opts)
	require.NoError(t, err, "stages: %+v", rec.Stages)
	assert.True(t, rec.OK)
	assert.Equal(t, map[string]string{
		StageGPUIdle: outcomeSkipped, StageEngine: outcomeOK, StageClient: outcomeOK,
		StageAcceptance: outcomeOK, StageAggregate: outcomeOK, StageValidate: outcomeOK, StageStop: outcomeOK,
	}, stageOutcomes(rec))
	require.NotNil(t, rec.Acceptance)
	assert.Equal(t, metrics.ALPass, rec.Acceptance.Verdict)
	assert.InDelta(t, 2.98995, float64(*rec.Acceptance.Measured), 1e-4)

	// The result JSON has InferenceX's fields plus our acceptance and scrape blocks.
	b, err := os.ReadFile(rec.ResultFile)
	require.NoError(t, err)
	var res map[string]any
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, filepath.Join(opts.OutDir, spec.Name+".json"), rec.ResultFile)
	assert.EqualValues(t, 48, res["conc"])
	assert.Contains(t, res, "request_metrics")
	assert.Contains(t, res, "acceptance_length")
	assert.Contains(t, res, "scrape_health")
	assert.Equal(t, true, res["valid"])
	assert.Equal(t, []any{}, res["invalid_reasons"])
	assert.Equal(t, false, res["simulated"], "the test engine is not the simulator")
	assert.NotContains(t, res, "simulation")

	// run.json's keys are snake_case throughout (the validation block was CamelCase).
	raw, err := os.ReadFile(filepath.Join(opts.OutDir, RecordFile))
	require.NoError(t, err)
	var recJSON map[string]any
	require.NoError(t, json.Unmarshal(raw, &recJSON))
	assert.Contains(t, recJSON["validation"], "valid")
	assert.NotContains(t, recJSON["validation"], "Valid")

	// run.json on disk is the returned record; commands are recorded with secrets redacted.
	onDisk := readRecord(t, opts.OutDir)
	assert.True(t, onDisk.OK)
	assert.Equal(t, stageOutcomes(rec), stageOutcomes(onDisk))
	// The facts and settings the result was made with, for sweep result
	// aggregate on this directory (it needed InferenceX's variables).
	require.NotNil(t, onDisk.Facts)
	assert.Equal(t, spec.Facts, *onDisk.Facts)
	assert.Equal(t, &result.ValidateOptions{FailedRequestThreshold: 0.10, RequiredMetricPrefix: "sglang:"}, onDisk.ValidateOptions)
	assert.Contains(t, recJSON["facts"], "runner_type", "snake_case like the rest")
	cmd, err := os.ReadFile(filepath.Join(opts.OutDir, "sglang_command.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(cmd), "export HF_TOKEN='<redacted>'")
	assert.NotContains(t, string(cmd), "hf_secret")
	log, err := os.ReadFile(filepath.Join(opts.OutDir, "server.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "fired up and ready to roll")
	assert.Equal(t, "SIGTERM", rec.Processes["engine"].Signal, "the engine is stopped with SIGTERM")
	assert.Equal(t, 0, rec.Processes["client"].Exit)
	assertNothingLeft(t, rec)
}

// TestRunFaults covers each way a point fails: the stage named, the log
// tail kept, a record written, nothing left running.
func TestRunFaults(t *testing.T) {
	tests := []struct {
		name        string
		engineFault string
		clientFault string
		prefix      string // overrides RequiredMetricPrefix when set
		failedStage string
		errContains string
		// errContainsAlso, when set, is in the error too.
		errContainsAlso string
		tailContains    string
		resultFile      bool // whether an aggregate result is still written
		// clientWrote: the client exited 0 by itself, its artifacts written.
		clientWrote bool
		// hangTimeout overrides Options.HangTimeout when set: a race-enabled
		// client takes a second to exit, with the engine unhealthy.
		hangTimeout time.Duration
		// stopGrace overrides Options.StopGrace when set: the wait for a
		// client that finishes on its own after its engine exited, which
		// a loaded CI host stretched past the default 2 s for a client
		// that sleeps 1 s.
		stopGrace time.Duration
	}{
		{name: "engine never ready", engineFault: "never-ready", failedStage: StageEngine,
			errContains: "not ready", tailContains: "stuck loading"},
		{name: "engine dies mid-load", engineFault: "die", clientFault: "wait", failedStage: StageClient,
			errContains: "engine exited during the load (exit code 7)", tailContains: "illegal memory access"},
		{name: "engine hangs", engineFault: "hang", clientFault: "wait", failedStage: StageClient,
			errContains: "engine stopped answering", tailContains: "fired up"},
		// The engine crashed with the load's last request: the client
		// exited 0 before the engine's exit showed, and the point failed
		// later, at the acceptance-length check, or not at all.
		{name: "engine crashes as the load ends", clientFault: "crash-engine", failedStage: StageClient, hangTimeout: 10 * time.Second,
			errContains: "engine exited as the load ended (exit code 7), just after client finished", tailContains: "scheduler died as the load ended"},
		// The engine crashed after the last request, while the client
		// wrote its artifacts: the client was killed mid-write, and the
		// point said the engine exited during the load.
		{name: "engine crashes before the client's export", clientFault: "crash-before-export", failedStage: StageClient, hangTimeout: 10 * time.Second, stopGrace: 20 * time.Second,
			errContains: "engine exited as the load ended (exit code 7): client had sent its last request and finished on its own", tailContains: "scheduler died as the load ended", clientWrote: true},
		// The acceptance check fell back on sweep's scrapes and said only
		// "no two good scrapes of the engine": the scraper's error, the
		// cause, was in the result's scrape_health alone.
		{name: "metrics that do not parse", engineFault: "malformed-metrics", clientFault: "no-export", failedStage: StageAcceptance,
			errContains: "/metrics succeeded (last error: scrape http://127.0.0.1:", resultFile: true, errContainsAlso: "/metrics: text format parsing error in line 2"},
		{name: "client exits non-zero", clientFault: "fail", failedStage: StageClient,
			errContains: "client failed (exit code 2)", tailContains: "server returned 500"},
		// A server that is not ours answered /health: its numbers were
		// measured as the point's.
		{name: "another model on the port", engineFault: "other-model", failedStage: StageEngine,
			errContains: `is not ours: it serves ["someone/elses-model"], the engine was started to serve ["test/model"]`},
		{name: "no model list on the port", engineFault: "no-models", failedStage: StageEngine,
			errContains: "is not ours: GET http://127.0.0.1:"},
		{name: "required metric prefix missing", prefix: "vllm:", failedStage: StageValidate,
			errContains: "vllm:", resultFile: true},
		// The client exited 0 over an emptied records file: the point was
		// ok and its result valid with 0 requests (InferenceX's validation
		// reads only the summary's counts).
		// One NaN in the summary lost the completed point: no result,
		// the aggregate stage failed with "invalid character 'N'", no
		// line or column.
		{name: "NaN in the summary", clientFault: "nan-summary", failedStage: StageValidate,
			errContains: "profile_export_aiperf.json:23:12: a non-finite number (NaN or Infinity), which aiperf 0.12.0 never writes", resultFile: true},
		{name: "records emptied", clientFault: "empty-records", failedStage: StageValidate,
			errContains: "artifacts: no_profiled_records: ", errContainsAlso: "request_count.avg says 145", resultFile: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, opts := testSpec(t, tc.engineFault, tc.clientFault)
			if tc.prefix != "" {
				spec.RequiredMetricPrefix = tc.prefix
			}
			if tc.hangTimeout > 0 {
				opts.HangTimeout = tc.hangTimeout
			}
			if tc.stopGrace > 0 {
				opts.StopGrace = tc.stopGrace
			}
			rec, err := Run(t.Context(), spec, opts)
			require.Error(t, err)
			se, ok := errors.AsType[*StageError](err)
			require.True(t, ok, "got %T %v", err, err)
			assert.Equal(t, tc.failedStage, se.Stage)
			assert.Contains(t, err.Error(), tc.errContains)
			assert.Contains(t, err.Error(), tc.errContainsAlso)
			failed := rec.Failed()
			require.NotNil(t, failed)
			assert.Equal(t, tc.failedStage, failed.Name)
			if tc.tailContains != "" {
				assert.Contains(t, fmt.Sprint(failed.LogTail), tc.tailContains)
				// Once, as the log tail: not again in the stage's error
				// and the returned one (sweep run printed it three times).
				assert.NotContains(t, failed.Error, tc.tailContains)
				assert.NotContains(t, err.Error(), tc.tailContains)
			}
			assert.False(t, readRecord(t, opts.OutDir).OK)
			if tc.resultFile {
				assert.FileExists(t, rec.ResultFile)
			}
			if tc.clientWrote {
				c := rec.Processes["client"]
				assert.Equal(t, 0, c.Exit)
				assert.False(t, c.Stopped, "the client was stopped mid-write")
				assert.FileExists(t, filepath.Join(spec.ArtifactDir, aiperf.ServerMetricsCSV))
			}
			// A failed point that still wrote a result says it does not count.
			if rec.ResultFile != "" {
				b, err := os.ReadFile(rec.ResultFile)
				require.NoError(t, err)
				var res struct {
					Valid          *bool    `json:"valid"`
					InvalidReasons []string `json:"invalid_reasons"`
				}
				require.NoError(t, json.Unmarshal(b, &res))
				require.NotNil(t, res.Valid, "the result states its validity")
				assert.False(t, *res.Valid)
				assert.Contains(t, strings.Join(res.InvalidReasons, "; "), tc.errContains)
				// sweep result aggregate on the point's directory judges
				// it as run did: a failed client stage was lost, the
				// re-aggregated result valid.
				agg, err := Aggregate(opts.OutDir, AggregateOptions{})
				require.NoError(t, err)
				assert.Equal(t, res.InvalidReasons, agg.Result.InvalidReasons, "sweep result aggregate's reasons, then sweep run's")
			}
			assertNothingLeft(t, rec)
		})
	}
}

// TestRunWarnsOfPoorScraping: a point whose engine /metrics failed every
// one of sweep's scrapes was ok and said nothing of it; only the result's
// scrape_health recorded it. Then the warning went by on the progress
// lines only: run.json records it now, for a sweep's summary to list.
func TestRunWarnsOfPoorScraping(t *testing.T) {
	spec, opts := testSpec(t, "no-metrics", "")
	var lines []string
	var mu sync.Mutex
	opts.Progress = func(line string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, line)
	}
	rec, err := Run(t.Context(), spec, opts)
	require.NoError(t, err, "the client's export measured the point: stages %+v", rec.Stages)
	warning := ""
	for _, l := range lines {
		if w, ok := strings.CutPrefix(l, "warning: poor metrics scraping: 0 of "); ok {
			warning = "poor metrics scraping: 0 of " + w
		}
	}
	require.NotEmpty(t, warning, "progress:\n%s", strings.Join(lines, "\n"))
	assert.Regexp(t, `^poor metrics scraping: 0 of \d+ scrapes of http://127\.0\.0\.1:\d+/metrics succeeded \(last error: scrape http://127\.0\.0\.1:\d+/metrics: GET http://127\.0\.0\.1:\d+/metrics: HTTP 404 Not Found\): `, warning)
	assert.Equal(t, []string{warning}, rec.Warnings, "the record keeps it")
	saved, err := ReadRecordFile(opts.OutDir)
	require.NoError(t, err)
	require.NotNil(t, saved)
	assert.Equal(t, []string{warning}, saved.Warnings, "run.json keeps it")
	assert.True(t, saved.OK, "a warning fails nothing")
	assertNothingLeft(t, rec)
}

// TestRunInterrupted sends SIGINT to this process during the load, as a
// user pressing Ctrl-C on `sweep run` would.
func TestRunInterrupted(t *testing.T) {
	spec, opts := testSpec(t, "", "interrupt")
	ctx, stop := signal.NotifyContext(t.Context(), os.Interrupt)
	defer stop()
	rec, err := Run(ctx, spec, opts)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, outcomeCancelled, stageOutcomes(rec)[StageClient])
	assert.Equal(t, outcomeSkipped, stageOutcomes(rec)[StageAggregate])
	assert.False(t, readRecord(t, opts.OutDir).OK)
	assertNothingLeft(t, rec)
}

// TestStartServerInterrupted: a server start interrupted while the engine
// loads says so once. Its error read "... readiness wait at URL
// cancelled (last poll: ...)\ncontext canceled\ncontext canceled": the
// readiness wait and the runner each joined ctx's error to it (and the
// last poll, cut short, could be "... context canceled" too), and sweep
// discover printed it under the point.
func TestStartServerInterrupted(t *testing.T) {
	spec, opts := testSpec(t, "never-ready", "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	opts.ReadyTimeout = time.Minute
	opts.Progress = func(line string) {
		if strings.Contains(line, "waiting for") {
			cancel() // Ctrl-C while the engine loads
		}
	}
	srv, rec, err := StartServer(ctx, spec.ServerSpec, opts)
	require.Error(t, err)
	assert.Nil(t, srv)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Regexp(t, `^stage engine-ready: engine readiness wait at http://127\.0\.0\.1:\d+/health cancelled \(last poll: [^\n]*\)$`, err.Error())
	assert.NotContains(t, err.Error(), "canceled", "the interruption is said once")
	assert.Equal(t, outcomeCancelled, stageOutcomes(rec)[StageEngine])
	assertNothingLeft(t, rec)
}

// TestRunRefusesABusyPort: a port held by another server passed readiness,
// the load ran against the foreign server and its numbers were written.
func TestRunRefusesABusyPort(t *testing.T) {
	spec, opts := testSpec(t, "", "")
	u, err := url.Parse(spec.HealthURL)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", u.Host)
	require.NoError(t, err)
	defer ln.Close()
	go func() { // a foreign server that answers everything
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
			c.Close()
		}
	}()
	rec, err := Run(t.Context(), spec, opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already in use by another server")
	assert.Equal(t, StageEngine, rec.Failed().Name)
	assert.Empty(t, rec.ResultFile, "no result from a foreign server")
	assertNothingLeft(t, rec)
}

func TestServedModels(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want []string
	}{
		{"sglang served name", []string{"python3", "-m", "sglang.launch_server", "--model-path", "/models/q", "--served-model-name", "Qwen/Q", "--port", "1"}, []string{"Qwen/Q"}},
		{"sglang model path only", []string{"python3", "-m", "sglang.launch_server", "--model-path=/models/q", "--tp", "8"}, []string{"/models/q"}},
		{"vllm positional", []string{"vllm", "serve", "meta/L", "--port", "8000"}, []string{"meta/L"}},
		{"vllm several served names", []string{"vllm", "serve", "meta/L", "--served-model-name", "a", "b", "--port", "8000"}, []string{"a", "b"}},
		{"vllm --model", []string{"vllm", "serve", "--model", "meta/L"}, []string{"meta/L"}},
		{"no model", []string{"./launch.sh", "--port", "1"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ServedModels(tc.argv))
		})
	}
}

// TestServedModelsGivenTwice: an engine reads the last of a flag given
// twice (an A/B arm's args after its recipe's). Before, the names of
// every --served-model-name were gathered, the recipe's first, so bfcl
// asked the arm for a model name its vLLM did not serve.
func TestServedModelsGivenTwice(t *testing.T) {
	assert.Equal(t, []string{"x"}, ServedModels([]string{"vllm", "serve", "meta/L", "--served-model-name", "r", "--port", "8000", "--served-model-name", "x"}))
	assert.Equal(t, []string{"/models/n"}, ServedModels([]string{"python3", "-m", "sglang.launch_server", "--model-path", "/models/q", "--model", "/models/n"}))
}

// TestRunRecordsGoRunBuildAsSweep: a point run with `go run` recorded the
// temporary build's path in its command files and run.json.
func TestRunRecordsGoRunBuildAsSweep(t *testing.T) {
	spec, opts := testSpec(t, "", "")
	exeDir := filepath.Join(t.TempDir(), "go-build42", "b001", "exe")
	require.NoError(t, os.MkdirAll(exeDir, 0o755))
	tmpBuild := filepath.Join(exeDir, "sweep")
	require.NoError(t, os.Symlink(spec.Engine.Argv[0], tmpBuild))
	spec.Engine.Argv[0] = tmpBuild
	spec.Client.Argv[0] = tmpBuild
	rec, err := Run(t.Context(), spec, opts)
	require.NoError(t, err, "stages: %+v", rec.Stages)
	for _, f := range []string{"sglang_command.txt", "benchmark_command.txt", RecordFile} {
		b, err := os.ReadFile(filepath.Join(opts.OutDir, f))
		require.NoError(t, err)
		assert.NotContains(t, string(b), "go-build42", f)
	}
	onDisk := readRecord(t, opts.OutDir)
	for _, name := range []string{"engine", "client"} {
		require.Contains(t, onDisk.Processes, name)
		assert.Equal(t, "sweep", onDisk.Processes[name].Argv[0])
		assert.True(t, onDisk.Processes[name].GoRun)
	}
}

// TestRunPanicStopsEverything: a panic inside a point (the 1e308 latency
// of issue 10 was one) crashed sweep run mid-point with no result, run.json
// unfinished and the engine left running, because the stop was not
// deferred. A panic is now a failed stage after every process is stopped.
func TestRunPanicStopsEverything(t *testing.T) {
	spec, opts := testSpec(t, "", "")
	var once sync.Once
	opts.Progress = func(line string) {
		if strings.HasPrefix(line, StageAggregate+": started") {
			once.Do(func() { panic("injected by the test") })
		}
	}
	rec, err := Run(t.Context(), spec, opts)
	se, ok := errors.AsType[*StageError](err)
	require.True(t, ok, "got %T %v", err, err)
	assert.Equal(t, StageInternal, se.Stage)
	assert.Contains(t, err.Error(), "internal error (a bug in sweep): panic: injected by the test (stack: "+filepath.Join(opts.OutDir, PanicFile)+")")
	onDisk := readRecord(t, opts.OutDir)
	assert.False(t, onDisk.OK)
	assert.False(t, onDisk.Finished.IsZero(), "run.json is finished")
	assert.Equal(t, outcomeFailed, stageOutcomes(onDisk)[StageInternal])
	assert.Equal(t, outcomeOK, stageOutcomes(onDisk)[StageStop])
	stack, err := os.ReadFile(filepath.Join(opts.OutDir, PanicFile))
	require.NoError(t, err)
	assert.Contains(t, string(stack), "panic: injected by the test")
	assertNothingLeft(t, rec)
}

// dyingWorkerSpec is a disaggregated point whose decode worker dies at
// sweep's second scrape of it, its client running until stopped.
func dyingWorkerSpec(t *testing.T) (Spec, Options) {
	t.Helper()
	spec, opts := testSpec(t, "", "wait")
	port := strconv.Itoa(freePort(t))
	self, err := os.Executable()
	require.NoError(t, err)
	spec.Workers = []Worker{{
		Proc:      proc.Spec{Name: "decode0", Argv: []string{self}, Env: map[string]string{roleEnv: "engine", faultEnv: "die", portEnv: port}},
		HealthURL: "http://127.0.0.1:" + port + "/health", Log: "decode0.log", CommandFile: "decode0_command.txt",
	}}
	spec.MetricsURLs = append(spec.MetricsURLs, "http://127.0.0.1:"+port+"/metrics")
	return spec, opts
}

// TestRunWorkerDiesMidLoad: a disaggregated point's further worker
// (ServerSpec.Workers) is started after the engine, waited for, recorded,
// and watched like the engine: its death mid-load stops the client and is
// blamed on it, with its log's tail.
func TestRunWorkerDiesMidLoad(t *testing.T) {
	spec, opts := dyingWorkerSpec(t)
	rec, err := Run(t.Context(), spec, opts)
	require.Error(t, err)
	assert.ErrorContains(t, err, "decode0 exited during the load (exit code 7)")
	failed := rec.Failed()
	require.NotNil(t, failed)
	assert.Equal(t, StageClient, failed.Name)
	assert.Contains(t, fmt.Sprint(failed.LogTail), "illegal memory access", "the worker's log tail")
	assert.Contains(t, rec.Processes, "decode0")
	assert.FileExists(t, filepath.Join(opts.OutDir, "decode0.log"))
	assert.FileExists(t, filepath.Join(opts.OutDir, "decode0_command.txt"))
	assertNothingLeft(t, rec)
}

// TestServerWorkerDiesMidLoad: a load on a shared server watches the
// server's further workers like its engine. It watched the engine alone:
// a decode worker's death went unseen until the client ended by itself.
func TestServerWorkerDiesMidLoad(t *testing.T) {
	spec, opts := dyingWorkerSpec(t)
	srv, _, err := StartServer(t.Context(), spec.ServerSpec, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = srv.Stop() })
	// Unwatched, the load ran until its client's end (an hour here).
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rec, err := srv.RunLoad(ctx, spec.LoadSpec, t.TempDir())
	require.Error(t, err)
	assert.ErrorContains(t, err, "decode0 exited during the load (exit code 7)")
	failed := rec.Failed()
	require.NotNil(t, failed)
	assert.Equal(t, StageClient, failed.Name)
	assert.Contains(t, fmt.Sprint(failed.LogTail), "illegal memory access", "the worker's log tail")
	assertNothingLeft(t, rec)

	rec, err = srv.RunLoad(t.Context(), spec.LoadSpec, t.TempDir())
	require.Error(t, err, "the next load finds the worker gone")
	assert.ErrorContains(t, err, "decode0 exited (exit code 7)")
	assert.Equal(t, StageServer, rec.Failed().Name)

	// Died names the dead worker, its log's cause and its log.
	died, log := srv.Died()
	require.NotNil(t, died)
	assert.Equal(t, "decode0 exited (exit code 7)", died.Error)
	assert.Contains(t, died.Detail(), "decode0 exited (exit code 7); from its log: ", "the cause from its log tail")
	assert.Contains(t, died.Detail(), "illegal memory access")
	assert.Equal(t, filepath.Join(srv.Dir(), "decode0.log"), log)
	_, err = srv.Stop()
	require.NoError(t, err)
	died, log = srv.Died()
	assert.Nil(t, died, "a stopped server did not die")
	assert.Empty(t, log)
}

// TestServerHealthyOverTCP: a server whose engine's readiness is a TCP
// connect (vLLM's gRPC worker: tcp://HOST:PORT) is healthy while it
// accepts connections. Its health was asked over HTTP, which has no such
// scheme: every load on it failed its server check.
func TestServerHealthyOverTCP(t *testing.T) {
	spec, opts := testSpec(t, "", "")
	spec.HealthURL = "tcp://" + strings.TrimSuffix(strings.TrimPrefix(spec.HealthURL, "http://"), "/health")
	spec.ServedModels = nil
	srv, _, err := StartServer(t.Context(), spec.ServerSpec, opts)
	require.NoError(t, err)
	defer func() { _, _ = srv.Stop() }()
	assert.NoError(t, srv.Healthy(t.Context()))
	died, log := srv.Died()
	assert.Nil(t, died, "a running server has not died")
	assert.Empty(t, log)
}
