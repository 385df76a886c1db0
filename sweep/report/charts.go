package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweep/sweep/knee"
)

// armColor is the colour of the i-th arm in every chart of a report (the
// chart builders below: throughput, latency, acceptance length, energy).
func armColor(i int) color.Color { return plotutil.Color(i) }

// mustScatter and mustLine take points added through plotData.add (or
// constants): finite, so the constructors cannot fail.
func mustScatter(xys plotter.XYs, c color.Color, shape draw.GlyphDrawer, r vg.Length) *plotter.Scatter {
	s, err := plotter.NewScatter(xys)
	if err != nil {
		panic(err)
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: r, Shape: shape}
	return s
}

func mustLine(xys plotter.XYs, c color.Color, dashed bool) *plotter.Line {
	l, err := plotter.NewLine(xys)
	if err != nil {
		panic(err)
	}
	l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.5)}
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return l
}

var black = color.RGBA{A: 255}

// kneeThumb is the legend's thumbnail of knee rings drawn in c.
func kneeThumb(c color.Color) *plotter.Scatter {
	return mustScatter(plotter.XYs{{}}, c, draw.RingGlyph{}, vg.Points(5))
}

// armKneeLabel is the legend's entry for knee rings drawn in their arms'
// colours: its grey ring stands for all of them, and says so (a black
// ring under "knee" matched none of them).
const armKneeLabel = "knee (ring in the colour of its arm)"

// addKneeRings rings an arm's knee at each of kn in c, its colour, under
// the one legend entry armKneeLabel: the Pareto and energy charts ring
// knees alike. Nothing is drawn or listed when kn is empty.
func addKneeRings(fig *figure, kn plotter.XYs, c color.Color) {
	if len(kn) > 0 {
		fig.addShared(armKneeLabel, kneeThumb(grey), mustScatter(kn, c, draw.RingGlyph{}, vg.Points(7)))
	}
}

// paretoChart draws throughput/GPU vs interactivity for every arm of one
// frontier, the frontier as a line and each arm's knee as a ring.
func paretoChart(name string, f *knee.Frontier, metric knee.Metric) *figure {
	fig := newFigure(name, fmt.Sprintf("Throughput/GPU vs interactivity (%s)\n%s", axisShort(f.Axis), f.Group),
		f.Axis.Title(), throughputLabel(metric))
	arms := armsOf(f)
	d := &fig.data
	for i, r := range arms {
		var xys, kn plotter.XYs
		for _, pt := range f.Points {
			if pt.Result != r {
				continue
			}
			d.add(&xys, pt.Intvty, pt.Throughput, r.Arm.Identity.Parallelism()+" throughput/GPU vs interactivity", pt.Conc, "")
			if pt.Conc == r.Knee && plottable(pt.Intvty) && plottable(pt.Throughput) {
				kn = append(kn, plotter.XY{X: pt.Intvty, Y: pt.Throughput})
			}
		}
		if len(xys) == 0 {
			continue
		}
		fig.add(r.Arm.Identity.Parallelism(), mustScatter(xys, armColor(i), plotutil.Shape(i), vg.Points(3)))
		addKneeRings(fig, kn, armColor(i))
	}
	var fr plotter.XYs
	for _, pt := range f.OnFrontier() {
		if plottable(pt.Intvty) && plottable(pt.Throughput) {
			fr = append(fr, plotter.XY{X: pt.Intvty, Y: pt.Throughput})
		}
	}
	if len(fr) > 1 {
		fig.add("Pareto frontier", mustLine(fr, black, true))
	}
	return fig
}

func axisShort(a knee.Axis) string {
	if a == knee.AxisMedian {
		return "median"
	}
	return "P90 E2E-normalised"
}

func throughputLabel(m knee.Metric) string {
	if m == knee.MetricOutput {
		return "output throughput per GPU (tok/s)"
	}
	return "total throughput per GPU (tok/s)"
}

func armsOf(f *knee.Frontier) []*knee.Result {
	var out []*knee.Result
	seen := map[*knee.Result]bool{}
	for _, pt := range f.Points {
		if !seen[pt.Result] {
			seen[pt.Result] = true
			out = append(out, pt.Result)
		}
	}
	return out
}

