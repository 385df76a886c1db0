package campaign_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sweep/recipes/models"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/usage"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/local"
	"sweep/sweep/knee"
	"sweep/sweep/run"
)

// fakeBackend serves loads without processes. Each load clears the
// point's directory as RunBackend does (campaign.ClearPointDir), then
// writes a valid result file and an artifact unless a fault is set for
// its point ID.
type fakeBackend struct {
	dir string

	mu sync.Mutex
	// faults: point ID → fault, for its first load (suffix "-always":
	// every load; "-full-run": its first full-length load); never-ready
	// and never-ready-always fail the server starts for the point,
	// cancel-start calls cancel during the first, never-ready-then-cancel
	// fails the first and calls cancel during the next.
	faults map[string]string
	loads  map[string]int // loads run per point ID
	starts int
	// busy tracks the GPUs in use, to catch two arms on one GPU.
	busy    map[int]string
	overlap []string
	maxBusy int
	// cancel, when set, is called by a point with the "cancel" fault.
	cancel context.CancelFunc
	// saturateAt caps the fake throughput curve (100 tok/s/GPU per conc).
	saturateAt int
	// kvFullAt is the concurrency whose KV pool fills (its usage is
	// conc/kvFullAt, at most 1); 0: no KV usage in the results.
	kvFullAt int
	// unsteadyHigh multiplies a probe's throughput where its KV pool
	// came near full (usage 0.8 or more), as a probe that ends before its
	// pool fills overstates it; 0: probes read as full points do.
	unsteadyHigh float64
	// probes are the concurrencies loaded as probes with their probe
	// client, in order.
	probes []int
	// startFails is how many of the next server starts fail (an engine
	// not installed).
	startFails int
}

func newFakeBackend(dir string) *fakeBackend {
	return &fakeBackend{dir: dir, faults: map[string]string{}, loads: map[string]int{}, busy: map[int]string{}, saturateAt: 1 << 30}
}

func (b *fakeBackend) StartServer(ctx context.Context, arm *campaign.Arm, first *campaign.Point, gpus []int) (campaign.Server, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.starts++
	if b.startFails > 0 {
		b.startFails--
		return nil, errors.New(`start engine: exec: "vllm": executable file not found in $PATH`)
	}
	switch b.faults[first.ID] {
	case "never-ready":
		delete(b.faults, first.ID)
		return nil, errors.New("engine exited before /health answered (exit status 1)")
	case "never-ready-always":
		return nil, errors.New("stage engine-ready: engine not ready before the timeout\n    [log] warm-up never completes")
	case "never-ready-then-cancel":
		b.faults[first.ID] = "cancel-start"
		return nil, errors.New("engine exited before /health answered (exit status 1)")
	case "cancel-start": // Ctrl-C while the engine loads
		delete(b.faults, first.ID)
		b.cancel()
		return nil, fmt.Errorf("stage engine-ready: %w", ctx.Err())
	}
	for _, g := range gpus {
		if other, ok := b.busy[g]; ok {
			b.overlap = append(b.overlap, fmt.Sprintf("GPU %d: %s and %s", g, other, arm.Name))
		}
		b.busy[g] = arm.Name
	}
	b.maxBusy = max(b.maxBusy, len(b.busy))
	return &fakeServer{b: b, gpus: gpus, healthy: true}, nil
}

type fakeServer struct {
	b       *fakeBackend
	gpus    []int
	healthy bool
	stopped bool
}

func (s *fakeServer) PIDs() []int                    { return nil }
func (s *fakeServer) Tags() []string                 { return nil }
func (s *fakeServer) Healthy(context.Context) bool   { return s.healthy && !s.stopped }
func (s *fakeServer) Stop(ctx context.Context) error { s.release(); return nil }

func (s *fakeServer) release() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if s.stopped {
		return
	}
	s.stopped = true
	for _, g := range s.gpus {
		delete(s.b.busy, g)
	}
}

func (s *fakeServer) RunLoad(ctx context.Context, p *campaign.Point) campaign.Outcome {
	release, err := campaign.ClearPointDir(s.b.dir, p)
	if err != nil {
		return campaign.Outcome{Err: err}
	}
	defer release()
	s.b.mu.Lock()
	s.b.loads[p.ID]++
	fault := s.b.faults[p.ID]
	switch {
	case strings.HasSuffix(fault, "-full-run") && p.Probe:
		fault = ""
	case !strings.HasSuffix(fault, "-always"):
		delete(s.b.faults, p.ID)
	}
	cancel := s.b.cancel
	s.b.mu.Unlock()
	switch strings.TrimSuffix(strings.TrimSuffix(fault, "-always"), "-full-run") {
	case "fail":
		return campaign.Outcome{Err: errors.New("stage client: aiperf failed (exit status 2)")}
	case "die-after":
		s.healthy = false
	case "hang":
		<-ctx.Done()
		return campaign.Outcome{Err: ctx.Err()}
	case "cancel":
		cancel()
		<-ctx.Done()
		return campaign.Outcome{Err: ctx.Err()}
	case "disk-full":
		return campaign.Outcome{Err: fmt.Errorf("stage aggregate: write result: %w", syscall.ENOSPC)}
	case "disk-full-dir": // as RunBackend says a point that found the sweep directory's disk full
		return campaign.Outcome{Err: &run.DiskFullError{Dir: s.b.dir, Free: 4100, Err: errors.New("stage client: client failed (exit code 1)")}}
	case "disk-full-shm": // as RunBackend says a point whose engine found /dev/shm full
		return campaign.Outcome{Err: &run.DiskFullError{Dir: "/dev/shm", Elsewhere: true, Free: 0,
			Err: errors.New("stage client: engine exited (exit code 1); from its log: OSError: [Errno 28] No space left on device: '/dev/shm/torch_1'")}}
	case "slow":
		time.Sleep(50 * time.Millisecond)
	}
	path := filepath.Join(s.b.dir, p.ID, p.ID+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return campaign.Outcome{Err: err}
	}
	tput := 100.0 * float64(min(p.Conc(), s.b.saturateAt))
	seconds := 1200.0
	if p.Probe && p.Plan.Client == p.ProbeClient {
		s.b.mu.Lock()
		s.b.probes = append(s.b.probes, p.Conc())
		s.b.mu.Unlock()
		seconds = float64(p.ProbeDuration)
		if s.b.unsteadyHigh > 0 && s.b.kvFullAt > 0 && float64(p.Conc()) >= 0.8*float64(s.b.kvFullAt) {
			tput *= s.b.unsteadyHigh
		}
	}
	measured := map[string]any{
		"conc": p.Conc(), "num_requests_successful": 10, "valid": true, "simulated": true, "probe": p.Probe,
		"request_metrics": map[string]any{"throughput": map[string]any{"duration_seconds": seconds,
			"per_gpu": map[string]any{"total_tput_tps": tput, "output_tput_tps": tput / 10}}},
	}
	switch fault {
	case "errors": // a complete result over the error-rate limit, failed as the runner fails it
		measured["valid"], measured["invalid_reasons"] = false, []string{"error rate 33.3% > 10%"}
		measured["request_accounting"] = map[string]any{"records_profiled": 10, "records_error_dropped": 5}
	case "short": // a complete result failing a validation a short window can fail
		measured["valid"], measured["invalid_reasons"] = false, []string{"acceptance length over 12 verify steps, fewer than 100"}
	case "poor-scrapes": // a valid result whose engine /metrics mostly timed out
		measured["scrape_health"] = map[string]any{"interval_seconds": 10, "endpoints": []any{map[string]any{
			"url": "http://e:8888/metrics", "engine": "", "attempts": 6, "successes": 0, "failures": 6, "points": 0,
			"last_error": `scrape http://e:8888/metrics: Get "http://e:8888/metrics": context deadline exceeded`,
		}}}
	}
	if s.b.kvFullAt > 0 {
		measured["server_metrics"] = map[string]any{"kv_cache": map[string]any{"gpu_usage_pct": min(1, float64(p.Conc())/float64(s.b.kvFullAt))}}
	}
	art := filepath.Join(filepath.Dir(path), "aiperf_artifacts", fakeArtifact)
	if err := os.MkdirAll(filepath.Dir(art), 0o755); err != nil {
		return campaign.Outcome{Err: err}
	}
	if err := os.WriteFile(art, fmt.Appendf(nil, "conc %d probe %v\n", p.Conc(), p.Probe), 0o644); err != nil {
		return campaign.Outcome{Err: err}
	}
	data := fakeResult(p, measured)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return campaign.Outcome{Err: err}
	}
	// The run's record, after its result, as run.Run writes it.
	rec := run.Record{Name: p.ID, OK: fault != "errors" && fault != "short", Started: time.Now().Add(-time.Second), Finished: time.Now(), ResultFile: path}
	if fault == "poor-scrapes" { // the warning the run recorded
		rec.Warnings = []string{poorScrapes}
	}
	if measured["simulated"] == true { // a simulated point's record names its simulation
		rec.Simulation = &result.Simulation{Clock: "virtual"}
	}
	recData, err := json.Marshal(rec)
	if err == nil {
		err = os.WriteFile(filepath.Join(filepath.Dir(path), run.RecordFile), recData, 0o644)
	}
	if err != nil {
		return campaign.Outcome{Err: err}
	}
	switch fault {
	case "errors":
		return campaign.Outcome{Result: path, Err: errors.New("stage validate: error rate 33.3% > 10%")}
	case "short":
		return campaign.Outcome{Result: path, Err: errors.New("stage validate: acceptance length over 12 verify steps, fewer than 100")}
	}
	return campaign.Outcome{Result: path}
}

// poorScrapes is the warning of the fake "poor-scrapes" fault's
// scrape_health (metrics.ScrapeHealth.Warning).
const poorScrapes = `poor metrics scraping: 0 of 6 scrapes of http://e:8888/metrics succeeded (last error: scrape http://e:8888/metrics: Get "http://e:8888/metrics": context deadline exceeded): the scraped gauges (scrape_health in the result) miss the failed scrapes; check that the engine's /metrics answers promptly with Prometheus text`

// fakeArtifact is the file a fake load writes into its point's
// aiperf_artifacts/: "conc N probe BOOL".
const fakeArtifact = "profile_export.jsonl"

// fakeResult is a result file of p: what the aggregator writes for its
// facts (its identity), with fields replaced by measured.
func fakeResult(p *campaign.Point, measured map[string]any) []byte {
	id, _ := json.Marshal(result.Identify(result.FactsFromRow(&p.Plan.Row, p.Plan.ResultFilename, nil, 0)))
	var res map[string]any
	_ = json.Unmarshal(id, &res)
	maps.Copy(res, measured)
	data, _ := json.Marshal(res)
	return data
}

func (b *fakeBackend) loadsOf(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.loads[id]
}

