package abgate

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompareReplicatesHandComputed(t *testing.T) {
	// simple_javascript (50 cases). A1 fails 0-9, A2 fails 0-4: A's pass
	// fractions are 0 for 0-4, 1/2 for 5-9, 1 otherwise: (2.5 + 40)/50 =
	// 85 %. B1 and B2 fail 0-4: 90 %. Δ = +5 pp; 5 cases have B better.
	dir := t.TempDir()
	c := mustCategory(t, "simple_javascript")
	roots := map[string][]int{"A1": seq(10), "A2": seq(5), "B1": seq(5), "B2": seq(5)}
	for name, fail := range roots {
		writeCategory(t, filepath.Join(dir, name), c, catFiles{fail: fail})
	}
	rep, err := Compare(t.Context(), Options{
		A: []string{filepath.Join(dir, "A1"), filepath.Join(dir, "A2")}, B: []string{filepath.Join(dir, "B1"), filepath.Join(dir, "B2")},
		Model: testModel, Categories: []Category{c}, Resamples: 2000,
	})
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	got := rep.Categories[0]
	assert.InDelta(t, 85.0, *got.A, 1e-9)
	assert.InDelta(t, 90.0, *got.B, 1e-9)
	assert.InDelta(t, 5.0, *got.Delta, 1e-9)
	assert.Equal(t, 0, *got.APassBFail)
	assert.Equal(t, 5, *got.AFailBPass)
	assert.Equal(t, Passed, rep.Verdict)
	// The only differences are +1/2 on 5 of 50 cases: every resample is
	// >= 0, so the interval is within [0, 100 × 5 × 0.5/50 × 2].
	assert.GreaterOrEqual(t, rep.Primary.CI90[0], 0.0)
	assert.LessOrEqual(t, rep.Primary.CI90[1], 10.0)
	// Sign test for "B worse" with no case better in A: P(X >= 0) = 1.
	assert.InDelta(t, 1.0, *rep.Primary.McNemarP, 1e-12)
}

func TestCompareOverallHandComputed(t *testing.T) {
	// Two categories: simple_javascript (50) A 40 pass, B 45 pass; live_relevance
	// (16) A 16, B 8. Unweighted: A (80 + 100)/2 = 90, B (90 + 50)/2 = 70.
	// Weighted: A 56/66, B 53/66.
	dir := t.TempDir()
	js, rel := mustCategory(t, "simple_javascript"), mustCategory(t, "live_relevance")
	writeCategory(t, filepath.Join(dir, "A"), js, catFiles{fail: seq(10)})
	writeCategory(t, filepath.Join(dir, "B"), js, catFiles{fail: seq(5)})
	writeCategory(t, filepath.Join(dir, "A"), rel, catFiles{})
	writeCategory(t, filepath.Join(dir, "B"), rel, catFiles{fail: seq(8)})
	rep, err := Compare(t.Context(), Options{A: []string{filepath.Join(dir, "A")}, B: []string{filepath.Join(dir, "B")},
		Model: testModel, Categories: []Category{js, rel}, Resamples: 2000})
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	assert.InDelta(t, 90.0, *rep.Overall.Unweighted.A, 1e-9)
	assert.InDelta(t, 70.0, *rep.Overall.Unweighted.B, 1e-9)
	assert.InDelta(t, 100*56.0/66, *rep.Overall.Weighted.A, 1e-9)
	assert.InDelta(t, 100*53.0/66, *rep.Overall.Weighted.B, 1e-9)
	assert.InDelta(t, 100*-3.0/66, *rep.Primary.Delta, 1e-9)
	// b = 8 (live_relevance), c = 5 (simple_javascript): P(X >= 8), X ~
	// Binomial(13, 1/2) = (1287 + 715 + 286 + 78 + 13 + 1) / 8192.
	assert.InDelta(t, 2380.0/8192, *rep.Primary.McNemarP, 1e-12)
	assert.Equal(t, 8, rep.Primary.ABetter)
	assert.Equal(t, 5, rep.Primary.BBetter)
}

