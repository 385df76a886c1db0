package run

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfiguredDuration: the benchmark duration of a result whose aiperf
// artifacts are gone is the --benchmark-duration of the client argv its
// point's run.json records (aiperf's, or the built-in client's after its
// wrapper); 0 where run.json is missing, of another result, or silent.
func TestConfiguredDuration(t *testing.T) {
	const name = "qwen_tp8_conc16.json"
	for _, tc := range []struct {
		name   string
		record *Record // nil: no run.json
		want   float64
	}{
		{"aiperf", &Record{ResultFile: "/elsewhere/" + name, Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--concurrency", "16", "--benchmark-duration", "1200"}}}}, 1200},
		{"built-in client", &Record{ResultFile: name, Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"sweep", "loadgen", "--time-scale", "30", "--", "profile", "--benchmark-duration=600"}}}}, 600},
		{"another result's record", &Record{ResultFile: "other.json", Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--benchmark-duration", "1200"}}}}, 0},
		{"no duration flag", &Record{ResultFile: name, Processes: map[string]*ProcessOutcome{
			ClientProcess: {Argv: []string{"aiperf", "profile", "--request-count", "100"}}}}, 0},
		{"no client", &Record{ResultFile: name}, 0},
		{"no run.json", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.record != nil {
				data, err := json.Marshal(tc.record)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), data, 0o644))
			}
			assert.Equal(t, tc.want, ConfiguredDuration(filepath.Join(dir, name)))
		})
	}
}