// testSchedule is arms of points at the given concurrencies; arm i has
// tp[i] GPUs and key "k<i>"; every point of an arm shares its server.
func testSchedule(t *testing.T, tps []int, concs ...int) *campaign.Schedule {
	t.Helper()
	var pts []recipes.Point
	for i, tp := range tps {
		for _, c := range concs {
			pts = append(pts, recipes.Point{
				Row:    matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: fmt.Sprintf("k%d", i), Model: "m", Framework: "sglang", Parallelism: configs.Parallelism{TP: tp, EP: 1}, Conc: c},
				Recipe: "fake", Engine: recipes.Command{Argv: []string{"engine", "--tp", fmt.Sprint(tp)}},
				// Names as InferenceX's: one per point.
				ResultFilename: fmt.Sprintf("k%d_tp%d_conc%d", i, tp, c),
			})
		}
	}
	s, err := campaign.BuildSchedule(pts, campaign.ScheduleOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	return s
}

type sweepRun struct {
	dir   string
	sched *campaign.Schedule
	b     *fakeBackend
	o     campaign.Options
}

func newSweep(t *testing.T, sched *campaign.Schedule) *sweepRun {
	dir := t.TempDir()
	b := newFakeBackend(dir)
	return &sweepRun{dir: dir, sched: sched, b: b, o: campaign.Options{
		Dir: dir, Schedule: sched, Retries: 1,
		Identity: campaign.Identity{Command: "discover", Settings: []campaign.Setting{{Name: "--tp", Value: "8"}}},
		Executor: &local.Executor{GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Backend: b,
			Arm: campaign.ArmOptions{PointTimeout: func(*campaign.Point) time.Duration { return 2 * time.Second }}},
	}}
}

func (s *sweepRun) run(ctx context.Context) (*campaign.Summary, error) { return campaign.Run(ctx, s.o) }

// adaptive makes the sweep's arms choose their points with the adaptive
// search (ArmOptions.Choose = Adaptive, and Ended = AdaptiveEnd for why
// it skips the others), and Run form their jobs with it (Options.Choose),
// as sweep/executor wires them.
func (s *sweepRun) adaptive() {
	choose := campaign.Adaptive(s.dir, knee.SearchOptions{})
	s.o.Executor.(*local.Executor).Arm.Choose, s.o.Choose = choose, choose
	s.o.Executor.(*local.Executor).Arm.Ended = campaign.AdaptiveEnd(s.dir, knee.SearchOptions{})
}

// pointEnds are the journal's end records of the points at conc, as
// "probe=BOOL STATUS".
func pointEnds(t *testing.T, dir string, conc int) []string {
	t.Helper()
	var ends []string
	for _, r := range events(t, dir, campaign.EventPointEnd) {
		if r.Conc == conc {
			ends = append(ends, fmt.Sprintf("probe=%v %s", r.Probe, r.Status))
		}
	}
	return ends
}

// events are the journal's (event, point) pairs of kind ev.
func events(t *testing.T, dir, ev string) []campaign.Record {
	t.Helper()
	recs, err := campaign.ReadJournal(dir)
	require.NoError(t, err)
	var out []campaign.Record
	for _, r := range recs {
		if r.Event == ev {
			out = append(out, r)
		}
	}
	return out
}

func TestSweepRunsEveryPointOnOneServer(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16))
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 3, sum.OK)
	assert.Equal(t, 1, s.b.starts, "one server for the arm")
	ends := events(t, s.dir, campaign.EventPointEnd)
	require.Len(t, ends, 3)
	for _, e := range ends {
		assert.Equal(t, campaign.StatusOK, e.Status)
		assert.False(t, filepath.IsAbs(e.Result), "results are recorded relative to the sweep directory: %s", e.Result)
	}
	starts := events(t, s.dir, campaign.EventPointStart)
	assert.Equal(t, []bool{false, true, true}, []bool{starts[0].Reused, starts[1].Reused, starts[2].Reused})
	text, err := os.ReadFile(filepath.Join(s.dir, campaign.SummaryText))
	require.NoError(t, err)
	assert.Contains(t, string(text), "3 ok, 0 failed, 0 not run")
	assert.Contains(t, string(text), "1600.0", "the table shows throughput per GPU")
}

// TestResumeAfterInterrupt: a sweep cancelled during its second point
// resumes without rerunning the first and redoes the interrupted one. Its
// journal says which points are unfinished until then, the one never
// started with its arm and concurrency from the arms its start records.
func TestResumeAfterInterrupt(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16))
	ctx, cancel := context.WithCancel(t.Context())
	s.b.cancel = cancel
	p2 := s.sched.Points[1].ID
	s.b.faults[p2] = "cancel"
	sum, err := s.run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, sum.OK)
	assert.Equal(t, campaign.StatusInterrupted, sum.Points[1].Status)
	assert.Equal(t, 0, s.b.loadsOf(s.sched.Points[2].ID), "no point starts after the interrupt")
	c, err := campaign.ReadCoverage(s.dir)
	require.NoError(t, err)
	assert.Equal(t, []campaign.Record{{Point: p2, Arm: 1, Conc: 8, Status: campaign.StatusInterrupted}, {Point: s.sched.Points[2].ID, Arm: 1, Conc: 16}}, c.Unfinished)
	assert.Equal(t, map[int]result.Identity{1: s.sched.Arms[0].Identity}, c.Arms)

	sum, err = s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 3, sum.OK)
	assert.Equal(t, 1, s.b.loadsOf(s.sched.Points[0].ID), "the completed point is not rerun")
	assert.Equal(t, 2, s.b.loadsOf(p2), "the interrupted point is redone")
	assert.Len(t, events(t, s.dir, campaign.EventSweepStart), 2)
	assert.Len(t, events(t, s.dir, campaign.EventSweepEnd), 2)
	c, err = campaign.ReadCoverage(s.dir)
	require.NoError(t, err)
	assert.Empty(t, c.Unfinished)
}

// TestInterruptedPointsCountOnTheirOwn: the summary's count line gives
// the interrupted points apart from those not run (before, "2 not run"
// under a table of 1 interrupted and 1 not run), and a point interrupted
// while its server started says so in the server column.
func TestInterruptedPointsCountOnTheirOwn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  map[int]string
		want   []string // per point: status and server column
		counts string
	}{
		{name: "1 during a load", fault: map[int]string{1: "cancel"},
			want: []string{"ok started", "interrupted reused", "not run -"}, counts: "1 ok, 0 failed, 1 interrupted, 1 not run"},
		{name: "2 during a server start", fault: map[int]string{0: "cancel-start"},
			want: []string{"interrupted not started", "not run -", "not run -"}, counts: "0 ok, 0 failed, 1 interrupted, 2 not run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16))
			ctx, cancel := context.WithCancel(t.Context())
			s.b.cancel = cancel
			for i, f := range tc.fault {
				s.b.faults[s.sched.Points[i].ID] = f
			}
			sum, err := s.run(ctx)
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, 1, sum.Interrupted)
			text, err := os.ReadFile(filepath.Join(s.dir, campaign.SummaryText))
			require.NoError(t, err)
			assert.Equal(t, tc.want, pointStates(string(text), 3))
			assert.Contains(t, string(text), "\n"+tc.counts+"; 1 server start in this invocation\n")
			end := events(t, s.dir, campaign.EventSweepEnd)
			require.Len(t, end, 1)
			assert.Equal(t, tc.counts, end[0].Reason)

			sum, err = s.run(t.Context())
			require.NoError(t, err, "the resume runs the interrupted point and those not run")
			assert.Equal(t, 3, sum.OK)
			assert.Zero(t, sum.Interrupted)
		})
	}
}

// TestInterruptedRetryStart: Ctrl-C while a retry round's server starts.
// The progress said "server start failed" for the point, the summary
// "interrupted" and "not started"; and a resume whose start failed again
// gave the point 3 attempts under --retries 1: the interrupted one
// counted. It measured nothing, and is not an attempt.
func TestInterruptedRetryStart(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4))
	id := s.sched.Points[0].ID
	ctx, cancel := context.WithCancel(t.Context())
	s.b.cancel = cancel
	s.b.faults[id] = "never-ready-then-cancel"
	var progress strings.Builder
	s.o.Progress = &progress
	sum, err := s.run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 2, s.b.starts, "the first round's start and the retry round's")
	assert.Equal(t, []string{"interrupted not started"}, pointStates(sum.Table(), 1))
	lines := regexp.MustCompile(`(?m)  server (.*)  elapsed .*$`).FindAllStringSubmatch(progress.String(), -1)
	var servers []string
	for _, l := range lines {
		servers = append(servers, l[1])
	}
	assert.Equal(t, []string{"start failed", "not started"}, servers, "the progress, as the summary says it:\n%s", progress.String())
	assert.Equal(t, 1, sum.Points[0].Attempts, "the interrupted attempt does not count")

	s.b.faults[id] = "never-ready"
	progress.Reset()
	sum, err = s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Contains(t, progress.String(), "0 of 1 points complete, 1 interrupted: 1 to run")
	assert.Equal(t, []string{"failed start failed"}, pointStates(sum.Table(), 1))
	assert.Equal(t, 2, sum.Points[0].Attempts, "the first and the retry, --retries 1")
	assert.Contains(t, sum.Table(), " c4, 2 attempts: server start: engine exited before /health answered (exit status 1)\n")
	var attempts []string
	for _, r := range events(t, s.dir, campaign.EventPointEnd) {
		attempts = append(attempts, fmt.Sprintf("%d %s", r.Attempt, r.Status))
	}
	assert.Equal(t, []string{"1 failed", "2 interrupted", "2 failed"}, attempts, "the journal's attempts")

	_, err = s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 3, s.b.starts, "no retry left: nothing more starts")
}

// TestBeginSaysWhatIsLeft: Options.Begin gets what is left to run. A
// resume with nothing left to run was given no such word: the header
// line said "1 server start planned" from the schedule.
func TestBeginSaysWhatIsLeft(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8, 8}, 4, 8, 16))
	var begun []campaign.Left
	s.o.Begin = func(l campaign.Left) {
		assert.Len(t, l.Run, l.Points, "the points left, each once")
		begun = append(begun, campaign.Left{Resume: l.Resume, Points: l.Points, ServerStarts: l.ServerStarts})
	}
	ctx, cancel := context.WithCancel(t.Context())
	s.b.cancel = cancel
	s.o.Executor.(*local.Executor).MaxParallel = 1 // arm 2 never starts
	s.b.faults[s.sched.Points[1].ID] = "cancel"
	_, err := s.run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.run(t.Context())
	require.NoError(t, err)
	_, err = s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []campaign.Left{
		{Points: 6, ServerStarts: 2},               // a new sweep: every point, a server per arm
		{Resume: true, Points: 5, ServerStarts: 2}, // arm 1's interrupted c8 and its c16, arm 2
		{Resume: true},                             // nothing left to run
	}, begun)
}

