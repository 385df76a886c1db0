package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/compare"
	"sweep/sweep/knee"
)

// TestStaleChartsRemoved: a report written where an earlier one with a
// comparison was leaves no comparison chart behind (they stayed, linked
// from nothing); files the report does not name so are left.
func TestStaleChartsRemoved(t *testing.T) {
	rep, out := buildKeySweep(t)
	head, _ := buildKeySweep(t)
	arms := make([]*knee.Arm, len(rep.Results))
	for i, r := range rep.Results {
		arms[i] = r.Arm
	}
	plain := *rep
	plain.Charts = slices.Clone(rep.Charts)
	require.NoError(t, rep.AddComparison(head.Results, compare.Compare(arms, arms, compare.Options{})))
	_, err := rep.Write(out)
	require.NoError(t, err)
	charts := filepath.Join(out, ChartsDir)
	require.FileExists(t, filepath.Join(charts, "compare-arm1-conc.png"))
	mine := []string{"notes.png", "compare-arm1-conc.jpg", "g1-custom.svg", "compare-arm1-conc.png.bak"}
	for _, n := range mine {
		require.NoError(t, os.WriteFile(filepath.Join(charts, n), []byte("x"), 0o644))
	}

	_, err = plain.Write(out)
	require.NoError(t, err)
	entries, err := os.ReadDir(charts)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	var want []string
	for _, c := range plain.Charts {
		want = append(want, c.Name+".png", c.Name+".svg")
	}
	assert.ElementsMatch(t, append(want, mine...), got)
}

// TestChartNamesMatchTheirPattern: every chart the report draws has a
// name chartName matches, so that a later report can tell its own
// charts (and remove those it no longer draws).
func TestChartNamesMatchTheirPattern(t *testing.T) {
	for _, f := range reportFigures(t) {
		name := f.name
		if strings.HasPrefix(name, "compare-") { // reportFigures' own names for them
			name = strings.Replace(name, "compare-", "compare-arm1-", 1)
		}
		assert.Regexp(t, chartName, name)
	}
	for _, n := range []string{"notes", "g1-custom", "compare-arm1", "xg1-ttft", "g1-ttft-old"} {
		assert.NotRegexp(t, chartName, n)
	}
}