// kneeChart draws one arm's throughput vs concurrency: the replicates, the
// fit and the knee. Its points without a value are marked on the x axis,
// where no measurement sits (the y axis starts at 0): a failed point
// (every result excluded, or one of noResult: the concurrencies its
// sweep's journal ends failed with no result the knees read) as a cross,
// a point its sweep has not finished (knee.Result.Unfinished) as an open
// square; the chart's Note names them. (The crosses sat at the arm's
// lowest measured value, where they read as measurements; a point failed
// with no result had no mark, the curve ending early with nothing at the
// concurrency the failed points' table lists.)
func kneeChart(name string, r *knee.Result, noResult []int, metric knee.Metric) *figure {
	fig := newFigure(name, fmt.Sprintf("Throughput vs concurrency: %s\n%s", r.Arm.Identity.Parallelism(), r.Arm.Identity.GroupLabel()),
		"concurrency", throughputLabel(metric))
	p := fig.p
	p.X.Scale, p.X.Tick.Marker = log2Scale{}, pow2Ticks{}
	var reps, fit, failed, unfinished plotter.XYs
	var failedAt, unfinishedAt []string
	d := &fig.data
	for _, pt := range r.Points {
		c := float64(pt.Conc)
		for _, v := range pt.Replicates {
			d.add(&reps, c, v, "measured", pt.Conc, "tok/s")
		}
		if pt.Fit != nil {
			d.add(&fit, c, *pt.Fit, "fit", pt.Conc, "tok/s")
		}
		if !pt.Usable && !slices.Contains(r.Unfinished, pt.Conc) {
			failed = append(failed, plotter.XY{X: c})
		}
	}
	for _, c := range noResult {
		x := float64(c)
		if !slices.ContainsFunc(r.Points, func(p knee.Point) bool { return p.Conc == c }) && !slices.Contains(r.Unfinished, c) &&
			!slices.Contains(failed, plotter.XY{X: x}) {
			failed = append(failed, plotter.XY{X: x})
		}
	}
	slices.SortFunc(failed, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	for _, xy := range failed {
		failedAt = append(failedAt, fmt.Sprintf("c%d", int(xy.X)))
	}
	for _, c := range r.Unfinished {
		unfinished = append(unfinished, plotter.XY{X: float64(c)})
		unfinishedAt = append(unfinishedAt, fmt.Sprintf("c%d", c))
	}
	if len(reps) > 0 {
		fig.add("measured", mustScatter(reps, armColor(0), draw.CircleGlyph{}, vg.Points(3)))
	}
	if len(fit) > 1 {
		fig.add("fit", mustLine(fit, armColor(1), false))
	}
	if len(failed) > 0 {
		fig.add("failed: no value (on the axis)", mustScatter(failed, failedColor, draw.CrossGlyph{}, vg.Points(5)))
		fig.p.Add(axisLabels(failed, "failed", failedColor))
	}
	if len(unfinished) > 0 {
		fig.add("not finished (on the axis)", mustScatter(unfinished, grey, draw.SquareGlyph{}, vg.Points(4)))
		fig.p.Add(axisLabels(unfinished, "not finished", grey))
	}
	if r.Knee > 0 {
		top := 0.0
		if plottable(r.PeakValue) {
			top = r.PeakValue
		}
		for _, v := range reps {
			top = math.Max(top, v.Y)
		}
		fig.add(fmt.Sprintf("knee c%d", r.Knee), mustLine(plotter.XYs{{X: float64(r.Knee), Y: 0}, {X: float64(r.Knee), Y: top}}, black, true))
	}
	p.Y.Min = 0
	p.Y.Max *= 1.08
	p.X.Padding = 0 // y = 0 on the x axis: the markers without a value sit on it
	var notes []string
	if len(failedAt) > 0 {
		notes = append(notes, fmt.Sprintf("failed, no value (× on the x axis): %s", strings.Join(failedAt, ", ")))
	}
	if len(unfinishedAt) > 0 {
		notes = append(notes, fmt.Sprintf("not finished by its sweep (□ on the x axis): %s", strings.Join(unfinishedAt, ", ")))
	}
	fig.note = strings.Join(notes, "; ")
	return fig
}

// axisLabels writes text upright above each marker at xys (on the x
// axis), in c: a word per point, which stays legible where the points
// of a dense conc-list (c40, c48) lie close.
func axisLabels(xys plotter.XYs, text string, c color.Color) *plotter.Labels {
	ls := make([]string, len(xys))
	for i := range ls {
		ls[i] = text
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: ls})
	if err != nil {
		panic(err) // one label per point, finite by construction
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(8)
		l.TextStyle[i].Color = c
		l.TextStyle[i].Rotation = math.Pi / 2
		l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XLeft, draw.YCenter
	}
	l.Offset = vg.Point{Y: vg.Points(7)}
	return l
}

// failedColor marks failed points.
var failedColor = color.RGBA{R: 200, A: 255}

