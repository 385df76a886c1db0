package bfclsim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/simproto"
	"sweep/sweep/abgate"
)

const model = "Org/Sim-FC"

// leg writes reps replicates of arms a and b and compares them.
func leg(t *testing.T, cats string, a, b Arm, reps int) *abgate.Report {
	t.Helper()
	cs, err := abgate.ExpandCategories(strings.Split(cats, ","))
	require.NoError(t, err)
	dir := t.TempDir()
	var rootsA, rootsB []string
	for r := range reps {
		ra, rb := filepath.Join(dir, fmt.Sprintf("A%d", r+1)), filepath.Join(dir, fmt.Sprintf("B%d", r+1))
		require.NoError(t, Write(ra, a, cs, r))
		require.NoError(t, Write(rb, b, cs, r))
		rootsA, rootsB = append(rootsA, ra), append(rootsB, rb)
	}
	rep, err := abgate.Compare(t.Context(), abgate.Options{A: rootsA, B: rootsB, Model: model, Categories: cs})
	require.NoError(t, err)
	return rep
}

// TestSimulatedLegs runs simulated legs end to end through the exact-path
// reader and the gate: a planted 4-point regression, no difference, and a
// 1.5-point drop on few cases.
func TestSimulatedLegs(t *testing.T) {
	nightly := "non_live,live,multi_turn"
	base := Arm{Model: model, Seed: 11, Accuracy: 0.85}
	with := func(name string, drop float64) Arm { a := base; a.Name, a.Drop = name, drop; return a }
	tests := []struct {
		name      string
		cats      string
		a, b      Arm
		reps      int
		want      abgate.Decision
		wantDelta float64 // the planted weighted Δ
		within    float64 // about 3 SDs of the run noise: sqrt(2·0.03·0.97·100²/n)
	}{
		{"planted 4-point regression", nightly, with("a", 0), with("b", 0.04), 1, abgate.Regression, -4, 1.5},
		{"no difference", nightly, with("a", 0), with("b", 0), 1, abgate.Passed, 0, 1.5},
		{"no difference, two replicates", "multiple,live_simple", with("a", 0), with("b", 0), 2, abgate.Passed, 0, 2.5},
		{"1.5-point drop on 200 cases", "multi_turn_base", with("a", 0), with("b", 0.015), 1, abgate.Inconclusive, -1.5, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := leg(t, tc.cats, tc.a, tc.b, tc.reps)
			require.Empty(t, rep.Problems)
			assert.Equal(t, tc.want, rep.Verdict, "Δ %v CI %v", *rep.Primary.Delta, *rep.Primary.CI90)
			assert.InDelta(t, tc.wantDelta, *rep.Primary.Delta, tc.within)
		})
	}
}

// TestSimulatedProblems: the stand-in's partial and flaky runs are caught.
func TestSimulatedProblems(t *testing.T) {
	a := Arm{Model: model, Seed: 3, Name: "a", Accuracy: 0.9}
	flaky := a
	flaky.Name, flaky.InfraErrors = "b", 0.2
	rep := leg(t, "simple_python", a, flaky, 1)
	assert.Equal(t, abgate.Incomplete, rep.Verdict)
	require.NotEmpty(t, rep.Problems)
	assert.Equal(t, abgate.ReasonInfraErrorRate, rep.Problems[0].Reason)

	partial := a
	partial.Name, partial.Cases = "b", 100
	rep = leg(t, "simple_python", a, partial, 1)
	assert.Equal(t, abgate.Incomplete, rep.Verdict)
	var got []abgate.Reason
	for _, p := range rep.Problems {
		got = append(got, p.Reason)
	}
	assert.ElementsMatch(t, []abgate.Reason{abgate.ReasonPartial, abgate.ReasonCaseSetMismatch}, got)
}

