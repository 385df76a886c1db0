package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/usage"
	"sweep/metrics/aiperf"
)

// The reader reads every key the writer writes: an aggregate of each
// conformance case, written, read back and written again, is the same
// bytes; InferenceX's own expected.json reads and writes back the same
// JSON value.
func TestReadFileRoundTrip(t *testing.T) {
	idx := loadIndex(t)
	for _, c := range idx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := filepath.Join(conformanceDir, c.Name)
			facts := caseFacts(t, dir)
			in, err := LoadInputs(dir, facts.HFHubCache)
			if err != nil {
				t.Skipf("nothing to aggregate: %v", err)
			}
			res, err := Aggregate(in, facts)
			if err != nil {
				t.Skipf("aggregation fails: %v", err)
			}
			res.SetValidity([]string{"a reason"})
			path := Path(t.TempDir(), "r")
			require.NoError(t, WriteResult(path, res))
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			f, err := ReadFile(path)
			require.NoError(t, err)
			assert.True(t, f.ValidStated)
			assert.Empty(t, f.NonFinite)
			got, err := MarshalResult(&f.Result)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))

			expected := filepath.Join(dir, "expected.json")
			wantN := decodeNumbers(t, expected)
			if wantN == nil {
				return
			}
			f, err = ReadFile(expected)
			require.NoError(t, err)
			assert.False(t, f.ValidStated, "InferenceX's results do not say")
			got, err = MarshalResult(&f.Result)
			require.NoError(t, err)
			dec := json.NewDecoder(bytes.NewReader(got))
			dec.UseNumber()
			var gotN any
			require.NoError(t, dec.Decode(&gotN))
			for k := range gotN.(map[string]any) {
				if ourKeys[k] {
					delete(gotN.(map[string]any), k)
				}
			}
			assert.Empty(t, diffJSON("", gotN, wantN, true))
		})
	}
}

func TestReadFileNonFinite(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "r.json")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	f, err := ReadFile(write(`{"conc": 4, "tp": 8, "hw": "NaN Infinity", "request_metrics": {"qps": {"std": NaN, "mean": 1.5},
		"throughput": {"per_gpu": {"total_tput_tps": -Infinity}}}, "warnings": ["\"NaN\"", "x"],
		"server_metrics": {"sources": [{"id": "a"}, {"id": "b", "prompt_tokens": Infinity}],
		"cache": {"cached_tokens_by_source": {"device": NaN, "host": 3}}}}`))
	require.NoError(t, err)
	assert.Equal(t, []NonFinite{
		{"request_metrics.qps.std", "NaN"},
		{"request_metrics.throughput.per_gpu.total_tput_tps", "-Infinity"},
		{"server_metrics.sources[1].prompt_tokens", "Infinity"},
		{"server_metrics.cache.cached_tokens_by_source.device", "NaN"},
	}, f.NonFinite)
	assert.Equal(t, "NaN Infinity", f.HW, "strings are left alone")
	assert.Equal(t, []string{`"NaN"`, "x"}, f.Warnings)
	assert.Nil(t, f.RequestMetrics.QPS.Std)
	require.NotNil(t, f.RequestMetrics.QPS.Mean)
	assert.Equal(t, 1.5, float64(*f.RequestMetrics.QPS.Mean))
	assert.Equal(t, []string{"device", "host"}, f.ServerMetrics.Cache.CachedTokensBySource.Keys())
	assert.Equal(t, "no per-GPU throughput (request_metrics.throughput.per_gpu.total_tput_tps is -Infinity)", f.Excluded())
	assert.Equal(t, "8", f.Identity.Get("tp"))
}

