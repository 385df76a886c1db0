package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/testkit/cpuhog"
	"sweep/metrics/aiperf"
	"sweep/sweep/run"
)

// resultNumbers reads the point's result JSON as a flat map of its
// numeric leaves ("key.sub[2].x" → value).
func resultNumbers(t *testing.T, dir string) map[string]float64 {
	t.Helper()
	rec := readRunRecord(t, dir)
	require.NotEmpty(t, rec.ResultFile, "the point wrote no result")
	b, err := os.ReadFile(rec.ResultFile)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	out := map[string]float64{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(prefix+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(prefix+"["+strconv.Itoa(i)+"]", e)
			}
		case float64:
			out[prefix] = x
		}
	}
	walk("", v)
	// scrape_health counts the runner's own wall-clock polls of /metrics
	// (how many it managed), a fact about the run, not a result.
	for k := range out {
		if strings.HasPrefix(k, ".scrape_health.") {
			delete(out, k)
		}
	}
	return out
}

// TestSimulatedPointIsDeterministic runs one simulated point twice, the
// second time with every CPU of the machine hogged, and compares every
// number of the two result files: on the virtual clock they are equal.
// (On the compressed wall clock the same seed gave throughputs 0.7-61 %
// apart, depending on how busy the machine was.) The records number their
// sessions alike too: 1,200 s at conc 16 has subagent fan-outs, whose
// session_num once followed whichever stream started first (1 run in 3
// differed, idle).
func TestSimulatedPointIsDeterministic(t *testing.T) {
	t.Setenv(asCLIEnv, "1") // the point's processes are this binary
	args := func(out string) []string {
		return simRunArgs(out, "--conc", "16", "--duration", "1200")
	}
	idle := filepath.Join(t.TempDir(), "idle")
	code, stdout, stderr := runCLI(t, args(idle)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "virtual clock")
	want := resultNumbers(t, idle)
	require.Greater(t, len(want), 50)

	hogged := filepath.Join(t.TempDir(), "hogged")
	t.Run("under a CPU hog", func(t *testing.T) { // the hog ends with the subtest
		cpuhog.Hog(t)
		code, stdout, stderr = runCLI(t, args(hogged)...)
	})
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	got := resultNumbers(t, hogged)
	var differ []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			differ = append(differ, k)
		}
	}
	sort.Strings(differ)
	assert.Empty(t, differ, "result numbers that changed under a CPU hog")
	assert.Len(t, got, len(want))
	sessions := sessionNums(t, idle)
	require.NotEmpty(t, sessions)
	assert.Equal(t, sessions, sessionNums(t, hogged), "session_num of each session (subagents included) under a CPU hog")
}

// sessionNums maps each session of a point's records (x_correlation_id)
// to its session_num.
func sessionNums(t *testing.T, dir string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "aiperf_artifacts", aiperf.RecordsFile))
	require.NoError(t, err)
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			Metadata struct {
				SessionNum     int    `json:"session_num"`
				XCorrelationID string `json:"x_correlation_id"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		out[rec.Metadata.XCorrelationID] = rec.Metadata.SessionNum
	}
	require.NoError(t, sc.Err())
	return out
}

// BenchmarkSimulatedPoint runs a full official simulated point (3,600 s
// at concurrency 1, 32 and 256) and reports its wall time and where it
// goes: engine start, the load, and the runner's own overhead around them
// (result stages and stop).
//
//	go test ./cmd/sweep -run '^$' -bench SimulatedPoint -benchtime 1x
func BenchmarkSimulatedPoint(b *testing.B) {
	points := []struct {
		name string
		args []string
	}{
		{"conc1", []string{"--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "1", "--conc", "1"}},
		{"conc32", []string{"--config-key", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--conc", "32"}},
		{"conc256", []string{"--config-key", "dsv4-fp4-b300-vllm-agentic-mtp", "--tp", "8", "--ep", "8", "--dp-attn", "--conc", "256"}},
	}
	b.Setenv(asCLIEnv, "1") // the point's processes are this binary
	for _, p := range points {
		b.Run(p.name, func(b *testing.B) {
			var stages map[string]float64
			var wall time.Duration
			for b.Loop() {
				out := filepath.Join(b.TempDir(), "p")
				args := append([]string{"run", "--simulate", "--stop-grace", "3s", "--out", out}, p.args...)
				start := time.Now()
				code, stdout, stderr := runCLI(b, args...)
				wall += time.Since(start)
				if code != 0 {
					b.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				stages = stageSeconds(b, out)
			}
			n := float64(b.N)
			b.ReportMetric(wall.Seconds()/n, "wall-s/op")
			b.ReportMetric(stages[run.StageEngine], "engine-start-s")
			b.ReportMetric(stages[run.StageClient], "load-s")
			overhead := 0.0
			for name, s := range stages {
				if name != run.StageEngine && name != run.StageClient && name != run.StageRouter && name != run.StageSidecars && name != run.StageGPUIdle {
					overhead += s
				}
			}
			b.ReportMetric(overhead, "runner-overhead-s")
			b.ReportMetric(stages[run.StageAcceptance]+stages[run.StageAggregate]+stages[run.StageValidate], "result-stages-s")
			b.ReportMetric(stages[run.StageStop], "stop-s")
		})
	}
}

// stageSeconds reads the stage durations of the point in dir.
func stageSeconds(tb testing.TB, dir string) map[string]float64 {
	b, err := os.ReadFile(filepath.Join(dir, run.RecordFile))
	if err != nil {
		tb.Fatal(err)
	}
	var rec run.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range rec.Stages {
		out[s.Name] += s.Seconds
	}
	return out
}
