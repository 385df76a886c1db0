package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
)

// TestALChartToleranceBand: the acceptance-length chart draws each
// distinct golden once, with its tolerance band, and its y axis spans
// the band: five arms with the same golden drew five lines on top of one
// another (five legend entries, one line seen) on an axis of 3.381 to
// 3.390, where 0.01 below the golden looked like a miss.
func TestALChartToleranceBand(t *testing.T) {
	rep, _ := buildKeySweep(t)
	golden := func(f *figure) []string {
		var out []string
		for _, e := range f.entries() {
			if strings.Contains(e.label, "golden") {
				out = append(out, e.label)
			}
		}
		return out
	}
	f := alChart("al", "g", rep.Results)
	require.NotNil(t, f)
	assert.Equal(t, []string{"golden 3.39 ±0.05 (band: passes)"}, golden(f))
	assert.LessOrEqual(t, f.p.Y.Min, 3.34, "the band's foot")
	assert.GreaterOrEqual(t, f.p.Y.Max, 3.44, "the band's top")
	var band *plotter.Polygon
	for _, e := range f.legend {
		for _, th := range e.thumbs {
			if p, ok := th.(*plotter.Polygon); ok {
				band = p
			}
		}
	}
	require.NotNil(t, band, "the tolerance band is drawn")
	xmin, xmax, ymin, ymax := band.DataRange()
	assert.InDelta(t, 3.34, ymin, 1e-9)
	assert.InDelta(t, 3.44, ymax, 1e-9)
	assert.Equal(t, []float64{1, 128}, []float64{xmin, xmax})

	// Two goldens: one entry each, naming its arms.
	for _, r := range rep.Results[3:] {
		for _, s := range r.Arm.Samples {
			if s.AL != nil {
				g := *s.AL.Golden + 1
				s.AL.Golden = &g
			}
		}
	}
	f = alChart("al", "g", rep.Results)
	assert.Equal(t, []string{"golden 3.39 ±0.05 (band: passes): tp2 ep2, tp4, tp4 ep4", "golden 4.39 ±0.05 (band: passes): tp8, tp8 ep8"}, golden(f))
	checkLegend(t, f)
}