// latencyChart draws p50 and p90 of TTFT or ITL against concurrency for
// every arm of one group.
func latencyChart(name, groupLabel, what string, rs []*knee.Result) *figure {
	unit, scale := "s", 1.0
	if what == "ITL" {
		unit, scale = "ms", 1000
	}
	fig := newFigure(name, fmt.Sprintf("%s percentiles vs concurrency\n%s", what, groupLabel), "concurrency", fmt.Sprintf("%s (%s)", what, unit))
	fig.p.X.Scale, fig.p.X.Tick.Marker = log2Scale{}, pow2Ticks{}
	d := &fig.data
	for i, r := range rs {
		var p50, p90 plotter.XYs
		arm := r.Arm.Identity.Parallelism()
		for _, pt := range r.Points {
			if !pt.Usable {
				continue
			}
			a, b := latencyOf(pt, what)
			if a != nil {
				d.add(&p50, float64(pt.Conc), *a*scale, arm+" "+what+" p50", pt.Conc, unit)
			}
			if b != nil {
				d.add(&p90, float64(pt.Conc), *b*scale, arm+" "+what+" p90", pt.Conc, unit)
			}
		}
		addSeries(fig, p50, armColor(i), false, arm+" p50")
		addSeries(fig, p90, armColor(i), true, arm+" p90")
	}
	fig.p.Y.Min = 0
	return fig
}

// addSeries draws xys as a line, dashed or not, in the legend as label;
// a single point (an arm measured at one concurrency) as a marker, a
// ring where the line is dashed: a line needs two (such arms were left
// out of the latency charts without a word).
func addSeries(fig *figure, xys plotter.XYs, c color.Color, dashed bool, label string) {
	switch {
	case len(xys) > 1:
		fig.add(label, mustLine(xys, c, dashed))
	case len(xys) == 1:
		var shape draw.GlyphDrawer = draw.CircleGlyph{}
		if dashed {
			shape = draw.RingGlyph{}
		}
		fig.add(label, mustScatter(xys, c, shape, vg.Points(3)))
	}
}

// latencyOf returns the median over replicates of the p50 and p90.
func latencyOf(pt knee.Point, what string) (*float64, *float64) {
	var a, b []float64
	for _, s := range pt.Samples() {
		st := s.TTFT
		if what == "ITL" {
			st = s.ITL
		}
		if st.P50 != nil {
			a = append(a, float64(*st.P50))
		}
		if st.P90 != nil {
			b = append(b, float64(*st.P90))
		}
	}
	return med(a), med(b)
}

