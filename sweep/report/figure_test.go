package report

import (
	"fmt"
	"image/color"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// withEnergy gives every result of the key sweep valid power, so that
// its report has an energy chart.
func withEnergy(_, _ string, obj map[string]any) {
	conc := obj["conc"].(float64)
	obj["power_metric_schema_version"], obj["power_valid"], obj["joules_per_output_token"] = 2, 1, 1000/(conc+10)
}

// svgTexts are the texts of an SVG chart's text elements.
func svgTexts(svg []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(`>([^<>]*)</text>`).FindAllSubmatch(svg, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// TestLegendListsOnlyWhatIsDrawn: a chart's legend names a series only
// when the chart draws it. The Pareto charts listed "knee" when no arm's
// knee was drawn; the energy chart drew the knees' rings and never
// listed them.
func TestLegendListsOnlyWhatIsDrawn(t *testing.T) {
	tests := []struct {
		name string
		edit func(rs []*knee.Result) // the analysed results, before Build; nil: as analysed
		knee map[string]bool         // chart → whether its legend lists "knee"
	}{
		{"every arm has its knee", nil,
			map[string]bool{"g1-pareto-p90": true, "g1-pareto-median": true, "g1-energy": true}},
		{"no arm has a knee", func(rs []*knee.Result) {
			for _, r := range rs {
				r.Knee = 0
			}
		}, map[string]bool{"g1-pareto-p90": false, "g1-pareto-median": false, "g1-energy": false}},
		{"one arm has a knee", func(rs []*knee.Result) {
			for _, r := range rs[1:] {
				r.Knee = 0
			}
		}, map[string]bool{"g1-pareto-p90": true, "g1-pareto-median": true, "g1-energy": true}},
	}
	base, err := patchedKeySweep(t, withEnergy)
	require.NoError(t, err)
	knees := make([]int, len(base.Results))
	for i, r := range base.Results {
		knees[i] = r.Knee
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := base
			if tc.edit != nil {
				for i, r := range base.Results {
					r.Knee = knees[i]
				}
				tc.edit(base.Results)
				var err error
				rep, err = Build(base.Results, knee.MetricTotal)
				require.NoError(t, err)
			}
			seen := map[string]bool{}
			for _, c := range rep.Charts {
				want, ok := tc.knee[c.Name]
				if !ok {
					continue
				}
				seen[c.Name] = true
				assert.Equal(t, want, slices.Contains(svgTexts(c.SVG), armKneeLabel), "%s lists %q: got %v, want %v", c.Name, armKneeLabel, !want, want)
			}
			assert.Len(t, seen, len(tc.knee), "charts drawn: %v", seen)
		})
	}
}

// reportFigures are the figures of the key sweep's report with energy,
// of the same sweep measured at one concurrency per arm, and BASE vs
// HEAD comparisons of its first arm: every kind of chart the report
// draws.
func reportFigures(t *testing.T) []*figure {
	t.Helper()
	rep, err := patchedKeySweep(t, withEnergy)
	require.NoError(t, err)
	figs := rep.figures()
	one, _ := buildKeySweepOf(t, func(c *synth.Case) { c.Arm.Samples = c.Arm.Samples[:1] })
	figs = append(figs, one.figures()...)
	for _, x := range []string{"conc", "intvty"} {
		figs = append(figs, comparisonChart("compare-"+x, rep.Results[0], rep.Results[0], x, knee.MetricTotal))
	}
	kinds := map[string]bool{}
	for _, f := range figs {
		kinds[regexp.MustCompile(`^g\d+-(arm\d+-)?|^compare-`).ReplaceAllString(f.name, "")] = true
	}
	require.Len(t, kinds, 9, "chart kinds: %v", kinds)
	return figs
}

// legendBox is where f's legend is drawn on c: the column layout gives
// it, as high as its entries from the column's top.
func legendBox(f *figure, c draw.Canvas) (draw.Canvas, vg.Rectangle) {
	plotC, legendC, l := f.layout(c)
	top := legendC.Max.Y - l.TextStyle.FontExtents().Descent
	size := l.Rectangle(c).Size()
	return plotC, vg.Rectangle{Min: vg.Point{X: legendC.Min.X, Y: top - size.Y}, Max: vg.Point{X: legendC.Min.X + size.X, Y: top}}
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func inside(p vg.Point, r vg.Rectangle) bool {
	return p.X >= r.Min.X && p.X <= r.Max.X && p.Y >= r.Min.Y && p.Y <= r.Max.Y
}

// checkLegend checks f's legend: each entry has a thumbnail and a label
// of its own; drawn on a recording canvas of the chart's size, in canvas
// coordinates, the legend lies on the chart, clear of the data area and
// of every point's marker, and each entry's label is drawn inside it,
// none over the data.
func checkLegend(t *testing.T, f *figure) {
	t.Helper()
	var labels []string
	for _, e := range f.entries() {
		assert.NotEmpty(t, e.thumbs, "%s: entry %q has no thumbnail", f.name, e.label)
		assert.NotContains(t, labels, e.label, "%s: entry listed twice", f.name)
		labels = append(labels, e.label)
	}
	var rec recorder.Canvas
	c := draw.NewCanvas(&rec, chartW, chartH)
	plotC, box := legendBox(f, c)
	data := f.p.DataCanvas(plotC)
	f.draw(c)
	if len(f.entries()) == 0 {
		return
	}
	assert.True(t, box.Min.X >= c.Min.X && box.Max.X <= c.Max.X && box.Min.Y >= c.Min.Y && box.Max.Y <= c.Max.Y,
		"%s: legend %v off the chart %v", f.name, box, c.Rectangle)
	assert.False(t, overlaps(box, data.Rectangle), "%s: legend %v over the data area %v", f.name, box, data.Rectangle)
	for _, g := range f.p.GlyphBoxes(f.p) {
		at := vg.Point{X: data.X(g.X), Y: data.Y(g.Y)}
		glyph := vg.Rectangle{Min: at.Add(g.Rectangle.Min), Max: at.Add(g.Rectangle.Max)}
		assert.False(t, overlaps(box, glyph), "%s: legend %v over a marker at %v", f.name, box, glyph)
	}
	drawn := map[string]int{}
	for _, a := range rec.Actions {
		s, ok := a.(*recorder.FillString)
		if !ok || !slices.Contains(labels, s.String) {
			continue
		}
		drawn[s.String]++
		assert.True(t, inside(s.Point, box), "%s: label %q drawn at %v, outside the legend %v", f.name, s.String, s.Point, box)
		assert.False(t, inside(s.Point, data.Rectangle), "%s: label %q drawn over the data area", f.name, s.String)
	}
	for _, l := range labels {
		assert.Positive(t, drawn[l], "%s: label %q not drawn", f.name, l)
	}
}

// TestLegendBesideData: no chart's legend covers its data (the AL
// chart's covered its low markers at the high concurrencies, the
// throughput chart's thumbnails sat in the plot over the data's right
// end): every chart of the report draws its legend in a column of its
// own beside the plot, each entry once, with its thumbnail.
func TestLegendBesideData(t *testing.T) {
	for _, f := range reportFigures(t) {
		t.Run(f.name, func(t *testing.T) { checkLegend(t, f) })
	}
}

// TestLegendOfManyEntriesFits: a legend taller than the chart at its
// font is set smaller until it fits, still beside the data.
func TestLegendOfManyEntriesFits(t *testing.T) {
	for _, n := range []int{1, 12, 30} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f := newFigure("many", "many entries\ngroup", "concurrency", "y")
			for i := range n {
				xys := plotter.XYs{{X: 1, Y: float64(i)}, {X: 64, Y: float64(i) + 1}}
				f.add(fmt.Sprintf("tp%d ep%d dpa kv:dram p50", i, i), mustScatter(xys, armColor(i), plotutil.Shape(i), vg.Points(3)))
			}
			checkLegend(t, f)
		})
	}
}

