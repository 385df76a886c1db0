package campaign_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/campaign"
)

// builtinRows are the single-node agentic rows of a shipped config key.
func builtinRows(t *testing.T, key string) (matrix.Matrix, *configs.Runners) {
	t.Helper()
	m, r, err := configs.Load(nil, "")
	require.NoError(t, err)
	g := &matrix.Generator{Masters: m, Runners: r}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"},
		EvalOptions: matrix.EvalOptions{NoEvals: true}})
	require.NoError(t, err)
	return rows, r
}

func TestSelection(t *testing.T) {
	rows, _ := builtinRows(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	got := campaign.Selection{TP: []int{8}, EP: []int{8}, DPAttn: "false", ConcList: []int{4, 32}}.Select(rows)
	require.Len(t, got, 2)
	for _, r := range got {
		assert.Equal(t, []int{8, 8}, []int{r.TP, r.EP})
		assert.Equal(t, matrix.Fingerprint(r), r.RecipeFingerprint, "stamped as InferenceX's CI stamps rows")
	}
	assert.Len(t, campaign.Selection{}.Select(rows), len(rows), "the zero selection keeps every row")
}

// TestSelectionCheckConcList: a --conc-list value no selected arm has is
// named, with each selected arm's concurrencies (arms with the same list
// on one line); a list naming none of them selects nothing.
func TestSelectionCheckConcList(t *testing.T) {
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	rows, _ := builtinRows(t, key)
	all := "the concurrencies of " + key + "'s selected arms (sweep plan lists the points):\n" +
		"  tp2 ep2: 1 4 6\n  tp4: 1 8 16 32 40 48\n  tp4 ep4: 4 16 32 40 48\n  tp8: 1 4 8 12 16 24 32 40 48 64 80\n  tp8 ep8: 4 16 24 32 40 48 64"
	for _, tc := range []struct {
		name string
		sel  campaign.Selection
		want string // "" for no mismatch
		none bool
	}{
		{name: "no conc-list", sel: campaign.Selection{}},
		{name: "every value some arm's", sel: campaign.Selection{ConcList: []int{1, 6, 80}}},
		{name: "one value off the grid", sel: campaign.Selection{ConcList: []int{1, 4, 3000}},
			want: "--conc-list 3000: no selected arm has this concurrency, so it is left out and the other values run; " + all},
		{name: "none on the grid", sel: campaign.Selection{ConcList: []int{3, 3000, 3}}, none: true,
			want: "--conc-list 3, 3000: no selected arm has these concurrencies; pick from " + all},
		{name: "only the arms the layout filters name", sel: campaign.Selection{TP: []int{4}, ConcList: []int{6}}, none: true,
			want: "--conc-list 6: no selected arm has this concurrency; pick from the concurrencies of " + key + "'s selected arms (sweep plan lists the points):\n" +
				"  tp4: 1 8 16 32 40 48\n  tp4 ep4: 4 16 32 40 48"},
		{name: "no arm to compare with", sel: campaign.Selection{TP: []int{3}, ConcList: []int{3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.sel.CheckConcList(rows)
			if tc.want == "" {
				assert.Nil(t, m)
				return
			}
			require.NotNil(t, m)
			assert.Equal(t, tc.want, m.Error())
			assert.Equal(t, tc.none, m.None)
			assert.Equal(t, tc.none, len(tc.sel.Select(rows)) == 0, "None is Select keeping nothing")
		})
	}
}

// TestSelectionCheckEmpty: a --tp/--ep/--dp-attn naming no arm said "no
// agentic point matches the selection" and no more, where a --conc-list
// naming no concurrency lists the arms; it lists them too.
func TestSelectionCheckEmpty(t *testing.T) {
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	rows, _ := builtinRows(t, key)
	arms := "the concurrencies of " + key + "'s arms (sweep plan lists the points):\n" +
		"  tp2 ep2: 1 4 6\n  tp4: 1 8 16 32 40 48\n  tp4 ep4: 4 16 32 40 48\n  tp8: 1 4 8 12 16 24 32 40 48 64 80\n  tp8 ep8: 4 16 24 32 40 48 64"
	for _, tc := range []struct {
		name string
		sel  campaign.Selection
		want string // "" for a selection that names an arm
	}{
		{"every arm", campaign.Selection{}, ""},
		{"an arm", campaign.Selection{TP: []int{8}, EP: []int{8}}, ""},
		{"an arm, no concurrency of it: CheckConcList's", campaign.Selection{TP: []int{2}, ConcList: []int{3}}, ""},
		{"no such tp", campaign.Selection{TP: []int{3}}, "no agentic point matches --tp 3: no arm has that layout; pick from " + arms},
		{"no such tp and ep", campaign.Selection{TP: []int{8, 2}, EP: []int{4}, DPAttn: "true", ConcList: []int{4}},
			"no agentic point matches --tp 8,2 --ep 4 --dp-attn true: no arm has that layout; pick from " + arms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.sel.CheckEmpty(rows)
			if tc.want == "" {
				assert.Nil(t, m)
				return
			}
			require.NotNil(t, m)
			assert.Equal(t, tc.want, m.Error())
			assert.Empty(t, tc.sel.Select(rows))
		})
	}
}

// TestSelectionCheckConcListKeys: arms of several keys are named with
// their key, and arms with the same concurrencies share a line.
func TestSelectionCheckConcListKeys(t *testing.T) {
	a, _ := builtinRows(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	b, _ := builtinRows(t, "qwen3.5-fp8-mi300x-sglang-agentic-mtp")
	m := campaign.Selection{TP: []int{8}, ConcList: []int{3}}.CheckConcList(append(a, b...))
	require.NotNil(t, m)
	assert.Equal(t, "--conc-list 3: no selected arm has this concurrency; pick from the concurrencies of the selected arms (sweep plan lists the points):\n"+
		"  qwen3.5-fp8-mi325x-sglang-agentic-mtp tp8: 1 4 8 12 16 24 32 40 48 64 80\n"+
		"  qwen3.5-fp8-mi325x-sglang-agentic-mtp tp8 ep8: 4 16 24 32 40 48 64\n"+
		"  qwen3.5-fp8-mi300x-sglang-agentic-mtp tp8, qwen3.5-fp8-mi300x-sglang-agentic-mtp tp8 ep8: 4 16 20 24 32", m.Error())
}

func TestPlanPortsDirectoriesAndProbes(t *testing.T) {
	rows, runners := builtinRows(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	rows = campaign.Selection{TP: []int{8}, ConcList: []int{4, 16}}.Select(rows)
	dir := t.TempDir()
	o := campaign.PlanOptions{Recipe: recipes.PlanOptions{Runners: runners, Fast: true}}
	s, err := campaign.Plan(rows, dir, o)
	require.NoError(t, err)
	require.Len(t, s.Arms, 2, "tp8 ep1 and tp8 ep8")
	for _, a := range s.Arms {
		for _, p := range a.Points {
			assert.Equal(t, recipes.DefaultPort+2*a.Index, p.Plan.Port, "arm %d's port", a.Index)
			assert.Equal(t, filepath.Join(dir, p.ID), p.Plan.ResultDir)
			assert.Nil(t, p.ProbeClient)
		}
	}

	o.ProbeDuration = 300
	o.ArmPort = func(arm int) (int, error) { return 20000 + 10*arm, nil }
	s, err = campaign.Plan(rows, dir, o)
	require.NoError(t, err)
	for _, p := range s.Points {
		assert.Equal(t, 20000+10*p.Arm, p.Plan.Port)
		require.NotNil(t, p.ProbeClient, p.ID)
		assert.Equal(t, 300, p.ProbeDuration)
		assert.Contains(t, fmt.Sprint(p.ProbeClient.Argv), "300", "the probe's client runs 300 s")
		assert.Zero(t, p.Plan.ProbeDuration, "the point itself runs at the full length")
	}

	o.ArmPort = func(int) (int, error) { return 0, fmt.Errorf("no free port") }
	_, err = campaign.Plan(rows, dir, o)
	assert.EqualError(t, err, "no free port")
}

// OnPort plans an arm's points as Plan plans them on that port: the
// shared server's command (planned for the arm's largest concurrency) or
// each point's own, the engine, client and health on the new port; the
// schedule's points keep theirs.
func TestPlanOnPort(t *testing.T) {
	rows, runners := builtinRows(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	rows = campaign.Selection{TP: []int{8}, ConcList: []int{4, 16, 32}}.Select(rows)
	dir := t.TempDir()
	for _, exact := range []bool{false, true} {
		t.Run(fmt.Sprintf("exact servers %t", exact), func(t *testing.T) {
			o := campaign.PlanOptions{Recipe: recipes.PlanOptions{Runners: runners, Fast: true}, ExactServers: exact}
			s, err := campaign.Plan(rows, dir, o)
			require.NoError(t, err)
			o.ArmPort = func(int) (int, error) { return 40377, nil }
			want, err := campaign.Plan(rows, dir, o)
			require.NoError(t, err)
			a := s.Arms[1]
			require.Len(t, a.Points, 3)
			assert.Equal(t, !exact, a.Shared)
			got, err := s.OnPort(a, a.Points[:2], 40377)
			require.NoError(t, err)
			require.Len(t, got, 2)
			for i, p := range got {
				assert.Equal(t, want.Arms[1].Points[i].Plan, p.Plan, p.ID)
				assert.Equal(t, 40377, p.Plan.Port)
				assert.Equal(t, "http://localhost:40377/health", p.Plan.HealthURL)
				assert.Contains(t, fmt.Sprint(p.Plan.Engine.Argv), "--port 40377")
				assert.Equal(t, a.Points[i].ID, p.ID)
				assert.Equal(t, a.Points[i].Index, p.Index)
				assert.Equal(t, a.Points[i].Server, p.Server)
				assert.Equal(t, recipes.DefaultPort+2, a.Points[i].Plan.Port, "the schedule's point is not changed")
			}
		})
	}
}
