package report

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/compare"
	"sweep/sweep/knee"
)

// TestAddComparison: the same key sweep as BASE and HEAD gives both curves
// per arm on shared charts and the comparison first in the summary (its
// failed points make it INCOMPLETE: a point whose only result is invalid
// cannot be compared).
func TestAddComparison(t *testing.T) {
	rep, _ := buildKeySweep(t)
	head, _ := buildKeySweep(t)
	arms := make([]*knee.Arm, len(rep.Results))
	for i, r := range rep.Results {
		arms[i] = r.Arm
	}
	cmp := compare.Compare(arms, arms, compare.Options{})
	require.Equal(t, compare.Incomplete, cmp.Verdict)
	for _, a := range cmp.Arms {
		if a.Verdict != compare.Incomplete {
			assert.Equal(t, compare.Pass, a.Verdict, a.Arm)
		}
	}
	before := len(rep.Charts)
	require.NoError(t, rep.AddComparison(head.Results, cmp))
	require.Len(t, rep.Charts, before+2*len(rep.Results))
	assert.Equal(t, "compare-arm1-conc", rep.Charts[before].Name)
	assert.Contains(t, rep.Charts[before].Title, "BASE vs HEAD")
	for _, c := range rep.Charts[before:] {
		assert.Contains(t, string(c.SVG), "HEAD", c.Name)
	}
	md := rep.Markdown(ChartsDir)
	assert.True(t, strings.HasPrefix(md, "> **Simulated: every arm of BASE ran on sweep's simulated engine"), md[:80])
	assert.Less(t, strings.Index(md, "> **Simulated: every arm of HEAD ran on"), strings.Index(md, "## Comparison with HEAD"), "the banners lead, the comparison follows")
	assert.Contains(t, md, "## Comparison with HEAD\n\nBASE: this report's results; HEAD: the results compared with them.\n\nverdict: INCOMPLETE")
	// One row per arm, its problems summed up in it and listed under the
	// table (an INCOMPLETE arm had a row per problem).
	rows := tableRows(md, "| verdict | arm |")
	require.Len(t, rows, len(rep.Results))
	assert.Contains(t, rows[0], "| INCOMPLETE | qwen3.5 mi325x-amds sglang fp8 mtp tp2 ep2 |")
	// Both sides are invalid at c64 and c128: a problem each, the point
	// named once in the row.
	assert.Contains(t, rows[0], "4 problems (listed below): invalid-result at c64, c128 |")
	assert.Contains(t, md, "\nThe 6 problems, by arm:\n\n- qwen3.5 mi325x-amds sglang fp8 mtp tp2 ep2\n  - c64 invalid-result: ")
	assert.Contains(t, md, "| verdict | arm | Δ % | 90% CI | 90%-family CI | points beyond tolerance (99%-family CI) |")
	page := rep.HTML()
	assert.Contains(t, page, `<p id="compare-verdict">verdict: INCOMPLETE`)
	assert.Contains(t, page, "<th>90% CI</th><th>90%-family CI</th><th>points beyond tolerance (99%-family CI)</th>")
	assert.Contains(t, page, `<ul id="compare-problems">`)
}

// tableRows are the rows of the Markdown table in md whose header line
// starts with header.
func tableRows(md, header string) []string {
	var rows []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "| --- "):
		case in && strings.HasPrefix(line, "| "):
			rows = append(rows, line)
		case in:
			return rows
		}
	}
	return rows
}

