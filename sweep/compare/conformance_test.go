package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type caseFile struct {
	Tolerance float64 `json:"tolerance"`
	Expect    struct {
		Class          string   `json:"class"`
		RegressingArms []string `json:"regressing_arms"`
		Incomplete     *struct {
			Kind  string `json:"kind"`
			Conc  *int   `json:"conc"`
			Side  string `json:"side"`
			Label string `json:"label"`
		} `json:"incomplete"`
	} `json:"expect"`
	Arms []struct {
		Label       string `json:"label"`
		PairedConcs []int  `json:"paired_concs"`
	} `json:"arms"`
}

// TestConformance runs the shared sample's cases (testdata/conformance)
// and scores them by its rules: the class's accepted verdicts, the
// regressing arm named, the problem named, every arm listed once with its
// points exactly at the paired concurrencies.
func TestConformance(t *testing.T) {
	dirs, err := filepath.Glob("testdata/conformance/cases/*")
	require.NoError(t, err)
	require.Len(t, dirs, 6)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "case.json"))
			require.NoError(t, err)
			var cf caseFile
			require.NoError(t, json.Unmarshal(data, &cf))
			base, err := ReadSide(t.Context(), "BASE", filepath.Join(dir, "base"))
			require.NoError(t, err)
			head, err := ReadSide(t.Context(), "HEAD", filepath.Join(dir, "head"))
			require.NoError(t, err)
			rep := Compare(base, head, Options{Tolerance: cf.Tolerance})
			switch cf.Expect.Class {
			case "REGRESSION":
				assert.Equal(t, Regression, rep.Verdict)
			case "NOT_PASS":
				assert.Contains(t, []Decision{Regression, Inconclusive}, rep.Verdict)
			case "NOT_REGRESSION":
				assert.NotEqual(t, Regression, rep.Verdict)
				assert.NotEqual(t, Incomplete, rep.Verdict)
			case "INCOMPLETE":
				assert.Equal(t, Incomplete, rep.Verdict)
				want := cf.Expect.Incomplete
				require.NotNil(t, want)
				found := slices.ContainsFunc(rep.Problems, func(p Problem) bool {
					return p.Kind == want.Kind && (want.Label == "" || p.Arm == want.Label) &&
						(want.Conc == nil || (p.Conc != nil && *p.Conc == *want.Conc))
				})
				assert.True(t, found, "problem %+v not named in %v", *want, rep.Problems)
			}
			if rep.Verdict == Regression {
				var named []string
				for _, a := range rep.Arms {
					if a.Verdict == Regression {
						named = append(named, a.Arm)
					}
				}
				assert.Equal(t, cf.Expect.RegressingArms, named)
			}
			require.Len(t, rep.Arms, len(cf.Arms))
			for _, want := range cf.Arms {
				i := slices.IndexFunc(rep.Arms, func(a *ArmReport) bool { return a.Arm == want.Label })
				require.GreaterOrEqual(t, i, 0, "arm %s not listed", want.Label)
				a := rep.Arms[i]
				var concs []int
				for _, p := range a.Points {
					concs = append(concs, p.Conc)
				}
				assert.Equal(t, want.PairedConcs, concs, "arm %s", want.Label)
				if a.CIPct != nil && a.DeltaPct != nil {
					assert.True(t, a.CIPct[0] <= *a.DeltaPct && *a.DeltaPct <= a.CIPct[1], "arm %s: Δ %g outside %v", a.Arm, *a.DeltaPct, *a.CIPct)
				}
			}
		})
	}
}
