package campaign_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
	"sweep/sweep/campaign"
)

func TestPlannedCost(t *testing.T) {
	s := testSchedule(t, []int{8, 4}, 4, 16) // 2 arms of 2 points, one server each
	c := campaign.PlannedCost(600)
	p := s.Points[0]
	assert.Equal(t, 660.0, c.Point(p), "--duration plus a minute")
	assert.Equal(t, 660*time.Second/150+3*time.Second, c.PointWall(p, true, 150), "compressed, plus the simulation's slack")
	assert.Equal(t, 2*(660*time.Second/150+3*time.Second)+time.Minute, c.Watchdog(true, 150)(p))
	ours, theirs := c.Arm(s.Arms[0])
	assert.Equal(t, 2*660.0+600, ours, "one server start for the arm")
	assert.Equal(t, 2*(660.0+600), theirs, "a server start per point")

	probe := *p
	probe.Plan.ProbeDuration = 300
	assert.Equal(t, 360.0, c.Point(&probe), "a probe's own length")

	var packed [][]float64
	pack := func(arms []*campaign.Arm, seconds []float64) float64 {
		packed = append(packed, seconds)
		return seconds[0] + seconds[1] // in a row
	}
	o, th := c.Estimate(s, pack)
	assert.Equal(t, 2, o.ServerStarts)
	assert.InDelta(t, 1920.0*12/3600, o.GPUHours, 1e-9)
	assert.Equal(t, 3840.0, o.WallSeconds)
	assert.Equal(t, 4, th.ServerStarts)
	assert.InDelta(t, 2520.0*12/3600, th.GPUHours, 1e-9)
	assert.Equal(t, 5040.0, th.WallSeconds)
	assert.Equal(t, [][]float64{{1920, 1920}, {2520, 2520}}, packed, "ours, then InferenceX's")
	assert.InDelta(t, 4*(660.0/150+3), c.SimulatedSeconds(s, 150), 1e-9)
}

func TestMeasuredCost(t *testing.T) {
	dir := t.TempDir()
	j, _, err := campaign.OpenJournal(dir)
	require.NoError(t, err)
	for _, r := range []campaign.Record{
		{Event: campaign.EventServerReady, Seconds: 100},
		{Event: campaign.EventServerReady, Seconds: 300},
		{Event: campaign.EventPointEnd, Status: campaign.StatusOK, Seconds: 50},
		{Event: campaign.EventPointEnd, Status: campaign.StatusFailed, Seconds: 5000}, // not a measure
		{Event: campaign.EventPointEnd, Status: campaign.StatusOK, Seconds: 70},
		{Event: campaign.EventPointEnd, Status: campaign.StatusOK, Seconds: 240, Probe: true}, // a probe's time is its own length's
	} {
		require.NoError(t, j.Append(r))
	}
	require.NoError(t, j.Close())
	c, err := campaign.MeasuredCost(dir, 0)
	require.NoError(t, err)
	assert.Equal(t, &campaign.Cost{StartSeconds: 200, PointSeconds: 60, MeasuredStart: true, MeasuredPoint: true}, c)

	c, err = campaign.MeasuredCost(t.TempDir(), 900)
	assert.Error(t, err, "no journal")
	assert.Equal(t, campaign.PlannedCost(900), c, "the plan's times stand in")
}