func TestReadFileNotAResult(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"array.json":   `[{"conc": 1, "request_metrics": {}}]`,
		"noconc.json":  `{"request_metrics": {}}`,
		"nometr.json":  `{"conc": 1}`,
		"garbage.json": `{"hw": "mi325x", "tp": 8`,
		"empty.json":   ``,
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		_, err := ReadFile(p)
		assert.ErrorIs(t, err, ErrNotResult, name)
	}
	for name, tc := range map[string]struct {
		body      string
		line, col int
		key       string
	}{
		"conc0.json":   {`{"conc": 0, "request_metrics": {}}`, 1, 2, "conc"},
		"concstr.json": {"{\n  \"request_metrics\": {\"conc\": 1},\n  \"conc\": \"8\"\n}", 3, 3, "conc"},
		"tp.json":      {`{"conc": 8, "x": NaN, "tp": "eight", "request_metrics": {}}`, 1, 23, "tp"},
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(tc.body), 0o644))
		_, err := ReadFile(p)
		re, ok := errors.AsType[*configs.Error](err)
		require.True(t, ok, "%s: %v", name, err)
		assert.Equal(t, p, re.File)
		assert.Equal(t, tc.key, re.Key, name)
		assert.Equal(t, [2]int{tc.line, tc.col}, [2]int{re.Line, re.Col}, "%s: the key's position in the file as written (NaN included)", name)
	}
	// aiperf's own JSON artifacts are never read as results: a broken
	// result-shaped one is not a problem (the real ones are tens of MB).
	for _, name := range []string{aiperf.SummaryFile, aiperf.TimeslicesJSON, aiperf.ServerMetricsFile} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(`{"conc": 0, "request_metrics": {`), 0o644))
	}
	files, problems, err := ReadDir(t.Context(), dir)
	require.NoError(t, err)
	assert.Empty(t, files)
	assert.Len(t, problems, 3)
}

// TestReadFileBroken: a file taken for a result (its top level has
// "conc" or "request_metrics" as far as it goes, or it sits where a sweep
// writes a point's result) that is not valid JSON is a positioned
// problem, never ErrNotResult: a result cut short is not left out
// silently. The position is the file's own, Python's NaN before it
// included.
func TestReadFileBroken(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "p_conc4"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "p_conc4.probe-2"), 0o755))
	for _, tc := range []struct {
		name, body string
		line, col  int
		what, why  string
	}{
		{"cut.json", "{\n  \"conc\": 4,\n  \"request_metrics\": {\"qps\": {\"mean\": 1", 3, 40, "the JSON ends early (the file is cut short)", `its top level has "conc" and "request_metrics"`},
		{"cutkey.json", `{"hw": "x", "conc": 4, "tp"`, 1, 28, "the JSON ends early", `its top level has "conc",`},
		{"nan.json", `{"request_metrics": {"qps": NaN, "x": -Infinity, "y": 1,, "z": 2}}`, 1, 57, "not valid JSON: invalid character ','", `its top level has "request_metrics"`},
		{"more.json", "{\"conc\": 4, \"request_metrics\": {}}\n}", 2, 1, "more after the end of the JSON object", `its top level has "conc" and "request_metrics"`},
		{filepath.Join("p_conc4", "p_conc4.json"), ``, 1, 1, "the file is empty", "it is named as a sweep names a point's result"},
		{filepath.Join("p_conc4.probe-2", "p_conc4.json"), `{"hw"`, 1, 6, "the JSON ends early", "it is named as a sweep names a point's result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			require.NoError(t, os.WriteFile(p, []byte(tc.body), 0o644))
			_, err := ReadFile(p)
			require.Error(t, err)
			assert.NotErrorIs(t, err, ErrNotResult)
			ce, ok := errors.AsType[*configs.Error](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, p, ce.File)
			assert.Equal(t, [2]int{tc.line, tc.col}, [2]int{ce.Line, ce.Col}, "%v", err)
			assert.Contains(t, ce.Msg, tc.what)
			assert.Contains(t, ce.Msg, tc.why)
			assert.Contains(t, ce.Msg, "so it is a result that cannot be read: restore it")
		})
	}
	files, problems, err := ReadDir(t.Context(), dir)
	require.NoError(t, err)
	assert.Empty(t, files)
	assert.Len(t, problems, 6, "each a problem of ReadDir, not a file left out")
}

