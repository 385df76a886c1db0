package campaign

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestResumeETA: a resume reckoned its ETA from this invocation's runs
// alone: its first run after the resume, a full-length run among probes,
// set the rate for every point left (2 s a point: 30 s for 15 where the
// sweep's 19 runs took 10 s). The rate is every invocation's, and the
// elapsed time says whose it is.
func TestResumeETA(t *testing.T) {
	var pts []*Point
	for i := range 15 {
		pts = append(pts, &Point{ID: fmt.Sprintf("p%d", i), Index: i})
	}
	for _, tc := range []struct {
		name       string
		beforeRuns int
		beforeWall time.Duration
		want       string
	}{
		{"a new sweep", 0, 0, "elapsed 2s, ETA 30s"},
		{"a resume", 18, 8 * time.Second, "elapsed 2s in this invocation, 10s in all, ETA 8s"},
	} {
		synctest.Test(t, func(t *testing.T) { // time.Since(s.started) is 2 s exactly
			s := newSweep(Options{Schedule: &Schedule{Arms: []*Arm{{Name: "k tp8", Points: pts}}, Points: pts}}, nil)
			s.started = time.Now().Add(-2 * time.Second)
			s.done, s.before.runs, s.before.wall = 1, tc.beforeRuns, tc.beforeWall
			assert.Equal(t, tc.want, s.eta(), tc.name)
		})
	}
}

// TestJournalWall: the wall time of a journal's invocations is each
// one's, from its sweep_start to its last record, without the time
// between them.
func TestJournalWall(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ev string, s int) Record { return Record{Event: ev, Time: t0.Add(time.Duration(s) * time.Second)} }
	for _, tc := range []struct {
		name string
		recs []Record
		want time.Duration
	}{
		{"none", nil, 0},
		{"one ended", []Record{at(EventSweepStart, 0), at(EventPointStart, 1), at(EventSweepEnd, 4)}, 4 * time.Second},
		{"a killed one, then a resume", []Record{at(EventSweepStart, 0), at(EventPointStart, 3), at(EventSweepStart, 100), at(EventPointEnd, 102)}, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, journalWall(tc.recs))
		})
	}
}
