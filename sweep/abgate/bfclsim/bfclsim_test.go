package bfclsim

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
