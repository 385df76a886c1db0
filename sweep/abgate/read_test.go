package abgate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testModel = "Org/Model-FC"

// catFiles describes one category's files in a synthetic root.
type catFiles struct {
	n      int      // result rows; default the dataset size
	fail   []int    // indexes listed as failures in the score file
	infra  []int    // indexes whose result is an inference error
	header string   // score header line; default consistent with fail
	extra  []string // extra score rows (raw JSON)
	result string   // raw result file content, replacing the generated one
	// rowModel and rowCategory replace the failure rows' model_name and
	// test_category ("-" leaves the key out).
	rowModel, rowCategory string
}

// writeCategory writes c's result and score files under root in BFCL's
// layout and returns their paths.
func writeCategory(t *testing.T, root string, c Category, f catFiles) (resultFile, scoreFile string) {
	t.Helper()
	n := f.n
	if n == 0 {
		n = c.Size
	}
	var res, sc strings.Builder
	infra := map[int]bool{}
	for _, i := range f.infra {
		infra[i] = true
	}
	for i := range n {
		if infra[i] {
			fmt.Fprintf(&res, "{\"id\": \"%s_%d\", \"result\": \"Error during inference: Error code: 503\"}\n", c.Name, i)
		} else {
			fmt.Fprintf(&res, "{\"id\": \"%s_%d\", \"result\": [{\"f\": \"{}\"}]}\n", c.Name, i)
		}
	}
	if f.result != "" {
		res.Reset()
		res.WriteString(f.result)
	}
	header := f.header
	if header == "" {
		header = fmt.Sprintf(`{"accuracy": %g, "correct_count": %d, "total_count": %d}`, float64(n-len(f.fail))/float64(n), n-len(f.fail), n)
	}
	sc.WriteString(header + "\n")
	label := func(key, v, def string) string {
		switch v {
		case "-":
			return ""
		case "":
			v = def
		}
		return fmt.Sprintf(", %q: %q", key, v)
	}
	labels := label("model_name", f.rowModel, ModelDir(testModel)) + label("test_category", f.rowCategory, c.Name)
	for _, i := range f.fail {
		fmt.Fprintf(&sc, "{\"id\": \"%s_%d\"%s, \"valid\": false, \"error_type\": \"x\"}\n", c.Name, i, labels)
	}
	for _, e := range f.extra {
		sc.WriteString(e + "\n")
	}
	resultFile = filepath.Join(root, filepath.FromSlash(ResultPath(testModel, c)))
	scoreFile = filepath.Join(root, filepath.FromSlash(ScorePath(testModel, c)))
	for file, data := range map[string]string{resultFile: res.String(), scoreFile: sc.String()} {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(data), 0o644))
	}
	return resultFile, scoreFile
}

func mustCategory(t *testing.T, name string) Category {
	t.Helper()
	c, ok := LookupCategory(name)
	require.True(t, ok, name)
	return c
}

func reasons(ps []Problem) []Reason {
	var out []Reason
	for _, p := range ps {
		out = append(out, p.Reason)
	}
	return out
}

func TestPaths(t *testing.T) {
	tests := []struct{ cat, result, score string }{
		{"parallel", "result/Qwen_Qwen3.6-27B-FC/non_live/BFCL_v4_parallel_result.json", "score/Qwen_Qwen3.6-27B-FC/non_live/BFCL_v4_parallel_score.json"},
		{"live_parallel", "result/Qwen_Qwen3.6-27B-FC/live/BFCL_v4_live_parallel_result.json", "score/Qwen_Qwen3.6-27B-FC/live/BFCL_v4_live_parallel_score.json"},
		{"multi_turn_base", "result/Qwen_Qwen3.6-27B-FC/multi_turn/BFCL_v4_multi_turn_base_result.json", "score/Qwen_Qwen3.6-27B-FC/multi_turn/BFCL_v4_multi_turn_base_score.json"},
		{"memory_rec_sum", "result/Qwen_Qwen3.6-27B-FC/agentic/memory/rec_sum/BFCL_v4_memory_rec_sum_result.json", "score/Qwen_Qwen3.6-27B-FC/agentic/memory/rec_sum/BFCL_v4_memory_rec_sum_score.json"},
		{"web_search_base", "result/Qwen_Qwen3.6-27B-FC/agentic/BFCL_v4_web_search_base_result.json", "score/Qwen_Qwen3.6-27B-FC/agentic/BFCL_v4_web_search_base_score.json"},
	}
	for _, tc := range tests {
		c := mustCategory(t, tc.cat)
		assert.Equal(t, tc.result, ResultPath("Qwen/Qwen3.6-27B-FC", c))
		assert.Equal(t, tc.score, ScorePath("Qwen/Qwen3.6-27B-FC", c))
	}
}

