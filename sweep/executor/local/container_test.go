package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/launch"
)

func containerJob() campaign.Job {
	arm := &campaign.Arm{Index: 1, GPUs: 2}
	var pts []*campaign.Point
	for i, c := range []int{1, 4} {
		pts = append(pts, &campaign.Point{ID: fmt.Sprintf("p%d", c), Index: i,
			Plan: recipes.Point{Row: matrix.Row{Conc: c, Parallelism: configs.Parallelism{TP: 2}}, Engine: recipes.Command{Argv: []string{"engine"}}}})
	}
	return campaign.Job{Arm: arm, Points: pts}
}

// A container that cannot run fails every point with the reason, after
// the arm's job file was written for it; the release still runs.
func TestContainerArmsFailure(t *testing.T) {
	dir := t.TempDir()
	var payload []string
	c := &ContainerArms{Dir: dir, Sweep: "/opt/sweep/sweep", Poll: 10e6,
		Plan: func(_ *campaign.Arm, gpus []int, p []string) (*launch.Plan, error) {
			payload = p
			return &launch.Plan{ContainerName: "c1", Commands: []recipes.HostCommand{
				{Role: launch.RoleRun, Argv: []string{"sh", "-c", "exit 3"}},
				{Role: launch.RoleRelease, Argv: []string{"true"}, MayFail: true}}}, nil
		}}
	var recs []campaign.Record
	c.Run(context.Background(), containerJob(), []int{2, 3}, func(r campaign.Record) { recs = append(recs, r) })
	require.Equal(t, []string{"/opt/sweep/sweep", "run-arm", "--job", dir + "/docker/arm02-t1.json", "--events", dir + "/docker/arm02-t1.events.jsonl"}, payload)
	assert.FileExists(t, dir+"/docker/arm02-t1.json")
	require.Len(t, recs, 4)
	for _, r := range []campaign.Record{recs[1], recs[3]} {
		assert.Equal(t, campaign.StatusFailed, r.Status)
		assert.Contains(t, r.Error, "container c1: launch run (sh -c): exit status 3")
	}
}
