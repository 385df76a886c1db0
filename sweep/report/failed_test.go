package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"sweep/sweep/knee"
)

// axisMarkers are the points of r's throughput chart drawn with shape.
func axisMarkers(f *figure, shape draw.GlyphDrawer) plotter.XYs {
	var out plotter.XYs
	for _, e := range f.legend {
		for _, th := range e.thumbs {
			if s, ok := th.(*plotter.Scatter); ok && s.GlyphStyle.Shape == shape {
				out = append(out, s.XYs...)
			}
		}
	}
	return out
}

// TestFailedPoints: a report lists every failed result with why, and the
// throughput chart draws a failed point on the x axis, labelled, where
// no value is read: the crosses sat at the arm's lowest measurement, and
// the report said only "excluded files 2".
func TestFailedPoints(t *testing.T) {
	rep, _ := buildKeySweep(t)
	rows := failedRows(rep.Results, "")
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"qwen3.5 mi325x-amds sglang fp8 mtp tp2 ep2", "c64", "error rate 14.8% > 10% (174 of 1174 requests failed)"}, rows[0][:3])
	assert.Equal(t, "c128", rows[2][1])
	md := rep.Markdown(ChartsDir)
	assert.Contains(t, md, "## Failed points (3 results)\n\n"+failedIntro+"\n\n| arm | point | why | file |")
	assert.Contains(t, md, "| qwen3.5 mi325x-amds sglang fp8 mtp tp2 ep2 | c64 | error rate 14.8% \\> 10% (174 of 1174 requests failed) |")
	assert.Contains(t, rep.HTML(), `<table id="failed">`)

	f := kneeChart("arm", rep.Results[0], knee.MetricTotal)
	failed := axisMarkers(f, draw.CrossGlyph{})
	assert.Equal(t, plotter.XYs{{X: 64}, {X: 128}}, failed, "on the x axis (y = 0), not at a measured value")
	c, err := f.render()
	require.NoError(t, err)
	assert.Equal(t, "failed, no value (× on the x axis): c64, c128", c.Note)
	labels := 0
	for _, s := range svgTexts(c.SVG) {
		if s == "failed" {
			labels++
		}
	}
	assert.Equal(t, 2, labels, "each failed point labelled")

	// A replicate that failed beside a usable one is listed as such; a
	// probe its full-length run superseded is no failure.
	r := rep.Results[4]
	r.Points[0].Excluded = []knee.Exclusion{{File: "x/a.json", Reason: "marked invalid"}}
	r.Points[1].Excluded = []knee.Exclusion{{File: "x/p.json", Reason: knee.ExcludedSuperseded}}
	r.Arm.Samples = append(r.Arm.Samples, knee.Sample{File: "x/p.json", Conc: r.Points[1].Conc, Superseded: true})
	rows = failedRows(rep.Results[4:], "x")
	assert.Equal(t, [][]string{{r.Arm.Identity.Label(), "c1 (other results used)", "marked invalid", "a.json"}}, rows)
}