// TestResumeAfterKill: a journal cut mid-record (kill -9 during a write)
// loses only that record; the point whose end it was, finished on disk,
// is recovered, not redone (TestResumeRecoversAFinishedPoint).
func TestResumeAfterKill(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
	_, err := s.run(t.Context())
	require.NoError(t, err)
	path := filepath.Join(s.dir, campaign.JournalFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	// Drop the last point's end and everything after; leave half a line.
	lines := strings.SplitAfter(string(data), "\n")
	var keep []string
	for _, l := range lines {
		if strings.Contains(l, `"point_end"`) && strings.Contains(l, s.sched.Points[1].ID) {
			keep = append(keep, l[:len(l)/2])
			break
		}
		keep = append(keep, l)
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(keep, "")), 0o644))

	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, sum.OK)
	assert.Equal(t, 1, s.b.loadsOf(s.sched.Points[0].ID))
	assert.Equal(t, 1, s.b.loadsOf(s.sched.Points[1].ID), "the point whose end was lost is recovered")
	ends := events(t, s.dir, campaign.EventPointEnd)
	assert.True(t, ends[len(ends)-1].Recovered)
	_, err = campaign.ReadJournal(s.dir)
	assert.NoError(t, err, "the torn line was cut off, the journal reads cleanly")
}

func TestServerDiesBetweenPoints(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16))
	s.b.faults[s.sched.Points[0].ID] = "die-after"
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 3, sum.OK)
	assert.Equal(t, 2, s.b.starts, "restarted once")
	var reasons []string
	for _, r := range events(t, s.dir, campaign.EventServerStart) {
		reasons = append(reasons, r.Reason)
	}
	assert.Equal(t, []string{"first point of the arm", "the server died or stopped answering"}, reasons)
}

func TestHungPointIsStoppedAndTheArmGoesOn(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16))
	s.o.Retries = 0
	s.o.Executor.(*local.Executor).Arm.PointTimeout = func(*campaign.Point) time.Duration { return 200 * time.Millisecond }
	s.b.faults[s.sched.Points[1].ID] = "hang"
	sum, err := s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 2, sum.OK)
	assert.Equal(t, 1, sum.Failed)
	assert.Contains(t, sum.Points[1].Error, "watchdog")
	assert.Equal(t, campaign.StatusOK, sum.Points[2].Status, "the arm goes on after the hung point")
	assert.Equal(t, 2, s.b.starts, "the hung point's server is replaced")
}

func TestFailedPointIsRetried(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
	s.b.faults[s.sched.Points[0].ID] = "fail"
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, sum.OK)
	assert.Equal(t, 2, sum.Points[0].Attempts)

	// A point that always fails stops at its retries, over invocations too.
	s = newSweep(t, testSchedule(t, []int{8}, 4, 8))
	s.b.faults[s.sched.Points[0].ID] = "fail-always"
	sum, err = s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 2, s.b.loadsOf(s.sched.Points[0].ID), "first attempt + 1 retry")
	assert.Equal(t, 1, sum.OK)
	// The summary says why, under the failed point's number.
	text, err := os.ReadFile(filepath.Join(s.dir, campaign.SummaryText))
	require.NoError(t, err)
	assert.Contains(t, string(text), "failed (logs and run.json in each point's directory; a server's that did not start in servers/):\n  1  "+sum.Points[0].Arm+" c4, 2 attempts: stage client: aiperf failed (exit status 2)\n")
	_, err = s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 2, s.b.loadsOf(s.sched.Points[0].ID), "no retry left on resume")
}

// TestPoorScrapingIsWarned: an ok point whose engine /metrics mostly
// failed sweep's scrapes said nothing of it; only the result's
// scrape_health recorded it. Then the warning went by on the progress
// lines only: summary.txt and summary.json list it with the point now.
func TestPoorScrapingIsWarned(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
	s.b.faults[s.sched.Points[0].ID] = "poor-scrapes"
	var progress strings.Builder
	s.o.Progress = &progress
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, sum.OK, "a warning, not a failure")
	assert.Contains(t, progress.String(), s.sched.Points[0].ID+" ok in ")
	assert.Contains(t, progress.String(), "]     warning: "+poorScrapes+"\n")
	assert.Equal(t, 1, strings.Count(progress.String(), "warning: poor metrics scraping"), "the other point scraped well:\n%s", progress.String())

	text, err := os.ReadFile(filepath.Join(s.dir, campaign.SummaryText))
	require.NoError(t, err)
	p := sum.Points[0]
	assert.Contains(t, string(text), "\nwarnings (in each point's run.json; a point keeps its status):\n  1  "+p.Arm+" c4: "+poorScrapes+"\n", "summary.txt:\n%s", text)
	assert.Equal(t, 1, strings.Count(string(text), "poor metrics scraping"), "summary.txt:\n%s", text)
	data, err := os.ReadFile(filepath.Join(s.dir, campaign.SummaryJSON))
	require.NoError(t, err)
	var saved campaign.Summary
	require.NoError(t, json.Unmarshal(data, &saved))
	assert.Equal(t, []string{poorScrapes}, saved.Points[0].Warnings, "summary.json")
	assert.Empty(t, saved.Points[1].Warnings, "the other point scraped well")
	assert.Equal(t, campaign.StatusOK, saved.Points[0].Status)
}

// TestHugeRetriesStillRetries: a retry count near the int limit retries
// a failed point (Retries+1 once overflowed and ended the sweep after its
// first round), and a count above MaxRetries is refused.
func TestHugeRetriesStillRetries(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
	s.o.Retries = campaign.MaxRetries
	s.b.faults[s.sched.Points[0].ID] = "fail"
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, sum.OK)
	assert.Equal(t, 2, sum.Points[0].Attempts)

	s = newSweep(t, testSchedule(t, []int{8}, 4, 8))
	s.o.Retries = math.MaxInt
	_, err = s.run(t.Context())
	require.ErrorContains(t, err, "retries")
	assert.Equal(t, 0, s.b.loadsOf(s.sched.Points[0].ID))
}

// TestServerThatDoesNotStartStopsItsArm: a server that does not start
// (not ready before the timeout, exited while starting) fails the point
// it was started for and the arm's later points in that round, which get
// no start of their own (before, each point and each retry started a
// server and waited out the ready timeout: 6 starts for these 3 points,
// 14 for the audit's 7); the retry round starts the arm's server once
// more, and when that start fails too the arm stops. The summary and the
// progress say the server did not start, the points' failures give the
// start's, the GPU-hours price no run of them, and a resume runs what
// is left.
func TestServerThatDoesNotStartStopsItsArm(t *testing.T) {
	const (
		ok          = "ok started"
		okReused    = "ok reused"
		startFailed = "failed start failed"
		notRun      = "not run -"
	)
	for _, tc := range []struct {
		name     string
		arms     []int // the arms' TPs, each with points at conc 4, 8 and 16
		retries  int
		failFast bool
		// startFails fails the next server starts; faults[i] is point i's.
		startFails int
		faults     map[int]string
		starts     int
		want       []string // per point: status and the summary's server column
		attempts   []int
		// resumeStarts are the server starts a resume with the same
		// command adds; resumed the points after it.
		resumeStarts int
		resumed      []string
	}{
		{
			name: "1 never ready: one start per round, then the arm stops", arms: []int{8}, retries: 1, startFails: 1000,
			starts: 2, want: []string{startFailed, startFailed, startFailed}, attempts: []int{2, 2, 2},
		},
		{
			name: "2 no retry: one start", arms: []int{8}, retries: 0, startFails: 1000,
			starts: 1, want: []string{startFailed, startFailed, startFailed}, attempts: []int{1, 1, 1},
		},
		{
			name: "3 a transient failure: the retry round's start serves the arm", arms: []int{8}, retries: 1, startFails: 1,
			starts: 2, want: []string{ok, okReused, okReused}, attempts: []int{2, 2, 2},
		},
		{
			name: "4 fail-fast stops at the failed start; a resume runs the rest", arms: []int{8}, retries: 0, failFast: true, startFails: 1000,
			starts: 1, want: []string{startFailed, notRun, notRun}, attempts: []int{1, 0, 0},
			resumeStarts: 1, resumed: []string{startFailed, startFailed, notRun},
		},
		{
			name: "5 the server died and does not come back", arms: []int{8}, retries: 1, faults: map[int]string{0: "die-after", 1: "never-ready-always"},
			starts: 3, want: []string{ok, startFailed, startFailed}, attempts: []int{1, 2, 2},
		},
		{
			name: "6 the other arm runs", arms: []int{8, 8}, retries: 1, faults: map[int]string{0: "never-ready-always"},
			starts: 3, want: []string{startFailed, startFailed, startFailed, ok, okReused, okReused}, attempts: []int{2, 2, 2, 1, 1, 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSweep(t, testSchedule(t, tc.arms, 4, 8, 16))
			s.o.Retries, s.o.FailFast, s.b.startFails = tc.retries, tc.failFast, tc.startFails
			for i, f := range tc.faults {
				s.b.faults[s.sched.Points[i].ID] = f
			}
			var progress strings.Builder
			s.o.Progress = &progress
			sum, err := s.run(t.Context())
			if slices.Contains(tc.want, startFailed) {
				require.ErrorIs(t, err, campaign.ErrPointsFailed)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.starts, s.b.starts, "server starts")
			assert.Equal(t, tc.want, pointStates(sum.Table(), len(sum.Points)), "the points")
			var attempts []int
			for _, p := range sum.Points {
				attempts = append(attempts, p.Attempts)
			}
			assert.Equal(t, tc.attempts, attempts, "attempts")

			// Why: the start's failure, its log tail only under the point
			// the server was started for.
			startErr := "stage engine-ready: engine not ready before the timeout\n    [log] warm-up never completes"
			if tc.startFails > 0 {
				startErr = `start engine: exec: "vllm": executable file not found in $PATH`
			}
			var serverFor *campaign.PointSummary
			for _, p := range sum.Points {
				switch {
				case !p.StartFailed:
				case serverFor == nil:
					serverFor = &p
					assert.Equal(t, "server start: "+startErr, p.Error)
				default:
					firstLine, _, _ := strings.Cut(startErr, "\n")
					assert.Equal(t, fmt.Sprintf("server start: not tried, the arm's server did not start for c%d: %s", serverFor.Conc, firstLine), p.Error)
				}
			}
			text, err := os.ReadFile(filepath.Join(s.dir, campaign.SummaryText))
			require.NoError(t, err)
			assert.Equal(t, tc.want, pointStates(string(text), len(sum.Points)), "summary.txt")

			// Spent: every start, no run of a point that got no server.
			runs := strings.Count(strings.Join(tc.want, ","), "ok ")
			require.NotNil(t, sum.Spent)
			assert.Equal(t, tc.starts, sum.Spent.ServerStarts)
			assert.Equal(t, runs, sum.Spent.Runs)
			// The progress says "server started" only for a point on a
			// server that started.
			assert.Equal(t, len(events(t, s.dir, campaign.EventServerReady)), strings.Count(progress.String(), "  server started  "), "%s", progress.String())
			for _, r := range events(t, s.dir, campaign.EventPointStart) {
				assert.Equal(t, strings.HasPrefix(pointEnd(t, s.dir, r.Point, r.Attempt).Error, "server start: "), r.NoServer, "point_start no_server of %s", r.Point)
			}

			// A resume with the same command runs what is left.
			sum, _ = s.run(t.Context())
			assert.Equal(t, tc.starts+tc.resumeStarts, s.b.starts, "server starts after a resume")
			want := tc.want
			if tc.resumed != nil {
				want = tc.resumed
			}
			assert.Equal(t, want, pointStates(sum.Table(), len(sum.Points)), "the points after a resume")
		})
	}
}

