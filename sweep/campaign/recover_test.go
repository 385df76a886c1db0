package campaign_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
	"sweep/sweep/run"
)

// cutJournal leaves dir's journal as a sweep killed (or whose journal
// writes failed) right after point id's result was written: every
// record from id's point_end on is gone.
func cutJournal(t *testing.T, dir, id string) {
	t.Helper()
	path := filepath.Join(dir, campaign.JournalFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		var r campaign.Record
		require.NoError(t, json.Unmarshal(line, &r))
		if r.Event == campaign.EventPointEnd && r.Point == id {
			require.NoError(t, os.WriteFile(path, bytes.Join(lines[:i], nil), 0o644))
			return
		}
	}
	t.Fatalf("no point_end of %s in %s", id, path)
}

// TestResumeRecoversAFinishedPoint: a point whose point_end the journal
// lacks (a kill between its result's write and the journal append, or
// the append failing) was measured again on resume, its valid result
// overwritten. A point whose directory holds its complete, valid result
// and a run.json that says it finished ok is recovered: its point_end is
// journaled (recovered) and it never runs again. One whose files are
// incomplete is redone as before.
func TestResumeRecoversAFinishedPoint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spoil   func(t *testing.T, pointDir, resultPath string)
		recover bool
	}{
		{"finished", func(*testing.T, string, string) {}, true},
		{"no run.json", func(t *testing.T, dir, _ string) {
			require.NoError(t, os.Remove(filepath.Join(dir, run.RecordFile)))
		}, false},
		{"run.json of a run that did not finish ok", func(t *testing.T, dir, path string) {
			data, err := json.Marshal(run.Record{Name: filepath.Base(dir), ResultFile: path})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, run.RecordFile), data, 0o644))
		}, false},
		{"run.json cut short", func(t *testing.T, dir, _ string) {
			require.NoError(t, os.Truncate(filepath.Join(dir, run.RecordFile), 40))
		}, false},
		{"no result", func(t *testing.T, _, path string) {
			require.NoError(t, os.Remove(path))
		}, false},
		{"a result cut short", func(t *testing.T, _, path string) {
			require.NoError(t, os.Truncate(path, 40))
		}, false},
		{"a probe's result for a full-length run", func(t *testing.T, _, path string) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, bytes.Replace(data, []byte(`"probe":false`), []byte(`"probe":true`), 1), 0o644))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
			_, err := s.run(t.Context())
			require.NoError(t, err)
			p := s.sched.Points[1]
			cutJournal(t, s.dir, p.ID)
			pointDir := filepath.Join(s.dir, p.ID)
			tc.spoil(t, pointDir, filepath.Join(pointDir, p.ID+".json"))

			var progress bytes.Buffer
			s.o.Progress = &progress
			sum, err := s.run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, 2, sum.OK)
			assert.Equal(t, 1, s.b.loadsOf(s.sched.Points[0].ID))
			ends := events(t, s.dir, campaign.EventPointEnd)
			last := ends[len(ends)-1]
			assert.Equal(t, p.ID, last.Point)
			assert.Equal(t, campaign.StatusOK, last.Status)
			if !tc.recover {
				assert.Equal(t, 2, s.b.loadsOf(p.ID), "redone")
				assert.False(t, last.Recovered)
				assert.Contains(t, progress.String(), "1 of 2 points complete, 1 interrupted: 1 to run")
				return
			}
			assert.Equal(t, 1, s.b.loadsOf(p.ID), "not measured again")
			assert.True(t, last.Recovered)
			assert.Equal(t, 1, last.Attempt)
			assert.Equal(t, p.ID+"/"+p.ID+".json", last.Result)
			assert.Contains(t, last.Reason, "recovered from disk")
			require.NotNil(t, last.Metrics)
			assert.InDelta(t, 800, *last.Metrics.TputPerGPU, 1e-9)
			assert.Contains(t, progress.String(), "point "+p.ID+": recovered from disk: ")
			assert.Contains(t, progress.String(), "2 of 2 points complete: 0 to run")
			assert.Equal(t, 2, sum.Spent.Runs, "the recovered run counts once")

			// The journal now says so: the next resume has nothing to do.
			progress.Reset()
			_, err = s.run(t.Context())
			require.NoError(t, err)
			assert.NotContains(t, progress.String(), "recovered")
			assert.Len(t, events(t, s.dir, campaign.EventPointEnd), len(ends))
		})
	}
}

