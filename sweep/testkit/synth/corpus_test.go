package synth_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// usableGrid is the concurrencies of c's arm with a usable sample.
func usableGrid(c *synth.Case) []int {
	var g []int
	for _, s := range c.Arm.Samples {
		if s.Excluded == "" && s.TotalTPS != nil && !slices.Contains(g, s.Conc) {
			g = append(g, s.Conc)
		}
	}
	return g
}

// gainAtTop is the noise-free gain per doubling between the last two
// concurrencies of grid.
func gainAtTop(c *synth.Case, grid []int) float64 {
	n := len(grid)
	a, b := float64(grid[n-2]), float64(grid[n-1])
	return math.Pow(c.Curve(b)/c.Curve(a), 1/math.Log2(b/a)) - 1
}

// TestEdgeCorpusTruth checks the two families of EdgeCorpus against their
// definition, on the usable grid the knee finder sees: soft-knee arms are
// ok with their knee at c32 of a doubling grid (c16 below 0.9 × the
// peak), flattening arms unsaturated with a top gain of 10-25 % per
// doubling; half of each.
func TestEdgeCorpusTruth(t *testing.T) {
	cases := synth.EdgeCorpus(5, 200)
	require.Len(t, cases, 200)
	fams := map[string]int{}
	for _, c := range cases {
		fams[c.Family]++
		g := usableGrid(c)
		switch c.Family {
		case synth.FamilySoftKnee:
			require.Truef(t, strings.HasPrefix(c.Grid, "dbl-"), "%s on %s", c.ID, c.Grid)
			require.Equal(t, knee.StatusOK, c.Truth, c.ID)
			require.Equal(t, 32, c.TrueKnee, c.ID)
			top := 0.0
			for _, x := range g {
				top = max(top, c.Curve(float64(x)))
			}
			require.Lessf(t, c.Curve(16), 0.9*top, "%s: c16 below the threshold", c.ID)
			require.GreaterOrEqualf(t, c.Curve(32), 0.9*top, "%s: c32 at the threshold", c.ID)
		case synth.FamilyFlattening:
			require.Equal(t, knee.StatusUnsaturated, c.Truth, c.ID)
			gain := gainAtTop(c, g)
			require.Truef(t, gain >= 0.10 && gain <= 0.25, "%s: top gain %.3f", c.ID, gain)
		default:
			t.Fatalf("%s: family %s", c.ID, c.Family)
		}
	}
	require.Equal(t, 100, fams[synth.FamilySoftKnee])
	require.Equal(t, 100, fams[synth.FamilyFlattening])
}

// TestFieldCorpusKeepsNearEdgeArms: Corpus redraws arms whose top gain is
// within 5 points of the 10 % gate, FieldCorpus keeps them (redrawing
// only within half a point), with Corpus's families.
func TestFieldCorpusKeepsNearEdgeArms(t *testing.T) {
	near := func(cases []*synth.Case) (n int) {
		for _, c := range cases {
			g := usableGrid(c)
			if len(g) < 3 {
				continue
			}
			gain := gainAtTop(c, g)
			require.Falsef(t, math.Abs(gain-0.10) < 0.005, "%s: top gain %.4f on the gate", c.ID, gain)
			if math.Abs(gain-0.10) < 0.05 {
				n++
			}
		}
		return n
	}
	field := synth.FieldCorpus(5, 400)
	require.Zero(t, near(synth.Corpus(5, 400)), "Corpus redraws near-edge arms")
	require.Greater(t, near(field), 10, "FieldCorpus keeps near-edge arms")
	for _, c := range field {
		require.Contains(t, []string{synth.FamilySaturating, synth.FamilyCliff, synth.FamilyUnsaturated,
			synth.FamilySaturatedAtMin, synth.FamilyInsufficient}, c.Family)
	}
}
