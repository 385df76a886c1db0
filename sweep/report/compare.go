package report

import (
	"context"
	"fmt"
	"html"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweep/sweep/compare"
	"sweep/sweep/knee"
)

// AddComparison puts HEAD's results beside the report's (BASE's): the
// comparison's verdict table first in the summary and the page, and per
// arm both sides' throughput against concurrency and against
// interactivity on the same chart (BASE solid, HEAD dashed). Arms only
// one side has are drawn as they are.
func (rep *Report) AddComparison(head []*knee.Result, cmp *compare.Report) error {
	rep.Comparison = cmp
	heads := map[string]*knee.Result{}
	for _, r := range head {
		heads[r.Arm.Identity.Label()] = r
	}
	n := 0
	for _, r := range rep.Results {
		h := heads[r.Arm.Identity.Label()]
		if h == nil {
			continue
		}
		n++
		for _, ax := range []string{"conc", "intvty"} {
			c, err := comparisonChart(fmt.Sprintf("compare-arm%d-%s", n, ax), r, h, ax, rep.Metric).render()
			if err != nil {
				return err
			}
			rep.Charts = append(rep.Charts, c)
		}
	}
	return nil
}

// comparisonChart draws one arm's usable points of both sides against
// concurrency (x = "conc") or P90 E2E-normalised interactivity.
func comparisonChart(name string, base, head *knee.Result, x string, metric knee.Metric) *figure {
	xlabel, title := "concurrency", "Throughput vs concurrency, BASE vs HEAD"
	if x == "intvty" {
		xlabel, title = knee.AxisE2ENormP90.Title(), "Throughput vs interactivity, BASE vs HEAD"
	}
	fig := newFigure(name, fmt.Sprintf("%s\n%s", title, base.Arm.Identity.Label()), xlabel, throughputLabel(metric))
	if x == "conc" {
		fig.p.X.Scale, fig.p.X.Tick.Marker = log2Scale{}, pow2Ticks{}
	}
	d := &fig.data
	for i, side := range []struct {
		name string
		r    *knee.Result
	}{{"BASE", base}, {"HEAD", head}} {
		var xys plotter.XYs
		for _, pt := range side.r.Points {
			if !pt.Usable || pt.Throughput == nil {
				continue
			}
			xv := float64(pt.Conc)
			if x == "intvty" {
				if pt.E2ENormP90 == nil {
					continue
				}
				xv = *pt.E2ENormP90
			}
			d.add(&xys, xv, *pt.Throughput, side.name+" throughput", pt.Conc, "tok/s")
		}
		if len(xys) == 0 {
			continue
		}
		s := mustScatter(xys, armColor(i), [...]draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}}[i], vg.Points(3))
		if len(xys) > 1 {
			fig.add(side.name, s, mustLine(xys, armColor(i), i == 1))
		} else {
			fig.add(side.name, s)
		}
	}
	fig.p.Y.Min = 0
	return fig
}

func comparisonRows(cmp *compare.Report) [][]string {
	var rows [][]string
	for _, a := range cmp.Arms {
		ci, d, fr, peak := "–", "–", "–", "–"
		if a.CIPct != nil {
			ci = fmt.Sprintf("[%+.2f, %+.2f]", a.CIPct[0], a.CIPct[1])
		}
		if a.DeltaPct != nil {
			d = fmt.Sprintf("%+.2f", *a.DeltaPct)
		}
		if a.Frontier.Covered && a.Frontier.DeltaPct != nil {
			fr = fmt.Sprintf("%+.2f", *a.Frontier.DeltaPct)
		}
		if a.Frontier.PeakDeltaPct != nil {
			peak = fmt.Sprintf("%+.2f", *a.Frontier.PeakDeltaPct)
		}
		coverage := a.Frontier.Coverage
		if coverage == "" {
			coverage = a.Frontier.Reason
		}
		rows = append(rows, []string{string(a.Verdict), a.Arm, d, ci, flaggedPoints(a), peak, fr, coverage, strings.Join(a.Differs, "; ")})
	}
	for _, p := range cmp.Problems {
		rows = append(rows, []string{string(compare.Incomplete), p.Arm, "–", "–", "–", "–", "–", "–", p.String()})
	}
	return rows
}

// flaggedPoints lists an arm's points that regress beyond the tolerance,
// with their change and 99 % simultaneous interval, and those past BASE's
// cliff (not judged); "–" when there are none.
func flaggedPoints(a *compare.ArmReport) string {
	var out []string
	for _, p := range a.Points {
		switch {
		case p.Verdict == compare.Regression && p.CIPct != nil:
			out = append(out, fmt.Sprintf("c%d %+.2f [%+.2f, %+.2f]", p.Conc, p.DeltaPct, p.CIPct[0], p.CIPct[1]))
		case p.PastBaseCliff:
			out = append(out, fmt.Sprintf("c%d past BASE's cliff (%+.2f, not judged)", p.Conc, p.DeltaPct))
		}
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, "; ")
}

var comparisonHeader = []string{"verdict", "arm", "Δ %", "90% CI", "points beyond tolerance (99% CI)", "peak Δ %", "frontier Δ %", "frontier coverage", "differs / problem"}

func (rep *Report) comparisonMarkdown(b *strings.Builder) {
	if rep.Comparison == nil {
		return
	}
	fmt.Fprintf(b, "## Comparison with HEAD\n\n%s\n\n", compare.VerdictLine(rep.Comparison))
	mdTable(b, comparisonHeader, comparisonRows(rep.Comparison))
	b.WriteString("\n")
}

func (rep *Report) comparisonHTML(b *strings.Builder) {
	if rep.Comparison == nil {
		return
	}
	fmt.Fprintf(b, "<h2>Comparison with HEAD</h2>\n<p id=\"compare-verdict\">%s</p>\n", html.EscapeString(compare.VerdictLine(rep.Comparison)))
	htmlTable(b, "compare", comparisonHeader, comparisonRows(rep.Comparison))
}

// CompareDir reads HEAD's results under dir as sweep compare does
// (compare.ReadSide), compares them with the report's (BASE's) on
// o.Metric within tolerance (percent) and adds them to the report
// (AddComparison). It returns the comparison, also when adding it fails;
// without one, the error is ReadSide's: HEAD could not be read, or holds
// no result (a *compare.NoResultsError).
func (rep *Report) CompareDir(ctx context.Context, dir string, o knee.Options, tolerance float64) (*compare.Report, error) {
	head, err := compare.ReadSide(ctx, "HEAD", dir)
	if err != nil {
		return nil, err
	}
	hrs := make([]*knee.Result, len(head))
	for i, a := range head {
		hrs[i] = knee.Analyze(a, o)
	}
	base := make([]*knee.Arm, len(rep.Results))
	for i, r := range rep.Results {
		base[i] = r.Arm
	}
	cmp := compare.Compare(base, head, compare.Options{Tolerance: tolerance, Metric: compare.Metric(o.Metric)})
	return cmp, rep.AddComparison(hrs, cmp)
}
