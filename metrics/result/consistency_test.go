package result

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/aiperf"
)

// realC4 holds the artifacts the real aiperf 0.12.0 wrote for a c4, 60 s
// point: 4 warm-up records, then 24 profiling ones, none failed; the
// summary's request_count.avg is 24, it has no error_request_count.
var realC4 = filepath.Join(conformanceDir, "real-aiperf-0.12.0-c4", "aiperf_artifacts")

// artifactsEdit changes a copy of realC4's records (one JSON object per
// line) and summary (its top-level members) in place.
type artifactsEdit struct {
	records func([]map[string]json.RawMessage) []map[string]json.RawMessage
	summary map[string]string // top-level key: its new JSON value
}

// editedArtifacts is a result directory holding realC4's artifacts with
// e applied.
func editedArtifacts(t *testing.T, e artifactsEdit) string {
	t.Helper()
	dir := t.TempDir()
	art := filepath.Join(dir, "aiperf_artifacts")
	require.NoError(t, os.CopyFS(art, os.DirFS(realC4)))
	if e.records != nil {
		path := filepath.Join(art, aiperf.RecordsFile)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var recs []map[string]json.RawMessage
		for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var r map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(l, &r))
			recs = append(recs, r)
		}
		var out bytes.Buffer
		for _, r := range e.records(recs) {
			l, err := json.Marshal(r)
			require.NoError(t, err)
			out.Write(append(l, '\n'))
		}
		require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	}
	if e.summary != nil {
		path := filepath.Join(art, aiperf.SummaryFile)
		var s map[string]json.RawMessage
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &s))
		for k, v := range e.summary {
			s[k] = json.RawMessage(v)
		}
		data, err = json.Marshal(s)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
	return dir
}

// failFirst gives the first n profiling records an error, as aiperf
// writes a failed request's.
func failFirst(n int) func([]map[string]json.RawMessage) []map[string]json.RawMessage {
	return func(recs []map[string]json.RawMessage) []map[string]json.RawMessage {
		for _, r := range recs {
			if n > 0 && bytes.Contains(r["metadata"], []byte(`"benchmark_phase":"profiling"`)) {
				r["error"] = json.RawMessage(`{"code":500,"type":"ServerError","message":"boom"}`)
				n--
			}
		}
		return recs
	}
}

