package campaign_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
