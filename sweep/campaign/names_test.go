package campaign_test

import (
	"path/filepath"
	"sweep/recipes/models"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
	"sweep/sweep/campaign"
)

// TestArmJobRefusesPathIDs: `sweep run-arm` with a job file whose point
// ID is "../victim" removed the victim directory (a point's directory is
// cleared before its load); the job file is refused before anything runs.
func TestArmJobRefusesPathIDs(t *testing.T) {
	sched := testSchedule(t, []int{8}, 4)
	job := campaign.Job{Arm: sched.Arms[0], Points: sched.Points}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	require.NoError(t, campaign.NewArmJob(job, nil, campaign.ArmSettings{}).Write(good))
	_, err := campaign.ReadArmJob(good)
	require.NoError(t, err)

	bad := *sched.Points[0]
	bad.ID = "../victim"
	job.Points = []*campaign.Point{&bad}
	path := filepath.Join(dir, "bad.json")
	require.NoError(t, campaign.NewArmJob(job, nil, campaign.ArmSettings{}).Write(path))
	_, err = campaign.ReadArmJob(path)
	assert.EqualError(t, err, path+`: point ID "../victim" must be a file name, not a path`)
}

// TestScheduleRefusesPathNames: a point's result file name is its
// directory in the sweep directory.
func TestScheduleRefusesPathNames(t *testing.T) {
	sched := testSchedule(t, []int{8}, 4, 8)
	pts := []recipes.Point{sched.Points[0].Plan, sched.Points[1].Plan}
	pts[1].ResultFilename = "../../victim"
	_, err := campaign.BuildSchedule(pts, campaign.ScheduleOptions{Catalog: models.Builtin()})
	assert.EqualError(t, err, `point 2's result file name "../../victim" must be a file name, not a path`)
}