// pointStates are the n points of a summary's table as "STATUS
// SERVER" (its status and server columns).
func pointStates(table string, n int) []string {
	var out []string
	for _, line := range strings.Split(table, "\n")[1 : n+1] {
		cols := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		out = append(out, cols[3]+" "+cols[len(cols)-1])
	}
	return out
}

// pointEnd is the journal's end record of point id's attempt.
func pointEnd(t *testing.T, dir, id string, attempt int) campaign.Record {
	t.Helper()
	for _, r := range events(t, dir, campaign.EventPointEnd) {
		if r.Point == id && r.Attempt == attempt {
			return r
		}
	}
	t.Fatalf("no point_end of %s attempt %d", id, attempt)
	return campaign.Record{}
}

// TestCorruptResultIsRedone: a result that is no longer readable (or
// was edited to invalid) is not trusted on resume.
func TestCorruptResultIsRedone(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16))
	_, err := s.run(t.Context())
	require.NoError(t, err)
	p := s.sched.Points[1]
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, p.ID, p.ID+".json"), []byte(`{"conc": 8, "request_me`), 0o644))
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 3, sum.OK)
	assert.Equal(t, 2, s.b.loadsOf(p.ID))
	assert.Equal(t, 1, s.b.loadsOf(s.sched.Points[0].ID))
	redo := events(t, s.dir, campaign.EventPointRedo)
	require.Len(t, redo, 1)
	assert.Contains(t, redo[0].Reason, "k0_tp8_conc8.json:1:24: the JSON ends early (the file is cut short)", "a result cut short is named at its end")
}

// TestDiskFull: a point whose result cannot be written fails; the
// results before it stay, and the sweep reports the failure.
func TestDiskFull(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
	s.o.Retries = 0
	s.b.faults[s.sched.Points[1].ID] = "disk-full"
	sum, err := s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Contains(t, sum.Points[1].Error, "no space left on device")
	p := s.sched.Points[0]
	require.NoError(t, campaign.CheckResult(filepath.Join(s.dir, p.ID, p.ID+".json"), p), "the earlier result is intact")
}

func TestDifferentSweepIsRefused(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
	_, err := s.run(t.Context())
	require.NoError(t, err)
	s.o.Identity.Settings = []campaign.Setting{{Name: "--tp", Value: "4"}}
	_, err = s.run(t.Context())
	de, ok := errors.AsType[*campaign.DifferenceError](err)
	require.True(t, ok, "%v", err)
	assert.Contains(t, de.Error(), `--tp: was "8", now "4"`)

	s.o.Identity.Settings = []campaign.Setting{{Name: "--tp", Value: "8"}}
	s.o.Schedule = testSchedule(t, []int{8}, 4, 8, 16)
	_, err = s.run(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "points: 1 not in the directory's sweep")
}

// TestUnusableDirIsAUsageError: a sweep directory Run cannot make or
// lock is the caller's mistake (*usage.Error, exit 2 in sweep), never
// read as failed points.
func TestUnusableDirIsAUsageError(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4))
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	lockIsDir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(lockIsDir, ".lock"), 0o755))
	held := t.TempDir()
	f, err := os.OpenFile(filepath.Join(held, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	for _, tc := range []struct{ name, dir, want string }{
		{"a file", file, "sweep directory " + file + ": mkdir " + file + ": not a directory; give --out a directory this user can make and write"},
		{"under a file", file + "/d", "sweep directory " + file + "/d: mkdir " + file + ": not a directory; give --out a directory this user can make and write"},
		{"lock file not writable", lockIsDir, "sweep directory " + lockIsDir + ": cannot write its lock file: "},
		{"in use", held, held + " is in use by another sweep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := s.o
			o.Dir = tc.dir
			_, err := campaign.Run(t.Context(), o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, isUsage := errors.AsType[*usage.Error](err)
			assert.True(t, isUsage, "%v", err)
		})
	}
}

// TestLocalExecutorPacksArms: four TP2 arms share an 8-GPU node at once,
// never two on one GPU; a TP8 arm waits for the whole node.
func TestLocalExecutorPacksArms(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{2, 2, 2, 2, 8}, 4, 8))
	for _, p := range s.sched.Points {
		s.b.faults[p.ID] = "slow"
	}
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 10, sum.OK)
	assert.Empty(t, s.b.overlap)
	assert.Equal(t, 8, s.b.maxBusy, "the four TP2 arms ran at once")
	for _, r := range events(t, s.dir, campaign.EventServerStart) {
		assert.NotEmpty(t, r.GPUs)
	}

	// An arm larger than the node fails without starting.
	s = newSweep(t, testSchedule(t, []int{16}, 4))
	s.o.Retries = 0
	sum, err = s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Contains(t, sum.Points[0].Error, "needs 16 GPUs; this node has 8")
	assert.Zero(t, s.b.starts)
}

func TestLocalExecutorMaxParallel(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{2, 2, 2, 2}, 4))
	for _, p := range s.sched.Points {
		s.b.faults[p.ID] = "slow"
	}
	s.o.Executor.(*local.Executor).MaxParallel = 1
	_, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, s.b.maxBusy, "one TP2 arm at a time")
}

// TestScheduleServers: an engine command that changes with conc, without
// an ArmServer declaration, restarts the server per point.
func TestScheduleServers(t *testing.T) {
	// Points whose engine command differs by conc and whose recipe does
	// not declare ArmServer restart per point.
	var pts []recipes.Point
	for _, c := range []int{4, 8} {
		pts = append(pts, recipes.Point{
			Row:    matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "k", Model: "m", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: c},
			Recipe: "no-such-recipe", Engine: recipes.Command{Argv: []string{"engine", "--max-running-requests", fmt.Sprint(2 * c)}},
			ResultFilename: fmt.Sprintf("p%d", c),
		})
	}
	s, err := campaign.BuildSchedule(pts, campaign.ScheduleOptions{Catalog: models.Builtin()})
	require.NoError(t, err)
	require.Len(t, s.Arms, 1)
	assert.Equal(t, 2, s.Arms[0].Servers)
	assert.False(t, s.Arms[0].Shared)
	assert.Contains(t, s.Arms[0].Why, "--max-running-requests change with conc")

	_, err = campaign.BuildSchedule(append(pts, pts[0]), campaign.ScheduleOptions{Catalog: models.Builtin()})
	assert.ErrorContains(t, err, "two points named p4")
	assert.True(t, slices.ContainsFunc(s.Points, func(p *campaign.Point) bool { return p.Server == 1 }))
}

// TestAdaptiveDiscovery: with ArmOptions.Choose = Adaptive, an arm that
// saturates at conc 16 runs the bracket and the knee's neighbours on one
// server, skips the rest (journaled), then records the search's end,
// and a rerun does nothing.
func TestAdaptiveDiscovery(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 1, 2, 4, 8, 16, 32, 64, 128, 256))
	s.b.saturateAt = 16
	s.adaptive()
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	var ran []int
	for _, r := range events(t, s.dir, campaign.EventPointStart) {
		ran = append(ran, r.Conc)
	}
	assert.Equal(t, []int{1, 4, 16, 64}, ran[:4], "x4 bracketing first")
	assert.Less(t, len(ran), 9, "fewer points than the grid: %v", ran)
	assert.Equal(t, 1, s.b.starts, "one server for the arm")
	for _, id := range s.sched.Points {
		assert.LessOrEqual(t, s.b.loadsOf(id.ID), 1, "never a point twice")
	}
	assert.Equal(t, len(ran), sum.OK)
	assert.Equal(t, 9-len(ran), sum.Skipped)
	assert.Len(t, events(t, s.dir, campaign.EventPointSkip), 9-len(ran))
	recs, err := campaign.ReadJournal(s.dir)
	require.NoError(t, err)
	assert.Equal(t, campaign.JournalFormat, recs[0].Format)
	last := slices.IndexFunc(recs, func(r campaign.Record) bool { return r.Event == campaign.EventServerStop }) - 1
	require.Positive(t, last)
	assert.Equal(t, campaign.EventSearchEnd, recs[last].Event, "the search's end follows its skips, before the server stops")
	assert.Equal(t, 1, recs[last].Arm)
	assert.Equal(t, campaign.EventPointSkip, recs[last-1].Event)
	arms, err := knee.Read(t.Context(), s.dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	r := knee.Analyze(arms[0], knee.Options{})
	assert.Equal(t, 16, r.Knee, "%s", r.Reason)

	sum, err = s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, s.b.starts, "a rerun starts nothing")
	assert.Equal(t, 9-len(ran), sum.Skipped)
	assert.Len(t, events(t, s.dir, campaign.EventSearchEnd), 1, "nor records the end again")
}

// TestAdaptiveServerDoesNotStart: a server that does not start measured
// nothing, so the search neither reads its point as a failed measurement
// nor ends: the point is retried as one never run, and once it has failed
// for good the arm stops with its other points not run (none skipped as
// "not needed", no search end), so that a resume with more retries, the
// engine installed, searches the arm in full. Before, two start failures
// read as failed probes ended the search and skipped the other 7 points
// for good.
func TestAdaptiveServerDoesNotStart(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 1, 2, 4, 8, 16, 32, 64, 128, 256))
	s.b.saturateAt = 16
	s.adaptive()
	s.b.startFails = 1000
	sum, err := s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 2, s.b.starts, "the first point, and its one retry")
	assert.Equal(t, 1, sum.Failed)
	assert.Equal(t, 8, sum.Pending, "the other points are not run")
	assert.Zero(t, sum.Skipped)
	assert.Empty(t, events(t, s.dir, campaign.EventPointSkip))
	assert.Empty(t, events(t, s.dir, campaign.EventSearchEnd))

	sum, err = s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 2, s.b.starts, "a resume with no retry left starts nothing")
	assert.Equal(t, 8, sum.Pending)

	s.b.startFails = 0
	s.o.Retries = 2
	sum, err = s.run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 3, s.b.starts, "one server for the rest of the arm")
	assert.Zero(t, sum.Failed)
	assert.Zero(t, sum.Pending)
	var ran []int
	for _, r := range events(t, s.dir, campaign.EventPointEnd) {
		if r.Status == campaign.StatusOK {
			ran = append(ran, r.Conc)
		}
	}
	assert.Equal(t, []int{1, 4, 16, 64}, ran[:4], "the search from its start: x4 bracketing")
	assert.Equal(t, 9-len(ran), sum.Skipped)
	assert.Len(t, events(t, s.dir, campaign.EventSearchEnd), 1)
	arms, err := knee.Read(t.Context(), s.dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	r := knee.Analyze(arms[0], knee.Options{})
	assert.Equal(t, 16, r.Knee, "%s", r.Reason)
}

