package campaign_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
)

// TestRemoteArmCloseOpen: a point the remote side ended as interrupted
// while this side was not (scancel, a time limit) stays open, and
// CloseOpen ends it with the caller's status and reason and the load
// time the remote side recorded (what it cost on the hardware); a point
// open with no end recorded (the job killed) closes with no time, and a
// point that ended is not closed again.
func TestRemoteArmCloseOpen(t *testing.T) {
	s := testSchedule(t, []int{8}, 4, 16, 32)
	job := campaign.Job{Arm: s.Arms[0], Points: s.Points}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var log []byte
	for _, r := range []campaign.Record{
		{Event: campaign.EventPointStart, Arm: 1, Point: s.Points[0].ID, Index: 1},
		{Event: campaign.EventPointEnd, Arm: 1, Point: s.Points[0].ID, Index: 1, Status: campaign.StatusOK, Seconds: 460},
		{Event: campaign.EventPointStart, Arm: 1, Point: s.Points[1].ID, Index: 2},
		{Event: campaign.EventPointEnd, Arm: 1, Point: s.Points[1].ID, Index: 2, Status: campaign.StatusInterrupted, Error: "interrupted", Seconds: 123},
		{Event: campaign.EventPointStart, Arm: 1, Point: s.Points[2].ID, Index: 3},
	} {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		log = append(append(log, b...), '\n')
	}
	require.NoError(t, os.WriteFile(path, log, 0o644))

	remote := campaign.NewRemoteArm(path)
	var got []campaign.Record
	obs := func(r campaign.Record) { got = append(got, r) }
	require.NoError(t, remote.Forward(context.Background(), obs))
	assert.Len(t, got, 4, "the remote side's interrupted end is held back")
	got = nil
	remote.CloseOpen(job, obs, campaign.StatusFailed, "slurm job 7 ended CANCELLED (exit 0)")
	require.Len(t, got, 2)
	for i, want := range []struct {
		point   string
		seconds float64
	}{{s.Points[1].ID, 123}, {s.Points[2].ID, 0}} {
		assert.Equal(t, campaign.EventPointEnd, got[i].Event)
		assert.Equal(t, want.point, got[i].Point)
		assert.Equal(t, campaign.StatusFailed, got[i].Status)
		assert.Equal(t, "slurm job 7 ended CANCELLED (exit 0)", got[i].Error)
		assert.Equal(t, want.seconds, got[i].Seconds, "%s: the load time the remote side recorded", want.point)
	}
}
