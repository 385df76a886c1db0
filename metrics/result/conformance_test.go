package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sweep/metrics"
	"sweep/metrics/aiperf"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conformanceDir holds InferenceX's own aggregation outputs (see
// testdata/README.md); each case folder is a RESULT_DIR. Setting
// SWEEP_AGGREGATION_CASES runs the same checks over another folder of the
// same layout (INDEX.json plus case folders).
var conformanceDir = cmpOr(os.Getenv("SWEEP_AGGREGATION_CASES"), "../../testdata/aggregation")

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type conformanceIndex struct {
	Cases []struct {
		Name       string `json:"name"`
		ProcessRC  int    `json:"process_rc"`
		ValidateRC int    `json:"validate_rc"`
		HasOutput  bool   `json:"has_output"`
	} `json:"cases"`
}

type processOutput struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// ourKeys are the top-level keys we add; InferenceX's readers ignore them.
var ourKeys = map[string]bool{"acceptance_length": true, "scrape_health": true, "valid": true, "invalid_reasons": true, "simulated": true, "simulation": true, "probe": true, "client": true, "submission": true}

func loadIndex(t *testing.T) conformanceIndex {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(conformanceDir, "INDEX.json"))
	require.NoError(t, err)
	var idx conformanceIndex
	require.NoError(t, json.Unmarshal(data, &idx))
	require.NotEmpty(t, idx.Cases)
	return idx
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v), path)
}

// caseFacts reads a case's env.json as InferenceX saw it.
func caseFacts(t *testing.T, dir string) RunFacts {
	t.Helper()
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	env, err := EnvFromFile(filepath.Join(dir, "env.json"), map[string]string{
		"RESULT_DIR": abs, "AGENTIC_OUTPUT_DIR": t.TempDir(),
	})
	require.NoError(t, err)
	facts, err := FromEnv(env)
	require.NoError(t, err)
	return facts
}

func TestConformanceAggregate(t *testing.T) {
	idx := loadIndex(t)
	matched := 0
	for _, c := range idx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := filepath.Join(conformanceDir, c.Name)
			facts := caseFacts(t, dir)
			var want any
			readJSON(t, filepath.Join(dir, "expected.json"), &want)

			in, err := LoadInputs(dir, facts.HFHubCache)
			var res *Result
			if err == nil {
				res, err = Aggregate(in, facts)
			}
			if want == nil {
				var proc processOutput
				readJSON(t, filepath.Join(dir, "process.json"), &proc)
				if strings.Contains(proc.Stderr, "Traceback") {
					t.Skipf("InferenceX crashed on this input; no behaviour to reproduce")
				}
				assert.Error(t, err, "InferenceX wrote nothing (exit %d), so aggregation must fail", c.ProcessRC)
				return
			}
			require.NoError(t, err)
			data, err := MarshalResult(res)
			require.NoError(t, err)
			var got any
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&got))
			wantN := decodeNumbers(t, filepath.Join(dir, "expected.json"))
			diffs := diffJSON("", got, wantN, true)
			if !assert.Empty(t, diffs, "aggregate differs from InferenceX's expected.json") {
				t.Logf("got:\n%s", data)
				return
			}
			matched++
		})
	}
	t.Logf("aggregate conformance: %d/%d cases matched", matched, len(idx.Cases))
}

func decodeNumbers(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// diffJSON lists every difference between got and want. Numbers compare by
// value (InferenceX writes 1 for 1.0); at the top level our own keys may be
// extra.
func diffJSON(path string, got, want any, top bool) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %T %v, want object", path, got, got)}
		}
		var out []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			out = append(out, diffJSON(path+"."+k, gv, w[k], false)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok && !(top && ourKeys[k]) {
				out = append(out, fmt.Sprintf("%s.%s: unexpected key", path, k))
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], false)...)
		}
		return out
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		gf, _ := g.Float64()
		wf, _ := w.Float64()
		if gf != wf && !(math.IsNaN(gf) && math.IsNaN(wf)) {
			return []string{fmt.Sprintf("%s: got %s, want %s", path, g, w)}
		}
		return nil
	default:
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		return nil
	}
}

