package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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
// the arm's job file was written for it; the release still runs. What the
// container printed (run-arm's raw event lines) is in the arm's log, named
// on its progress line, not among the sweep's progress lines.
func TestContainerArmsFailure(t *testing.T) {
	dir := t.TempDir()
	var payload, lines []string
	var out bytes.Buffer
	c := &ContainerArms{Dir: dir, Sweep: "/opt/sweep/sweep", Poll: 10e6,
		Plan: func(_ *campaign.Arm, gpus []int, p []string) (*launch.Plan, error) {
			payload = p
			return &launch.Plan{ContainerName: "c1", Commands: []recipes.HostCommand{
				{Role: launch.RoleRun, Argv: []string{"sh", "-c", "echo server_start p1 ok; exit 3"}},
				{Role: launch.RoleRelease, Argv: []string{"true"}, MayFail: true}}}, nil
		},
		Exec:     launch.Exec{Stdout: &out, Stderr: &out},
		Progress: func(line string) { lines = append(lines, line) }}
	var recs []campaign.Record
	c.Run(context.Background(), containerJob(), []int{2, 3}, func(r campaign.Record) { recs = append(recs, r) })
	require.Equal(t, []string{"/opt/sweep/sweep", "run-arm", "--job", dir + "/docker/arm02-t1.json", "--events", dir + "/docker/arm02-t1.events.jsonl"}, payload)
	assert.FileExists(t, dir+"/docker/arm02-t1.json")
	require.NotEmpty(t, lines)
	assert.Contains(t, lines[0], "arm 2: container c1 on GPUs [2 3] (; 2 points; log "+dir+"/docker/arm02-t1.log)")
	assert.NotContains(t, out.String()+strings.Join(lines, "\n"), "server_start", "the container's output is not progress")
	log, err := os.ReadFile(dir + "/docker/arm02-t1.log")
	require.NoError(t, err)
	assert.Equal(t, "server_start p1 ok\n", string(log))
	require.Len(t, recs, 4)
	for _, r := range []campaign.Record{recs[1], recs[3]} {
		assert.Equal(t, campaign.StatusFailed, r.Status)
		assert.Contains(t, r.Error, "container c1: launch run (sh -c): exit status 3")
	}
}

// An arm's client environment goes into its job file for run-arm; an arm
// whose environment cannot be given fails its points before any container
// starts.
func TestContainerArmsClient(t *testing.T) {
	dir := t.TempDir()
	ce := &recipes.ClientEnv{Checkout: launch.CheckoutDir, RuntimeDir: launch.RuntimeDir("mi325x-tw-arm02"), UV: launch.ToolsDir + "/uv", HubCache: "/hub", Loader: recipes.Loader062126}
	started := 0
	c := &ContainerArms{Dir: dir, Sweep: "/opt/sweep/sweep", Poll: 10e6,
		Client: func(*campaign.Arm) (*recipes.ClientEnv, error) { return ce, nil },
		Plan: func(*campaign.Arm, []int, []string) (*launch.Plan, error) {
			started++
			return &launch.Plan{ContainerName: "c1", Commands: []recipes.HostCommand{{Role: launch.RoleRun, Argv: []string{"sh", "-c", "exit 3"}}}}, nil
		}}
	c.Run(context.Background(), containerJob(), []int{2, 3}, func(campaign.Record) {})
	b, err := os.ReadFile(dir + "/docker/arm02-t1.json")
	require.NoError(t, err)
	var aj struct {
		Client *recipes.ClientEnv `json:"client_env"`
	}
	require.NoError(t, json.Unmarshal(b, &aj))
	assert.Equal(t, ce, aj.Client)
	assert.Equal(t, 1, started)

	c.Client = func(*campaign.Arm) (*recipes.ClientEnv, error) {
		return nil, fmt.Errorf("arm 2: its points replay two trace sets")
	}
	var recs []campaign.Record
	c.Run(context.Background(), containerJob(), []int{2, 3}, func(r campaign.Record) { recs = append(recs, r) })
	require.Len(t, recs, 4)
	assert.Equal(t, "arm 2: its points replay two trace sets", recs[3].Error)
	assert.Equal(t, 1, started, "no container for an arm without its client environment")
}