// TestKneeRingsInArmColours: the energy chart rings each arm's knee as
// the Pareto charts do, in the arm's colour under the one legend entry
// that says so (armKneeLabel, a grey ring); it drew black rings under
// "knee". The rings are read off each chart's SVG: a ring of radius 7
// and the colour of its stroke.
func TestKneeRingsInArmColours(t *testing.T) {
	rep, err := patchedKeySweep(t, withEnergy)
	require.NoError(t, err)
	hex := func(c color.Color) string {
		r, g, b, _ := c.RGBA()
		return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
	}
	var want []string
	for i, r := range rep.Results {
		if r.Knee > 0 {
			want = append(want, hex(armColor(i)))
		}
	}
	require.NotEmpty(t, want)
	ring := regexp.MustCompile(`A7,7 0 1 1 [^"]*Z" style="fill:none;stroke:(#[0-9A-F]{6})`)
	for _, name := range []string{"g1-pareto-p90", "g1-pareto-median", "g1-energy"} {
		t.Run(name, func(t *testing.T) {
			i := slices.IndexFunc(rep.Charts, func(c Chart) bool { return c.Name == name })
			require.GreaterOrEqual(t, i, 0, "no chart %s", name)
			svg := rep.Charts[i].SVG
			var got []string
			for _, m := range ring.FindAllSubmatch(svg, -1) {
				got = append(got, string(m[1]))
			}
			assert.Equal(t, want, got, "the knee rings' colours, in the arms' order")
			texts := svgTexts(svg)
			assert.Contains(t, texts, armKneeLabel)
			assert.NotContains(t, texts, "knee", "a second entry for knee rings")
		})
	}
	f := energyChart("e", "group", rep.Results, knee.MetricTotal)
	require.Len(t, f.shared, 1)
	require.Len(t, f.shared[0].thumbs, 1)
	assert.Equal(t, grey, f.shared[0].thumbs[0].(*plotter.Scatter).GlyphStyle.Color, "the legend's ring: neutral, no arm's colour")
}

// TestParetoKneeLegend: the Pareto chart rings each arm's knee in the
// arm's colour, and its legend says so with a neutral ring; it showed a
// black ring no chart drew.
func TestParetoKneeLegend(t *testing.T) {
	rep, _ := buildKeySweep(t)
	f := paretoChart("p", rep.Frontiers[knee.AxisE2ENormP90][0], knee.MetricTotal)
	require.Len(t, f.shared, 1)
	e := f.shared[0]
	assert.Equal(t, "knee (ring in the colour of its arm)", e.label)
	require.Len(t, e.thumbs, 1)
	ring := e.thumbs[0].(*plotter.Scatter)
	assert.Equal(t, draw.RingGlyph{}, ring.GlyphStyle.Shape)
	assert.Equal(t, grey, ring.GlyphStyle.Color, "neutral: no arm's colour, not black")
}
