package report

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"sweep/internal/markdown"
	"sweep/internal/plural"
	"sweep/sweep/campaign"
	"sweep/sweep/compare"
	"sweep/sweep/knee"
)

// AddComparison puts HEAD's results beside the report's (BASE's): the
// comparison's verdict table in the summary and the page, after their
// banners, and per arm both sides' throughput against concurrency and
// against interactivity on the same chart (BASE solid, HEAD dashed). An
// arm only HEAD has gets those charts with HEAD's curve alone (one only
// BASE has is in the report's own charts).
func (rep *Report) AddComparison(head []*knee.Result, cmp *compare.Report) error {
	rep.Comparison, rep.Head = cmp, head
	heads := map[string]*knee.Result{}
	for _, r := range head {
		heads[r.Arm.Identity.ArmKey()] = r
	}
	var pairs [][2]*knee.Result // BASE, HEAD; BASE nil for an arm only HEAD has
	for _, r := range rep.Results {
		if h := heads[r.Arm.Identity.ArmKey()]; h != nil {
			pairs = append(pairs, [2]*knee.Result{r, h})
			delete(heads, r.Arm.Identity.ArmKey())
		}
	}
	for _, h := range head {
		if heads[h.Arm.Identity.ArmKey()] != nil {
			pairs = append(pairs, [2]*knee.Result{nil, h})
		}
	}
	for n, pair := range pairs {
		for _, ax := range []string{"conc", "intvty"} {
			c, err := comparisonChart(fmt.Sprintf("compare-arm%d-%s", n+1, ax), pair[0], pair[1], ax, rep.Metric).render()
			if err != nil {
				return err
			}
			rep.Charts = append(rep.Charts, c)
		}
	}
	return nil
}