func TestPointPath(t *testing.T) {
	assert.Equal(t, filepath.Join("d", "x_conc4", "x_conc4.json"), PointPath("d", "x_conc4"))
	assert.Equal(t, filepath.Join("d", "x_conc4"), PointDir("d", "x_conc4"))
	assert.Equal(t, filepath.Join("o", "n.json"), Path("o", "n"))
}

// InferenceX writes dp_attention as the text of a boolean; a file with a
// JSON boolean there is the same arm.
func TestReadFileDPAttentionBool(t *testing.T) {
	dir := t.TempDir()
	var ids []Identity
	for i, v := range []string{`true`, `"true"`} {
		p := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		require.NoError(t, os.WriteFile(p, []byte(`{"conc": 4, "tp": 8, "dp_attention": `+v+`, "request_metrics": {}}`), 0o644))
		f, err := ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, "true", f.DPAttention)
		ids = append(ids, f.Identity)
	}
	assert.Equal(t, ids[0].ArmKey(), ids[1].ArmKey())
	assert.Equal(t, "tp8 dpa", ids[0].Parallelism())
}

// A top-level key that needs escaping is not a reason to refuse a file.
func TestReadFileOddKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"conc": 4, "a\"b\\c": 1, "request_metrics": {}}`), 0o644))
	f, err := ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, 4, f.Conc)
}

// A results directory given as a link to it is read (WalkDir does not
// follow a link at its root: sweep knees, compare and sim calibrate read
// it as empty), its files named under the link; a link inside it to a
// directory already read adds nothing.
func TestReadDirThroughALink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "p", "r.json"), []byte(`{"conc": 4, "tp": 8, "request_metrics": {}}`), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))
	require.NoError(t, os.Symlink(filepath.Join(real, "p"), filepath.Join(real, "inner")))
	files, problems, err := ReadDir(t.Context(), link)
	require.NoError(t, err)
	assert.Empty(t, problems)
	require.Len(t, files, 1)
	assert.Equal(t, filepath.Join(link, "p", "r.json"), files[0].Path)
}

// TestReadDirFollowsLinks: replicates gathered as links to their run
// directories are read, each directory once (two links to one run, a link
// back up the tree), and named under the first link met.
func TestReadDirFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	for _, run := range []string{"run1", "run2"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, run, "p"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, run, "p", "r.json"), []byte(`{"conc": 4, "tp": 8, "request_metrics": {}}`), 0o644))
	}
	aa := filepath.Join(dir, "aa")
	require.NoError(t, os.Mkdir(aa, 0o755))
	for link, to := range map[string]string{"a": "../run1", "b": "../run2", "c": "../run1", "up": ".."} {
		require.NoError(t, os.Symlink(to, filepath.Join(aa, link)))
	}
	files, problems, err := ReadDir(t.Context(), aa)
	require.NoError(t, err)
	assert.Empty(t, problems)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	assert.Equal(t, []string{filepath.Join(aa, "a", "p", "r.json"), filepath.Join(aa, "b", "p", "r.json")}, paths)
}

// A directory that does not exist, or a file given for one, is named
// with what to give instead.
func TestReadDirNotADirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "summary.json")
	require.NoError(t, os.WriteFile(file, []byte(`{}`), 0o644))
	for path, want := range map[string]string{
		filepath.Join(dir, "missing"): filepath.Join(dir, "missing") + " does not exist (give the directory holding the result files)",
		file:                          file + " is not a directory (give the directory holding the result files)",
	} {
		_, _, err := ReadDir(t.Context(), path)
		assert.EqualError(t, err, want)
	}
}

// TestReadDirBenchmarkSeconds: a result alone in its point directory
// gets the benchmark duration its client was configured with from the
// directory's aiperf summary (not the measured span); results sharing a
// directory, whose artifacts could be any one's, and a point without
// artifacts get none.
func TestReadDirBenchmarkSeconds(t *testing.T) {
	dir := t.TempDir()
	point := func(sub string, results []string, duration string) {
		p := filepath.Join(dir, sub)
		require.NoError(t, os.MkdirAll(filepath.Join(p, "aiperf_artifacts"), 0o755))
		for _, r := range results {
			require.NoError(t, os.WriteFile(filepath.Join(p, r), []byte(`{"conc": 4, "tp": 8, "request_metrics": {"throughput": {"duration_seconds": 1199.7}}}`), 0o644))
		}
		if duration != "" {
			summary := `{"input_config": {"phases": [{"kind": "profiling", "duration": ` + duration + `}]}}`
			require.NoError(t, os.WriteFile(filepath.Join(p, "aiperf_artifacts", aiperf.SummaryFile), []byte(summary), 0o644))
		}
	}
	point("full", []string{"full.json"}, "1200.0")
	point("full.probe", []string{"full.json"}, "180.0")
	point("flat", []string{"a.json", "b.json"}, "3600.0")
	point("bare", []string{"bare.json"}, "")
	files, problems, err := ReadDir(t.Context(), dir)
	require.NoError(t, err)
	assert.Empty(t, problems)
	got := map[string]float64{}
	for _, f := range files {
		rel, err := filepath.Rel(dir, f.Path)
		require.NoError(t, err)
		got[rel] = f.BenchmarkSeconds
	}
	assert.Equal(t, map[string]float64{"full/full.json": 1200, "full.probe/full.json": 180, "flat/a.json": 0, "flat/b.json": 0, "bare/bare.json": 0}, got)
}

// TestReadDirRunRecord: a simulated result whose "simulated" key was
// removed by hand read as real, though the run.json beside it records
// the simulation (and passed official --propose's refusal of simulated
// results). The record decides a missing key; a result that says
// otherwise than its record is a usage error naming both files; a
// record of another result file says nothing of this one.
func TestReadDirRunRecord(t *testing.T) {
	const sim, real = `{"result_file": "/elsewhere/p/r.json", "simulation": {"seed": 0, "clock": "virtual"}}`, `{"result_file": "/elsewhere/p/r.json"}`
	for _, tc := range []struct {
		name, result, record string
		simulated            bool
		problem              string // "": none
	}{
		{"the key removed, a simulation recorded", `{"conc": 4, "tp": 8, "request_metrics": {}}`, sim, true, ""},
		{"the key removed, a real run recorded", `{"conc": 4, "tp": 8, "request_metrics": {}}`, real, false, ""},
		{"the key null", `{"conc": 4, "tp": 8, "simulated": null, "request_metrics": {}}`, sim, true, ""},
		{"the key agrees", `{"conc": 4, "tp": 8, "simulated": true, "request_metrics": {}}`, sim, true, ""},
		{"the key says real, a simulation recorded", `{"conc": 4, "tp": 8, "simulated": false, "request_metrics": {}}`, sim, false,
			`says "simulated": false, but its run record `},
		{"the key says simulated, a real run recorded", `{"conc": 4, "tp": 8, "simulated": true, "request_metrics": {}}`, real, true,
			`says "simulated": true, but its run record `},
		{"a record of another file", `{"conc": 4, "tp": 8, "request_metrics": {}}`, `{"result_file": "/p/other.json", "simulation": {}}`, false, ""},
		{"no record", `{"conc": 4, "tp": 8, "request_metrics": {}}`, "", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "p")
			require.NoError(t, os.Mkdir(p, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, "r.json"), []byte(tc.result), 0o644))
			if tc.record != "" {
				require.NoError(t, os.WriteFile(filepath.Join(p, RunRecordFile), []byte(tc.record), 0o644))
			}
			files, problems, err := ReadDir(t.Context(), dir)
			require.NoError(t, err)
			require.Len(t, files, 1)
			assert.Equal(t, tc.simulated, files[0].Simulated)
			if tc.problem == "" {
				assert.Empty(t, problems)
				return
			}
			require.Len(t, problems, 1)
			assert.ErrorContains(t, problems[0], filepath.Join(p, "r.json")+" "+tc.problem+filepath.Join(p, RunRecordFile))
			assert.True(t, usage.IsRefusal(problems[0]), "exit 2, naming the fix")
		})
	}
}
