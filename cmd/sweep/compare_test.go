package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/compare"
	"sweep/sweep/knee"
	"sweep/sweep/run"
)

// simulatedDiscovery runs a short simulated discovery of the MI325X
// Qwen3.5 TP8 arms (conc 16 to 48; 120 s points) into out, with env set
// for the engines (a seed, a planted slowdown).
func simulatedDiscovery(t *testing.T, out string, env map[string]string, extra ...string) {
	t.Helper()
	simulatedDiscoveryOf(t, 120, out, env, extra...)
}

// simulatedDiscoveryOf is simulatedDiscovery with points of seconds.
func simulatedDiscoveryOf(t *testing.T, seconds int, out string, env map[string]string, extra ...string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	args := append([]string{"discover", "--simulate", "--builtin-client", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp",
		"--tp", "8", "--conc-list", "16", "24", "32", "40", "48", "--official-durations", "--duration", strconv.Itoa(seconds), "--no-report", "--stop-grace", "3s",
		"--out", out}, extra...)
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for k := range env {
		require.NoError(t, os.Unsetenv(k))
	}
}

// TestCompareSimulatedSlowdown: a simulated baseline of two arms against
// an A/A rerun (another seed) gives PASS; against a PR sweep whose TEP8
// arm's engine is planted 10 % slower (every scheduler step, the
// slow-steps fault) it gives REGRESSION naming that arm only, and the JSON
// holds the documented fields.
func TestCompareSimulatedSlowdown(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	dir := t.TempDir()
	base, aa := filepath.Join(dir, "base"), filepath.Join(dir, "aa")
	simulatedDiscovery(t, base, nil)
	simulatedDiscovery(t, aa, map[string]string{"SWEEP_SIM_SEED": "7"})
	code, stdout, stderr := runCLI(t, "compare", base, aa)
	assert.Equal(t, exitOK, code, "A/A:\n%s\n%s", stdout, stderr)
	assert.Contains(t, stdout, "verdict: PASS")

	// HEAD: the A/A run's TP8 results, and the TEP8 arm rerun slower.
	head := filepath.Join(dir, "head")
	require.NoError(t, os.Mkdir(head, 0o755))
	arms, err := knee.Read(t.Context(), aa)
	require.NoError(t, err)
	for _, a := range arms {
		if a.Identity.Get("ep") != "1" {
			continue
		}
		for _, s := range a.Samples {
			data, err := os.ReadFile(s.File)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(head, filepath.Base(s.File)), data, 0o644))
		}
	}
	simulatedDiscovery(t, filepath.Join(head, "tep8"), map[string]string{"SWEEP_SIM_SEED": "7", "SWEEP_SIM_FAULT": "slow-steps:10"}, "--ep", "8")
	code, stdout, stderr = runCLI(t, "compare", base, head, "--format", "json")
	require.Equal(t, exitABRegression, code, "planted:\n%s\n%s", stdout, stderr)
	var rep compare.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	assert.Equal(t, compare.Regression, rep.Verdict)
	require.Len(t, rep.Arms, 2)
	for _, a := range rep.Arms {
		require.NotNil(t, a.DeltaPct, a.Arm)
		require.NotNil(t, a.CIPct, a.Arm)
		assert.NotEmpty(t, a.NoiseSource)
		assert.Len(t, a.Points, 5)
		if a.Identity.Get("ep") == "8" {
			assert.Equal(t, compare.Regression, a.Verdict, "the slowed arm")
			assert.Less(t, *a.DeltaPct, -5.0)
		} else {
			assert.Equal(t, compare.Pass, a.Verdict, "the untouched arm %s", a.Arm)
		}
	}
	assert.Contains(t, stderr, "REGRESSION")

	// The A/A pair as a calibration: its noise replaces the paired scatter.
	noise := filepath.Join(dir, "noise.json")
	code, _, stderr = runCLI(t, "compare", "--calibrate", base, aa, "--out", noise)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "wrote the noise of 2 arms")
	code, stdout, _ = runCLI(t, "compare", base, head, "--calibration", noise, "--format", "json")
	assert.Equal(t, exitABRegression, code)
	rep = compare.Report{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	for _, a := range rep.Arms {
		assert.Contains(t, a.NoiseSource, "calibration: A/A noise of this arm from "+noise, a.Arm)
	}
}

func TestCompareFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one dir", []string{"compare", dir}, "takes BASE and HEAD"},
		{"tolerance", []string{"compare", dir, dir, "--tolerance", "0"}, "--tolerance 0"},
		{"tolerance NaN", []string{"compare", dir, dir, "--tolerance", "NaN"}, "--tolerance NaN: want a percentage in (0, 100)"},
		{"format", []string{"compare", dir, dir, "--format", "html"}, `--format "html"`},
		{"metric", []string{"compare", dir, dir, "--metric", "speed"}, `metric "speed"`},
		{"out without calibrate", []string{"compare", dir, dir, "--out", "x"}, "--out goes with --calibrate"},
		{"empty side", []string{"compare", dir, dir}, "holds no result file"},
		{"calibrate without dirs", []string{"compare", "--calibrate"}, "--calibrate takes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// stageResults copies the result files of compare's conformance case s01
// (BASE: replicates of two arms) whose names start with prefix into a new
// directory.
func stageResults(t *testing.T, prefix string) string {
	t.Helper()
	src := filepath.Join("..", "..", "sweep", "compare", "testdata", "conformance", "cases", "s01", "base")
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	dst := t.TempDir()
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
	}
	return dst
}

// breakResult rewrites dir's result file of conc 8 (replicate 00) with
// edit.
func breakResult(t *testing.T, dir string, edit func([]byte) []byte) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "minimaxm3_tp2_conc8_*_00_*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(files[0], edit(data), 0o644))
	return files[0]
}

// cutResult cuts a result 3000 bytes after its "request_metrics" key, as
// a copy that ran out of disk would.
func cutResult(data []byte) []byte {
	return data[:bytes.Index(data, []byte(`"request_metrics"`))+3000]
}

// TestCompareInputErrors: exit 1 is REGRESSION's alone. A comparison or
// calibration that cannot be made (a side that does not exist or is a
// file, a result with a bad value or cut short, runs without repeats or
// sharing their results, an --out that is not a calibration file) exits
// 2 with what to fix, and --out is never overwritten unless it is a
// calibration.
func TestCompareInputErrors(t *testing.T) {
	base := stageResults(t, "minimaxm3_")
	missing := filepath.Join(t.TempDir(), "missing")
	badValue := stageResults(t, "minimaxm3_")
	badFile := breakResult(t, badValue, func(b []byte) []byte { return bytes.Replace(b, []byte(`"tp":2`), []byte(`"tp":"two"`), 1) })
	cut := stageResults(t, "minimaxm3_")
	cutFile := breakResult(t, cut, cutResult)
	once := stageResults(t, "minimaxm3_tp4_conc128_")
	outs := t.TempDir()
	result := filepath.Join(outs, "result.json")
	notes := filepath.Join(outs, "notes.txt")
	for path, body := range map[string]string{result: `{"conc": 8, "request_metrics": {}}`, notes: "my notes\n"} {
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing side", []string{"compare", base, missing}, "HEAD " + missing + ": " + missing + " does not exist"},
		{"side is a file", []string{"compare", base, badFile}, "is not a directory"},
		{"bad value", []string{"compare", base, badValue}, filepath.Base(badFile) + ":1:"},
		{"cut short", []string{"compare", base, cut}, filepath.Base(cutFile) + ":1:"},
		{"cut short, calibrating", []string{"compare", "--calibrate", base, cut}, "the JSON ends early"},
		{"no repeats", []string{"compare", "--calibrate", once}, "no point has two valid results"},
		{"same run twice", []string{"compare", "--calibrate", base, base}, "run " + base + " and run " + base + " both hold the result"},
		{"out is a result", []string{"compare", "--calibrate", base, "--out", result}, "--out " + result + " exists and is not a noise calibration file"},
		{"out is notes", []string{"compare", "--calibrate", base, "--out", notes}, "--out " + notes + " exists and is not a noise calibration file"},
		{"out is a directory", []string{"compare", "--calibrate", base, "--out", outs}, "--out " + outs + " is a directory: name a file (" + filepath.Join(outs, "noise.json") + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
	for path, body := range map[string]string{result: `{"conc": 8, "request_metrics": {}}`, notes: "my notes\n"} {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, body, string(data), "%s is left as it was", path)
	}

	// A calibration file is replaced, and the count reads right.
	noise := filepath.Join(outs, "noise.json")
	tp2 := stageResults(t, "minimaxm3_tp2_")
	for range 2 {
		code, _, stderr := runCLI(t, "compare", "--calibrate", tp2, "--out", noise)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, "wrote the noise of 1 arm to "+noise+"\n", stderr)
	}
}

