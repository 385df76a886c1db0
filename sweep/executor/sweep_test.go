package executor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/slurm"
)

// oneArm is a schedule of one arm of two points.
func oneArm() *campaign.Schedule {
	pts := []*campaign.Point{{ID: "p1", Plan: recipes.Point{Row: matrix.Row{Conc: 4}}}, {ID: "p2", Index: 1, Plan: recipes.Point{Row: matrix.Row{Conc: 8}}}}
	a := &campaign.Arm{Name: "tp8", GPUs: 8, Points: pts, Servers: 1}
	return &campaign.Schedule{Arms: []*campaign.Arm{a}, Points: pts}
}

func TestSweepDryRun(t *testing.T) {
	var out, log bytes.Buffer
	launches := 0
	sw := Sweep{Options: Options{Schedule: oneArm(), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Adaptive: true}, ProbeDuration: 300, DryRun: true,
		NewLaunch: func() (Launch, error) { launches++; return Launch{}, errors.New("no such site fact") },
		Out:       &out, Log: &log}
	err := sw.Run(t.Context())
	assert.EqualError(t, err, "no such site fact", "the launch's error, after the schedule is printed")
	assert.Equal(t, 1, launches)
	assert.Contains(t, out.String(), "adaptive: each arm runs only the points knee.Next asks for as results come in (x4 bracketing as 300 s probes, run again at the full length where the verdict hangs on them, then the knee's neighbours that can still move it; README: sweep discover --adaptive); the cost below is the full grid's, an upper bound: the summary gives the GPU-hours the search spent when it ends\n")
	assert.Contains(t, out.String(), "1 tp8")
	assert.Contains(t, out.String(), "4 8", "the arm's concurrencies")
	assert.Empty(t, log.String())

	// Multi-node arms run no probes: the header says their points run at
	// the full length, alone or beside single-node arms.
	multi := oneArm()
	for _, p := range multi.Points {
		p.Plan.MultiNode = &recipes.LocalMultiNode{}
	}
	both := oneArm()
	both.Arms = append(both.Arms, multi.Arms[0])
	for _, tc := range []struct {
		sched *campaign.Schedule
		want  string
	}{
		{multi, "(x4 bracketing at the full length: multi-node arms run no probes, then the knee's neighbours"},
		{both, "(x4 bracketing as 300 s probes, run again at the full length where the verdict hangs on them; multi-node arms run no probes, their points at the full length, then the knee's neighbours"},
	} {
		out.Reset()
		sw := Sweep{Options: Options{Schedule: tc.sched, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Adaptive: true}, ProbeDuration: 300, DryRun: true, Out: &out, Log: &log}
		require.NoError(t, sw.Run(t.Context()))
		assert.Contains(t, out.String(), tc.want)
		assert.NotContains(t, out.String(), "as 300 s probes, run again at the full length where the verdict hangs on them, then", "no arm of the header's claim")
	}

	out.Reset()
	sw.Adaptive, sw.NewLaunch, sw.CostFrom = false, nil, filepath.Join(t.TempDir(), "missing")
	require.NoError(t, sw.Run(t.Context()))
	assert.NotContains(t, out.String(), "adaptive:")
	assert.Contains(t, log.String(), "warning: --cost-from "+sw.CostFrom+": ")
	assert.Contains(t, log.String(), "; using the planned times\n")
}

// TestSweepDryRunClock: a simulated sweep's dry run prices its load here
// at the time scale on the wall clock only. On the virtual clock it
// predicted "about 1m20s" of a sweep that took 31 s, and the first ETA
// came from the same time scale.
func TestSweepDryRunClock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		wall  bool
		want  string
		first time.Duration // etaWall, the first ETA's estimate
	}{
		{"virtual clock", false, "simulated here:  on the virtual clock, each point in seconds (its events set the time, not its length)\n", 0},
		{"wall clock", true, "simulated here:  about ", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			sw := Sweep{Options: Options{Schedule: oneArm(), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, Simulate: true, TimeScale: 150, DryRun: true, Out: &out, Log: &bytes.Buffer{}}
			sw.Setup.Simulate, sw.Setup.WallClock = true, tc.wall
			require.NoError(t, sw.Run(t.Context()))
			assert.Contains(t, out.String(), tc.want)
			sw.Cost = campaign.PlannedCost(600)
			if tc.first == 0 {
				assert.Zero(t, sw.etaWall(sw.Schedule.Points[0]))
			} else {
				assert.Positive(t, sw.etaWall(sw.Schedule.Points[0]))
			}
		})
	}
}

