package local

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
)

func TestWall(t *testing.T) {
	arm := func(i, gpus int) *campaign.Arm { return &campaign.Arm{Index: i, GPUs: gpus} }
	tests := []struct {
		name        string
		gpus        int
		maxParallel int
		sizes       []int
		seconds     []float64
		want        float64
	}{
		{"one arm", 8, 0, []int{8}, []float64{100}, 100},
		{"four TP2 arms at once", 8, 0, []int{2, 2, 2, 2}, []float64{100, 200, 300, 400}, 400},
		{"in a row on a full node", 8, 0, []int{8, 8, 8}, []float64{100, 100, 100}, 300},
		// The TP8 arm waits for the first TP4 arm; the second TP4 arm
		// fills the free half meanwhile (in order it would wait too: 300).
		{"backfill", 8, 0, []int{4, 8, 4}, []float64{100, 100, 100}, 200},
		{"max parallel 1", 8, 1, []int{2, 2}, []float64{100, 50}, 150},
		{"an arm larger than the node is skipped", 4, 0, []int{8, 4}, []float64{1000, 10}, 10},
		{"no arms", 8, 0, nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var arms []*campaign.Arm
			for i, g := range tt.sizes {
				arms = append(arms, arm(i, g))
			}
			e := &Executor{GPUs: make([]int, tt.gpus), MaxParallel: tt.maxParallel}
			assert.InDelta(t, tt.want, e.Wall(arms, tt.seconds), 1e-9)
		})
	}
}

// holdBackend records the order in which arms start; arm 0's server
// start holds its GPUs until arm 2 has started (or a bound passes).
type holdBackend struct {
	mu      sync.Mutex
	started []int
	arm2    chan struct{}
}

func (b *holdBackend) StartServer(_ context.Context, a *campaign.Arm, _ *campaign.Point, _ []int) (campaign.Server, error) {
	b.mu.Lock()
	b.started = append(b.started, a.Index)
	b.mu.Unlock()
	switch a.Index {
	case 0:
		select {
		case <-b.arm2:
		case <-time.After(5 * time.Second):
		}
	case 2:
		close(b.arm2)
	}
	return nil, errors.New("no server in this test")
}

// TestExecuteBackfills checks that Execute places arms by the rule Wall
// assumes: the 4-GPU arm behind the 8-GPU one starts beside the first
// while the 8-GPU arm waits.
func TestExecuteBackfills(t *testing.T) {
	arms := []*campaign.Arm{{Index: 0, GPUs: 4}, {Index: 1, GPUs: 8}, {Index: 2, GPUs: 4}}
	var jobs []campaign.Job
	for _, a := range arms {
		a.Points = []*campaign.Point{{ID: string(rune('a' + a.Index)), Arm: a.Index}}
		jobs = append(jobs, campaign.Job{Arm: a, Points: a.Points})
	}
	b := &holdBackend{arm2: make(chan struct{})}
	e := &Executor{GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Backend: b}
	require.NoError(t, e.Execute(context.Background(), jobs, func(campaign.Record) {}))
	require.Len(t, b.started, 3)
	assert.Equal(t, 1, b.started[2], "the 8-GPU arm starts last: %v", b.started)
	assert.InDelta(t, 200, e.Wall(arms, []float64{100, 100, 100}), 1e-9, "the estimate places the arms the same way")
}
