package run

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfiguredDuration: the benchmark duration of a result whose aiperf
// artifacts are gone is the --benchmark-duration of the client argv its
// point's run.json records (aiperf's, or the built-in client's after its
// wrapper); 0 where run.json is missing, and 0 with why where it records
// another result or no duration. A run.json that does not read is an
// error at its line and column (it read 0, said nothing).
func TestConfiguredDuration(t *testing.T) {
	const name = "qwen_tp8_conc16.json"
	for _, tc := range []struct {
		name    string
		record  *Record // nil: no run.json
		want    float64
		unknown string // with DIR/ before it
	}{
		{"aiperf", &Record{ResultFile: "/elsewhere/" + name, Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--concurrency", "16", "--benchmark-duration", "1200"}}}}, 1200, ""},
		{"built-in client", &Record{ResultFile: name, Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"sweep", "loadgen", "--time-scale", "30", "--", "profile", "--benchmark-duration=600"}}}}, 600, ""},
		{"another result's record", &Record{ResultFile: "other.json", Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--benchmark-duration", "1200"}}}}, 0,
			"run.json records result other.json, not " + name},
		{"a record of no result", &Record{Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--benchmark-duration", "1200"}}}}, 0,
			"run.json records no result, not " + name},
		{"no duration flag", &Record{ResultFile: name, Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--request-count", "100"}}}}, 0,
			"run.json records no --benchmark-duration of the client"},
		// It read "records no --benchmark-duration of the client".
		{"a duration that is no number", &Record{ResultFile: name, Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--benchmark-duration", "abc"}}}}, 0,
			`run.json records a --benchmark-duration of the client that is no positive number of seconds ("abc")`},
		{"a duration of 0", &Record{ResultFile: name, Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--benchmark-duration=0"}}}}, 0,
			`run.json records a --benchmark-duration of the client that is no positive number of seconds ("0")`},
		{"no client", &Record{ResultFile: name}, 0, "run.json records no --benchmark-duration of the client"},
		{"no run.json", nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.record != nil {
				data, err := json.Marshal(tc.record)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), data, 0o644))
			}
			got, unknown, err := ConfiguredDuration(filepath.Join(dir, name))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			if tc.unknown != "" {
				tc.unknown = filepath.Join(dir, tc.unknown)
			}
			assert.Equal(t, tc.unknown, unknown)
		})
	}
	t.Run("a run.json that does not read", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte("{\n  \"result_file\": \"x.json\",\n  \"processes\": {"), 0o644))
		got, unknown, err := ConfiguredDuration(filepath.Join(dir, name))
		require.Error(t, err)
		assert.Zero(t, got)
		assert.Empty(t, unknown)
		assert.True(t, strings.HasPrefix(err.Error(), filepath.Join(dir, RecordFile)+":3:17: "), "got %s", err)
		assert.Contains(t, err.Error(), "restore the point's run.json, or remove it")
	})
	// It named "processes.argv", encoding/json's path without the map key.
	t.Run("a client argv that is a string", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte("{\n  \"result_file\": \""+name+"\",\n  \"processes\": {\"client\": {\n    \"argv\": \"aiperf profile\"}}}"), 0o644))
		_, _, err := ConfiguredDuration(filepath.Join(dir, name))
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), filepath.Join(dir, RecordFile)+":4:28: processes.client.argv: a JSON string where a list belongs"), "got %s", err)
	})
}