// TestSweepRunRefusesBeforeRunning: a refused executor fails the sweep
// before its header line or any journal.
func TestSweepRunRefusesBeforeRunning(t *testing.T) {
	var out, log bytes.Buffer
	dir := t.TempDir()
	sw := Sweep{Options: Options{Name: Slurm, Dir: dir, Schedule: oneArm(), Adaptive: true}, Out: &out, Log: &log}
	err := sw.Run(t.Context())
	assert.ErrorContains(t, err, "adaptive discovery runs with the local executor only")
	assert.Empty(t, out.String())
	assert.Empty(t, log.String())
	assert.NoFileExists(t, filepath.Join(dir, campaign.SummaryJSON))
}

func TestSweepWire(t *testing.T) {
	sw := Sweep{Options: Options{Name: Slurm, Dir: t.TempDir(), Schedule: oneArm(), StartTimeout: 5 * time.Minute}, Simulate: true, TimeScale: 100, SlurmNodes: true, Log: &bytes.Buffer{}}
	sw.Cost = campaign.PlannedCost(600)
	require.NoError(t, sw.wire(Launch{}, &bytes.Buffer{}))
	require.Len(t, sw.Program, 1, "a Slurm job starts this sweep")
	assert.True(t, filepath.IsAbs(sw.Program[0]))
	assert.Nil(t, sw.ArmProgram, "without a launch the job runs the arm itself")
	nodes, ok := sw.Nodes.(*slurm.ArmNodes)
	require.True(t, ok, "%T", sw.Nodes)
	a := sw.Schedule.Arms[0]
	want := sw.Cost.PointWall(a.Points[0], true, 100) + sw.Cost.PointWall(a.Points[1], true, 100)
	assert.Equal(t, want, nodes.Wall(a), "an allocation lasts the arm's points")
	assert.Greater(t, want, time.Duration(0))
	assert.Equal(t, 5*time.Minute, nodes.StartTimeout, "--slurm-start-timeout bounds the allocations too")
}

// TestSweepCancelledSaysRerun: a sweep stopped by its context says how to
// resume and is a cancellation.
func TestSweepCancelledSaysRerun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, log bytes.Buffer
	sw := Sweep{Options: Options{Dir: t.TempDir(), Schedule: oneArm(), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, Command: "discover", Out: &out, Log: &log}
	err := sw.Run(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, log.String(), "sweep discover: 2 points in 1 arm, 1 server start planned; GPUs [0 1 2 3 4 5 6 7]; client: ")
}