// TestAdaptiveProbes: points with a probe client run as probes with it
// where the search asks for probes (journaled, marked in the results and
// the summary): on a doubling grid the x4 bracket and the knee's lower
// neighbour, between grid points within a doubling of it; on a grid
// whose top the arm reaches, the top and the point below it at the full
// length.
func TestAdaptiveProbes(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 1, 2, 4, 8, 16, 32, 64, 128, 256))
	for _, p := range s.sched.Points {
		p.ProbeClient, p.ProbeDuration = &recipes.Command{Argv: []string{"aiperf", "profile", "--benchmark-duration", "300"}}, 300
	}
	s.b.saturateAt = 16
	s.adaptive()
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	probes := []int{1, 4, 16, 64, 8}
	assert.Equal(t, probes, s.b.probes, "the x4 bracket and the knee's lower neighbour run as probes with the probe client")
	var journaled, full []int
	for _, r := range events(t, s.dir, campaign.EventPointEnd) {
		if r.Probe {
			journaled = append(journaled, r.Conc)
		} else {
			full = append(full, r.Conc)
		}
	}
	assert.Equal(t, probes, journaled)
	assert.Empty(t, full, "c64 on the plateau bounds the knee: nothing else runs")
	for _, p := range sum.Points {
		assert.Equal(t, slices.Contains(probes, p.Conc), p.Probe, "summary of conc %d", p.Conc)
	}
	assert.Contains(t, sum.Table(), "ok (probe)")
	arms, err := knee.Read(t.Context(), s.dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	for _, smp := range arms[0].Samples {
		assert.Equal(t, slices.Contains(probes, smp.Conc), smp.Probe, "result of conc %d", smp.Conc)
	}
	r := knee.Analyze(arms[0], knee.Options{})
	assert.Equal(t, 16, r.Knee, "%s", r.Reason)
	assert.Contains(t, r.Reason, "c16 is a short probe")
}

// probeSweep is a one-arm sweep on the doubling grid 1-256 whose points
// have a 300 s probe client, and the ID of its c64 point.
func probeSweep(t *testing.T) (s *sweepRun, c64 string) {
	s = newSweep(t, testSchedule(t, []int{8}, 1, 2, 4, 8, 16, 32, 64, 128, 256))
	for _, p := range s.sched.Points {
		p.ProbeClient, p.ProbeDuration = &recipes.Command{Argv: []string{"aiperf", "profile", "--benchmark-duration", "300"}}, 300
		if p.Conc() == 64 {
			c64 = p.ID
		}
	}
	return s, c64
}

// TestAdaptiveFailedProbeRunsAgain: a probe that fails a validation a
// short window can fail (the acceptance length over fewer verify steps)
// is no evidence that the point fails, so where the failure would end
// the bracket the search
// asks for the point again and it runs once more, at the full length,
// on the same server; its result is the point's, and the failed probe,
// which left no result, is not kept.
func TestAdaptiveFailedProbeRunsAgain(t *testing.T) {
	s, c64 := probeSweep(t)
	s.b.saturateAt = 16
	s.b.faults[c64] = "fail" // the first load only
	s.adaptive()
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	ends := pointEnds(t, s.dir, 64)
	assert.Equal(t, []string{"probe=true failed", "probe=false ok"}, ends, "c64: the failed probe, then the full length")
	assert.Equal(t, 2, s.b.loadsOf(c64))
	assert.Equal(t, 1, s.b.starts, "one server for the arm")
	for _, id := range s.sched.Points {
		if id.ID != c64 {
			assert.LessOrEqual(t, s.b.loadsOf(id.ID), 1, "never another point twice")
		}
	}
	assert.Zero(t, sum.Failed)
	i := slices.IndexFunc(sum.Points, func(p campaign.PointSummary) bool { return p.Conc == 64 })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, campaign.StatusOK, sum.Points[i].Status)
	assert.False(t, sum.Points[i].Probe)
	arms, err := knee.Read(t.Context(), s.dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	for _, smp := range arms[0].Samples {
		if smp.Conc == 64 {
			assert.False(t, smp.Probe, "c64's result is the full-length run's")
		}
	}
	assert.NoDirExists(t, result.ProbeDir(s.dir, c64, 1), "a probe that left no result is not kept")
	r := knee.Analyze(arms[0], knee.Options{})
	assert.Equal(t, 16, r.Knee, "%s", r.Reason)
}

// TestAdaptiveFailFast: --fail-fast stops a sweep at the first point
// that failed for good. A probe that failed the way a short window can
// fail is a step of the search, not such a point: the search runs it
// again at the full length at once, and only that run's failure stops
// the sweep. With --retries 0 --fail-fast the failed probe stopped the
// sweep before its full-length run (the arm's knee never read). A probe
// failed for good (an error rate over the limit) stops it at once.
func TestAdaptiveFailFast(t *testing.T) {
	for _, tc := range []struct {
		fault   string // c64's loads (fakeServer.RunLoad)
		want    []string
		wantErr bool
	}{
		{fault: "fail", want: []string{"probe=true failed", "probe=false ok"}},
		{fault: "short", want: []string{"probe=true failed", "probe=false ok"}},
		{fault: "fail-always", want: []string{"probe=true failed", "probe=false failed"}, wantErr: true},
		{fault: "errors", want: []string{"probe=true failed"}, wantErr: true},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			s, c64 := probeSweep(t)
			s.o.Retries, s.o.FailFast = 0, true
			s.b.saturateAt = 16
			s.b.faults[c64] = tc.fault
			s.adaptive()
			_, err := s.run(t.Context())
			assert.Equal(t, tc.want, pointEnds(t, s.dir, 64), "c64's runs")
			if !tc.wantErr {
				require.NoError(t, err)
				assert.NotEmpty(t, events(t, s.dir, campaign.EventSearchEnd), "the search ran to its end")
				return
			}
			require.ErrorIs(t, err, campaign.ErrPointsFailed)
			assert.Empty(t, events(t, s.dir, campaign.EventSearchEnd), "stopped at the failure, before the search's end")
		})
	}
}

// TestAdaptiveFailedProbeNoResultResumed: a probe that failed without a
// result (the load client crashed: the fake's "fail") is a failure a
// full-length run may pass, so the search runs the point again at the
// full length at once. A sweep killed right after that probe ended reads
// it unfinished (ReadCoverage), and its resume reads the probe as the
// uninterrupted search did, from the journal (Job.Earlier), so the
// search asks for it at the full length and it runs, as in the
// uninterrupted sweep: with no retry left (--retries 0) the point is
// done (before, the resume read nothing at c64, could not run it and
// ended the arm there, c8 never measured); with a retry left it is held
// out of the job while the killed search goes on (before, it was retried
// as a probe at once). TestAdaptiveFailedProbeResumed has the other ways
// a probe fails.
func TestAdaptiveFailedProbeNoResultResumed(t *testing.T) {
	const killed = "c1 probe=true ok, c4 probe=true ok, c16 probe=true ok, c64 probe=true failed"
	for _, tc := range []struct {
		name    string
		retries int
		failed  string // the resume line's account of c64
	}{
		{name: "no retry left", retries: 0, failed: "1 failed with no retry left (--retries 0)"},
		{name: "a retry left", retries: 1, failed: "1 failed in a search under way (retried when it ends, if it asks)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sweep := func() (*sweepRun, string) {
				s, c64 := probeSweep(t)
				s.o.Retries = tc.retries
				s.b.saturateAt = 16
				s.b.faults[c64] = "fail" // the first load only
				return s, c64
			}
			whole, _ := sweep()
			whole.adaptive()
			_, err := whole.run(t.Context())
			require.NoError(t, err)
			require.Equal(t, killed+", c64 probe=false ok, c8 probe=true ok", strings.Join(endsOf(t, whole.dir), ", "), "the uninterrupted sweep")

			s, c64 := sweep()
			ctx, cancel := context.WithCancel(t.Context())
			search := campaign.Adaptive(s.dir, knee.SearchOptions{})
			s.o.Executor.(*local.Executor).Arm.Choose = func(job campaign.Job, ran map[string]campaign.Ran) []*campaign.Point {
				if ran[c64].Probe {
					cancel() // the kill, right after c64's probe ended
				}
				return search(job, ran)
			}
			_, err = s.run(ctx)
			require.ErrorIs(t, err, context.Canceled)
			require.Equal(t, killed, strings.Join(endsOf(t, s.dir), ", "))
			c, err := campaign.ReadCoverage(s.dir)
			require.NoError(t, err)
			i := slices.IndexFunc(c.Unfinished, func(r campaign.Record) bool { return r.Point == c64 })
			require.GreaterOrEqual(t, i, 0, "c64 unfinished: %v", c.Unfinished)
			assert.Equal(t, campaign.Record{Point: c64, Arm: 1, Conc: 64, Status: campaign.StatusFailed, Probe: true}, c.Unfinished[i])

			s.adaptive()
			var progress strings.Builder
			s.o.Progress = &progress
			sum, err := s.run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, killed+", c64 probe=false ok, c8 probe=true ok", strings.Join(endsOf(t, s.dir), ", "))
			assert.Contains(t, progress.String(), "3 of 9 points complete, "+tc.failed+": 5 to run; adaptive discovery asks again for points that ran: arm 1 c64 at the full length")
			assert.Zero(t, sum.Failed)
			i = slices.IndexFunc(sum.Points, func(p campaign.PointSummary) bool { return p.Conc == 64 })
			require.GreaterOrEqual(t, i, 0)
			assert.Equal(t, campaign.StatusOK, sum.Points[i].Status)
			c, err = campaign.ReadCoverage(s.dir)
			require.NoError(t, err)
			assert.Empty(t, c.Unfinished)
			arms, err := knee.Read(t.Context(), s.dir)
			require.NoError(t, err)
			require.Len(t, arms, 1)
			r := knee.Analyze(arms[0], knee.Options{})
			assert.Equal(t, 16, r.Knee, "%s", r.Reason)
		})
	}
}