// TestSpent prices what a journal says ran: every server start and every
// run of a point's load (a probe at its own length), simulated as
// planned, else at the recorded times; a point whose server did not
// start, a job that never started and a skip cost nothing.
func TestSpent(t *testing.T) {
	s := testSchedule(t, []int{8, 4}, 4, 16) // arm 1: 8 GPUs, arm 2: 4; 2 points each
	s.Points[0].ProbeClient, s.Points[0].ProbeDuration = &recipes.Command{Argv: []string{"client"}}, 180
	recs := []campaign.Record{
		{Event: campaign.EventSweepStart},
		{Event: campaign.EventServerStart, Arm: 1, Index: 1},
		{Event: campaign.EventServerReady, Arm: 1, Seconds: 400},
		{Event: campaign.EventPointEnd, Arm: 1, Index: 1, Status: campaign.StatusOK, Probe: true, Seconds: 5},
		{Event: campaign.EventPointEnd, Arm: 1, Index: 1, Status: campaign.StatusOK, Seconds: 1300},
		{Event: campaign.EventPointEnd, Arm: 1, Index: 2, Status: campaign.StatusFailed, Error: "watchdog: no result after 5s", Seconds: 50},
		{Event: campaign.EventServerStart, Arm: 2, Index: 3},
		{Event: campaign.EventPointEnd, Arm: 2, Index: 3, Status: campaign.StatusFailed, Error: "server start: engine exited before /health", Seconds: 30},
		{Event: campaign.EventPointEnd, Arm: 2, Index: 4, Status: campaign.StatusFailed, Error: "the job never started"},
		{Event: campaign.EventPointEnd, Arm: 2, Index: 4, Status: campaign.StatusSkipped},
		{Event: campaign.EventServerStart, Arm: 3, Index: 5}, // no such arm
	}
	for _, tc := range []struct {
		name      string
		simulated bool
		want      campaign.Spending
	}{
		{"simulated: as planned", true, campaign.Spending{
			ServerStarts: 2, Runs: 2, Probes: 1, StartSeconds: 600,
			GPUHours:           (8*600 + 4*600 + 8*(180+60) + 8*660 + 8*660) / 3600.0,
			GridGPUHours:       (8*(600+2*660) + 4*(600+2*660)) / 3600.0,
			InferenceXGPUHours: (8*2*(600+660) + 4*2*(600+660)) / 3600.0,
		}},
		{"measured: the recorded times", false, campaign.Spending{
			ServerStarts: 2, Runs: 2, Probes: 1, StartSeconds: 400, Measured: true,
			GPUHours:           (8*400 + 4*30 + 8*5 + 8*1300 + 8*50) / 3600.0, // arm 2's start failed after 30 s
			GridGPUHours:       (8*(400+2*1300) + 4*(400+2*1300)) / 3600.0,    // a point the mean full-length run, the probe not among them
			InferenceXGPUHours: (8*2*(400+1300) + 4*2*(400+1300)) / 3600.0,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := campaign.PlannedCost(600).Spent(s, recs, tc.simulated)
			assert.InDelta(t, tc.want.GPUHours, got.GPUHours, 1e-9)
			assert.InDelta(t, tc.want.GridGPUHours, got.GridGPUHours, 1e-9)
			assert.InDelta(t, tc.want.InferenceXGPUHours, got.InferenceXGPUHours, 1e-9)
			got.GPUHours, got.GridGPUHours, got.InferenceXGPUHours = tc.want.GPUHours, tc.want.GridGPUHours, tc.want.InferenceXGPUHours
			assert.Equal(t, tc.want, got)
		})
	}
	sp := campaign.PlannedCost(600).Spent(s, recs, true)
	assert.Equal(t, "GPU-hours on the hardware: 5.5 spent, 65 % of InferenceX's 8.4 (4 points, a server start each) and 85 % of 6.4 (each point once at the full length on this schedule's server starts)\n"+
		"  spent on 2 server starts, 2 full-length runs and 1 probe; priced as planned (simulated: the hardware's times, not this host's): a server start 600 s, a run its length + 60 s\n", sp.Lines(4))
	sp = campaign.PlannedCost(600).Spent(s, recs, false)
	assert.Contains(t, sp.Lines(4), "; priced as measured: each run its own time, a server start this directory's mean, 400 s\n")
	sp.Probes = 0
	assert.Contains(t, sp.Lines(4), "\n  spent on 2 server starts and 2 full-length runs; priced as measured", "no probes, none named")
}

