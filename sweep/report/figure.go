package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweep/internal/plural"
)

// figure is one chart being built: its plot and its legend, which the
// figure keeps apart from the plot's own (gonum draws that one over the
// data area, where it covered points). Every chart of the report is a
// figure:
//
//	f := newFigure(name, title, xLabel, yLabel)
//	f.add("tp8 ep8", scatter)             // drawn, and listed as drawn
//	f.addShared("knee", ring, kneeRing)   // one entry for many arms' rings
//	c, err := f.render()
//
// A legend entry is made only by drawing something under it, so the
// legend never lists a series the chart lacks; the legend is drawn in a
// column right of the plot (layout), so it never covers the data.
type figure struct {
	name string
	p    *plot.Plot
	data plotData // the values left out (the chart's Note)
	// note is what else the chart's Note says (its points drawn without
	// a value), before the values left out; "" for nothing.
	note string
	// legend holds add's entries in the order drawn; shared holds
	// addShared's, listed after them.
	legend, shared []legendEntry
}

type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

const (
	chartW = 7 * vg.Inch
	chartH = 4.5 * vg.Inch

	// legendFont is the legend's text size, the size of the tick labels;
	// a legend too tall for the chart is set smaller, down to
	// minLegendFont (layout), and below that runs off the chart's foot.
	legendFont    = vg.Length(10)
	minLegendFont = vg.Length(6)
	// legendPadding separates the legend's entries.
	legendPadding = vg.Length(2)
	// legendGap separates the plot from the legend column, legendMargin
	// the column from the chart's right edge.
	legendGap    = vg.Length(8)
	legendMargin = vg.Length(4)
)

func newFigure(name, title, x, y string) *figure {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{} // a log2 axis sets its own
	p.Add(plotter.NewGrid())
	return &figure{name: name, p: p}
}

// add draws ps and, unless label is "", lists them in the legend under
// label with their thumbnails composed (a line and its markers show as
// both).
func (f *figure) add(label string, ps ...plot.Plotter) {
	f.p.Add(ps...)
	if label == "" || len(ps) == 0 {
		return
	}
	e := legendEntry{label: label}
	for _, p := range ps {
		if t, ok := p.(plot.Thumbnailer); ok {
			e.thumbs = append(e.thumbs, t)
		}
	}
	f.legend = append(f.legend, e)
}

// addShared draws ps and lists label once, with thumb as its thumbnail,
// however many calls draw under it: one "knee" entry for every arm's
// knee ring, there only when a ring is drawn.
func (f *figure) addShared(label string, thumb plot.Thumbnailer, ps ...plot.Plotter) {
	f.p.Add(ps...)
	if len(ps) == 0 {
		return
	}
	for _, e := range f.shared {
		if e.label == label {
			return
		}
	}
	f.shared = append(f.shared, legendEntry{label: label, thumbs: []plot.Thumbnailer{thumb}})
}

// entries are the legend's entries in the order it lists them.
func (f *figure) entries() []legendEntry { return append(slices.Clip(f.legend), f.shared...) }

// legendOf is the gonum legend of f's entries, set at size: icons left,
// entries from the top.
func (f *figure) legendOf(size vg.Length) plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(plot.DefaultFont, size)
	l.Top, l.Left = true, true
	l.Padding = legendPadding
	for _, e := range f.entries() {
		l.Add(e.label, e.thumbs...)
	}
	return l
}

// layout splits the chart's canvas c: the plot (title, axes and data)
// on the left, and the legend, top-aligned with the data area, in a
// column of its own on the right; the legend's font is set to fit the
// column's height. Without entries the plot has the whole canvas. The
// two never overlap, so the legend cannot cover a point.
func (f *figure) layout(c draw.Canvas) (plotC, legendC draw.Canvas, l plot.Legend) {
	if len(f.entries()) == 0 {
		return c, draw.Canvas{}, plot.Legend{}
	}
	l = f.legendOf(legendFont)
	w := l.Rectangle(c).Size().X
	plotC = draw.Crop(c, 0, -(w + legendGap + legendMargin), 0, 0)
	top := f.p.DataCanvas(plotC).Max.Y
	legendC = draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: c.Max.X - legendMargin - w, Y: c.Min.Y + legendMargin},
		Max: vg.Point{X: c.Max.X - legendMargin, Y: top},
	}}
	for size := legendFont; legendHeight(l) > legendC.Size().Y && size > minLegendFont; {
		size = max(minLegendFont, size-0.5)
		l = f.legendOf(size)
	}
	return plotC, legendC, l
}

