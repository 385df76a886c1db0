package report

import (
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
	assert.True(t, strings.HasPrefix(md, "## Comparison with HEAD\n\nverdict: INCOMPLETE"), md[:80])
	assert.Contains(t, md, "| invalid-result")
	assert.Contains(t, rep.HTML(), `<p id="compare-verdict">verdict: INCOMPLETE`)
}