// TestCompareDir: HEAD read from its directory gives the comparison
// AddComparison draws; a directory that cannot be read adds nothing.
func TestCompareDir(t *testing.T) {
	rep, out := buildKeySweep(t)
	headDir := filepath.Join(filepath.Dir(out), "results")
	before := len(rep.Charts)
	cmp, err := rep.CompareDir(t.Context(), headDir, knee.Options{Metric: knee.MetricTotal}, 5)
	require.NoError(t, err)
	require.NotNil(t, cmp)
	assert.Equal(t, compare.Incomplete, cmp.Verdict, "the same sweep: only its invalid points keep it from passing")
	assert.Equal(t, 5.0, cmp.Tolerance)
	assert.Same(t, cmp, rep.Comparison)
	assert.Len(t, rep.Charts, before+2*len(rep.Results))

	rep, _ = buildKeySweep(t)
	cmp, err = rep.CompareDir(t.Context(), filepath.Join(t.TempDir(), "missing"), knee.Options{}, 5)
	assert.Error(t, err)
	assert.Nil(t, cmp)
	assert.Nil(t, rep.Comparison)

	// A HEAD without results is refused as sweep compare refuses it, not
	// drawn as an INCOMPLETE comparison.
	cmp, err = rep.CompareDir(t.Context(), t.TempDir(), knee.Options{}, 5)
	_, none := errors.AsType[*compare.NoResultsError](err)
	assert.True(t, none, "%v", err)
	assert.Nil(t, cmp)
	assert.Nil(t, rep.Comparison)
}

// TestComparisonRowsPoints: the report's comparison table gives each
// arm's family CI at its own confidence (the interval that decides
// REGRESSION, headed as sweep compare heads it; the table had only the
// 90 % CI), names the points that regress beyond the tolerance (with
// their family-wise intervals at their confidence) and those past BASE's
// cliff, the frontiers' peak change and what the frontier Δ covers.
func TestComparisonRowsPoints(t *testing.T) {
	delta, peak, fr := -1.85, -3.26, -0.39
	cmp := &compare.Report{Verdict: compare.Regression, Tolerance: 5, Metric: compare.MetricTotal, Arms: []*compare.ArmReport{{
		Arm: "qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8", Verdict: compare.Regression, DeltaPct: &delta, CIPct: &[2]float64{-2.26, -1.43},
		FamilyCIPct: &[2]float64{-2.51, -1.19}, FamilyConfidencePct: 99.167,
		Points: []compare.PointReport{
			{Conc: 4, DeltaPct: 0, CIPct: &[2]float64{-2.02, 2.06}, ConfidencePct: 99.833, Verdict: compare.Pass},
			{Conc: 64, DeltaPct: -9.98, CIPct: &[2]float64{-11.8, -8.13}, ConfidencePct: 99.857, Verdict: compare.Regression, NotUniform: true},
			{Conc: 80, DeltaPct: -5.75, PastBaseCliff: true},
		},
		Frontier: compare.FrontierReport{Covered: true, DeltaPct: &fr, PeakDeltaPct: &peak,
			Coverage: "Δ over 18.2–95.3 tok/s/user; only BASE reaches below 18.2 (15.0–18.2, up to 23011.1 tok/s/GPU)"},
	}}}
	rows := comparisonRows(cmp)
	require.Len(t, rows, 1)
	assert.Equal(t, []string{"REGRESSION", "qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8", "-1.85", "[-2.26, -1.43]", "[-2.51, -1.19] 99.167%",
		"c64 -9.98 [-11.80, -8.13] 99.857%; c80 past BASE's cliff (-5.75, not judged)", "-3.26", "-0.39",
		"Δ over 18.2–95.3 tok/s/user; only BASE reaches below 18.2 (15.0–18.2, up to 23011.1 tok/s/GPU)", ""}, rows[0])
	require.Len(t, comparisonHeader, len(rows[0]))
	assert.Equal(t, []string{"verdict", "arm", "Δ %", "90% CI", "90%-family CI", "points beyond tolerance (99%-family CI)",
		"peak Δ %", "frontier Δ %", "frontier coverage", "differs / problems"}, comparisonHeader)

	// Without a noise estimate, no interval.
	cmp.Arms[0].CIPct, cmp.Arms[0].FamilyCIPct = nil, nil
	assert.Equal(t, []string{"–", "–"}, comparisonRows(cmp)[0][3:5])
}
