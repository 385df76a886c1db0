package result

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/inputfile"
	"sweep/metrics/aiperf"
)

// pointDir copies a recorded case's artifacts into a fresh RESULT_DIR.
func pointDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("../../testdata/aggregation/sglang-single-request/aiperf_artifacts")
	require.NoError(t, os.CopyFS(filepath.Join(dir, "aiperf_artifacts"), os.DirFS(src)))
	return dir
}

// loadInputsBounded runs LoadInputs, failing the test if it blocks (a
// FIFO's open waits for a writer forever); the FIFO is then opened for
// writing so the blocked reader can return.
func loadInputsBounded(t *testing.T, dir, fifo string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := LoadInputs(dir, "")
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			w.Close()
		}
		t.Fatalf("LoadInputs blocked on the FIFO %s", fifo)
		return nil
	}
}

// TestLoadInputsRefusesNonRegularFiles: a FIFO in place of
// profile_export_aiperf.json blocked sweep result aggregate forever; the
// same held for the other artifacts. A FIFO server.log is skipped, as
// InferenceX's Path.is_file() skips it.
func TestLoadInputsRefusesNonRegularFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refused bool
	}{
		{filepath.Join("aiperf_artifacts", aiperf.SummaryFile), true},
		{filepath.Join("aiperf_artifacts", aiperf.ServerMetricsFile), true},
		{filepath.Join("aiperf_artifacts", aiperf.RecordsFile), true},
		{"server.log", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := pointDir(t)
			fifo := filepath.Join(dir, tc.name)
			_ = os.Remove(fifo)
			require.NoError(t, syscall.Mkfifo(fifo, 0o644))
			err := loadInputsBounded(t, dir, fifo)
			if !tc.refused {
				assert.NoError(t, err)
				return
			}
			nr, ok := errors.AsType[*inputfile.NotRegularError](err)
			require.True(t, ok, "got %v", err)
			assert.Equal(t, fifo, nr.Path)
		})
	}
}

// TestLoadInputsRefusesHugeFiles: a 1 GB sparse JSON took 2.1 GB of RSS
// (and 14 s) to reject; a (sparse) file over its limit is refused by its
// size, unread.
func TestLoadInputsRefusesHugeFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit inputfile.Limit
	}{
		{aiperf.SummaryFile, inputfile.AiperfSummary},
		{aiperf.ServerMetricsFile, inputfile.AiperfServerMetrics},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := pointDir(t)
			p := filepath.Join(dir, "aiperf_artifacts", tc.name)
			require.NoError(t, os.Truncate(p, tc.limit.Bytes+1))
			_, err := LoadInputs(dir, "")
			tl, ok := errors.AsType[*inputfile.TooLargeError](err)
			require.True(t, ok, "got %v", err)
			assert.Equal(t, tc.limit, tl.Limit)
			assert.Contains(t, err.Error(), "over sweep's "+tc.name+" limit of ")
		})
	}
}

// TestValidateRefusesHugeServerMetrics: the required-prefix check read
// server_metrics_export.json whole; it streams it now, within the limit.
func TestValidateRefusesHugeServerMetrics(t *testing.T) {
	dir := filepath.Join(pointDir(t), "aiperf_artifacts")
	require.NoError(t, os.WriteFile(filepath.Join(dir, aiperf.ServerMetricsCSV), []byte("metric,value\n"), 0o644))
	require.NoError(t, os.Truncate(filepath.Join(dir, aiperf.ServerMetricsFile), inputfile.AiperfServerMetrics.Bytes+1))
	v, err := Validate(dir, ValidateOptions{FailedRequestThreshold: 0.1, RequiredMetricPrefix: "sglang:"})
	require.NoError(t, err)
	assert.False(t, v.Valid)
	assert.Contains(t, v.Reason, "over sweep's server_metrics_export.json limit of 64 GiB")
}