// TestSweepPrintsOnlyTheSummaryWritten: the summary's paths were printed
// when it was not written (a full disk); the sweep says it was not, and
// why.
func TestSweepPrintsOnlyTheSummaryWritten(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	dir := t.TempDir()
	var out, log bytes.Buffer
	sw := Sweep{Options: Options{Dir: dir, Schedule: oneArm(), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, Command: "discover", Out: &out, Log: &log}
	require.Error(t, sw.Run(ctx)) // the sweep begins: cancelled, it runs nothing
	require.NoError(t, os.Remove(filepath.Join(dir, campaign.SummaryText)))
	require.NoError(t, os.Mkdir(filepath.Join(dir, campaign.SummaryText), 0o755)) // summary.txt cannot be written
	out.Reset()
	err := sw.Run(ctx)
	assert.ErrorContains(t, err, "summary: ")
	assert.Contains(t, out.String(), "\nsummary: not written (the error below says why; the table above is all of it)\n")
	assert.NotContains(t, out.String(), filepath.Join(dir, campaign.SummaryJSON))

	require.NoError(t, os.Remove(filepath.Join(dir, campaign.SummaryText)))
	out.Reset()
	_ = sw.Run(ctx)
	assert.Contains(t, out.String(), "\nsummary: "+filepath.Join(dir, campaign.SummaryText)+"\n         "+filepath.Join(dir, campaign.SummaryJSON)+"\n")
}

func TestSweepCheckMultiNode(t *testing.T) {
	single := matrix.Matrix{{Kind: matrix.AgenticSingleNode}}
	multi := matrix.Matrix{{Kind: matrix.AgenticSingleNode}, {Kind: matrix.AgenticMultiNode}}
	for _, tc := range []struct {
		name     string
		s        Sweep
		rows     matrix.Matrix
		launched bool
		err      string
	}{
		{"single-node", Sweep{}, single, false, ""},
		{"--slurm without multi-node arms", Sweep{SlurmNodes: true, Simulate: true}, single, false, "--slurm runs multi-node arms only"},
		{"simulated", Sweep{Simulate: true}, multi, false, ""},
		{"--slurm simulated", Sweep{Simulate: true, SlurmNodes: true}, multi, false, ""},
		{"--slurm unsimulated", Sweep{SlurmNodes: true}, multi, false, "--slurm runs simulated multi-node arms (add --simulate)"},
		{"unsimulated", Sweep{Command: "official"}, multi, false, "official runs them only with --simulate"},
		{"unsimulated dry run", Sweep{DryRun: true, Command: "discover"}, multi, false, "discover runs them only with --simulate"},
		{"launched", Sweep{Simulate: true, Command: "discover"}, multi, true, "--launch: multi-node arms are launched with sweep run --launch, not by discover"},
		{"slurm executor", Sweep{Simulate: true, Options: Options{Name: Slurm}}, multi, false, "--executor slurm: multi-node arms run with --executor local, simulated on this host's loopback, or with --executor local --slurm, each deployment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.CheckMultiNode(tc.rows, tc.launched)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

// TestSweepDryRunReadsTheDirectory: a dry run planned as if the
// directory were empty: the whole schedule of a sweep that had run, no
// word on a directory holding a different sweep (the run is refused).
// It says what a run would do there.
func TestSweepDryRunReadsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	j, _, err := campaign.OpenJournal(dir)
	require.NoError(t, err)
	tp8 := []campaign.Setting{{Name: "--tp", Value: "8"}}
	for _, r := range []campaign.Record{
		{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover", Settings: tp8, Points: []string{"p1", "p2"}}},
		{Event: campaign.EventPointStart, Arm: 1, Point: "p1", Index: 1, Conc: 4},
		{Event: campaign.EventPointEnd, Arm: 1, Point: "p1", Index: 1, Conc: 4, Status: campaign.StatusFailed, Error: "stage client: aiperf failed", Seconds: 60},
	} {
		require.NoError(t, j.Append(r))
	}
	require.NoError(t, j.Close())
	var out, log bytes.Buffer
	sw := Sweep{Options: Options{Dir: dir, Schedule: oneArm(), GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, Command: "discover", Settings: tp8, DryRun: true,
		Out: &out, Log: &log}
	require.NoError(t, sw.Run(t.Context()))
	assert.Contains(t, out.String(), "resume: "+dir+" holds this sweep, which a run goes on with: 0 of 2 points complete, 1 failed with no retry left (--retries 0): 1 to run\n")
	// It said "finished" of a point that failed (every point not run
	// again): it says how each ended.
	assert.Contains(t, out.String(), "    1  arm 1  conc 4    failed (1 attempt) p1\n")
	assert.Contains(t, out.String(), "    2  arm 1  conc 8    start server       p2\n", "the resume's first point starts the server")
	assert.Contains(t, out.String(), "  left to run:     1 point and 1 server start, ")

	out.Reset()
	sw.Retries = 1
	require.NoError(t, sw.Run(t.Context()))
	assert.Contains(t, out.String(), "0 of 2 points complete, 1 failed to retry: 2 to run\n")
	assert.Contains(t, out.String(), "  left to run:     2 points and 1 server start, ")

	out.Reset()
	sw.Settings = []campaign.Setting{{Name: "--tp", Value: "4"}}
	err = sw.Run(t.Context())
	de, ok := errors.AsType[*campaign.DifferenceError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, []string{`--tp: was "8", now "4"`}, de.Diffs)
	assert.Empty(t, out.String(), "refused before anything is planned, as the run is")
	recs, err := campaign.ReadJournal(dir)
	require.NoError(t, err)
	assert.Len(t, recs, 3, "a dry run writes nothing")
	assert.NoFileExists(t, filepath.Join(dir, ".lock"))
}
