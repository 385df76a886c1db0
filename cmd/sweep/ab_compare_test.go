package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/testkit/abcase"
	"sweep/sweep/abgate"
)

const abCasesDir = "../../testdata/ab/cases"

// abCase stages testdata/ab/cases/<id> in a temporary directory
// (abcase.Stage) and returns the directory, the command's args and the
// expected exit code and verdict.
func abCase(t *testing.T, id string) (dir string, args []string, exit int, verdict string) {
	t.Helper()
	c, err := abcase.Stage(abCasesDir, id, t.TempDir())
	require.NoError(t, err)
	var want struct {
		Exit    int    `json:"exit"`
		Verdict string `json:"verdict"`
	}
	require.NoError(t, json.Unmarshal(c.Expect, &want))
	return c.Dir, c.Args, want.Exit, want.Verdict
}

func abCaseIDs(t *testing.T) []string {
	t.Helper()
	ids, err := abcase.IDs(abCasesDir)
	require.NoError(t, err)
	return ids
}

// TestABCompareConformance runs "sweep ab compare" exactly as each shared
// case's args say and checks the exit code and the JSON contract (the
// numbers are checked by sweep/abgate's TestConformance).
func TestABCompareConformance(t *testing.T) {
	for _, id := range abCaseIDs(t) {
		t.Run(id, func(t *testing.T) {
			_, args, wantExit, wantVerdict := abCase(t, id)
			var out, errOut bytes.Buffer
			code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, args)
			assert.Equal(t, wantExit, code, "stderr: %s", errOut.String())
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
			// ab compare cannot know whether its roots were simulated: no "leg", no "simulated".
			assert.ElementsMatch(t, []string{"verdict", "model", "tolerance", "roots", "primary", "overall", "categories", "problems"}, keysOf(got))
			assert.JSONEq(t, `"`+wantVerdict+`"`, string(got["verdict"]))
			var primary map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(got["primary"], &primary))
			assert.ElementsMatch(t, []string{"metric", "a", "b", "delta", "ci90", "mcnemar_p"}, keysOf(primary))
			var overall map[string]map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(got["overall"], &overall))
			assert.ElementsMatch(t, []string{"unweighted", "weighted"}, keysOf(overall))
			for _, m := range overall {
				assert.ElementsMatch(t, []string{"a", "b", "delta"}, keysOf(m))
			}
			var cats []map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(got["categories"], &cats))
			for _, c := range cats {
				assert.ElementsMatch(t, []string{"category", "cases", "a", "b", "delta", "a_pass_b_fail", "a_fail_b_pass",
					"infra_errors_a", "infra_errors_b"}, keysOf(c))
			}
			var probs []map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(got["problems"], &probs))
			for _, p := range probs {
				assert.ElementsMatch(t, []string{"arm", "root", "category", "reason", "detail"}, keysOf(p))
			}
			if wantExit != 0 {
				assert.Contains(t, errOut.String(), "verdict: "+wantVerdict)
			}
		})
	}
}

func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// TestABCompareTableGolden checks the Markdown table of three cases
// against testdata/ab/*.golden (rewrite with -update and read the diff).
func TestABCompareTableGolden(t *testing.T) {
	for _, id := range []string{"inconclusive-one-category", "parallel-score-missing", "replicates-pass", "multi-turn-collection"} {
		t.Run(id, func(t *testing.T) {
			dir, args, wantExit, _ := abCase(t, id)
			args = overrideFlags(args, "--format", "table")
			var out, errOut bytes.Buffer
			code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, args)
			assert.Equal(t, wantExit, code, errOut.String())
			got := strings.ReplaceAll(out.String(), dir, "<CASE>")
			golden := filepath.Join("../../testdata/ab", "compare-"+id+".golden")
			if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create it")
			assert.Equal(t, string(want), got)
		})
	}
}