// legendHeight is how tall l draws: its entries and the font's descent
// below the last one's baseline.
func legendHeight(l plot.Legend) vg.Length {
	return l.Rectangle(draw.Canvas{}).Size().Y + l.TextStyle.FontExtents().Descent
}

// draw draws the plot and its legend on c.
func (f *figure) draw(c draw.Canvas) {
	plotC, legendC, l := f.layout(c)
	f.p.Draw(plotC)
	if len(f.entries()) > 0 {
		l.Draw(legendC)
	}
}

// render draws f in both formats. A panic inside gonum/plot (a value this
// package did not foresee) is returned as an error.
func (f *figure) render() (c Chart, err error) {
	note := f.note
	if dropped := f.data.note(); dropped != "" {
		note = strings.TrimPrefix(note+"; "+dropped, "; ")
	}
	c = Chart{Name: f.name, Title: strings.ReplaceAll(f.p.Title.Text, "\n", ": "), Note: note}
	defer func() {
		if v := recover(); v != nil {
			c, err = Chart{}, fmt.Errorf("chart %s: gonum/plot failed: %v", f.name, v)
		}
	}()
	for _, format := range []string{"svg", "png"} {
		cw, err := draw.NewFormattedCanvas(chartW, chartH, format)
		if err != nil {
			return c, fmt.Errorf("chart %s: %w", f.name, err)
		}
		f.draw(draw.New(cw))
		var b bytes.Buffer
		if _, err := cw.WriteTo(&b); err != nil {
			return c, fmt.Errorf("chart %s: %w", f.name, err)
		}
		if format == "svg" {
			c.SVG = b.Bytes()
		} else {
			c.PNG = b.Bytes()
		}
	}
	return c, nil
}

// Chart is one rendered figure in both formats.
type Chart struct {
	Name  string // file stem, e.g. "pareto-p90-1"
	Title string
	// Note says which values the chart leaves out ("" : none).
	Note string
	SVG  []byte
	PNG  []byte
}

// maxPlottable bounds the magnitude of a value a chart draws. gonum/plot
// fails on infinite values and on axis ranges whose width overflows (a
// whole arm at 1e308); no throughput, latency or acceptance length comes
// near 1e12, so a value beyond it is a broken result, left out and named
// in the chart's Note.
const maxPlottable = 1e12

// plotData collects the points of one chart, leaving out values it
// cannot draw and remembering them for the chart's Note.
type plotData struct {
	dropped int
	first   []string // up to maxNamed of the values left out, described
}

const maxNamed = 3

// plottable reports whether v can be drawn.
func plottable(v float64) bool { return !math.IsNaN(v) && math.Abs(v) <= maxPlottable }

// add appends (x, y) to xys when both can be drawn; otherwise it records
// the point as "what at cN = y unit" and leaves xys as it is.
func (d *plotData) add(xys *plotter.XYs, x, y float64, what string, conc int, unit string) {
	if plottable(x) && plottable(y) {
		*xys = append(*xys, plotter.XY{X: x, Y: y})
		return
	}
	v := y
	if plottable(y) {
		v = x
	}
	d.drop(fmt.Sprintf("%s at c%d = %s", what, conc, strings.TrimSpace(strconv.FormatFloat(v, 'g', 4, 64)+" "+unit)))
}

func (d *plotData) drop(desc string) {
	d.dropped++
	if len(d.first) < maxNamed {
		d.first = append(d.first, desc)
	}
}

// note is the Chart.Note for the values left out ("" : none).
func (d *plotData) note() string {
	if d.dropped == 0 {
		return ""
	}
	more := ""
	if d.dropped > len(d.first) {
		more = fmt.Sprintf(" and %d more", d.dropped-len(d.first))
	}
	return fmt.Sprintf("%s left out (beyond ±%g): %s%s", plural.Count(d.dropped, "value", "values"), float64(maxPlottable), strings.Join(d.first, ", "), more)
}
