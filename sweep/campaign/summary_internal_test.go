package campaign

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/metrics/result"
	"sweep/recipes"
)

// TestSummarySpentCountsUnjournaledRuns: a sweep whose journal write of
// a point's end failed said "2 ok" in summary.txt and "spent on 1 server
// start and 1 full-length run" on its GPU-hours line (read back from the
// journal on disk). The GPU-hours count what the points' statuses count.
func TestSummarySpentCountsUnjournaledRuns(t *testing.T) {
	dir := t.TempDir()
	var pts []*Point
	for i, conc := range []int{4, 16} {
		id := fmt.Sprintf("k_tp8_conc%d", conc)
		pts = append(pts, &Point{ID: id, Index: i, Plan: recipes.Point{ResultFilename: id,
			Row: matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "k", Model: "m", Framework: "sglang", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: conc}}})
	}
	sched := &Schedule{Arms: []*Arm{{Name: "k tp8", GPUs: 8, Points: pts, Servers: 1}}, Points: pts}
	j, _, err := OpenJournal(dir)
	require.NoError(t, err)
	defer j.Close()
	s := newSweep(Options{Dir: dir, Schedule: sched, Identity: Identity{Command: "discover", Settings: []Setting{SimulateSetting(true)}}}, j)
	s.cancel = func(error) {}
	s.observe(Record{Event: EventServerStart, Arm: 1})
	for i, p := range pts {
		path := result.PointPath(dir, p.ID)
		writeResult(t, path, p)
		s.observe(Record{Event: EventPointStart, Arm: 1, Point: p.ID, Index: i + 1, Conc: p.Conc()})
		if i == 1 {
			j.w = fullDisk{j.f} // the second point's end is not journaled
		}
		s.observe(Record{Event: EventPointEnd, Arm: 1, Point: p.ID, Index: i + 1, Conc: p.Conc(), Status: StatusOK, Seconds: 1, Result: path})
	}
	require.ErrorIs(t, s.jErr, syscall.ENOSPC)
	sum := s.summary()
	assert.Equal(t, 2, sum.OK)
	require.NotNil(t, sum.Spent)
	assert.Equal(t, 2, sum.Spent.Runs, "the runs the statuses count")
	assert.Equal(t, 1, sum.Spent.ServerStarts)
	assert.Contains(t, sum.Table(), "spent on 1 server start and 2 full-length runs")
}

// writeResult writes a valid result of p to path, as the aggregator
// does for its facts.
func writeResult(t *testing.T, path string, p *Point) {
	t.Helper()
	res, err := pointFields(p)
	require.NoError(t, err)
	maps.Copy(res, map[string]any{"conc": p.Conc(), "num_requests_successful": 10, "valid": true, "simulated": true,
		"request_metrics": map[string]any{"throughput": map[string]any{"duration_seconds": 1200,
			"per_gpu": map[string]any{"total_tput_tps": 100.0, "output_tput_tps": 10.0}}}})
	data, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}