func med(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	sort.Float64s(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return &m
}

// alChart draws measured acceptance length against concurrency per arm
// and, once per distinct golden AL (with its tolerance), the golden as a
// dashed line inside its tolerance band (golden ± tolerance, shaded),
// across the concurrencies of the arms that share it: the band shows
// which deviations pass, and the y axis spans it, so a deviation of 0.01
// under a tolerance of 0.05 looks as small as it is. One legend entry
// per golden (arms with the same golden drew one line each, on top of
// each other); it names its arms when the goldens differ. nil when no
// arm has a measured AL.
func alChart(name, groupLabel string, rs []*knee.Result) *figure {
	fig := newFigure(name, fmt.Sprintf("Acceptance length, measured vs golden\n%s", groupLabel), "concurrency", "acceptance length (tokens/step)")
	fig.p.X.Scale, fig.p.X.Tick.Marker = log2Scale{}, pow2Ticks{}
	any := false
	d := &fig.data
	var goldens []*goldenBand
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for i, r := range rs {
		var meas plotter.XYs
		var golden *goldenBand
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, pt := range r.Points {
			for _, s := range pt.Samples() {
				if s.AL == nil || s.AL.Measured == nil {
					continue
				}
				c := float64(pt.Conc)
				n := len(meas)
				d.add(&meas, c, float64(*s.AL.Measured), r.Arm.Identity.Parallelism()+" acceptance length", pt.Conc, "")
				if len(meas) > n {
					lo, hi = math.Min(lo, c), math.Max(hi, c)
					ylo, yhi = math.Min(ylo, meas[n].Y), math.Max(yhi, meas[n].Y)
				}
				if s.AL.Golden != nil && plottable(float64(*s.AL.Golden)) {
					golden = &goldenBand{value: float64(*s.AL.Golden), tol: math.Abs(float64(s.AL.Tolerance))}
				}
			}
		}
		if len(meas) == 0 {
			continue
		}
		any = true
		fig.add(r.Arm.Identity.Parallelism()+" measured", mustScatter(meas, armColor(i), plotutil.Shape(i), vg.Points(3)))
		if golden == nil {
			continue
		}
		j := slices.IndexFunc(goldens, func(g *goldenBand) bool { return g.value == golden.value && g.tol == golden.tol })
		if j < 0 {
			golden.lo, golden.hi = lo, hi
			goldens = append(goldens, golden)
			j = len(goldens) - 1
		}
		g := goldens[j]
		g.lo, g.hi = math.Min(g.lo, lo), math.Max(g.hi, hi)
		g.arms = append(g.arms, i)
	}
	if !any && d.dropped == 0 {
		return nil
	}
	for _, g := range goldens {
		lo, hi := g.lo, g.hi
		if lo == hi { // one concurrency: a line a quarter doubling each side
			lo, hi = lo/1.19, hi*1.19
		}
		var c color.Color = grey
		if len(g.arms) == 1 && len(goldens) > 1 {
			c = armColor(g.arms[0])
		}
		ps := []plot.Plotter{}
		if g.tol > 0 && plottable(g.value-g.tol) && plottable(g.value+g.tol) {
			ps = append(ps, bandPolygon(lo, hi, g.value-g.tol, g.value+g.tol))
			ylo, yhi = math.Min(ylo, g.value-g.tol), math.Max(yhi, g.value+g.tol)
		}
		ylo, yhi = math.Min(ylo, g.value), math.Max(yhi, g.value)
		ps = append(ps, mustLine(plotter.XYs{{X: lo, Y: g.value}, {X: hi, Y: g.value}}, c, true))
		label := "golden " + shortFloat(g.value)
		if g.tol > 0 {
			label += fmt.Sprintf(" ±%s (band: passes)", shortFloat(g.tol))
		}
		if len(goldens) > 1 {
			var arms []string
			for _, i := range g.arms {
				arms = append(arms, rs[i].Arm.Identity.Parallelism())
			}
			label += ": " + strings.Join(arms, ", ")
		}
		fig.add(label, ps...)
	}
	if yhi > ylo {
		pad := 0.08 * (yhi - ylo)
		fig.p.Y.Min, fig.p.Y.Max = ylo-pad, yhi+pad
	}
	return fig
}

// shortFloat writes an acceptance length or its tolerance with the
// digits it needs, up to four decimals: "3.39", "0.05".
func shortFloat(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// goldenBand is one distinct golden acceptance length of an AL chart:
// its value and tolerance, the arms (indices) that have it and the
// concurrencies [lo, hi] they measured.
type goldenBand struct {
	value, tol float64
	arms       []int
	lo, hi     float64
}

// bandPolygon is the shaded band [ylo, yhi] over [xlo, xhi], without
// an outline.
func bandPolygon(xlo, xhi, ylo, yhi float64) *plotter.Polygon {
	pg, err := plotter.NewPolygon(plotter.XYs{{X: xlo, Y: ylo}, {X: xhi, Y: ylo}, {X: xhi, Y: yhi}, {X: xlo, Y: yhi}})
	if err != nil {
		panic(err) // finite by construction (plottable)
	}
	pg.Color = bandColor
	pg.LineStyle.Width = 0
	return pg
}

// bandColor shades a tolerance band: light enough for the points and
// the grid to show through.
var bandColor = color.NRGBA{R: 120, G: 120, B: 120, A: 45}

// grey draws what is no measurement: a golden acceptance length several
// arms share, the legend's ring for knees ringed in their arms' colours,
// the points a sweep has not finished.
var grey = color.RGBA{R: 110, G: 110, B: 110, A: 255}

// energyChart draws throughput per GPU against energy per output token,
// one line per arm through its concurrencies (the knee ringed in the
// arm's colour, as on the Pareto chart: addKneeRings); nil when
// no arm of the group has valid power.
func energyChart(name, groupLabel string, rs []*knee.Result, metric knee.Metric) *figure {
	fig := newFigure(name, fmt.Sprintf("Throughput per GPU vs energy per output token\n%s", groupLabel),
		"energy per output token (J, whole deployment)", throughputLabel(metric))
	any := false
	d := &fig.data
	for i, r := range rs {
		var xys, knees plotter.XYs
		for _, pt := range r.Points {
			if pt.JoulesPerOutputToken == nil || pt.Throughput == nil {
				continue
			}
			n := len(xys)
			d.add(&xys, *pt.JoulesPerOutputToken, *pt.Throughput, r.Arm.Identity.Parallelism()+" energy or throughput", pt.Conc, "")
			if len(xys) > n && pt.Conc == r.Knee {
				knees = append(knees, xys[n])
			}
		}
		if len(xys) == 0 {
			continue
		}
		any = true
		fig.add(r.Arm.Identity.Parallelism(), mustScatter(xys, armColor(i), plotutil.Shape(i), vg.Points(3)), mustLine(xys, armColor(i), false))
		addKneeRings(fig, knees, armColor(i))
	}
	if !any && d.dropped == 0 {
		return nil
	}
	fig.p.X.Min, fig.p.Y.Min = 0, 0
	return fig
}