// TestCompareForeignScoreFile: a score file of another model's run placed
// at arm A's path (its failures the same as arm B's) made A and B equal
// and the verdict PASS; its failure rows name another model, so the
// comparison is INCOMPLETE.
func TestCompareForeignScoreFile(t *testing.T) {
	dir := t.TempDir()
	c := mustCategory(t, "simple_javascript")
	writeCategory(t, filepath.Join(dir, "A"), c, catFiles{fail: seq(5), rowModel: "Org_Other-FC"})
	writeCategory(t, filepath.Join(dir, "B"), c, catFiles{fail: seq(5)})
	rep, err := Compare(t.Context(), Options{A: []string{filepath.Join(dir, "A")}, B: []string{filepath.Join(dir, "B")},
		Model: testModel, Categories: []Category{c}})
	require.NoError(t, err)
	assert.Equal(t, Incomplete, rep.Verdict)
	require.Len(t, rep.Problems, 1)
	assert.Equal(t, ReasonForeignFile, rep.Problems[0].Reason)
	assert.Equal(t, "a", rep.Problems[0].Arm)
}

func TestCompareCaseSetMismatch(t *testing.T) {
	dir := t.TempDir()
	c := mustCategory(t, "simple_javascript")
	writeCategory(t, filepath.Join(dir, "A"), c, catFiles{})
	other := ""
	for i := range c.Size {
		id := i
		if i == 7 {
			id = 99
		}
		other += `{"id": "simple_javascript_` + strconv.Itoa(id) + `", "result": []}` + "\n"
	}
	writeCategory(t, filepath.Join(dir, "B"), c, catFiles{result: other})
	rep, err := Compare(t.Context(), Options{A: []string{filepath.Join(dir, "A")}, B: []string{filepath.Join(dir, "B")},
		Model: testModel, Categories: []Category{c}})
	require.NoError(t, err)
	assert.Equal(t, Incomplete, rep.Verdict)
	require.Len(t, rep.Problems, 1)
	p := rep.Problems[0]
	assert.Equal(t, ReasonCaseSetMismatch, p.Reason)
	assert.Equal(t, "b", p.Arm)
	assert.Contains(t, p.Detail, "first missing: [simple_javascript_7]; first extra: [simple_javascript_99]")
	assert.NotNil(t, rep.Categories[0].A, "each arm's own accuracy is still shown")
	assert.Nil(t, rep.Categories[0].Delta, "unpaired: no Δ")
	assert.Nil(t, rep.Primary.Delta)
	assert.Nil(t, rep.Overall.Weighted.A, "no overall number from incomplete data")
}

func TestDecide(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name       string
		delta      float64
		ci         [2]float64
		want       Decision
		wantInNote string
	}{
		{"pass", 0.05, [2]float64{-0.5, 0.6}, Passed, ""},
		{"pass with a small drop", -0.9, [2]float64{-1.5, -0.3}, Passed, "B is lower: the whole 90 % CI is below 0"},
		{"regression", -8.4, [2]float64{-9.8, -7.0}, Regression, ""},
		{"upper bound at the tolerance is not a regression", -3, [2]float64{-4, -2}, Inconclusive, "contains -2.00"},
		{"lower bound at the tolerance is not a pass", -1, [2]float64{-2, 0}, Inconclusive, ""},
		{"possible regression", -2.5, [2]float64{-6.5, 1.5}, Inconclusive, "possible regression"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ci := tc.ci
			rep := &Report{Tolerance: 2, ReplicatesA: 1, ReplicatesB: 1, Primary: Primary{Arms: Arms{Delta: f(tc.delta)}, CI90: &ci}}
			rep.decide([]stratum{discordant(200, 16, 12)}, []string{"multiple"}, nil)
			assert.Equal(t, tc.want, rep.Verdict)
			if tc.wantInNote != "" {
				assert.Contains(t, rep.Notes[len(rep.Notes)-1]+rep.Notes[0], tc.wantInNote)
			}
			if tc.want == Inconclusive {
				assert.Contains(t, rep.Notes[0], "about 11 replicates per arm (10 more)")
			}
		})
	}
}