// TestCheckArtifacts: artifacts that disagree with themselves are named,
// file and both values. Before, an emptied profile_export.jsonl gave a
// valid point with 0 requests, one cut in half a valid point at another
// throughput, and a summary of 0 errors over failed records passed:
// InferenceX's validation reads only the summary's counts.
func TestCheckArtifacts(t *testing.T) {
	keep := func(n int) func([]map[string]json.RawMessage) []map[string]json.RawMessage {
		return func(recs []map[string]json.RawMessage) []map[string]json.RawMessage { return recs[:n] }
	}
	jsonl := filepath.Join("aiperf_artifacts", aiperf.RecordsFile)
	summary := filepath.Join("aiperf_artifacts", aiperf.SummaryFile)
	tests := []struct {
		name  string
		edit  artifactsEdit
		asked Asked
		want  []string
	}{
		{"intact", artifactsEdit{}, Asked{}, nil},
		{"intact, as asked", artifactsEdit{}, Asked{Conc: 4, DurationSeconds: 60}, nil},
		// Another point's artifacts in a point's directory: c16's
		// throughput was labelled c4.
		{"another concurrency's artifacts", artifactsEdit{}, Asked{Conc: 16, DurationSeconds: 60}, []string{
			"artifacts: concurrency_mismatch: DIR/" + summary + " input_config says concurrency 4, the point is conc 16: these artifacts are another point's",
		}},
		{"another duration's artifacts", artifactsEdit{}, Asked{Conc: 4, DurationSeconds: 120}, []string{
			"artifacts: duration_mismatch: DIR/" + summary + " input_config says a benchmark duration of 60 s, the point's client asked for 120 s: these artifacts are another run's",
		}},
		{"the fork's input_config", artifactsEdit{summary: map[string]string{"input_config": `{"loadgen":{"concurrency":8,"benchmark_duration":1800.0}}`}}, Asked{Conc: 4, DurationSeconds: 1800}, []string{
			"artifacts: concurrency_mismatch: DIR/" + summary + " input_config says concurrency 8, the point is conc 4: these artifacts are another point's",
		}},
		{"another aiperf version", artifactsEdit{summary: map[string]string{"aiperf_version": `"0.14.2"`}}, Asked{Schema: "aiperf@0.12.0"}, []string{
			"artifacts: aiperf_version_mismatch: DIR/" + summary + " says aiperf_version 0.14.2, the client's command was planned for aiperf@0.12.0 (and its artifacts are read as 0.12.0's)",
		}},
		// The fork's schema names no release: its version is not judged.
		{"the fork's schema", artifactsEdit{summary: map[string]string{"aiperf_version": `"0.8.0"`}}, Asked{Schema: "aiperf@sa-754356e9"}, nil},
		{"warm-up records left out", artifactsEdit{records: func(r []map[string]json.RawMessage) []map[string]json.RawMessage { return r[4:] }}, Asked{}, nil},
		{"records emptied", artifactsEdit{records: keep(0)}, Asked{}, []string{
			"artifacts: no_profiled_records: DIR/" + jsonl + " holds no successful profiling request (0 records, 0 failed profiling requests): the load left nothing to measure",
			"artifacts: request_count_mismatch: DIR/" + jsonl + " has 0 successful profiling records, DIR/" + summary + " request_count.avg says 24",
		}},
		{"records cut at a line", artifactsEdit{records: keep(14)}, Asked{}, []string{
			"artifacts: request_count_mismatch: DIR/" + jsonl + " has 10 successful profiling records, DIR/" + summary + " request_count.avg says 24",
		}},
		{"only warm-up records", artifactsEdit{records: keep(4)}, Asked{}, []string{
			"artifacts: no_profiled_records: DIR/" + jsonl + " holds no successful profiling request (4 records, 0 failed profiling requests): the load left nothing to measure",
			"artifacts: request_count_mismatch: DIR/" + jsonl + " has 0 successful profiling records, DIR/" + summary + " request_count.avg says 24",
		}},
		{"failed records the summary does not count", artifactsEdit{records: failFirst(6)}, Asked{}, []string{
			"artifacts: request_count_mismatch: DIR/" + jsonl + " has 18 successful profiling records, DIR/" + summary + " request_count.avg says 24",
			"artifacts: error_count_mismatch: DIR/" + jsonl + " has 6 failed profiling records, DIR/" + summary + " error_request_count.avg says 0",
		}},
		{"failed records the summary counts", artifactsEdit{records: failFirst(2), summary: map[string]string{
			"request_count": `{"unit":"requests","avg":22.0}`, "error_request_count": `{"unit":"requests","avg":2.0}`}}, Asked{}, nil},
		{"summary request_count of another run", artifactsEdit{summary: map[string]string{"request_count": `{"unit":"requests","avg":10.0}`}}, Asked{}, []string{
			"artifacts: request_count_mismatch: DIR/" + jsonl + " has 24 successful profiling records, DIR/" + summary + " request_count.avg says 10",
		}},
		{"client cancelled", artifactsEdit{summary: map[string]string{"was_cancelled": "true"}}, Asked{}, []string{
			"artifacts: client_cancelled: DIR/" + summary + " says was_cancelled: true: the client stopped before the end of its benchmark",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := editedArtifacts(t, tc.edit)
			in, err := LoadInputs(dir, "")
			require.NoError(t, err)
			var got []string
			for _, r := range CheckArtifacts(in, tc.asked) {
				got = append(got, strings.ReplaceAll(r, dir, "DIR"))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