func TestExpandCategories(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []string
		wantErr string
	}{
		{"plain", []string{"parallel", "live_parallel"}, []string{"parallel", "live_parallel"}, ""},
		{"multi_turn is its four children", []string{"multi_turn", "live_relevance"},
			[]string{"multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context", "live_relevance"}, ""},
		{"each once, first position kept", []string{"multiple", "non_live"},
			[]string{"multiple", "simple_python", "simple_java", "simple_javascript", "parallel", "parallel_multiple", "irrelevance"}, ""},
		{"memory", []string{"memory"}, []string{"memory_kv", "memory_vector", "memory_rec_sum"}, ""},
		{"non_python", []string{"non_python"}, []string{"simple_java", "simple_javascript"}, ""},
		{"blanks skipped", []string{" parallel ", ""}, []string{"parallel"}, ""},
		{"v3 name", []string{"simple"}, nil, `category "simple" is not a BFCL v4 category or collection`},
		{"format_sensitivity is not scored", []string{"format_sensitivity"}, nil, `category "format_sensitivity" is not`},
		{"nothing", []string{""}, nil, "no categories given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExpandCategories(tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			assert.Equal(t, tc.want, names)
		})
	}
	all, err := ExpandCategories([]string{"all"})
	require.NoError(t, err)
	assert.Len(t, all, 22, "all: every scored v4 category")
}

// TestReadRootExactPaths: a category is read from its own files only; a
// neighbour whose name ends the same way (live_parallel for parallel,
// parallel_multiple for multiple) is never taken.
func TestReadRootExactPaths(t *testing.T) {
	tests := []struct {
		name    string
		want    string
		present []string
	}{
		{"parallel beside live_parallel", "parallel", []string{"live_parallel"}},
		{"multiple beside parallel_multiple and live_multiple", "multiple", []string{"parallel_multiple", "live_multiple", "live_parallel_multiple"}},
		{"irrelevance beside live_irrelevance", "irrelevance", []string{"live_irrelevance"}},
		{"multi_turn_base beside its siblings", "multi_turn_base", []string{"multi_turn_miss_func", "multi_turn_long_context"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, p := range tc.present {
				writeCategory(t, root, mustCategory(t, p), catFiles{})
			}
			rc, probs := ReadRoot(root, testModel, "a", mustCategory(t, tc.want), ReadOptions{})
			assert.Nil(t, rc, "no data from another category's file")
			assert.Equal(t, []Reason{ReasonMissingResult, ReasonMissingScore}, reasons(probs))

			// With only the score file of the neighbour missing, the
			// category's own files still read.
			writeCategory(t, root, mustCategory(t, tc.want), catFiles{fail: []int{0}})
			rc, probs = ReadRoot(root, testModel, "a", mustCategory(t, tc.want), ReadOptions{})
			require.NotNil(t, rc)
			assert.Empty(t, probs)
			assert.Equal(t, Fail, rc.Outcomes[tc.want+"_0"])
			assert.Equal(t, Pass, rc.Outcomes[tc.want+"_1"])
		})
	}
}