// TestCompareBenchmarkDurations: two simulated sweeps of one engine and
// seed whose points ran for different benchmark durations (120 s and
// 150 s) are not compared: the durations, read from each point's aiperf
// artifacts, make every point a length-mismatch problem and the verdict
// INCOMPLETE, and the durations are named among what differs. The
// comparison read them as a change of the engine.
func TestCompareBenchmarkDurations(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	simulatedDiscovery(t, base, nil, "--ep", "8")
	simulatedDiscoveryOf(t, 150, head, nil, "--ep", "8")
	code, stdout, stderr := runCLI(t, "compare", base, head)
	require.Equal(t, exitABIncomplete, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "\n  differs: client's benchmark duration: 120 s → 150 s\n")
	assert.Contains(t, stdout, "length-mismatch: arm qwen3.5 cluster:mi325x-amds sglang fp8 mtp tp8 ep8, conc 16: BASE ran it for 120 s, HEAD for 150 s")
	assert.Contains(t, stdout, "\nverdict: INCOMPLETE: 5 problems (5 length-mismatch); no verdict is drawn from incomplete data\n")
}

// TestCompareWithoutArtifacts: a sweep whose points' aiperf artifacts
// were deleted (the CI uploads most results alone) does not say its
// benchmark duration there, but each point's run.json records the
// client's argv: its --benchmark-duration is the duration (it read
// "differs: client's benchmark duration: 120 s → unknown" against the
// same sweep with its artifacts, and paired 120 s points with 300 s ones
// only by their spans). Without run.json either, its results' measured
// span stands in: 120 s points (spanning about 130 s) against 300 s ones
// are a length-mismatch, BASE's or HEAD's artifacts gone (it read PASS:
// "an unknown duration pairs with any").
func TestCompareWithoutArtifacts(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	dir := t.TempDir()
	long, short, same := filepath.Join(dir, "long"), filepath.Join(dir, "short"), filepath.Join(dir, "same")
	simulatedDiscoveryOf(t, 300, long, nil, "--ep", "8")
	simulatedDiscovery(t, short, nil, "--ep", "8")
	mid := filepath.Join(dir, "mid")
	simulatedDiscoveryOf(t, 200, mid, nil, "--ep", "8")
	require.NoError(t, exec.Command("cp", "-a", short, same).Run(), "the same sweep, its artifacts kept")
	arts, err := filepath.Glob(filepath.Join(short, "*", "aiperf_artifacts"))
	require.NoError(t, err)
	require.Len(t, arts, 5, "the points' aiperf artifacts")
	for _, a := range arts {
		require.NoError(t, os.RemoveAll(a))
	}

	// run.json says the duration: the same sweep differs in nothing, and
	// the other duration is named.
	code, stdout, stderr := runCLI(t, "compare", same, short)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.NotContains(t, stdout, "benchmark duration")
	for _, tc := range []struct{ base, head, want string }{
		{long, short, "BASE ran it for 300 s, HEAD for 120 s (the client's configured benchmark duration)"},
		{short, long, "BASE ran it for 120 s, HEAD for 300 s (the client's configured benchmark duration)"},
	} {
		code, stdout, stderr := runCLI(t, "compare", tc.base, tc.head)
		require.Equal(t, exitABIncomplete, code, "compare %s %s\nstdout:\n%s\nstderr:\n%s", tc.base, tc.head, stdout, stderr)
		assert.Contains(t, stdout, "\n  differs: client's benchmark duration: "+map[bool]string{true: "300 s → 120 s", false: "120 s → 300 s"}[tc.base == long]+"\n")
		assert.Contains(t, stdout, "length-mismatch: arm qwen3.5 cluster:mi325x-amds sglang fp8 mtp tp8 ep8, conc 16: "+tc.want)
		assert.Contains(t, stdout, "\nverdict: INCOMPLETE: 5 problems (5 length-mismatch); no verdict is drawn from incomplete data\n")
	}

	// A run.json that does not read is no duration silently unknown: the
	// comparison exits 2 naming it at its line and column (it read
	// "1200 s → 1200 s, unknown" and exit 0). One that records another
	// result says so under differs:.
	recs, err := filepath.Glob(filepath.Join(short, "*", run.RecordFile))
	require.NoError(t, err)
	require.Len(t, recs, 5, "the points' run.json")
	sort.Strings(recs)
	bad, swapped := filepath.Join(dir, "bad"), filepath.Join(dir, "swapped")
	for _, d := range []string{bad, swapped} {
		require.NoError(t, exec.Command("cp", "-a", short, d).Run())
	}
	badRec := filepath.Join(bad, filepath.Base(filepath.Dir(recs[0])), run.RecordFile)
	require.NoError(t, os.Truncate(badRec, 200))
	code, stdout, stderr = runCLI(t, "compare", same, bad)
	require.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, regexp.QuoteMeta(badRec)+`:\d+:\d+: the JSON ends early: want the run.json sweep run writes; the benchmark duration of \S+ is read from it \(its aiperf artifacts are gone\): restore the point's run.json, or remove it`, stderr)
	swapRec := filepath.Join(swapped, filepath.Base(filepath.Dir(recs[0])), run.RecordFile)
	data, err := os.ReadFile(recs[1])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(swapRec, data, 0o644))
	resultOf := func(rec string) string {
		r, err := run.ReadRecordFile(filepath.Dir(rec))
		require.NoError(t, err)
		return filepath.Base(r.ResultFile)
	}
	code, stdout, stderr = runCLI(t, "compare", same, swapped)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "\n  differs: client's benchmark duration: 120 s → 120 s, unknown ("+swapRec+" records result "+resultOf(recs[1])+", not "+resultOf(recs[0])+")\n")

	// A run.json whose client's --benchmark-duration is no number says so
	// (it read "records no --benchmark-duration of the client"); one whose
	// client argv is no list names that key (it read "processes.argv").
	rec, err := run.ReadRecordFile(filepath.Dir(recs[0]))
	require.NoError(t, err)
	argv := rec.Processes[run.ClientProcess].Argv
	i := slices.Index(argv, "--benchmark-duration")
	require.GreaterOrEqual(t, i, 0, "the client's argv: %q", argv)
	argv[i+1] = "abc"
	data, err = json.MarshalIndent(rec, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(swapRec, data, 0o644))
	code, stdout, stderr = runCLI(t, "compare", same, swapped)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "\n  differs: client's benchmark duration: 120 s → 120 s, unknown ("+swapRec+` records a --benchmark-duration of the client that is no positive number of seconds ("abc"))`+"\n")
	var raw map[string]any
	require.NoError(t, json.Unmarshal(data, &raw))
	raw["processes"].(map[string]any)[run.ClientProcess].(map[string]any)["argv"] = strings.Join(argv, " ")
	data, err = json.MarshalIndent(raw, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(swapRec, data, 0o644))
	code, stdout, stderr = runCLI(t, "compare", same, swapped)
	require.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, regexp.QuoteMeta(swapRec)+`:\d+:\d+: processes\.client\.argv: a JSON string where a list belongs: want the run.json sweep run writes`, stderr)

	// Without run.json either, the span stands in.
	for _, r := range recs {
		require.NoError(t, os.Remove(r))
	}
	for _, tc := range []struct{ base, head, want string }{
		{long, short, "BASE ran it for 300 s (the client's configured benchmark duration), HEAD for a duration its results do not say (no aiperf artifacts beside them, and no run.json that says it) over a measured span of "},
		{short, long, "HEAD ran it for 300 s (the client's configured benchmark duration), BASE for a duration its results do not say (no aiperf artifacts beside them, and no run.json that says it) over a measured span of "},
	} {
		code, stdout, stderr := runCLI(t, "compare", tc.base, tc.head)
		require.Equal(t, exitABIncomplete, code, "compare %s %s\nstdout:\n%s\nstderr:\n%s", tc.base, tc.head, stdout, stderr)
		assert.Contains(t, stdout, "length-mismatch: arm qwen3.5 cluster:mi325x-amds sglang fp8 mtp tp8 ep8, conc 16: "+tc.want)
		assert.Contains(t, stdout, "more than 10 % short of 300 s: a shorter run")
		assert.Contains(t, stdout, "\nverdict: INCOMPLETE: 5 problems (5 length-mismatch); no verdict is drawn from incomplete data\n")
	}

	// Neither side says its duration: a line says so with both sides'
	// spans, and spans more than twice apart (300 s against 120 s) are
	// different lengths (no duration line at all, and INCONCLUSIVE).
	for _, d := range []string{long, mid} {
		for _, pattern := range []string{"aiperf_artifacts", run.RecordFile} {
			paths, err := filepath.Glob(filepath.Join(d, "*", pattern))
			require.NoError(t, err)
			require.Len(t, paths, 5, pattern)
			for _, p := range paths {
				require.NoError(t, os.RemoveAll(p))
			}
		}
	}
	spans := regexp.MustCompile(`\n  differs: client's benchmark duration: unknown → unknown \(measured spans (\d[\d.]*)-(\d[\d.]*) s → (\d[\d.]*)-(\d[\d.]*) s, HEAD's a median 0\.\d+x BASE's\)\n`)
	code, stdout, stderr = runCLI(t, "compare", long, short)
	require.Equal(t, exitABIncomplete, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	m := spans.FindStringSubmatch(stdout)
	require.NotNil(t, m, "no line of both spans in:\n%s", stdout)
	assert.Contains(t, stdout, "length-mismatch: arm qwen3.5 cluster:mi325x-amds sglang fp8 mtp tp8 ep8, conc 16: BASE and HEAD ran it for durations their results do not say (no aiperf artifacts beside them, and no run.json that says it) over measured spans of ")
	assert.Contains(t, stdout, "\nverdict: INCOMPLETE: 5 problems (5 length-mismatch); no verdict is drawn from incomplete data\n")
	// 120 s against 200 s: spans 1.6 times apart at every point, at one
	// throughput, none twice apart. The arm's sides ran for different
	// lengths (it read PASS, and 120 s against 240 s flagged only the
	// point whose spans were twice apart).
	code, stdout, stderr = runCLI(t, "compare", short, mid)
	require.Equal(t, exitABIncomplete, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `\n  differs: client's benchmark duration: unknown → unknown \(measured spans \S+ s → \S+ s, HEAD's a median 1\.\d+x BASE's\)\n`, stdout)
	assert.Contains(t, stdout, "length-mismatch: arm qwen3.5 cluster:mi325x-amds sglang fp8 mtp tp8 ep8, conc 16: BASE and HEAD ran this arm for durations their results do not say (no aiperf artifacts beside them, and no run.json that says it): HEAD's measured spans are a median 1.")
	assert.Contains(t, stdout, "\nverdict: INCOMPLETE: 5 problems (5 length-mismatch); no verdict is drawn from incomplete data\n")
	// One length on both sides: no problem, and nothing differs (it
	// read "differs: ... unknown → unknown (measured spans 132.2 s →
	// 132.2 s)").
	again := filepath.Join(dir, "short-again")
	require.NoError(t, exec.Command("cp", "-a", short, again).Run())
	code, stdout, stderr = runCLI(t, "compare", short, again)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.NotContains(t, stdout, "differs:")
}
