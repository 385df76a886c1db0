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

// An arm job's client environment survives its file, and its runtime
// directory is the node's job's: without SLURM_JOB_ID it is an error, not
// a venv shared by every job.
func TestArmJobClient(t *testing.T) {
	sched := testSchedule(t, []int{8}, 4)
	aj := campaign.NewArmJob(campaign.Job{Arm: sched.Arms[0], Points: sched.Points}, nil, campaign.ArmSettings{})
	none, err := aj.JobClient("")
	require.NoError(t, err)
	assert.Nil(t, none)

	aj.Client = &recipes.ClientEnv{Checkout: "/opt/inferencex", RuntimeDir: "/tmp/inferencex-agentic-" + campaign.SlurmJobID, UV: "/opt/sweep-tools/uv",
		HubCache: "/mnt/hf_hub_cache/", Loader: recipes.Loader062126}
	path := filepath.Join(t.TempDir(), "arm01-t1.json")
	require.NoError(t, aj.Write(path))
	back, err := campaign.ReadArmJob(path)
	require.NoError(t, err)
	ce, err := back.JobClient("4242")
	require.NoError(t, err)
	want := *aj.Client
	want.RuntimeDir = "/tmp/inferencex-agentic-4242"
	assert.Equal(t, &want, ce)
	assert.Equal(t, "/tmp/inferencex-agentic-${SLURM_JOB_ID}", back.Client.RuntimeDir, "the job file keeps the placeholder")

	_, err = back.JobClient("")
	assert.ErrorContains(t, err, "the client environment's /tmp/inferencex-agentic-${SLURM_JOB_ID} needs the Slurm job id, and SLURM_JOB_ID is not set")

	back.Client.RuntimeDir = "/tmp/inferencex-agentic-mi325x-tw-arm01" // a docker arm's
	ce, err = back.JobClient("")
	require.NoError(t, err)
	assert.Equal(t, "/tmp/inferencex-agentic-mi325x-tw-arm01/venv/bin/aiperf", ce.AiperfProgram())
}