// comparisonChart draws one arm's usable points of both sides (base nil:
// HEAD's alone) against concurrency (x = "conc") or P90 E2E-normalised
// interactivity.
func comparisonChart(name string, base, head *knee.Result, x string, metric knee.Metric) *figure {
	xlabel, title := "concurrency", "Throughput vs concurrency, BASE vs HEAD"
	if x == "intvty" {
		xlabel, title = knee.AxisE2ENormP90.Title(), "Throughput vs interactivity, BASE vs HEAD"
	}
	arm := head.Arm.Identity.Label()
	if base == nil {
		arm += " (only in HEAD)"
	}
	fig := newFigure(name, fmt.Sprintf("%s\n%s", title, arm), xlabel, throughputLabel(metric))
	if x == "conc" {
		fig.p.X.Scale, fig.p.X.Tick.Marker = log2Scale{}, pow2Ticks{}
	}
	d := &fig.data
	for i, side := range []struct {
		name string
		r    *knee.Result
	}{{"BASE", base}, {"HEAD", head}} {
		if side.r == nil {
			continue
		}
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

// comparisonRows are the comparison's verdict table (comparisonHeader):
// one row per arm BASE has, its problems (what makes it INCOMPLETE) summed up by kind
// and concurrency beside what differs (each problem in full under the
// table: problemsByArm); a row per arm of a problem outside those; and
// one per arm only HEAD has, not compared. The verdicts and their
// numbers are the comparison's (compare.Report).
func comparisonRows(cmp *compare.Report) [][]string {
	var rows [][]string
	arms, byArm := problemsByArm(cmp)
	for _, a := range cmp.Arms {
		d, fr, peak := "–", "–", "–"
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
		rows = append(rows, []string{string(a.Verdict), a.Arm, d, compare.CIText(a.CIPct), compare.FamilyCIText(a.FamilyCIPct, a.FamilyConfidencePct),
			flaggedPoints(a), peak, fr, coverage, joinNonEmpty(strings.Join(a.Differs, "; "), problemSummary(byArm[a.Arm]))})
	}
	for _, arm := range arms {
		if !slices.ContainsFunc(cmp.Arms, func(a *compare.ArmReport) bool { return a.Arm == arm }) {
			rows = append(rows, []string{string(compare.Incomplete), arm, "–", "–", "–", "–", "–", "–", "–", problemSummary(byArm[arm])})
		}
	}
	for _, arm := range cmp.OnlyInHead {
		rows = append(rows, []string{"not compared", arm, "–", "–", "–", "–", "–", "–", "–", "only in HEAD: BASE has no such arm"})
	}
	return rows
}

// flaggedPoints lists an arm's points that regress beyond the tolerance,
// with their change and family-wise interval at its own confidence
// (compare.FamilyCIText), and those past BASE's cliff (not judged); "–"
// when there are none.
func flaggedPoints(a *compare.ArmReport) string {
	var out []string
	for _, p := range a.Points {
		switch {
		case p.Verdict == compare.Regression && p.CIPct != nil:
			out = append(out, fmt.Sprintf("c%d %+.2f %s", p.Conc, p.DeltaPct, compare.FamilyCIText(p.CIPct, p.ConfidencePct)))
		case p.PastBaseCliff:
			out = append(out, fmt.Sprintf("c%d past BASE's cliff (%+.2f, not judged)", p.Conc, p.DeltaPct))
		}
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, "; ")
}

// comparisonHeader heads the comparison's table: the intervals that
// decide REGRESSION (the arm's family CI, the points') headed as sweep
// compare heads them, each cell with its own confidence.
var comparisonHeader = []string{"verdict", "arm", "Δ %", "90% CI", compare.ArmFamilyHeader, "points beyond tolerance (" + compare.PointFamilyHeader + ")",
	"peak Δ %", "frontier Δ %", "frontier coverage", "differs / problems"}

// problemsByArm groups the comparison's problems by arm, the arms in the
// order of their first problem.
func problemsByArm(cmp *compare.Report) ([]string, map[string][]compare.Problem) {
	var arms []string
	by := map[string][]compare.Problem{}
	for _, p := range cmp.Problems {
		if _, ok := by[p.Arm]; !ok {
			arms = append(arms, p.Arm)
		}
		by[p.Arm] = append(by[p.Arm], p)
	}
	return arms, by
}

// problemSummary sums up an arm's problems for its row: "6 problems
// (listed below): invalid-result at c16, c24, c32, c40, c48, c64"; ""
// for none.
func problemSummary(ps []compare.Problem) string {
	if len(ps) == 0 {
		return ""
	}
	var kinds []string
	concs := map[string][]string{}
	for _, p := range ps {
		if _, ok := concs[p.Kind]; !ok {
			kinds = append(kinds, p.Kind)
		}
		if p.Conc != nil {
			if c := fmt.Sprintf("c%d", *p.Conc); !slices.Contains(concs[p.Kind], c) { // both sides' problem at one point: named once
				concs[p.Kind] = append(concs[p.Kind], c)
			}
		} else {
			concs[p.Kind] = append(concs[p.Kind], "")
		}
	}
	var parts []string
	for _, k := range kinds {
		cs := slices.DeleteFunc(slices.Clone(concs[k]), func(c string) bool { return c == "" })
		if len(cs) == 0 {
			parts = append(parts, k)
			continue
		}
		parts = append(parts, k+" at "+strings.Join(cs, ", "))
	}
	return fmt.Sprintf("%s (listed below): %s", plural.Count(len(ps), "problem", "problems"), strings.Join(parts, "; "))
}

// problemLine is one problem of an arm, listed under its arm: "c16
// invalid-result: no valid HEAD result: ...".
func problemLine(p compare.Problem) string {
	if p.Conc != nil {
		return fmt.Sprintf("c%d %s: %s", *p.Conc, p.Kind, p.Detail)
	}
	return fmt.Sprintf("%s: %s", p.Kind, p.Detail)
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// sides names the two sides of the comparison: "BASE: runs/main (this
// report's results); HEAD: runs/pr-123."
func (rep *Report) sides() string {
	base, head := "this report's results", "the results compared with them"
	if rep.Dir != "" {
		base = rep.Dir + " (this report's results)"
	}
	if rep.HeadDir != "" {
		head = rep.HeadDir
	}
	return fmt.Sprintf("BASE: %s; HEAD: %s.", base, head)
}

func (rep *Report) comparisonMarkdown(b *strings.Builder) {
	if rep.Comparison == nil {
		return
	}
	fmt.Fprintf(b, "## Comparison with HEAD\n\n%s\n\n%s\n\n", markdown.Cell(rep.sides()), compare.VerdictLine(rep.Comparison))
	mdTable(b, comparisonHeader, comparisonRows(rep.Comparison))
	arms, byArm := problemsByArm(rep.Comparison)
	if len(arms) > 0 {
		fmt.Fprintf(b, "\nThe %s, by arm:\n\n", plural.Count(len(rep.Comparison.Problems), "problem", "problems"))
		for _, arm := range arms {
			fmt.Fprintf(b, "- %s\n", markdown.Cell(arm))
			for _, p := range byArm[arm] {
				fmt.Fprintf(b, "  - %s\n", markdown.Cell(problemLine(p)))
			}
		}
	}
	b.WriteString("\n")
}

func (rep *Report) comparisonHTML(b *strings.Builder) {
	if rep.Comparison == nil {
		return
	}
	fmt.Fprintf(b, "<h2>Comparison with HEAD</h2>\n<p id=\"compare-sides\">%s</p>\n<p id=\"compare-verdict\">%s</p>\n",
		html.EscapeString(rep.sides()), html.EscapeString(compare.VerdictLine(rep.Comparison)))
	htmlTable(b, "compare", comparisonHeader, comparisonRows(rep.Comparison))
	arms, byArm := problemsByArm(rep.Comparison)
	if len(arms) == 0 {
		return
	}
	fmt.Fprintf(b, "<p>The %s, by arm:</p>\n<ul id=\"compare-problems\">\n", plural.Count(len(rep.Comparison.Problems), "problem", "problems"))
	for _, arm := range arms {
		fmt.Fprintf(b, "<li>%s<ul>\n", html.EscapeString(arm))
		for _, p := range byArm[arm] {
			fmt.Fprintf(b, "<li>%s</li>\n", html.EscapeString(problemLine(p)))
		}
		b.WriteString("</ul></li>\n")
	}
	b.WriteString("</ul>\n")
}

// CompareDir reads HEAD's results under dir as the report's are read
// (campaign.ReadKnees: the points its sweep has not finished join
// Incomplete), compares them with the report's (BASE's) on o.Metric
// within tolerance (percent) and adds them to the report (AddComparison,
// HeadDir dir). It returns the comparison, also when adding it fails;
// without one, the error says HEAD could not be read, or holds no
// result (a *compare.NoResultsError), as sweep compare's does.
func (rep *Report) CompareDir(ctx context.Context, dir string, o knee.Options, tolerance float64) (*compare.Report, error) {
	k, err := campaign.ReadKnees(ctx, dir, o)
	if err != nil {
		return nil, fmt.Errorf("HEAD %s: %w", dir, err)
	}
	if len(k.Results) == 0 {
		return nil, &compare.NoResultsError{Name: "HEAD", Dir: dir}
	}
	head := make([]*knee.Arm, len(k.Results))
	for i, r := range k.Results {
		head[i] = r.Arm
	}
	base := make([]*knee.Arm, len(rep.Results))
	for i, r := range rep.Results {
		base[i] = r.Arm
	}
	cmp := compare.Compare(base, head, compare.Options{Tolerance: tolerance, Metric: compare.Metric(o.Metric)})
	rep.HeadDir = dir
	if s := k.Incomplete(); s != "" {
		rep.Incomplete = append(rep.Incomplete, fmt.Sprintf("Incomplete %s: %s.", sideName("HEAD", dir), s))
	}
	return cmp, rep.AddComparison(k.Results, cmp)
}