// TestAdaptiveFailedProbeResumed: a resumed adaptive sweep runs what
// the uninterrupted one runs (the journal's point ends: concurrency,
// probe or full length, status; but the run the kill interrupted) and
// ends as it does, for each way c64's probe fails and with or without a
// retry left, killed right after the probe ended, during the full-length
// run the search asked for next, or when the retry round starts. The
// uninterrupted search reads a failed probe as failed for the rest of
// its pass: one a short window explains (no result: the load client
// crashed; a result failing a short-window validation) it runs again at
// the full length at once (that run is the point's retry); one failed
// for good (an error rate over the limit) it steps past. Once the pass
// has ended, a point failed with a retry left runs again if the search
// asks for it (here, as a probe); else it is given up on.
func TestAdaptiveFailedProbeResumed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   string // c64's first load ("-always": every load): "fail", "short" or "errors" (fakeServer.RunLoad)
		retries int
		// kill: "probe": right after c64's probe ended; "full": during
		// its full-length run; "retry": as the retry round starts.
		kill string
		// cutEnd drops the search's end from the killed sweep's journal
		// (killed after its pass's last point, before RunArm recorded it).
		cutEnd bool
	}{
		{name: "no result, no retry left", fault: "fail", retries: 0, kill: "probe"},
		{name: "no result, a retry left", fault: "fail", retries: 1, kill: "probe"},
		{name: "short window, no retry left", fault: "short", retries: 0, kill: "probe"},
		{name: "short window, a retry left", fault: "short", retries: 1, kill: "probe"},
		{name: "for good, no retry left", fault: "errors", retries: 0, kill: "probe"},
		{name: "for good, a retry left", fault: "errors", retries: 1, kill: "probe"},
		{name: "for good, a retry left, killed before the retry", fault: "errors", retries: 1, kill: "retry"},
		{name: "for good, a retry left, killed before the search's end", fault: "errors", retries: 1, kill: "retry", cutEnd: true},
		{name: "no result every time, a retry left", fault: "fail-always", retries: 1, kill: "probe"},
		{name: "no result, a retry left, killed in the full-length run", fault: "fail", retries: 1, kill: "full"},
		{name: "no result, no retry left, killed in the full-length run", fault: "fail", retries: 0, kill: "full"},
		{name: "short window, a retry left, killed in the full-length run", fault: "short", retries: 1, kill: "full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sweep := func() (*sweepRun, string) {
				s, c64 := probeSweep(t)
				s.o.Retries = tc.retries
				s.b.saturateAt = 16
				s.b.faults[c64] = tc.fault // the first load only
				return s, c64
			}
			whole, _ := sweep()
			whole.adaptive()
			wholeSum, wholeErr := whole.run(t.Context())
			want := endsOf(t, whole.dir)
			t.Logf("uninterrupted: %s", strings.Join(want, ", "))

			s, c64 := sweep()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			search := campaign.Adaptive(s.dir, knee.SearchOptions{})
			killed := false
			s.o.Executor.(*local.Executor).Arm.Choose = func(job campaign.Job, ran map[string]campaign.Ran) []*campaign.Point {
				retryRound := len(ran) == 0 && len(job.Points) < len(job.Arm.Points) && slices.ContainsFunc(job.Points, func(p *campaign.Point) bool { return p.ID == c64 })
				if !killed && (tc.kill == "probe" && ran[c64].Probe || tc.kill == "retry" && retryRound) {
					killed = true
					cancel()
				}
				out := search(job, ran)
				if !killed && tc.kill == "full" && slices.ContainsFunc(out, func(p *campaign.Point) bool { return p.ID == c64 && !p.Probe }) {
					killed = true
					s.b.mu.Lock()
					s.b.faults[c64], s.b.cancel = "cancel", cancel // the kill, during c64's full-length run
					s.b.mu.Unlock()
				}
				return out
			}
			s.o.Choose = search
			_, err := s.run(ctx)
			require.ErrorIs(t, err, context.Canceled)
			require.True(t, killed)
			if tc.cutEnd {
				path, lines, cut := searchEndLine(t, s.dir)
				require.NoError(t, os.WriteFile(path, []byte(strings.Join(slices.Delete(lines, cut, cut+1), "")), 0o644))
			}

			s.adaptive()
			sum, err := s.run(t.Context())
			ends := slices.DeleteFunc(endsOf(t, s.dir), func(e string) bool { return strings.HasSuffix(e, " "+campaign.StatusInterrupted) })
			assert.Equal(t, want, ends, "the resumed sweep's runs, but the one the kill interrupted")
			if wholeErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, campaign.ErrPointsFailed)
				assert.ErrorIs(t, wholeErr, campaign.ErrPointsFailed)
			}
			var got, wantStatus []string
			for i, p := range sum.Points {
				got = append(got, fmt.Sprintf("c%d %s probe=%v", p.Conc, p.Status, p.Probe))
				w := wholeSum.Points[i]
				wantStatus = append(wantStatus, fmt.Sprintf("c%d %s probe=%v", w.Conc, w.Status, w.Probe))
			}
			assert.Equal(t, wantStatus, got, "the summaries")
		})
	}
}

// TestAdaptiveFailedProbeNotNeeded: a probe that failed (over the
// error-rate limit: a failure at any length) and that the search does
// not ask for again in the retry round (its later points settled the
// knee without it) stays failed in the summary and the journal, with why
// it did not run again; it is not "skipped", which says a point never
// ran (the journal keeps the search's skip record; the state read from it
// is the failure). It is given up on: a resume runs nothing.
func TestAdaptiveFailedProbeNotNeeded(t *testing.T) {
	s, _ := probeSweep(t)
	var c2 string
	for _, p := range s.sched.Points {
		if p.Conc() == 2 {
			c2 = p.ID
		}
	}
	s.b.faults[c2] = "errors"
	// The search's choice, cut down: c1 and c2 as probes in the first
	// round, nothing in the retry round (the job then holds only the
	// failed point) nor on resume. The sweep and the executor share it,
	// as sweep/executor wires them.
	choose := func(job campaign.Job, ran map[string]campaign.Ran) []*campaign.Point {
		var out []*campaign.Point
		for _, p := range job.Points {
			if len(job.Points) == len(job.Arm.Points) && p.Conc() <= 2 && !ran[p.ID].Any() {
				out = append(out, p.AsProbe())
			}
		}
		return out
	}
	s.o.Executor.(*local.Executor).Arm.Choose = choose
	s.o.Choose = choose
	var progress strings.Builder
	s.o.Progress = &progress
	sum, err := s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 1, s.b.loadsOf(c2))
	assert.Contains(t, progress.String(), "1 arm with failed points: its search asks for none of them again (the verdicts do not hang on them)")
	assert.NotContains(t, progress.String(), "retrying")
	i := slices.IndexFunc(sum.Points, func(p campaign.PointSummary) bool { return p.Conc == 2 })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, campaign.StatusFailed, sum.Points[i].Status)
	assert.True(t, sum.Points[i].Probe)
	assert.Contains(t, sum.Points[i].Error, "error rate 33.3% > 10%; not run again: adaptive discovery does not need it")
	assert.Equal(t, 1, sum.Failed)
	assert.Equal(t, 7, sum.Skipped)
	sum, err = s.run(t.Context())
	require.ErrorIs(t, err, campaign.ErrPointsFailed)
	assert.Equal(t, 1, s.b.loadsOf(c2), "the resume runs it no more")
	assert.Equal(t, 1, sum.Failed)
	assert.Equal(t, 7, sum.Skipped)

	// The resume line and the dry run (Preview) said "8 of 9 points
	// complete", and the dry run listed every point "finished": the
	// skipped points counted as done. Each is counted, and said, as it
	// ended.
	const status = "1 of 9 points complete, 7 skipped by adaptive discovery, 1 failed with no retry left (--retries 1): 0 to run"
	assert.Contains(t, progress.String(), "resuming "+s.dir+": "+status+"\n")
	left, err := campaign.Preview(s.o)
	require.NoError(t, err)
	assert.Equal(t, status, left.Status)
	assert.Empty(t, left.Run)
	ended := map[int]string{}
	for _, p := range s.sched.Points {
		ended[p.Conc()] = left.Ended[p.ID]
	}
	const skipped = "skipped (adaptive discovery)"
	assert.Equal(t, map[int]string{1: "ok (probe)", 2: "failed (1 attempt)", 4: skipped, 8: skipped, 16: skipped, 32: skipped, 64: skipped, 128: skipped, 256: skipped}, ended)
}

// TestAdaptiveUnsteadyProbeRunsAgain: a probe whose KV pool came near
// full (knee.Sample.Unsteady) has not reached a full point's steady state
// (here it reads twice its full point), and the verdict hangs on it (a
// rise past c16 as read, a plateau at half of it), so the search asks for
// it again and it runs once more, at the full length, on the same server;
// its result is the point's reading, the probes below it stay probes, and
// the completed probe is kept whole in DIR/ID.probe/ (keptProbeRead).
func TestAdaptiveUnsteadyProbeRunsAgain(t *testing.T) {
	s, c64 := probeSweep(t)
	s.b.saturateAt, s.b.kvFullAt, s.b.unsteadyHigh = 16, 64, 2
	s.adaptive()
	_, err := s.run(t.Context())
	require.NoError(t, err)
	var ends []string
	for _, r := range events(t, s.dir, campaign.EventPointEnd) {
		ends = append(ends, fmt.Sprintf("c%d probe=%v %s", r.Conc, r.Probe, r.Status))
	}
	assert.Equal(t, []string{"c1 probe=true ok", "c4 probe=true ok", "c16 probe=true ok", "c64 probe=true ok", "c64 probe=false ok", "c8 probe=true ok"}, ends)
	assert.Equal(t, 2, s.b.loadsOf(c64))
	assert.Equal(t, 1, s.b.starts, "one server for the arm")
	keptProbeRead(t, s, c64, 64)

	// A resume runs nothing again: the kept probe is not read as the point.
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	assert.Zero(t, sum.Failed)
	assert.Len(t, events(t, s.dir, campaign.EventPointStart), 6, "the resume started no point")
	assert.Equal(t, []int{1, 4, 16, 64, 8}, s.b.probes)
	keptProbeRead(t, s, c64, 64)
}