func TestReadRootProblems(t *testing.T) {
	since := time.Date(2026, 8, 22, 7, 17, 0, 0, time.UTC)
	tests := []struct {
		name     string
		cat      string
		files    catFiles
		skip     string // "score" or "result": delete that file
		mtime    map[string]time.Time
		opts     ReadOptions
		want     []Reason
		wantData bool
		detail   string // a substring of the first problem's detail
	}{
		{name: "clean", cat: "simple_javascript", files: catFiles{fail: []int{1, 2}}, wantData: true},
		{name: "missing score file", cat: "simple_javascript", skip: "score", want: []Reason{ReasonMissingScore},
			detail: "BFCL_v4_simple_javascript_score.json does not exist"},
		{name: "missing result file", cat: "simple_javascript", skip: "result", want: []Reason{ReasonMissingResult}},
		{name: "stale score file", cat: "simple_javascript", opts: ReadOptions{Since: since},
			mtime: map[string]time.Time{"score": since.Add(-time.Hour)}, want: []Reason{ReasonStale}, wantData: true,
			detail: "was modified at 2026-08-22T06:17:00Z, before --since 2026-08-22T07:17:00Z"},
		{name: "stale result file", cat: "simple_javascript", opts: ReadOptions{Since: since},
			mtime: map[string]time.Time{"result": since.Add(-time.Second)}, want: []Reason{ReasonStale}, wantData: true},
		{name: "file at since is fresh", cat: "simple_javascript", opts: ReadOptions{Since: since},
			mtime: map[string]time.Time{"result": since, "score": since}, wantData: true},
		{name: "header total disagrees with rows", cat: "multiple", files: catFiles{header: `{"accuracy": 1, "correct_count": 150, "total_count": 150}`},
			want: []Reason{ReasonHeaderMismatch}, wantData: true, detail: ":1: total_count is 150 but"},
		{name: "header failures disagree with rows", cat: "simple_javascript", files: catFiles{fail: []int{3},
			header: `{"accuracy": 0.96, "correct_count": 48, "total_count": 50}`},
			want: []Reason{ReasonHeaderMismatch}, wantData: true, detail: "total_count - correct_count is 2 but the file lists 1 failed cases"},
		{name: "failure id not in the result file", cat: "simple_javascript", files: catFiles{
			header: `{"accuracy": 0.98, "correct_count": 49, "total_count": 50}`, extra: []string{`{"id": "live_simple_0-0-0", "model_name": "Org_Model-FC", "test_category": "simple_javascript"}`}},
			want: []Reason{ReasonHeaderMismatch}, wantData: true, detail: `:2: failed case "live_simple_0-0-0" is not in`},
		{name: "partial", cat: "simple_javascript", files: catFiles{n: 40}, want: []Reason{ReasonPartial}, wantData: true,
			detail: "has 40 cases, BFCL's dataset has 50"},
		{name: "partial allowed", cat: "simple_javascript", files: catFiles{n: 40}, opts: ReadOptions{AllowPartial: true}, wantData: true},
		{name: "more rows than the dataset", cat: "simple_javascript", files: catFiles{n: 51}, opts: ReadOptions{AllowPartial: true},
			want: []Reason{ReasonPartial}, wantData: true},
		{name: "empty result file", cat: "simple_javascript", files: catFiles{result: "\n", header: `{"accuracy": 0, "correct_count": 0, "total_count": 0}`},
			opts: ReadOptions{AllowPartial: true}, want: []Reason{ReasonPartial}, wantData: true, detail: "has no cases"},
		{name: "infra errors at exactly 5 %", cat: "multi_turn_base", files: catFiles{infra: seq(10), fail: seq(10)}, wantData: true},
		{name: "infra errors above 5 %", cat: "multi_turn_base", files: catFiles{infra: seq(11), fail: seq(11)},
			want: []Reason{ReasonInfraErrorRate}, wantData: true, detail: "11 of 200 rows (5.5 %)"},
		{name: "unreadable result line", cat: "simple_javascript", files: catFiles{result: "{\"id\": \"simple_javascript_0\", \"result\": []}\n{oops\n"},
			want: []Reason{ReasonUnreadable}, detail: "BFCL_v4_simple_javascript_result.json:2:2: want one JSON object per line"},
		// The column counts the row's indentation and points at the byte
		// encoding/json stopped at ('o' of nope).
		{name: "unreadable indented score row", cat: "simple_javascript", files: catFiles{extra: []string{`  {"id": "x", "model_name": nope}`}},
			want: []Reason{ReasonUnreadable}, detail: "BFCL_v4_simple_javascript_score.json:2:30: want one JSON object per line: invalid character 'o'"},
		{name: "duplicate result id", cat: "simple_javascript", files: catFiles{result: "{\"id\": \"x\"}\n\n{\"id\": \"x\"}\n"},
			want: []Reason{ReasonUnreadable}, detail: `:3:1: id "x" again (first at line 1)`},
		{name: "row without id", cat: "simple_javascript", files: catFiles{result: "{\"result\": []}\n"},
			want: []Reason{ReasonUnreadable}, detail: `:1: want a string "id" in every row`},
		{name: "failure row of another model", cat: "simple_javascript", files: catFiles{fail: []int{1, 2}, rowModel: "Org_Other-FC"},
			want: []Reason{ReasonForeignFile}, wantData: true,
			detail: `BFCL_v4_simple_javascript_score.json:2: failure row's model_name is "Org_Other-FC", want "Org_Model-FC"`},
		{name: "failure row of another category", cat: "simple_javascript", files: catFiles{fail: []int{1}, rowCategory: "multiple"},
			want: []Reason{ReasonForeignFile}, wantData: true, detail: `:2: failure row's test_category is "multiple", want "simple_javascript"`},
		{name: "failure row without its labels", cat: "simple_javascript", files: catFiles{fail: []int{1}, rowModel: "-"},
			want: []Reason{ReasonForeignFile}, wantData: true, detail: `:2: failure row's model_name is missing, want "Org_Model-FC"`},
		{name: "score header without counts", cat: "simple_javascript", files: catFiles{header: `{"accuracy": 1}`},
			want: []Reason{ReasonUnreadable}, detail: "BFCL_v4_simple_javascript_score.json:1:1: want the header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			c := mustCategory(t, tc.cat)
			resultFile, scoreFile := writeCategory(t, root, c, tc.files)
			files := map[string]string{"result": resultFile, "score": scoreFile}
			if tc.skip != "" {
				require.NoError(t, os.Remove(files[tc.skip]))
			}
			for which, mt := range tc.mtime {
				require.NoError(t, os.Chtimes(files[which], mt, mt))
			}
			rc, probs := ReadRoot(root, testModel, "b", c, tc.opts)
			assert.Equal(t, tc.want, reasons(probs), "problems: %+v", probs)
			assert.Equal(t, tc.wantData, rc != nil)
			for _, p := range probs {
				assert.Equal(t, "b", p.Arm)
				assert.Equal(t, root, p.Root)
				assert.Equal(t, tc.cat, p.Category)
			}
			if tc.detail != "" && assert.NotEmpty(t, probs) {
				assert.Contains(t, probs[0].Detail, tc.detail)
			}
		})
	}
}