// TestSpentFailedStart: a server start that failed is priced at what it
// waited: measured, its recorded time; simulated, the plan's, or a ready
// timeout waited out in full when longer. Every start was priced at the
// plan's 600 s (simulated) or the directory's mean (measured).
func TestSpentFailedStart(t *testing.T) {
	s := testSchedule(t, []int{8}, 4, 16)
	recs := []campaign.Record{
		{Event: campaign.EventSweepStart},
		{Event: campaign.EventServerStart, Arm: 1, Index: 1},
		{Event: campaign.EventPointEnd, Arm: 1, Index: 1, Status: campaign.StatusFailed, Error: "server start: stage engine-ready: engine not ready at http://x/health before the timeout", Seconds: 1800},
		{Event: campaign.EventPointEnd, Arm: 1, Index: 2, Status: campaign.StatusFailed, Error: "server start: not tried, the arm's server did not start for c4: ..."},
	}
	assert.InDelta(t, 8*1800/3600.0, campaign.PlannedCost(600).Spent(s, recs, true).GPUHours, 1e-9, "simulated: the 30-minute ready timeout")
	assert.InDelta(t, 8*1800/3600.0, campaign.PlannedCost(600).Spent(s, recs, false).GPUHours, 1e-9, "measured: its time")
	recs[2].Seconds = 15
	assert.InDelta(t, 8*600/3600.0, campaign.PlannedCost(600).Spent(s, recs, true).GPUHours, 1e-9, "simulated: the plan's start at least")
	assert.InDelta(t, 8*15/3600.0, campaign.PlannedCost(600).Spent(s, recs, false).GPUHours, 1e-9, "measured: its time")
}

// TestSpentInterruptedAndKilled: an interrupted run is counted and said
// to be, and a run the sweep was killed during is said not to be priced.
// The line counted the first as a whole full-length run without a word
// and left the second out without one.
func TestSpentInterruptedAndKilled(t *testing.T) {
	s := testSchedule(t, []int{8}, 4, 16)
	p1, p2 := s.Points[0].ID, s.Points[1].ID
	recs := []campaign.Record{
		{Event: campaign.EventSweepStart},
		{Event: campaign.EventServerStart, Arm: 1, Index: 1},
		{Event: campaign.EventPointStart, Arm: 1, Point: p1, Index: 1},
		{Event: campaign.EventPointEnd, Arm: 1, Point: p1, Index: 1, Status: campaign.StatusInterrupted, Error: "interrupted", Seconds: 0.6},
		{Event: campaign.EventPointStart, Arm: 1, Point: p2, Index: 2}, // killed: no end
		{Event: campaign.EventSweepStart, Reason: "resume"},
		{Event: campaign.EventServerStart, Arm: 1, Index: 1},
		{Event: campaign.EventPointStart, Arm: 1, Point: p1, Index: 1},
		{Event: campaign.EventPointEnd, Arm: 1, Point: p1, Index: 1, Status: campaign.StatusOK, Seconds: 1200},
		{Event: campaign.EventPointStart, Arm: 1, Point: p2, Index: 2},
		{Event: campaign.EventPointEnd, Arm: 1, Point: p2, Index: 2, Status: campaign.StatusOK, Seconds: 1200},
	}
	sp := campaign.PlannedCost(600).Spent(s, recs, true)
	assert.Equal(t, 3, sp.Runs)
	assert.Equal(t, 1, sp.Interrupted)
	assert.Equal(t, 1, sp.Unended)
	lines := sp.Lines(2)
	assert.Contains(t, lines, "spent on 2 server starts and 3 full-length runs (1 of them interrupted, each priced whole); priced as planned")
	assert.Contains(t, lines, "\n  not priced: 1 run the sweep was killed during, whose end the journal does not record\n")
	sp = campaign.PlannedCost(600).Spent(s, recs, false)
	assert.Contains(t, sp.Lines(2), "(1 of them interrupted, each priced at its time)")
}

func TestMeasuredCostOfSimulatedSweep(t *testing.T) {
	dir := t.TempDir()
	j, _, err := campaign.OpenJournal(dir)
	require.NoError(t, err)
	require.NoError(t, j.Append(campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover", Settings: []campaign.Setting{campaign.SimulateSetting(true)}}}))
	require.NoError(t, j.Append(campaign.Record{Event: campaign.EventServerReady, Seconds: 2}))
	require.NoError(t, j.Close())
	c, err := campaign.MeasuredCost(dir, 0)
	assert.EqualError(t, err, dir+" holds a simulated sweep: its times are this host's, not the hardware's")
	assert.Equal(t, campaign.PlannedCost(0), c, "the plan's times stand in")
}