// TestDecideCalibrated: an A/A calibration's flip rate replaces the one
// measured between the arms in the replicate advice, and says so; one
// without the category is not used. 5 % on 200 cases: ceil(6.1826 ×
// 0.05/200 / 0.0004) = 4 replicates.
func TestDecideCalibrated(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cal := &Calibration{File: "aa/calibration.json", Runs: 4, Arm: "a", Categories: []CategoryFlips{{Category: "multiple", Cases: 200, FlipRate: 0.05}}}
	ci := [2]float64{-4, -1}
	rep := &Report{Tolerance: 2, ReplicatesA: 1, ReplicatesB: 1, Primary: Primary{Arms: Arms{Delta: f(-2.5)}, CI90: &ci}}
	rep.decide([]stratum{discordant(200, 16, 12)}, []string{"multiple"}, cal)
	assert.Equal(t, Inconclusive, rep.Verdict)
	assert.Equal(t, "the 90 % CI [-4.00, -1.00] contains -2.00: the A/A-measured flip rate (aa/calibration.json: 4 identical runs of arm a) is 5.0 % (between the arms: 14.0 %), which needs about 4 replicates per arm (3 more) to detect a 2.00-point drop with 80 % power", rep.Notes[0])

	rep = &Report{Tolerance: 2, ReplicatesA: 1, ReplicatesB: 1, Primary: Primary{Arms: Arms{Delta: f(-2.5)}, CI90: &ci}}
	rep.decide([]stratum{discordant(200, 16, 12)}, []string{"parallel"}, cal)
	assert.Contains(t, rep.Notes[0], "the measured flip rate between the arms is 14.0 % (the A/A calibration aa/calibration.json: 4 identical runs of arm a has no flip rate for parallel, so it is not used), which needs about 11 replicates per arm (10 more)")
}

func TestCompareCalibrationOfAnotherModel(t *testing.T) {
	_, err := Compare(t.Context(), Options{A: []string{"a"}, B: []string{"b"}, Model: testModel, Categories: []Category{mustCategory(t, "multiple")},
		Calibration: &Calibration{Model: "Org/Other-FC", Runs: 2, Arm: "a", File: "cal.json"}})
	assert.ErrorContains(t, err, `compare: the A/A calibration cal.json: 2 identical runs of arm a is of model "Org/Other-FC", not "Org/Model-FC"`)
}

// TestPartialRows: an interrupted leg's report shows, per category, what
// its complete replicates measured, the arm with none "–" (not 0 %, not
// 0 infra errors), labelled partial with the replicates not complete, and
// draws no overall result or verdict; both arms complete, the rows are
// the ones Compare draws. Before, such a report listed no category.
func TestPartialRows(t *testing.T) {
	dir := t.TempDir()
	js, rel := mustCategory(t, "simple_javascript"), mustCategory(t, "live_relevance")
	a, b := filepath.Join(dir, "a", "bfcl-r1"), filepath.Join(dir, "b", "bfcl-r1")
	for _, c := range []Category{js, rel} {
		writeCategory(t, a, c, catFiles{fail: seq(8)})
		writeCategory(t, b, c, catFiles{fail: seq(4)})
	}
	cats := []Category{js, rel}
	rows, probs := PartialRows(Options{A: []string{a}, B: []string{}, Model: testModel, Categories: cats})
	assert.Empty(t, probs)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.NotNil(t, r.A, r.Category)
		assert.Nil(t, r.B, "%s: arm b has no complete replicate", r.Category)
		assert.Nil(t, r.Delta, r.Category)
		assert.Nil(t, r.InfraErrorsB, "%s: not measured, not 0", r.Category)
	}
	assert.InDelta(t, 100*42.0/50, *rows[0].A, 1e-9)
	assert.InDelta(t, 100*8.0/16, *rows[1].A, 1e-9)

	both, probs := PartialRows(Options{A: []string{a}, B: []string{b}, Model: testModel, Categories: cats})
	assert.Empty(t, probs)
	full, err := Compare(t.Context(), Options{A: []string{a}, B: []string{b}, Model: testModel, Categories: cats, Resamples: 100})
	require.NoError(t, err)
	for i := range both {
		want := full.Categories[i]
		want.CI90 = nil // a category's own interval is a verdict's, not drawn here
		assert.Equal(t, want, both[i])
	}

	sim := false
	rep := &Report{Verdict: Incomplete, Leg: "regression", Model: testModel, Simulated: &sim, Tolerance: 2,
		Roots:   ReportRoots{A: []string{a}, B: []string{}},
		Partial: &Partial{Complete: ReportRoots{A: []string{a}, B: []string{}}, Incomplete: []string{"b/bfcl-r1"}},
		Primary: Primary{Metric: "weighted"}, Categories: rows, ReplicatesA: 1,
		Problems: []Problem{{Arm: Every, Root: dir, Category: Every, Reason: ReasonInterrupted, Detail: "interrupted before the report"}}}
	var md bytes.Buffer
	require.NoError(t, WriteTable(&md, rep))
	got := strings.ReplaceAll(md.String(), dir, "D")
	path := filepath.Join("testdata", "report-partial.md")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "%s (go test -update rewrites it)", path)
}