// TestReadRootSinceOf: a root made by an earlier run (a resumed leg's
// kept replicate) is stale only before its own instant, while the other
// roots keep Since.
func TestReadRootSinceOf(t *testing.T) {
	since := time.Date(2026, 8, 22, 7, 17, 0, 0, time.UTC)
	kept, other := t.TempDir(), t.TempDir()
	c := mustCategory(t, "simple_javascript")
	for _, root := range []string{kept, other} {
		result, score := writeCategory(t, root, c, catFiles{})
		for _, f := range []string{result, score} {
			require.NoError(t, os.Chtimes(f, since.Add(-time.Hour), since.Add(-time.Hour)))
		}
	}
	o := ReadOptions{Since: since, SinceOf: map[string]time.Time{kept: since.Add(-2 * time.Hour)}}
	_, probs := ReadRoot(kept, testModel, "a", c, o)
	assert.Empty(t, probs, "the kept root's files are its own run's")
	_, probs = ReadRoot(other, testModel, "a", c, o)
	assert.Equal(t, []Reason{ReasonStale, ReasonStale}, reasons(probs))
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestInfraErrorNeverPasses: in irrelevance an inference error decodes to
// no call, so BFCL scores it as a pass and lists no failure; it still
// counts as an infrastructure error, not a pass.
func TestInfraErrorNeverPasses(t *testing.T) {
	root := t.TempDir()
	c := mustCategory(t, "irrelevance")
	writeCategory(t, root, c, catFiles{infra: []int{0, 1}, fail: []int{2}})
	rc, probs := ReadRoot(root, testModel, "a", c, ReadOptions{})
	require.NotNil(t, rc)
	assert.Empty(t, probs)
	assert.Equal(t, 2, rc.InfraErrors)
	assert.Equal(t, InfraError, rc.Outcomes["irrelevance_0"])
	assert.Equal(t, Fail, rc.Outcomes["irrelevance_2"])
	assert.Equal(t, Pass, rc.Outcomes["irrelevance_3"])
}

// TestProblemString: the reports list a problem with Every in words: a
// run-failed problem of all of an arm's categories says "every
// category", the interrupt's problem of the whole leg "the leg"; they
// read "run-failed: *, arm a" and "interrupted: *, arm *".
func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Problem
		want string
	}{
		{"one category", Problem{Arm: "b", Root: "out/b/bfcl-r1", Category: "simple_python", Reason: ReasonMissingResult, Detail: "no file"},
			"missing-result-file: simple_python, arm b (out/b/bfcl-r1): no file"},
		{"every category", Problem{Arm: "a", Root: "out/a/bfcl-r1", Category: Every, Reason: ReasonRunFailed, Detail: "bfcl generate: exit 1"},
			"run-failed: every category, arm a (out/a/bfcl-r1): bfcl generate: exit 1"},
		{"the whole leg", Problem{Arm: Every, Root: "out", Category: Every, Reason: ReasonInterrupted, Detail: "interrupted by SIGTERM before the report"},
			"interrupted: the leg (out): interrupted by SIGTERM before the report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.p.String())
		})
	}
}
