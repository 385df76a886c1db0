package campaign

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			s.before.runs, s.before.wall = tc.beforeRuns, tc.beforeWall
			s.doneWork, s.before.work = 1, float64(tc.beforeRuns) // without Options.Work, a run is 1
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

// TestVirtualWorkETA: on the virtual clock a point's time grows with its
// concurrency, and the ETA, a flat mean per point, said about half the
// time left (the README's discovery: "ETA 8s" at its second point with
// 15.8 s to go). Weighed by VirtualWork, the ETA after each point of
// three recorded simulated discoveries (each point's seconds as its
// journal's point_end records them, times 100 so that the ETA's whole
// seconds do not round them) is within 30 % of the time the points left
// took; the flat mean missed by up to 51 %.
func TestVirtualWorkETA(t *testing.T) {
	type ran struct {
		conc    int
		seconds float64
	}
	for _, tc := range []struct {
		name string
		runs []ran
	}{
		{"qwen3.5 mi325x tp8 ep8 (the README's)", []ran{{4, 1.288}, {16, 2.118}, {24, 2.623}, {32, 3.281}, {40, 2.301}, {48, 2.710}, {64, 2.757}}},
		{"qwen3.5 mi325x tp4, --conc-list 1,4,6,8,16", []ran{{1, 1.887}, {8, 2.943}, {16, 3.028}}},
		{"qwen3.5 mi325x tp2 ep2, --conc-list 1,4,6,8,16", []ran{{1, 1.546}, {4, 2.264}, {6, 2.329}}},
		{"qwen3.5 mi325x tp4 ep4, --conc-list 1,4,6,8,16", []ran{{4, 1.902}, {16, 2.727}}},
	} {
		var pts []*Point
		for i, r := range tc.runs {
			p := &Point{ID: fmt.Sprintf("p%d", i), Index: i}
			p.Plan.Row.Conc, p.Plan.Fast = r.conc, true
			pts = append(pts, p)
		}
		for done := 1; done < len(tc.runs); done++ {
			synctest.Test(t, func(t *testing.T) {
				s := newSweep(Options{Schedule: &Schedule{Arms: []*Arm{{Name: "k", Points: pts}}, Points: pts}, Work: PlannedCost(0).VirtualWork}, nil)
				spent, left := 0.0, 0.0
				for i, r := range tc.runs {
					if i < done {
						spent += 100 * r.seconds
						s.state[pts[i].ID].status = StatusOK
						s.doneWork += s.work(pts[i], false)
					} else {
						left += 100 * r.seconds
					}
				}
				s.started = time.Now().Add(-time.Duration(spent * float64(time.Second)))
				line := s.eta()
				_, after, ok := strings.Cut(line, "ETA ")
				require.True(t, ok, line)
				eta, err := time.ParseDuration(after)
				require.NoError(t, err, line)
				assert.InEpsilon(t, left, eta.Seconds(), 0.30, "%s after %d of %d points: %s, with %.0fs left", tc.name, done, len(tc.runs), line, left)
			})
		}
	}
}
