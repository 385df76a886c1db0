package propose

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/metrics/result"
	"sweep/sweep/knee"
)

func resultFor(tp, ep int) *knee.Result {
	var id result.Identity
	for i, v := range []any{"qwen3.5", "mi325x-amds", "sglang", "fp8", "mtp", "agentic-coding", false, false, tp, ep, "false", "none", 1} {
		id[i], _ = json.Marshal(v)
	}
	return &knee.Result{Arm: &knee.Arm{Identity: id}}
}

const master = `# header comment
k:
  image: x   # trailing comment
  scenarios:
    agentic-coding:
      - dram-utilization: 0.80
        search-space:
          - {tp: 2, ep: 2, spec-decoding: mtp, kv-offloading: none, conc-list: [1, 4, 6]}
          - tp: 8
            spec-decoding: mtp
            conc-list:
              - 1
              - 4   # keep me? no: this list is replaced
              - 8
          - {tp: 8, ep: 8, spec-decoding: mtp, conc-list: [4, 16]}

# footer
other: {a: 1}
`

func TestEditMaster(t *testing.T) {
	plans := []ArmPlan{
		{Result: resultFor(2, 2), Conc: []int{1, 4}},
		{Result: resultFor(8, 1), Conc: []int{1, 16, 32}},
		{Result: resultFor(8, 8), Dropped: "dominated"},
	}
	out, changes, err := EditMaster([]byte(master), "m.yaml", "k", plans)
	require.NoError(t, err)
	want := strings.Replace(master, "conc-list: [1, 4, 6]", "conc-list: [1, 4]", 1)
	want = strings.Replace(want, "              - 1\n              - 4   # keep me? no: this list is replaced\n              - 8\n",
		"              - 1\n              - 16\n              - 32\n", 1)
	assert.Equal(t, want, string(out))
	require.Len(t, changes, 2)
	assert.Equal(t, 8, changes[0].Line)
	assert.Equal(t, 12, changes[1].Line)
	assert.Contains(t, Diff(changes), "+          - {tp: 2, ep: 2, spec-decoding: mtp, kv-offloading: none, conc-list: [1, 4]}")

	_, _, err = EditMaster([]byte(master), "m.yaml", "k", []ArmPlan{{Result: resultFor(4, 1), Conc: []int{1}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "m.yaml:3:3: k: no agentic-coding search-space entry for tp4")
	_, _, err = EditMaster([]byte(master), "m.yaml", "nope", plans)
	assert.ErrorContains(t, err, `config key "nope" not found`)
}

func TestAppendChangelog(t *testing.T) {
	for _, tc := range []struct{ name, old, sep string }{
		{"one newline", "- a: 1\n", "\n"},
		{"blank line already", "- a: 1\n\n", ""},
		{"no final newline", "- a: 1", "\n\n"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, c := AppendChangelog([]byte(tc.old), "log", "- b: 2\n")
			assert.Equal(t, tc.old+tc.sep+"- b: 2\n", string(out))
			assert.Equal(t, "- b: 2", c.New[len(c.New)-1])
		})
	}
}

// kneeAt is an ok arm of TP tp with its knee at knee_ and the points
// pts, each {conc, p90 normalized E2E latency, throughput}.
func kneeAt(tp int, knee_ int, pts ...[3]float64) *knee.Result {
	r := resultFor(tp, 1)
	r.Status, r.Knee = knee.StatusOK, knee_
	for _, p := range pts {
		i, th := p[1], p[2]
		r.Points = append(r.Points, knee.Point{Conc: int(p[0]), Usable: true, Throughput: &th, E2ENormP90: &i})
	}
	return r
}

func TestPlan(t *testing.T) {
	// tp8 wins at high interactivity, tp4 at high throughput, tp2 nowhere.
	tp8 := kneeAt(8, 16, [3]float64{1, 150, 1000}, [3]float64{4, 110, 3000}, [3]float64{16, 60, 5000}, [3]float64{32, 30, 5200}, [3]float64{64, 10, 4000})
	tp4 := kneeAt(4, 32, [3]float64{4, 90, 2500}, [3]float64{16, 45, 5600}, [3]float64{32, 25, 7000}, [3]float64{64, 12, 7100})
	tp2 := kneeAt(2, 8, [3]float64{1, 80, 500}, [3]float64{8, 40, 2000}, [3]float64{16, 20, 2100})
	rs := []*knee.Result{tp8, tp4, tp2}
	fr := knee.Frontiers(rs, knee.AxisE2ENormP90)[0]
	plans := Plan(rs, fr, Options{})
	require.Len(t, plans, 3)
	assert.Equal(t, []int{1, 4, 16, 32}, plans[0].Conc, plans[0].Summary())
	assert.Equal(t, []int{4, 16, 32, 64}, plans[1].Conc, plans[1].Summary())
	assert.Nil(t, plans[2].Conc)
	assert.Contains(t, plans[2].Dropped, "dominated")
	assert.Contains(t, Entry("k", plans), "TP8 c1,c4,c16,c32; TP4 c4,c16,c32,c64; dropped as dominated: TP2")
}

// TestPlanUnfinished: an arm whose discovery has not finished points
// keeps its conc-list, also when it is dominated so far (its points not
// run could put it on the frontier), and the changelog entry names it;
// its measured points still stand on the frontier for the other arms.
// CheckFinished refuses such a discovery unless AllowUnfinished.
func TestPlanUnfinished(t *testing.T) {
	tp8 := kneeAt(8, 16, [3]float64{1, 150, 1000}, [3]float64{4, 110, 3000}, [3]float64{16, 60, 5000}, [3]float64{32, 30, 5200}, [3]float64{64, 10, 4000})
	tp4 := kneeAt(4, 32, [3]float64{4, 90, 2500}, [3]float64{16, 45, 5600}, [3]float64{32, 25, 7000}, [3]float64{64, 12, 7100})
	tp2 := kneeAt(2, 8, [3]float64{1, 80, 500}, [3]float64{8, 40, 2000}, [3]float64{16, 20, 2100})
	tp4.Unfinished = []int{128}
	tp2.Unfinished = []int{32, 64}
	rs := []*knee.Result{tp8, tp4, tp2}
	fr := knee.Frontiers(rs, knee.AxisE2ENormP90)[0]
	plans := Plan(rs, fr, Options{})
	require.Len(t, plans, 3)
	assert.Equal(t, []int{1, 4, 16, 32}, plans[0].Conc, "tp8's plan as with tp4 finished: %s", plans[0].Summary())
	for i, want := range []string{"tp4: unchanged (unfinished: the discovery has not finished c128 (interrupted or not run)",
		"tp2: unchanged (unfinished: the discovery has not finished c32, c64 (interrupted or not run)"} {
		p := plans[i+1]
		assert.Nil(t, p.Conc, p.Summary())
		assert.Empty(t, p.Dropped, p.Summary())
		assert.True(t, strings.HasPrefix(p.Summary(), want), "got %q, want prefix %q", p.Summary(), want)
	}
	assert.Contains(t, Entry("k", plans), "TP8 c1,c4,c16,c32; left unchanged, the discovery had not finished them "+
		"(the other arms' frontier was read without those points): TP4 (c128), TP2 (c32, c64)")

	for _, tc := range []struct {
		name string
		req  Request
		want string // "": no error
	}{
		{"finished", Request{From: "d", Results: []*knee.Result{tp8}}, ""},
		{"incomplete", Request{From: "d", Results: []*knee.Result{tp8}, Incomplete: "its journal says the sweep has not finished 2 points: tp8 ep8 c4 (not run)"},
			"d: the discovery has not finished, so nothing is proposed from it: its journal says the sweep has not finished 2 points: tp8 ep8 c4 (not run); " +
				"a proposal now would read its unfinished arms' grids as ending where the sweep stopped"},
		{"arm unfinished, no journal text", Request{From: "d", Results: rs}, "d: the discovery has not finished, so nothing is proposed from it: " +
			"qwen3.5 mi325x-amds sglang fp8 mtp tp4 c128; qwen3.5 mi325x-amds sglang fp8 mtp tp2 c32, c64; "},
		{"allowed", Request{From: "d", Results: rs, Incomplete: "x", AllowUnfinished: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckFinished(tc.req)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got %q, want prefix %q", err, tc.want)
			assert.Contains(t, err.Error(), "or pass --allow-unfinished to propose its finished arms now and leave the unfinished arms' conc-lists as they are")
		})
	}
}

// TestPlanNotPlanned: an arm whose discovery did not plan some of its
// official points (--conc-list) keeps its conc-list: its grid was read as
// ending where the --conc-list did (an unsaturated arm's conc-list shrank
// to its top planned point, "extend it upward" the reason). The entry
// names it; the other arms are planned as before.
func TestPlanNotPlanned(t *testing.T) {
	tp8 := kneeAt(8, 16, [3]float64{1, 150, 1000}, [3]float64{4, 110, 3000}, [3]float64{16, 60, 5000}, [3]float64{32, 30, 5200}, [3]float64{64, 10, 4000})
	tp4 := kneeAt(4, 0, [3]float64{4, 90, 2500}, [3]float64{16, 45, 5600})
	tp4.Status = knee.StatusUnsaturated
	rs := []*knee.Result{tp8, tp4}
	fr := knee.Frontiers(rs, knee.AxisE2ENormP90)[0]
	plans := Plan(rs, fr, Options{NotPlanned: map[*knee.Result][]int{tp4: {32, 40, 48}}})
	require.Len(t, plans, 2)
	assert.Equal(t, []int{1, 4, 16, 32}, plans[0].Conc, plans[0].Summary())
	assert.Nil(t, plans[1].Conc, plans[1].Summary())
	assert.Equal(t, []int{32, 40, 48}, plans[1].NotPlanned)
	assert.Equal(t, "tp4: unchanged (not among the discovery's points: its official c32, c40, c48 (its --conc-list left them out, or the config gained them since), "+
		"which could move its knee, peak and frontier points: discover them and propose again)", plans[1].Summary())
	assert.Contains(t, Entry("k", plans), "TP8 c1,c4,c16,c32; left unchanged, the discovery did not run these official points "+
		"(the other arms' frontier was read without them): TP4 (c32, c40, c48)")
}

// TestResolveKeyRunnerLabel: results name the hardware with the runner's
// "cluster:" prefix (InferenceX's and sweep's simulated results alike) or
// without it; both resolve to the shipped key.
func TestResolveKeyRunnerLabel(t *testing.T) {
	m, err := configs.DefaultMasters()
	require.NoError(t, err)
	for _, hw := range []string{"cluster:mi325x-amds", "mi325x-amds"} {
		var id result.Identity
		for i, v := range []any{"qwen3.5", hw, "sglang", "fp8", "mtp", "agentic-coding", false, false, 8, 8, "false", "none", 1} {
			id[i], _ = json.Marshal(v)
		}
		k, err := ResolveKey(m, id)
		require.NoError(t, err, hw)
		assert.Equal(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp", k, hw)
	}
}

// TestCheckResults: a simulated discovery is refused unless allowed (and
// then the changelog entry says so); a result with an absurd concurrency
// is refused always.
func TestCheckResults(t *testing.T) {
	mk := func(sim bool, concs ...int) *knee.Result {
		r := resultFor(8, 1)
		r.Arm.Simulated = sim
		for _, c := range concs {
			r.Arm.Samples = append(r.Arm.Samples, knee.Sample{Conc: c, Simulated: sim, File: "d/cx.json"})
		}
		return r
	}
	require.NoError(t, CheckResults([]*knee.Result{mk(false, 1, 4, 16)}, false))
	err := CheckResults([]*knee.Result{mk(false, 1, 4), mk(true, 1, 4)}, false)
	require.ErrorContains(t, err, `d/cx.json: a simulated result ("simulated": true)`)
	assert.ErrorContains(t, err, "pass --allow-simulated")
	require.NoError(t, CheckResults([]*knee.Result{mk(true, 1, 4)}, true))
	for _, allow := range []bool{false, true} {
		err = CheckResults([]*knee.Result{mk(false, 1, 1_000_000_000_000_000_000)}, allow)
		require.ErrorContains(t, err, "d/cx.json: conc 1000000000000000000 is not a concurrency a sweep runs (1 to 65536)")
	}

	sim := mk(true, 1, 4)
	sim.Status, sim.Knee = knee.StatusOK, 4
	e := Entry("k", []ArmPlan{{Result: sim, Conc: []int{1, 4}}})
	assert.Contains(t, e, "from a SIMULATED fast discovery sweep")
	assert.NotContains(t, Entry("k", []ArmPlan{{Result: mk(false, 1), Conc: []int{1}}}), "SIMULATED")
}

// TestDiff: an append to a 43-line changelog read "@@ -44,0 +44,8 @@";
// diff -U0 starts an empty range at the line before it, and a hunk's new
// lines start where the file's earlier hunks moved them.
func TestDiff(t *testing.T) {
	changes := []Change{
		{File: "m.yaml", Line: 8, Old: []string{"a"}, New: []string{"b"}},
		{File: "m.yaml", Line: 12, Old: []string{"- 1", "- 4", "- 8"}, New: []string{"- 1", "- 16"}},
		{File: "m.yaml", Line: 20, Old: []string{"c"}, New: []string{"d"}},
		{File: "log", Line: 44, New: []string{"", "- e"}},
		{File: "empty", Line: 1, New: []string{"- f"}},
	}
	want := `--- m.yaml
+++ m.yaml
@@ -8,1 +8,1 @@
-a
+b
@@ -12,3 +12,2 @@
-- 1
-- 4
-- 8
+- 1
+- 16
@@ -20,1 +19,1 @@
-c
+d
--- log
+++ log
@@ -43,0 +44,2 @@
+
+- e
--- empty
+++ empty
@@ -0,0 +1,1 @@
+- f
`
	assert.Equal(t, want, Diff(changes))
}