func TestConformanceValidate(t *testing.T) {
	idx := loadIndex(t)
	matched := 0
	for _, c := range idx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := filepath.Join(conformanceDir, c.Name)
			var want processOutput
			readJSON(t, filepath.Join(dir, "validate.json"), &want)
			artifacts := filepath.Join(dir, "aiperf_artifacts")
			v, err := Validate(artifacts, ValidateOptions{FailedRequestThreshold: DefaultFailedRequestThreshold})
			require.NoError(t, err)
			// InferenceX prints paths under the case folder as <RESULT_DIR>.
			norm := func(s string) string { return strings.ReplaceAll(s, dir, "<RESULT_DIR>") }
			if want.ExitCode == 0 {
				assert.True(t, v.Valid, "reason: %s", v.Reason)
				assert.Equal(t, want.Stdout, norm(v.Message)+"\n")
			} else {
				assert.False(t, v.Valid)
				assert.Equal(t, want.Stderr, "ERROR: "+norm(v.Reason)+"\n")
			}
			if !t.Failed() {
				matched++
			}
		})
	}
	t.Logf("validate conformance: %d/%d verdicts matched", matched, len(idx.Cases))
}

// TestConformanceAcceptanceLength checks our AL from the exported counters
// against the value the case generator computed.
func TestConformanceAcceptanceLength(t *testing.T) {
	idx := loadIndex(t)
	for _, c := range idx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := filepath.Join(conformanceDir, c.Name)
			var cs struct {
				AL *struct {
					Value float64 `json:"value"`
				} `json:"acceptance_length_from_counters"`
			}
			var keys map[string]json.RawMessage
			readJSON(t, filepath.Join(dir, "case.json"), &keys)
			if _, ok := keys["acceptance_length_from_counters"]; !ok {
				t.Skip("case.json states no acceptance length")
			}
			readJSON(t, filepath.Join(dir, "case.json"), &cs)
			exp, err := aiperf.ReadServerMetricsFile(filepath.Join(aiperf.ResolveArtifactDir(dir), aiperf.ServerMetricsFile))
			if cs.AL == nil {
				if err == nil {
					check := CheckALFromExport(exp, nil, 0)
					assert.Equal(t, metrics.ALNotMeasured, check.Verdict)
					assert.NotEmpty(t, check.Reason)
				}
				return
			}
			require.NoError(t, err)
			counters, err := ALCountersFromExport(exp)
			require.NoError(t, err)
			al, err := counters.AcceptanceLength()
			require.NoError(t, err)
			assert.InDelta(t, cs.AL.Value, al, 1e-12)
			check := CheckALFromExport(exp, &cs.AL.Value, 0)
			assert.Equal(t, metrics.ALPass, check.Verdict)
		})
	}
}

// leaves flattens a decoded JSON value to its leaf paths (an empty
// object or list is a leaf of its own).
func leaves(path string, v any, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			out[path] = "{}"
		}
		for k, e := range v {
			leaves(path+"."+k, e, out)
		}
	case []any:
		if len(v) == 0 {
			out[path] = "[]"
		}
		for i, e := range v {
			leaves(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	default:
		out[path] = v
	}
}

// TestRealAiperfLeavesEqual: on the real aiperf 0.12.0's artifacts of a
// simulated point and on the built-in client's of the same point, with
// the trace set's hub cache given as the run records it, sweep's result
// equals InferenceX's aggregation on every leaf, output_expected included
// (it was {} while the run did not record the cache).
func TestRealAiperfLeavesEqual(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leaves int
	}{{"real-aiperf-0.12.0-c4", 143}, {"builtin-c4", 153}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(conformanceDir, tc.name)
			facts := caseFacts(t, dir)
			require.NotEmpty(t, facts.HFHubCache)
			in, err := LoadInputs(dir, facts.HFHubCache)
			require.NoError(t, err)
			res, err := Aggregate(in, facts)
			require.NoError(t, err)
			data, err := MarshalResult(res)
			require.NoError(t, err)
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var gotV any
			require.NoError(t, dec.Decode(&gotV))
			for k := range ourKeys {
				delete(gotV.(map[string]any), k)
			}
			got, want := map[string]any{}, map[string]any{}
			leaves("", gotV, got)
			leaves("", decodeNumbers(t, filepath.Join(dir, "expected.json")), want)
			require.Len(t, want, tc.leaves)
			equal := 0
			for p, w := range want {
				if assert.Empty(t, diffJSON(p, got[p], w, false)) {
					equal++
				}
			}
			assert.Len(t, got, len(want), "no leaf InferenceX does not write")
			assert.Equal(t, tc.leaves, equal, "leaves equal")
			assert.Contains(t, want, ".request_metrics.tokens.output_expected.mean")
		})
	}
}
