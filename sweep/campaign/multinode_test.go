package campaign_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/run"
)

const amdDisaggKey = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"

// TestPlanMultiNodeArm: a multi-node key's arm is its prefill/decode
// layout; its concurrencies share one deployment (workers and router)
// on the ports MultiNodePorts gives, each point writing into its own
// directory under InferenceX's <RESULT_FILENAME>_conc<N>.
// TestSelectionCheckConcListMultiNode: a multi-node arm's concurrencies
// are its row's list, the arm named by its prefill and decode layout.
func TestSelectionCheckConcListMultiNode(t *testing.T) {
	rows, _ := builtinRows(t, amdDisaggKey)
	sel := campaign.Selection{TP: []int{8}, EP: []int{1}, ConcList: []int{2, 3}}
	m := sel.CheckConcList(rows)
	require.NotNil(t, m)
	assert.False(t, m.None)
	assert.Equal(t, []int{3}, m.Missing)
	require.NotEmpty(t, m.Arms)
	for _, a := range m.Arms {
		assert.Equal(t, amdDisaggKey, a.ConfigKey)
		assert.Contains(t, a.Concs, 2, a.Layout)
	}
	assert.Len(t, sel.Select(rows), len(m.Arms), "each arm keeps conc 2")
}

func TestPlanMultiNodeArm(t *testing.T) {
	rows, runners := builtinRows(t, amdDisaggKey)
	rows = campaign.Selection{TP: []int{8}, EP: []int{1}, ConcList: []int{2, 4}}.Select(rows)
	require.Len(t, rows, 2)
	dir := t.TempDir()
	var asked []int
	o := campaign.PlanOptions{Recipe: recipes.PlanOptions{Runners: runners, Duration: 120},
		MultiNodePorts: func(arm, n int) ([]int, error) {
			asked = append(asked, n)
			return []int{30000, 30001, 30002}[:n], nil
		}}
	s, err := campaign.Plan(rows, dir, o)
	require.NoError(t, err)
	require.Len(t, s.Arms, 1)
	a := s.Arms[0]
	assert.Equal(t, []int{3}, asked, "the router and two workers, once for the arm")
	assert.True(t, a.Shared, a.Why)
	assert.Equal(t, 1, a.Servers)
	assert.Equal(t, []int{8, 2}, []int{a.GPUs, a.Nodes}, "8 GPUs on each of 2 nodes")
	require.Len(t, a.Points, 2)
	for i, p := range a.Points {
		l := p.Plan.MultiNode
		require.NotNil(t, l, p.ID)
		assert.Equal(t, []int{2, 4}[i], p.Conc())
		assert.True(t, strings.HasSuffix(p.ID, []string{"_conc2", "_conc4"}[i]), p.ID)
		assert.Equal(t, result.PointDir(dir, p.ID), l.ResultDir)
		assert.Equal(t, "http://127.0.0.1:30001/health", l.Workers[0].HealthURL)
		assert.Equal(t, "http://127.0.0.1:30002/health", l.Workers[1].HealthURL)
		assert.Equal(t, "http://localhost:30000/health", l.RouterHealthURL)
		assert.Equal(t, recipes.ServerKey(a.Points[0].Plan), recipes.ServerKey(p.Plan), "one deployment")
	}
	assert.Empty(t, campaign.Selection{TP: []int{3}}.Select(rows), "selected by the prefill layout")
}

// fakeNodes records allocations and releases.
type fakeNodes struct{ allocated, released int }

func (f *fakeNodes) Allocate(context.Context, *campaign.Arm, int) (campaign.Nodes, error) {
	f.allocated++
	return f, nil
}
func (f *fakeNodes) Hosts() []string { return []string{"10.0.0.1", "10.0.0.1", "10.0.0.2"} }
func (f *fakeNodes) OnHost(host, name string) ([]string, error) {
	return nil, errors.New("no steps here")
}
func (f *fakeNodes) Release(context.Context) error { f.released++; return nil }

// TestRunBackendReleasesNodesWhenStartFails: a deployment that cannot
// start on its nodes gives them back.
func TestRunBackendReleasesNodesWhenStartFails(t *testing.T) {
	rows, runners := builtinRows(t, amdDisaggKey)
	rows = campaign.Selection{TP: []int{8}, EP: []int{1}, ConcList: []int{2}}.Select(rows)
	dir := t.TempDir()
	s, err := campaign.Plan(rows, dir, campaign.PlanOptions{Recipe: recipes.PlanOptions{Runners: runners}})
	require.NoError(t, err)
	nodes := &fakeNodes{}
	b := &campaign.RunBackend{Dir: dir, Setup: run.Setup{Simulate: true, WallClock: true, TimeScale: 20}, Nodes: nodes}
	_, err = b.StartServer(t.Context(), s.Arms[0], s.Points[0], nil)
	require.ErrorContains(t, err, "no steps here")
	assert.Equal(t, []int{1, 1}, []int{nodes.allocated, nodes.released})
}