// TestResumeRecoversAProbe: an adaptive search's probe whose end the
// journal lacks is recovered as the probe its start says it was, and the
// search goes on from it instead of probing the point again.
func TestResumeRecoversAProbe(t *testing.T) {
	s, _ := probeSweep(t)
	s.b.saturateAt = 16
	s.adaptive()
	_, err := s.run(t.Context())
	require.NoError(t, err)
	ends := events(t, s.dir, campaign.EventPointEnd)
	last := ends[len(ends)-1]
	require.True(t, last.Probe, "the search ends with a probe")
	cutJournal(t, s.dir, last.Point)

	probes := len(s.b.probes)
	sum, err := s.run(t.Context())
	require.NoError(t, err)
	ends = events(t, s.dir, campaign.EventPointEnd)
	recovered := ends[len(ends)-1]
	assert.True(t, recovered.Recovered)
	assert.Equal(t, last.Point, recovered.Point)
	assert.True(t, recovered.Probe, "recovered as the probe it was")
	assert.Equal(t, probes, len(s.b.probes), "nothing probed again")
	assert.Equal(t, 1, s.b.loadsOf(last.Point))
	assert.NotEmpty(t, events(t, s.dir, campaign.EventSearchEnd), "the search ended")
	assert.Equal(t, len(ends), sum.OK+sum.Failed, "every point that ran is done")
}

// TestPreview: a dry run planned a directory as if nothing had run in
// it: the whole schedule on a finished one, no word on one holding a
// different sweep (which the run then refuses). Preview says what Run
// would find there, and writes nothing.
func TestPreview(t *testing.T) {
	s := newSweep(t, testSchedule(t, []int{8}, 4, 8))
	s.o.Dir = filepath.Join(s.dir, "new")
	l, err := campaign.Preview(s.o)
	require.NoError(t, err)
	assert.False(t, l.Resume, "a new sweep")
	assert.Equal(t, 2, l.Points)
	assert.Equal(t, 1, l.ServerStarts)
	assert.Equal(t, []string{s.sched.Points[0].ID, s.sched.Points[1].ID}, l.Run)
	assert.InDelta(t, 8*(campaign.PlannedCost(0).Point(s.sched.Points[0])+campaign.PlannedCost(0).Point(s.sched.Points[1])+campaign.DefaultServerStartSeconds)/3600, l.GPUHours, 1e-9)
	assert.NoDirExists(t, s.o.Dir, "nothing is created")

	s.o.Dir = s.dir
	_, err = s.run(t.Context())
	require.NoError(t, err)
	l, err = campaign.Preview(s.o)
	require.NoError(t, err)
	assert.True(t, l.Resume)
	assert.Zero(t, l.Points)
	assert.Zero(t, l.ServerStarts)
	assert.Equal(t, "2 of 2 points complete: 0 to run", l.Status)

	p := s.sched.Points[1]
	cutJournal(t, s.dir, p.ID)
	journal := filepath.Join(s.dir, campaign.JournalFile)
	before, err := os.ReadFile(journal)
	require.NoError(t, err)
	l, err = campaign.Preview(s.o)
	require.NoError(t, err)
	assert.Zero(t, l.Points, "the run recovers the point, it does not run it")
	require.Len(t, l.Fixed, 1)
	assert.Contains(t, l.Fixed[0], "point "+p.ID+": recovered from disk")
	after, err := os.ReadFile(journal)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing is journaled")

	require.NoError(t, os.Remove(filepath.Join(s.dir, p.ID, run.RecordFile)))
	l, err = campaign.Preview(s.o)
	require.NoError(t, err)
	assert.Equal(t, []string{p.ID}, l.Run, "incomplete: run again")
	assert.Equal(t, "1 of 2 points complete, 1 interrupted: 1 to run", l.Status)

	s.o.Identity.Settings = []campaign.Setting{{Name: "--tp", Value: "4"}}
	_, err = campaign.Preview(s.o)
	de, ok := errors.AsType[*campaign.DifferenceError](err)
	require.True(t, ok, "%v", err)
	assert.Contains(t, de.Error(), `--tp: was "8", now "4"`)
}