// keptProbeRead checks the sweep directory of s after point id, at conc,
// ran as a probe (reading twice the full run: the fake's unsteadyHigh 2)
// and then at the full length: the probe's result and artifacts are kept
// in result.ProbeDir, the point's own directory holds the full run's, and
// knee.Read and Analyze read the full run's throughput at conc, listing
// the probe as superseded.
func keptProbeRead(t *testing.T, s *sweepRun, id string, conc int) {
	t.Helper()
	kept := result.ProbeDir(s.dir, id, 1)
	probe, ok, err := knee.ReadFile(result.Path(kept, id))
	require.NoError(t, err)
	require.True(t, ok, "the probe's result is kept in %s", kept)
	assert.True(t, probe.Probe)
	art, err := os.ReadFile(filepath.Join(kept, "aiperf_artifacts", fakeArtifact))
	require.NoError(t, err, "the probe's artifacts are kept")
	assert.Equal(t, fmt.Sprintf("conc %d probe true\n", conc), string(art))
	assert.NoDirExists(t, result.ProbeDir(s.dir, id, 2))
	full, ok, err := knee.ReadFile(result.PointPath(s.dir, id))
	require.NoError(t, err)
	require.True(t, ok)
	assert.False(t, full.Probe, "the point's result is the full-length run's")
	require.NotNil(t, full.TotalTPS)
	assert.Equal(t, 2*(*full.TotalTPS), *probe.TotalTPS)

	arms, err := knee.Read(t.Context(), s.dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	var at []string
	for _, smp := range arms[0].Samples {
		if smp.Conc == conc {
			at = append(at, fmt.Sprintf("probe=%v superseded=%v %s", smp.Probe, smp.Superseded, smp.Excluded))
		} else {
			assert.True(t, smp.Probe, "result of conc %d", smp.Conc)
		}
	}
	assert.ElementsMatch(t, []string{"probe=false superseded=false ", "probe=true superseded=true " + knee.ExcludedSuperseded}, at)
	r := knee.Analyze(arms[0], knee.Options{})
	i := slices.IndexFunc(r.Points, func(p knee.Point) bool { return p.Conc == conc })
	require.GreaterOrEqual(t, i, 0)
	pt := r.Points[i]
	require.NotNil(t, pt.Throughput)
	assert.Equal(t, *full.TotalTPS, *pt.Throughput, "c%d reads the full run alone, not a median with its probe", conc)
	assert.Equal(t, []float64{*full.TotalTPS}, pt.Replicates)
	assert.False(t, pt.Probe)
	assert.Equal(t, []knee.Exclusion{{File: result.Path(kept, id), Reason: knee.ExcludedSuperseded}}, pt.Excluded)
}

// TestAdaptiveInterruptedFullRunKeepsProbe: a sweep interrupted during the
// full-length run of a probe keeps the probe; the resume reads it as the
// search's probe of the point and runs the full length once more, never
// the probe again.
func TestAdaptiveInterruptedFullRunKeepsProbe(t *testing.T) {
	s, c64 := probeSweep(t)
	s.b.saturateAt, s.b.kvFullAt, s.b.unsteadyHigh = 16, 64, 2
	s.adaptive()
	ctx, cancel := context.WithCancel(t.Context())
	s.b.cancel = cancel
	s.b.faults[c64] = "cancel-full-run"
	_, err := s.run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.FileExists(t, result.Path(result.ProbeDir(s.dir, c64, 1), c64), "the probe is kept before the full run starts")

	_, err = s.run(t.Context())
	require.NoError(t, err)
	var ends []string
	for _, r := range events(t, s.dir, campaign.EventPointEnd) {
		ends = append(ends, fmt.Sprintf("c%d probe=%v %s", r.Conc, r.Probe, r.Status))
	}
	assert.Equal(t, []string{"c1 probe=true ok", "c4 probe=true ok", "c16 probe=true ok", "c64 probe=true ok", "c64 probe=false interrupted",
		"c64 probe=false ok", "c8 probe=true ok"}, ends)
	assert.Equal(t, []int{1, 4, 16, 64, 8}, s.b.probes, "c64 ran as a probe once")
	keptProbeRead(t, s, c64, 64)
}

// TestAdaptiveKilledBeforeFullRun: a sweep killed after a probe ended
// and before the full-length run the search asked for started has the
// probe complete (ok) in its journal, so a resume's job does not hold
// the point; the search asks for it again and it runs, at the full
// length, once.
func TestAdaptiveKilledBeforeFullRun(t *testing.T) {
	s, c64 := probeSweep(t)
	s.b.saturateAt, s.b.kvFullAt, s.b.unsteadyHigh = 16, 64, 2
	ctx, cancel := context.WithCancel(t.Context())
	search := campaign.Adaptive(s.dir, knee.SearchOptions{})
	s.o.Executor.(*local.Executor).Arm.Choose = func(job campaign.Job, ran map[string]campaign.Ran) []*campaign.Point {
		out := search(job, ran)
		for _, p := range out {
			if p.ID == c64 && !p.Probe {
				cancel() // the kill, before the full run starts
			}
		}
		return out
	}
	_, err := s.run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, s.b.loadsOf(c64), "only the probe ran")

	s.adaptive()
	_, err = s.run(t.Context())
	require.NoError(t, err)
	ends := pointEnds(t, s.dir, 64)
	assert.Equal(t, []string{"probe=true ok", "probe=false ok"}, ends, "c64: the probe, then (resumed) the full length")
	assert.Equal(t, 2, s.b.loadsOf(c64))
	keptProbeRead(t, s, c64, 64)
}

// TestAdaptiveKilledAfterEveryPoint: a sweep killed when the search,
// every point of the arm measured (here as probes), asked for a probe
// again at the full length has every point complete in its journal; the
// resume still gives the arm a job, because the search (Adaptive's
// reading of the results on disk) asks for something, and runs what the
// uninterrupted sweep ran; the resume line says so. A second resume,
// the search satisfied, gives the arm no job and starts no server. The
// journal tells the killed sweep from a finished one (ReadCoverage):
// killed, the arm recorded no search end and its probes are unfinished;
// resumed, it recorded the end once.
func TestAdaptiveKilledAfterEveryPoint(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		grid                 []int
		saturateAt, kvFullAt int
		unsteadyHigh         float64
		again                string // the full-length runs after the kill
	}{
		// The top of the grid and the point below it, probes whose noise
		// decides the gate on the gain at the top: the top runs again
		// first, and at the full length it settles the gate.
		{name: "top gate", grid: []int{4, 8, 16, 32}, saturateAt: 16, again: "c32 probe=false ok"},
		// A probe whose KV pool came near full, the verdict hanging on it.
		{name: "unsteady probe", grid: []int{1, 4, 8, 16}, saturateAt: 8, kvFullAt: 16, unsteadyHigh: 2, again: "c16 probe=false ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sweep := func() *sweepRun {
				s := newSweep(t, testSchedule(t, []int{8}, tc.grid...))
				for _, p := range s.sched.Points {
					p.ProbeClient, p.ProbeDuration = &recipes.Command{Argv: []string{"aiperf", "profile", "--benchmark-duration", "300"}}, 300
				}
				s.b.saturateAt, s.b.kvFullAt, s.b.unsteadyHigh = tc.saturateAt, tc.kvFullAt, tc.unsteadyHigh
				return s
			}
			whole := sweep()
			whole.adaptive()
			_, err := whole.run(t.Context())
			require.NoError(t, err)
			want := endsOf(t, whole.dir)

			s := sweep()
			ctx, cancel := context.WithCancel(t.Context())
			search := campaign.Adaptive(s.dir, knee.SearchOptions{})
			s.o.Executor.(*local.Executor).Arm.Choose = func(job campaign.Job, ran map[string]campaign.Ran) []*campaign.Point {
				out := search(job, ran)
				if len(out) > 0 && !out[0].Probe {
					cancel() // the kill, before the first full-length run starts
				}
				return out
			}
			_, err = s.run(ctx)
			require.ErrorIs(t, err, context.Canceled)
			before := endsOf(t, s.dir)
			require.Len(t, before, len(tc.grid), "every point ran, as a probe, before the kill")
			for _, e := range before {
				require.Contains(t, e, "probe=true ok")
			}
			require.Equal(t, strings.Join(want, ", "), strings.Join(before, ", ")+", "+tc.again, "the uninterrupted sweep")
			assert.Empty(t, events(t, s.dir, campaign.EventSearchEnd), "killed, the search recorded no end")
			c, err := campaign.ReadCoverage(s.dir)
			require.NoError(t, err)
			var unfinished []int
			for _, r := range c.Unfinished {
				assert.True(t, r.Probe)
				unfinished = append(unfinished, r.Conc)
			}
			assert.Equal(t, tc.grid, unfinished, "every point a probe the search may run at the full length")

			s.adaptive()
			jobs := &jobCounter{Executor: s.o.Executor}
			s.o.Executor = jobs
			var progress strings.Builder
			s.o.Progress = &progress
			sum, err := s.run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, want, endsOf(t, s.dir), "the resume runs what the uninterrupted sweep ran")
			assert.Equal(t, 1, jobs.jobs, "the arm, every point complete, gets a job")
			assert.Equal(t, 2, s.b.starts, "one server for the arm in each invocation")
			assert.Contains(t, progress.String(), fmt.Sprintf("%d of %d points complete: 0 to run; adaptive discovery asks again for points that ran: ", len(tc.grid), len(tc.grid)))
			for c := range strings.SplitSeq(tc.again, ", ") {
				c, _, _ = strings.Cut(c, " ")
				assert.Contains(t, progress.String(), fmt.Sprintf("arm 1 %s at the full length", c))
				assert.Contains(t, progress.String(), fmt.Sprintf("conc %s (full length after its probe)", c[1:]))
			}
			assert.Zero(t, sum.Failed)
			for _, p := range sum.Points {
				again := strings.Contains(tc.again, fmt.Sprintf("c%d ", p.Conc))
				assert.Equal(t, !again, p.Probe, "summary of c%d", p.Conc)
				assert.Equal(t, campaign.StatusOK, p.Status, "summary of c%d", p.Conc)
				if again {
					assert.FileExists(t, result.Path(result.ProbeDir(s.dir, p.ID, 1), p.ID), "c%d's probe is kept", p.Conc)
				}
			}
			arms, err := knee.Read(t.Context(), s.dir)
			require.NoError(t, err)
			require.Len(t, arms, 1)
			rs := knee.Analyze(arms[0], knee.Options{})
			arms, err = knee.Read(t.Context(), whole.dir)
			require.NoError(t, err)
			rw := knee.Analyze(arms[0], knee.Options{})
			assert.Equal(t, rw.Knee, rs.Knee, "the uninterrupted sweep's knee: %s", rs.Reason)

			progress.Reset()
			_, err = s.run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, 1, jobs.jobs, "the search satisfied, the arm gets no job")
			assert.Equal(t, 2, s.b.starts)
			assert.Contains(t, progress.String(), fmt.Sprintf("%d of %d points complete: 0 to run\n", len(tc.grid), len(tc.grid)))
			assert.Len(t, events(t, s.dir, campaign.EventSearchEnd), 1, "the resumed search recorded its end, once")
			c, err = campaign.ReadCoverage(s.dir)
			require.NoError(t, err)
			assert.Empty(t, c.Unfinished)
		})
	}
}

// TestAdaptiveKilledBeforeSearchEnd: a sweep killed after its arm's
// last point and point_skip records, before the search's end was
// recorded, reads as unfinished (its probes); the resume gives the arm
// no job and starts no server (the search asks for nothing), records the
// end, and the journal reads as the uninterrupted sweep's.
func TestAdaptiveKilledBeforeSearchEnd(t *testing.T) {
	s, _ := probeSweep(t)
	s.b.saturateAt = 16
	s.adaptive()
	_, err := s.run(t.Context())
	require.NoError(t, err)
	whole, err := campaign.ReadCoverage(s.dir)
	require.NoError(t, err)
	require.Empty(t, whole.Unfinished)

	path, lines, cut := searchEndLine(t, s.dir)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:cut], "")), 0o644))
	c, err := campaign.ReadCoverage(s.dir)
	require.NoError(t, err)
	var unfinished []int
	for _, r := range c.Unfinished {
		unfinished = append(unfinished, r.Conc)
	}
	assert.Equal(t, []int{1, 4, 8, 16, 64}, unfinished, "the probes, in the schedule's order")

	jobs := &jobCounter{Executor: s.o.Executor}
	s.o.Executor = jobs
	_, err = s.run(t.Context())
	require.NoError(t, err)
	assert.Zero(t, jobs.jobs, "the search asks for nothing: no job")
	assert.Equal(t, 1, s.b.starts, "no server started")
	assert.Len(t, events(t, s.dir, campaign.EventSearchEnd), 1)
	c, err = campaign.ReadCoverage(s.dir)
	require.NoError(t, err)
	assert.Equal(t, whole, c)
}