// TestGenerateAgainstServer: Generate asks the server once per category
// with the model it lists; a category whose request fails is written as
// inference errors, which the gate counts and never passes.
func TestGenerateAgainstServer(t *testing.T) {
	var asked []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			_, _ = io.WriteString(w, `{"data": [{"id": "served-name"}]}`)
		case "/v1/chat/completions":
			var body struct {
				Model    string `json:"model"`
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
			assert.Equal(t, "served-name", body.Model)
			mu.Lock()
			asked = append(asked, body.Messages[0].Content)
			mu.Unlock()
			if strings.Contains(body.Messages[0].Content, "live_simple") {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			_, _ = io.WriteString(w, `{"choices": []}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cs, err := abgate.ExpandCategories([]string{"multiple", "live_simple"})
	require.NoError(t, err)
	arm := Arm{Model: model, Seed: 5, Name: "a", Accuracy: 0.8}
	root := t.TempDir()
	answered, err := Generate(t.Context(), root, srv.URL+"/v1", arm, cs, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, answered)
	assert.Len(t, asked, 2)
	require.NoError(t, Evaluate(root, arm, cs, 0))
	ok, _ := abgate.ReadRoot(root, model, "a", cs[0], abgate.ReadOptions{})
	require.NotNil(t, ok)
	assert.Zero(t, ok.InfraErrors)
	bad, probs := abgate.ReadRoot(root, model, "a", cs[1], abgate.ReadOptions{})
	require.NotNil(t, bad)
	assert.Equal(t, cs[1].Size, bad.InfraErrors)
	require.NotEmpty(t, probs)
	assert.Equal(t, abgate.ReasonInfraErrorRate, probs[0].Reason)

	// The same arm without a server: the model's verdicts are the same.
	plain := t.TempDir()
	require.NoError(t, Write(plain, arm, cs[:1], 0))
	want, _ := abgate.ReadRoot(plain, model, "a", cs[0], abgate.ReadOptions{})
	assert.Equal(t, want.Outcomes, ok.Outcomes)

	// No server at all: every category is inference errors.
	srv.Close()
	answered, err = Generate(t.Context(), t.TempDir(), srv.URL+"/v1", arm, cs, 0)
	require.NoError(t, err)
	assert.Zero(t, answered)
}

func TestOffsetAndEnv(t *testing.T) {
	cs, err := abgate.ExpandCategories([]string{"live_multiple"})
	require.NoError(t, err)
	base := Arm{Model: model, Seed: 9, Accuracy: 0.8, Flip: 0.0001}
	acc := func(a Arm) float64 {
		root := t.TempDir()
		require.NoError(t, Write(root, a, cs, 0))
		rc, probs := abgate.ReadRoot(root, model, a.Name, cs[0], abgate.ReadOptions{})
		require.Empty(t, probs)
		pass := 0
		for _, o := range rc.Outcomes {
			if o == abgate.Pass {
				pass++
			}
		}
		return 100 * float64(pass) / float64(len(rc.IDs))
	}
	a := acc(base)
	// 1053 cases: a planted offset moves the accuracy by about as much
	// (binomial SD of the moved share: about 0.6 points).
	assert.InDelta(t, a-5, acc(base.WithOffset(-5)), 2)
	assert.InDelta(t, a+5, acc(base.WithOffset(5)), 2)
	assert.Equal(t, base, base.WithOffset(0))
	assert.Equal(t, 0.05, base.WithOffset(-5).Drop)
	assert.Equal(t, 0.05, base.WithOffset(5).Gain)

	got, rep, err := FromEnv(base.Env(2)[simproto.EnvBFCL])
	require.NoError(t, err)
	assert.Equal(t, base, got)
	assert.Equal(t, 2, rep)
	for _, bad := range []string{"", "{", `{"arm": {"model": "M"}}`, `{"arm": {"model": "M", "accuracy": 0.5}, "x": 1}`} {
		_, _, err := FromEnv(bad)
		assert.Error(t, err, bad)
	}
}

// TestCalibrateSimulatedAA: four identical runs of one simulated arm whose
// cases pass with probability 0.9 or 0.1 flip, per pair of runs, at
// 2·0.1·0.9 = 18 % of cases; the A/A estimate lands within 3 SEs
// (SE 0.38 pp over 4441 cases), and no A-against-A gate run is a
// REGRESSION.
func TestCalibrateSimulatedAA(t *testing.T) {
	cs, err := abgate.ExpandCategories([]string{"non_live", "live", "multi_turn"})
	require.NoError(t, err)
	arm := Arm{Model: model, Seed: 11, Name: "a", Accuracy: 0.85, Flip: 0.1}
	dir := t.TempDir()
	var roots []string
	for r := range 4 {
		root := filepath.Join(dir, fmt.Sprintf("a%d", r+1))
		require.NoError(t, Write(root, arm, cs, r))
		roots = append(roots, root)
	}
	cal, err := abgate.Calibrate(t.Context(), abgate.CalibrateOptions{Roots: roots, Model: model, Categories: cs, Resamples: 2000})
	require.NoError(t, err)
	require.Empty(t, cal.Problems)
	want := 2 * 0.1 * 0.9
	assert.Equal(t, 4441, cal.Overall.Cases)
	assert.InDelta(t, want, cal.Overall.FlipRate, 3*0.0038, "pooled A/A flip rate")
	for _, cf := range cal.Categories {
		if cf.Cases >= 200 { // SE ≤ 1.8 pp
			assert.InDelta(t, want, cf.FlipRate, 4*0.018, cf.Category)
		}
	}
	require.NotNil(t, cal.FalseAlarm)
	assert.Equal(t, 2, cal.Replicates)
	assert.Equal(t, 6, cal.FalseAlarm.Comparisons)
	assert.Zero(t, cal.FalseAlarm.Regression)
	// V₁ = 0.18/4441: ceil(6.1826 × 0.18/4441 / 0.0004) = 1 replicate.
	assert.Equal(t, 1, cal.ReplicatesFor80Power)
	t.Logf("A/A flip rate %.4f (model %.4f), false alarms %d/%d (not PASS %d), predicted %.2g / %.2g",
		cal.Overall.FlipRate, want, cal.FalseAlarm.Regression, cal.FalseAlarm.Comparisons, cal.FalseAlarm.NotPass,
		cal.FalseAlarm.PredictedRegression, cal.FalseAlarm.PredictedNotPass)
}