func TestABCompareFlags(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	require.NoError(t, os.Mkdir(a, 0o755))
	require.NoError(t, os.Mkdir(b, 0o755))
	base := []string{"--a", a, "--b", b, "--model", "M-FC", "--categories", "multi_turn,simple_java"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *abCompareOptions)
	}{
		{name: "defaults", args: base, check: func(t *testing.T, o *abCompareOptions) {
			assert.Equal(t, []string{a}, o.A)
			assert.Equal(t, []string{b}, o.B)
			assert.Equal(t, "M-FC", o.Model)
			assert.Equal(t, "table", o.Format)
			assert.InDelta(t, 2.0, o.Tolerance, 0)
			assert.True(t, o.Read.Since.IsZero())
			assert.False(t, o.Read.AllowPartial)
			var names []string
			for _, c := range o.Categories {
				names = append(names, c.Name)
			}
			assert.Equal(t, []string{"multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context", "simple_java"}, names)
		}},
		{name: "every flag", args: append(base, "--tolerance", "1.5", "--since", "2026-08-22T07:17:00Z", "--allow-partial", "--format", "json", "--seed", "7"),
			check: func(t *testing.T, o *abCompareOptions) {
				assert.InDelta(t, 1.5, o.Tolerance, 0)
				assert.Equal(t, time.Date(2026, 8, 22, 7, 17, 0, 0, time.UTC), o.Read.Since)
				assert.True(t, o.Read.AllowPartial)
				assert.Equal(t, "json", o.Format)
				assert.Equal(t, uint64(7), o.Seed)
			}},
		{name: "replicates", args: []string{"--a", a + "," + filepath.Join(root), "--b", b, "--model", "m", "--categories", "live"},
			check: func(t *testing.T, o *abCompareOptions) { assert.Len(t, o.A, 2) }},
		{name: "no a", args: base[2:], wantErr: "--a is required"},
		{name: "no model", args: []string{"--a", a, "--b", b, "--categories", "live"}, wantErr: "--model is required"},
		{name: "no categories", args: base[:6], wantErr: "--categories is required"},
		{name: "v3 category", args: []string{"--a", a, "--b", b, "--model", "m", "--categories", "simple"},
			wantErr: `--categories: category "simple" is not a BFCL v4 category or collection`},
		{name: "same root on both sides", args: []string{"--a", a, "--b", a, "--model", "m", "--categories", "live"}, wantErr: "--b: root " + a + " is already in --a"},
		{name: "same root twice", args: []string{"--a", a + "," + a + "/", "--b", b, "--model", "m", "--categories", "live"}, wantErr: "--a: root " + a + "/ is listed again"},
		{name: "missing root", args: []string{"--a", filepath.Join(root, "nope"), "--b", b, "--model", "m", "--categories", "live"}, wantErr: "is not a directory"},
		{name: "bad since", args: append(base, "--since", "yesterday"), wantErr: `--since "yesterday": want an RFC 3339 time`},
		{name: "bad tolerance", args: append(base, "--tolerance", "-2"), wantErr: `"--tolerance" flag: -2: want points in (0, 100)`},
		// Out of float64's range: the range is the problem, not the number.
		{name: "tolerance beyond float64", args: append(base, "--tolerance", "1e309"), wantErr: `"--tolerance" flag: 1e309: want points in (0, 100), e.g. 2`},
		{name: "tolerance below float64", args: append(base, "--tolerance", "1e-400"), wantErr: `"--tolerance" flag: 1e-400: want points in (0, 100), e.g. 2`},
		{name: "bad format", args: append(base, "--format", "yaml"), wantErr: `--format "yaml": want table or json`},
		{name: "positional", args: append(base, "extra"), wantErr: "ab compare takes no arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOptions(t, newABCompareCmd, tc.args...)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				_, isFlag := errors.AsType[*FlagError](err)
				assert.True(t, isFlag, "usage errors exit 2")
				return
			}
			require.NoError(t, err)
			tc.check(t, got)
		})
	}
}

// TestABCompareExitCodes checks the exit code of a usage error and of an
// unreadable file through mainRun.
func TestABCompareExitCodes(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "A"), filepath.Join(root, "B")
	for _, r := range []string{a, b} {
		require.NoError(t, os.MkdirAll(filepath.Join(r, "result", "M-FC", "non_live"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(r, "score", "M-FC", "non_live"), 0o755))
	}
	c, _ := abgate.LookupCategory("simple_javascript")
	rows := ""
	for i := range c.Size {
		rows += `{"id": "simple_javascript_` + strconv.Itoa(i) + `", "result": []}` + "\n"
	}
	for _, r := range []string{a, b} {
		require.NoError(t, os.WriteFile(filepath.Join(r, abgate.ResultPath("M-FC", c)), []byte(rows), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(r, abgate.ScorePath("M-FC", c)), []byte(`{"accuracy": 1, "correct_count": 50, "total_count": 50}`+"\n"), 0o644))
	}
	bad := filepath.Join(root, "bad")
	require.NoError(t, os.CopyFS(bad, os.DirFS(b)))
	require.NoError(t, os.WriteFile(filepath.Join(bad, abgate.ScorePath("M-FC", c)), []byte("{\"accuracy\": 1, \"correct_count\": 50, \"total_count\": 50}\nnot json\n"), 0o644))
	tests := []struct {
		name     string
		args     []string
		full     bool // stdout is a full disk
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "identical arms pass", args: []string{"ab", "compare", "--a", a, "--b", b, "--model", "M-FC", "--categories", "simple_javascript"},
			wantCode: exitOK, wantOut: "verdict: PASS: weighted Δ +0.00 pp, 90% CI [+0.00, +0.00]"},
		{name: "missing root", args: []string{"ab", "compare", "--a", a, "--b", a + "x", "--model", "M-FC", "--categories", "simple_javascript"},
			wantCode: exitUsage, wantErr: "is not a directory"},
		{name: "unreadable score file", args: []string{"ab", "compare", "--a", a, "--b", bad, "--model", "M-FC", "--categories", "simple_javascript"},
			wantCode: exitABIncomplete, wantOut: "- unreadable-file: simple_javascript, arm b (" + bad + "): " + filepath.Join(bad, abgate.ScorePath("M-FC", c)) + ":2:2: want one JSON object per line"},
		{name: "unknown category", args: []string{"ab", "compare", "--a", a, "--b", b, "--model", "M-FC", "--categories", "exec_simple"},
			wantCode: exitUsage, wantErr: `category "exec_simple" is not a BFCL v4 category`},
		// > /dev/full: no verdict is drawn, and exit 1 is REGRESSION's alone.
		{name: "report not written", args: []string{"ab", "compare", "--a", a, "--b", b, "--model", "M-FC", "--categories", "simple_javascript"},
			full: true, wantCode: exitUsage, wantErr: "no space left on device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			ios := &IOStreams{Out: &out, ErrOut: &errOut}
			if tc.full {
				ios.Out = fullWriter{}
			}
			code := mainRun(t.Context(), ios, tc.args)
			assert.Equal(t, tc.wantCode, code, "stdout: %s\nstderr: %s", out.String(), errOut.String())
			assert.Contains(t, out.String(), tc.wantOut)
			assert.Contains(t, errOut.String(), tc.wantErr)
		})
	}
}