// TestAdaptiveResumesAnOlderJournal: a journal an older binary started
// (its start without a format, no search_end records) and that was
// killed after every probe reads as before, nothing unfinished. This
// binary's resume gives its own start the format; killed after the
// resume's full-length run (c32, the top gate's top), before the search's
// end, the arm reads unfinished: its probes the search may still run at
// the full length, c4, c8 and c16.
func TestAdaptiveResumesAnOlderJournal(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8, 16, 32))
	for _, p := range s.sched.Points {
		p.ProbeClient, p.ProbeDuration = &recipes.Command{Argv: []string{"aiperf", "profile", "--benchmark-duration", "300"}}, 300
	}
	s.b.saturateAt = 16
	// killWhen runs the sweep with its search, cancelled when the search
	// asks for its next points and kill says so.
	killWhen := func(kill func(ran map[string]campaign.Ran, next []*campaign.Point) bool) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		search := campaign.Adaptive(s.dir, knee.SearchOptions{})
		choose := func(job campaign.Job, ran map[string]campaign.Ran) []*campaign.Point {
			out := search(job, ran)
			if kill(ran, out) {
				cancel()
			}
			return out
		}
		s.o.Executor.(*local.Executor).Arm.Choose, s.o.Choose = choose, search
		_, err := s.run(ctx)
		require.ErrorIs(t, err, context.Canceled)
	}
	unfinished := func() []int {
		t.Helper()
		c, err := campaign.ReadCoverage(s.dir)
		require.NoError(t, err)
		var concs []int
		for _, r := range c.Unfinished {
			concs = append(concs, r.Conc)
		}
		return concs
	}

	killWhen(func(_ map[string]campaign.Ran, next []*campaign.Point) bool { return len(next) > 0 && !next[0].Probe })
	require.Equal(t, []string{"c4 probe=true ok", "c16 probe=true ok", "c32 probe=true ok", "c8 probe=true ok"}, endsOf(t, s.dir))
	path := filepath.Join(s.dir, campaign.JournalFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	old := strings.Replace(string(data), fmt.Sprintf(`"format":%d,`, campaign.JournalFormat), "", 1)
	require.NotEqual(t, string(data), old)
	require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
	assert.Empty(t, unfinished(), "an older binary's journal: read without the search's end")

	killWhen(func(ran map[string]campaign.Ran, _ []*campaign.Point) bool {
		return slices.ContainsFunc(slices.Collect(maps.Values(ran)), func(r campaign.Ran) bool { return r.Full })
	})
	assert.Equal(t, []string{"c4 probe=true ok", "c16 probe=true ok", "c32 probe=true ok", "c8 probe=true ok", "c32 probe=false ok"}, endsOf(t, s.dir))
	starts := events(t, s.dir, campaign.EventSweepStart)
	require.Len(t, starts, 2)
	assert.Zero(t, starts[0].Format)
	assert.Equal(t, campaign.JournalFormat, starts[1].Format, "the resume's start gives this binary's format")
	assert.Empty(t, events(t, s.dir, campaign.EventSearchEnd))
	assert.Equal(t, []int{4, 8, 16}, unfinished(), "killed in this binary's resume: the probes")
}

// endsOf are the journal's point end records as "cN probe=BOOL STATUS".
func endsOf(t *testing.T, dir string) []string {
	t.Helper()
	var ends []string
	for _, r := range events(t, dir, campaign.EventPointEnd) {
		ends = append(ends, fmt.Sprintf("c%d probe=%v %s", r.Conc, r.Probe, r.Status))
	}
	return ends
}

// jobCounter counts the jobs an executor is given.
type jobCounter struct {
	campaign.Executor
	jobs int
}

func (c *jobCounter) Execute(ctx context.Context, jobs []campaign.Job, obs campaign.Observer) error {
	c.jobs += len(jobs)
	return c.Executor.Execute(ctx, jobs, obs)
}

// TestJournalMustBeARegularFile: a FIFO in place of the journal blocked a
// resumed sweep (opened read-write, the open passes and the read waits).
func TestJournalMustBeARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, campaign.JournalFile)
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan [2]error, 1)
	go func() {
		_, _, errOpen := campaign.OpenJournal(dir)
		_, errRead := campaign.ReadJournal(dir)
		done <- [2]error{errOpen, errRead}
	}()
	select {
	case errs := <-done:
		for _, err := range errs {
			assert.ErrorContains(t, err, fifo+" is a named pipe (FIFO), not a regular file")
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			w.Close()
		}
		t.Fatal("the journal's FIFO blocked")
	}
}

// TestOfficialRefusesInvalidSubmissions: an official point shorter than
// the scenario's 900 s ran with --unsafe-override, and aiperf stamped it
// submission_valid=false. An official schedule refuses it up front; a
// discovery schedule takes it.
func TestOfficialRefusesInvalidSubmissions(t *testing.T) {
	point := func(duration int) recipes.Point {
		argv := []string{"aiperf", "profile", "--benchmark-duration", fmt.Sprint(duration)}
		if duration < 900 {
			argv = append(argv, "--unsafe-override")
		}
		return recipes.Point{
			Row:    matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "k", Model: "m", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: 4},
			Recipe: "fake", Engine: recipes.Command{Argv: []string{"engine"}}, Client: &recipes.Command{Argv: argv},
			ResultFilename: fmt.Sprintf("p%d", duration),
		}
	}
	_, err := campaign.BuildSchedule([]recipes.Point{point(600)}, campaign.ScheduleOptions{Catalog: models.Builtin(), Official: true})
	assert.EqualError(t, err, "official point p600: 600 s is below the inferencex-agentx-mvp scenario's 900 s minimum, so aiperf runs it with --unsafe-override and stamps it submission_valid=false; an official point must be a valid submission: drop --duration or give at least the scenario's minimum")
	_, isUsage := errors.AsType[*usage.Error](err)
	assert.True(t, isUsage, "--duration asked for it: a usage error (sweep exits 2), not failed points")
	_, err = campaign.BuildSchedule([]recipes.Point{point(600)}, campaign.ScheduleOptions{Catalog: models.Builtin()})
	assert.NoError(t, err, "a discovery point may be short")
	_, err = campaign.BuildSchedule([]recipes.Point{point(1200)}, campaign.ScheduleOptions{Catalog: models.Builtin(), Official: true})
	assert.NoError(t, err)
}

// searchEndLine reads the journal of the sweep directory dir: its path,
// its lines (each with its newline) and the index of its first
// search_end record.
func searchEndLine(t *testing.T, dir string) (path string, lines []string, cut int) {
	t.Helper()
	path = filepath.Join(dir, campaign.JournalFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines = strings.SplitAfter(string(data), "\n")
	cut = slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"event":"`+campaign.EventSearchEnd+`"`) })
	require.Positive(t, cut)
	return path, lines, cut
}

// TestRemoteArmCloseOpen: a point the remote side ended as interrupted
// while this side was not (scancel, a time limit) stays open, and
// CloseOpen ends it with the caller's status and reason and the load
// time the remote side recorded (what it cost on the hardware); a point
// open with no end recorded (the job killed) closes with no time, a
// probe as a probe, and a point that ended is not closed again.
func TestRemoteArmCloseOpen(t *testing.T) {
	s := testSchedule(t, []int{8}, 4, 16, 32)
	job := campaign.Job{Arm: s.Arms[0], Points: s.Points}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var log []byte
	for _, r := range []campaign.Record{
		{Event: campaign.EventPointStart, Arm: 1, Point: s.Points[0].ID, Index: 1},
		{Event: campaign.EventPointEnd, Arm: 1, Point: s.Points[0].ID, Index: 1, Status: campaign.StatusOK, Seconds: 460},
		{Event: campaign.EventPointStart, Arm: 1, Point: s.Points[1].ID, Index: 2},
		{Event: campaign.EventPointEnd, Arm: 1, Point: s.Points[1].ID, Index: 2, Status: campaign.StatusInterrupted, Error: "interrupted", Seconds: 123},
		{Event: campaign.EventPointStart, Arm: 1, Point: s.Points[2].ID, Index: 3, Probe: true},
	} {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		log = append(append(log, b...), '\n')
	}
	require.NoError(t, os.WriteFile(path, log, 0o644))

	remote := campaign.NewRemoteArm(path)
	var got []campaign.Record
	obs := func(r campaign.Record) { got = append(got, r) }
	require.NoError(t, remote.Forward(context.Background(), obs))
	assert.Len(t, got, 4, "the remote side's interrupted end is held back")
	got = nil
	remote.CloseOpen(job, obs, campaign.StatusFailed, "slurm job 7 ended CANCELLED (exit 0)")
	require.Len(t, got, 2)
	for i, want := range []struct {
		point   string
		seconds float64
		probe   bool
	}{{s.Points[1].ID, 123, false}, {s.Points[2].ID, 0, true}} {
		assert.Equal(t, campaign.EventPointEnd, got[i].Event)
		assert.Equal(t, want.point, got[i].Point)
		assert.Equal(t, campaign.StatusFailed, got[i].Status)
		assert.Equal(t, "slurm job 7 ended CANCELLED (exit 0)", got[i].Error)
		assert.Equal(t, want.seconds, got[i].Seconds, "%s: the load time the remote side recorded", want.point)
		assert.Equal(t, want.probe, got[i].Probe, "%s: a probe's run closes as a probe", want.point)
	}
}

// TestServerStartFailureRestartPerPoint: in an arm whose engine command
// changes with the concurrency (a server per point), a start that fails
// fails its own point only, the next point gets its own start; two
// starts in a row that fail stop the arm's starts for the round (the
// node, the engine or the model).
func TestServerStartFailureRestartPerPoint(t *testing.T) {
	perPoint := func(t *testing.T) *campaign.Schedule {
		t.Helper()
		var pts []recipes.Point
		for _, c := range []int{4, 8, 16, 32} {
			pts = append(pts, recipes.Point{
				Row:    matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "k0", Model: "m", Framework: "sglang", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: c},
				Recipe: "fake", Engine: recipes.Command{Argv: []string{"engine", "--tp", "8", "--max-running-requests", fmt.Sprint(2 * c)}},
				ResultFilename: fmt.Sprintf("k0_tp8_conc%d", c),
			})
		}
		s, err := campaign.BuildSchedule(pts, campaign.ScheduleOptions{Catalog: models.Builtin()})
		require.NoError(t, err)
		return s
	}
	for _, tc := range []struct {
		name       string
		startFails int
		starts     int
		want       []string
	}{
		{"one start fails: the next point starts its own server", 1, 4,
			[]string{"failed start failed", "ok started", "ok started", "ok started"}},
		{"two starts in a row fail: the others are not started", 1000, 2,
			[]string{"failed start failed", "failed start failed", "failed start failed", "failed start failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSweep(t, perPoint(t))
			s.o.Retries, s.b.startFails = 0, tc.startFails
			sum, err := s.run(t.Context())
			require.ErrorIs(t, err, campaign.ErrPointsFailed)
			assert.Equal(t, tc.starts, s.b.starts, "server starts")
			assert.Equal(t, tc.want, pointStates(sum.Table(), len(sum.Points)))
		})
	}
}
