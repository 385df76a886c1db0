package executor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/local"
	"sweep/sweep/executor/slurm"
	"sweep/sweep/run"
)

func TestNameSet(t *testing.T) {
	var n Name
	assert.Equal(t, "local", n.String(), "the zero name is local")
	require.NoError(t, n.Set("slurm"))
	assert.Equal(t, Slurm, n)
	assert.ErrorContains(t, n.Set("k8s"), "want local or slurm")
	assert.Equal(t, Slurm, n, "a refused value leaves the name")
}

func TestNew(t *testing.T) {
	cost := campaign.PlannedCost(600)
	sched := &campaign.Schedule{Points: []*campaign.Point{{}}}
	ex, err := New(Options{Name: Local, Schedule: sched, Cost: cost, GPUs: []int{0, 1}, MaxParallel: 1})
	require.NoError(t, err)
	l, ok := ex.(*local.Executor)
	require.True(t, ok, "%T", ex)
	assert.Equal(t, []int{0, 1}, l.GPUs)
	assert.Equal(t, 1, l.MaxParallel)
	assert.NotNil(t, l.Arm.PointTimeout, "the watchdog")

	setup := run.Setup{Simulate: true, TimeScale: 150, WallClock: true, Aiperf: "/bin/aiperf"}
	po := run.Options{StopGrace: 3 * time.Second, ReadyTimeout: time.Minute}
	ex, err = New(Options{Name: Slurm, Dir: "/d", Schedule: sched, Cost: cost, Setup: setup, Point: po, Program: []string{"/bin/sweep"},
		Partition: "p", Poll: time.Second})
	require.NoError(t, err)
	s, ok := ex.(*slurm.Executor)
	require.True(t, ok, "%T", ex)
	assert.Equal(t, campaign.ArmSettings{Simulate: true, TimeScale: 150, WallClock: true, Aiperf: "/bin/aiperf", StopGrace: 3, ReadyTimeout: 60}, s.Settings)
	assert.Equal(t, []string{"/bin/sweep"}, s.Program)
	p := &campaign.Point{Plan: recipes.Point{ProbeDuration: 300}}
	want := 2*cost.PointWall(p, true, 150) + time.Minute
	assert.Equal(t, want, s.PointTimeout(p))
	assert.Equal(t, want+10*time.Minute, s.TimeLimit(campaign.Job{Points: []*campaign.Point{p}}), "--time: the points' watchdogs plus ten minutes")
	assert.Equal(t, slurm.JobSpec{Partition: "p"}, s.Spec(&campaign.Arm{Runner: "mi325x"}), "a simulated arm gets no profile allocation, only --slurm-partition")

	_, err = New(Options{Name: Slurm, Adaptive: true, Cost: cost})
	assert.ErrorContains(t, err, "local executor only")
}

// A real engine's arm on a launcher whose jobs share nodes (MI325X,
// MI300X) has its server on 40000 + the job id % 10000, as InferenceX's
// launcher puts it; other launchers' arms, multi-node arms and simulated
// engines keep the planned port.
func TestJobPort(t *testing.T) {
	for _, tc := range []struct {
		runner string
		nodes  int
		real   bool
		want   int // 0: the planned port
	}{
		{runner: "cluster:mi325x-amds", real: true, want: 48123},
		{runner: "mi300x-amds", real: true, want: 48123},
		{runner: "mi325x-amds"},
		{runner: "mi325x-amds", nodes: 2, real: true},
		{runner: "mi355x-amds", real: true},
		{runner: "b200-dgxc", real: true},
		{runner: "mi325x-tw", real: true},
	} {
		t.Run(fmt.Sprintf("%s nodes %d real %t", tc.runner, tc.nodes, tc.real), func(t *testing.T) {
			jp := jobPort(nil, tc.real)
			var port func(slurm.JobID) (int, error)
			if jp != nil {
				port = jp(&campaign.Arm{Runner: tc.runner, Nodes: tc.nodes})
			}
			if tc.want == 0 {
				assert.Nil(t, port)
				return
			}
			require.NotNil(t, port)
			got, err := port("1238123")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			_, err = port("x")
			assert.EqualError(t, err, `job id "x": not a number to derive the engine port from`)
		})
	}
}
