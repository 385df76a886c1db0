// Package report turns a directory of sweep results into pictures people
// look at: charts (SVG and PNG, drawn with gonum/plot), a Markdown summary
// for $GITHUB_STEP_SUMMARY and PR comments, and one self-contained HTML
// page with the charts inline and the tables.
//
//	rep, _ := report.Read(ctx, dir, opts) // campaign.ReadKnees, then Build
//	// or: rep, _ := report.Build(rs, opts.Metric) on verdicts at hand
//	_, _ = rep.CompareDir(ctx, headDir, opts, tolerance) // optional
//	page, _ := rep.Write(outDir)
package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sweep/internal/atomicfile"
	"sweep/internal/markdown"
	"sweep/internal/plural"
	"sweep/sweep/campaign"
	"sweep/sweep/compare"
	"sweep/sweep/knee"
)

// Report is a built report: the verdicts, the frontiers and the charts.
type Report struct {
	Metric    knee.Metric
	Results   []*knee.Result
	Frontiers map[knee.Axis][]*knee.Frontier
	Charts    []Chart
	// Notes name the charts that could not be drawn and why.
	Notes []string
	// Comparison, when not nil, is the verdict of sweep compare against
	// HEAD's results (AddComparison); it leads the summary and the page,
	// after the banners (Provenance, Incomplete).
	Comparison *compare.Report
	// Head are HEAD's verdicts beside a Comparison, HeadDir its
	// directory ("" when the results were handed over: AddComparison).
	Head    []*knee.Result
	HeadDir string
	// Dir is the directory of the report's results (BASE's, with a
	// comparison): Read sets it; "" when the verdicts were handed over
	// (Build).
	Dir string
	// Incomplete names the points the sweep of the report's results has
	// not finished, and HEAD's (campaign.Knees.Incomplete), one line
	// each: a banner of the summary and the page; empty when they have.
	Incomplete []string
	// Failed are the points the sweep's journal records as failed with
	// no result the knees read (campaign.Knees.Failed): the failed
	// points' table lists them beside the failed result files. Read sets
	// it; nil when the verdicts were handed over (Build).
	Failed []campaign.FailedPoint
	groups []group
}

type group struct {
	label   string
	results []*knee.Result
}

// Build draws every chart for rs: per config key, throughput/GPU vs
// interactivity at P90 E2E-normalised and at median (frontier and knees
// marked), TTFT and ITL percentiles vs concurrency and measured vs golden
// acceptance length (when measured); per arm, throughput vs concurrency
// with the fit and the knee. A value a chart cannot draw is left out and
// named in the chart's Note; a chart that cannot be drawn at all is left
// out and named in Notes. Build returns no error for any finite or
// infinite input.
func Build(rs []*knee.Result, metric knee.Metric) (*Report, error) {
	rep := &Report{Metric: metric, Results: rs, Frontiers: map[knee.Axis][]*knee.Frontier{}}
	for _, ax := range []knee.Axis{knee.AxisE2ENormP90, knee.AxisMedian} {
		rep.Frontiers[ax] = knee.Frontiers(rs, ax)
	}
	idx := map[string]int{}
	for _, r := range rs {
		l := r.Arm.Identity.GroupLabel()
		i, ok := idx[l]
		if !ok {
			i = len(rep.groups)
			idx[l] = i
			rep.groups = append(rep.groups, group{label: l})
		}
		rep.groups[i].results = append(rep.groups[i].results, r)
	}
	for _, f := range rep.figures() {
		c, err := f.render()
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%v: not drawn", err))
			continue
		}
		rep.Charts = append(rep.Charts, c)
	}
	return rep, nil
}

// Read builds the report of the results under dir as sweep knees reads
// them (campaign.ReadKnees with o: the verdicts, and the points their
// sweep has not finished, named in Incomplete). No result under dir is
// no error: the report then has no Results.
func Read(ctx context.Context, dir string, o knee.Options) (*Report, error) {
	k, err := campaign.ReadKnees(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	return fromKnees(k, dir, o.Metric)
}

// fromKnees builds the report of k, the verdicts on the results under
// dir, on metric ("" is knee.MetricTotal).
func fromKnees(k *campaign.Knees, dir string, metric knee.Metric) (*Report, error) {
	if metric == "" {
		metric = knee.MetricTotal
	}
	rep, err := Build(k.Results, metric)
	if err != nil {
		return nil, err
	}
	rep.Dir = dir
	rep.Failed = k.Failed
	if s := k.Incomplete(); s != "" {
		rep.Incomplete = append(rep.Incomplete, "Incomplete: "+s+".")
	}
	return rep, nil
}

// figures are the charts of rep's groups, in the report's order: per
// group the Pareto charts, each arm's throughput, TTFT and ITL, and
// acceptance length and energy where measured.
func (rep *Report) figures() []*figure {
	var out []*figure
	add := func(f *figure) {
		if f != nil {
			out = append(out, f)
		}
	}
	for gi, g := range rep.groups {
		for _, ax := range []knee.Axis{knee.AxisE2ENormP90, knee.AxisMedian} {
			for _, f := range rep.Frontiers[ax] {
				if f.Group == g.label && len(f.Points) > 0 {
					add(paretoChart(fmt.Sprintf("g%d-pareto-%s", gi+1, axisFile(ax)), f, rep.Metric))
				}
			}
		}
		for ai, r := range g.results {
			if hasThroughput(r) {
				add(kneeChart(fmt.Sprintf("g%d-arm%d-throughput", gi+1, ai+1), r, rep.Metric))
			}
		}
		for _, what := range []string{"TTFT", "ITL"} {
			add(latencyChart(fmt.Sprintf("g%d-%s", gi+1, strings.ToLower(what)), g.label, what, g.results))
		}
		add(alChart(fmt.Sprintf("g%d-acceptance-length", gi+1), g.label, g.results))
		add(energyChart(fmt.Sprintf("g%d-energy", gi+1), g.label, g.results, rep.Metric))
	}
	return out
}

func hasThroughput(r *knee.Result) bool {
	for _, p := range r.Points {
		if p.Usable {
			return true
		}
	}
	return false
}

func axisFile(a knee.Axis) string {
	if a == knee.AxisMedian {
		return "median"
	}
	return "p90"
}

// Files written by Write.
const (
	SummaryFile = "summary.md"
	PageFile    = "index.html"
	ChartsDir   = "charts"
)

// chartName matches the names of the charts a report draws (figures,
// AddComparison) and no other: Write removes the files under charts/
// of this form that the report it writes does not draw.
var chartName = regexp.MustCompile(`^(g\d+-(pareto-(p90|median)|arm\d+-throughput|ttft|itl|acceptance-length|energy)|compare-arm\d+-(conc|intvty))$`)

// Write writes the charts (charts/NAME.svg and .png), summary.md and
// index.html under dir, each atomically, and returns the page's path.
// The charts an earlier report wrote there that this one does not draw
// (an earlier --compare's, a group or arm since gone) are removed, so
// that charts/ holds the report's own; other files there are left as
// they are.
func (rep *Report) Write(dir string) (string, error) {
	charts := filepath.Join(dir, ChartsDir)
	if err := os.MkdirAll(charts, 0o755); err != nil {
		return "", err
	}
	drawn := map[string]bool{}
	for _, c := range rep.Charts {
		drawn[c.Name] = true
		for ext, data := range map[string][]byte{".svg": c.SVG, ".png": c.PNG} {
			if err := atomicfile.Write(filepath.Join(charts, c.Name+ext), data, 0o644); err != nil {
				return "", err
			}
		}
	}
	if err := removeStaleCharts(charts, drawn); err != nil {
		return "", err
	}
	if err := atomicfile.Write(filepath.Join(dir, SummaryFile), []byte(rep.Markdown(ChartsDir)), 0o644); err != nil {
		return "", err
	}
	page := filepath.Join(dir, PageFile)
	return page, atomicfile.Write(page, []byte(rep.HTML()), 0o644)
}

// removeStaleCharts removes the chart files under dir (NAME.svg and
// NAME.png, NAME a report's chart name: chartName) whose chart is not
// among drawn.
func removeStaleCharts(dir string, drawn map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		stem := strings.TrimSuffix(name, ext)
		if !e.Type().IsRegular() || (ext != ".svg" && ext != ".png") || !chartName.MatchString(stem) || drawn[stem] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func cOrDash(v int) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("c%d", v)
}

func kneeRows(rs []*knee.Result) [][]string {
	var rows [][]string
	for _, r := range rs {
		cliff := "–"
		if len(r.Cliff) > 0 {
			cliff = strings.Join(r.Cliff, "; ")
		}
		kneedle := cOrDash(r.Kneedle)
		excl := 0
		for _, p := range r.Points {
			excl += len(p.Excluded)
		}
		rows = append(rows, []string{r.Arm.Identity.Label(), string(r.Status), cOrDash(r.Knee), cOrDash(r.Peak),
			kneedle, fmt.Sprint(excl), cliff, r.Reason})
	}
	return rows
}

var kneeHeader = []string{"arm", "status", "knee", "peak", "Kneedle", "excluded files", "cliff", "reason"}

// failedRows lists every result file left out of the knees because it
// failed (knee.Point.Excluded; not a probe its full-length run
// superseded, which is no failure), with why: the arm, the point (with
// "other results used" when the point has usable ones too), the reason
// and the file (relative to dir when under it); and among them, by
// concurrency in its arm's rows, each point of failed (its sweep's
// journal's failed points with no result the knees read) with the
// journal's error and the number of its attempts, its file "no result
// file" (or the result file the knees did not read). The points of
// failed on no arm of rs follow, in the journal's order. noResult
// counts the rows of failed.
func failedRows(rs []*knee.Result, failed []campaign.FailedPoint, dir string) (rows [][]string, noResult int) {
	type row struct {
		conc  int
		cells []string
	}
	byArm := map[string][]row{}
	var others []row
	for _, f := range failed {
		label := f.Arm
		if label == "" {
			label = "(no arm in the journal)"
		}
		point := fmt.Sprintf("c%d", f.Conc)
		switch {
		case f.Conc == 0:
			point = f.Point
		case f.Probe:
			point += " (probe)"
		}
		why := f.Error
		if f.Attempts > 1 {
			why = fmt.Sprintf("%s (%d attempts)", why, f.Attempts)
		}
		file := "no result file"
		if f.Result != "" {
			file = relTo(dir, f.Result) + " (not read)"
		}
		r := row{f.Conc, []string{label, point, why, file}}
		if slices.ContainsFunc(rs, func(res *knee.Result) bool { return res.Arm.Identity.Label() == f.Arm }) {
			byArm[f.Arm] = append(byArm[f.Arm], r)
		} else {
			others = append(others, r)
		}
		noResult++
	}
	for _, r := range rs {
		superseded := map[string]bool{}
		for _, s := range r.Arm.Samples {
			if s.Superseded {
				superseded[s.File] = true
			}
		}
		journal := byArm[r.Arm.Identity.Label()]
		slices.SortStableFunc(journal, func(a, b row) int { return a.conc - b.conc })
		for _, p := range r.Points {
			for len(journal) > 0 && journal[0].conc < p.Conc {
				rows, journal = append(rows, journal[0].cells), journal[1:]
			}
			for _, e := range p.Excluded {
				if superseded[e.File] {
					continue
				}
				point := pointName(r, p.Conc)
				if p.Usable {
					point += " (other results used)"
				}
				rows = append(rows, []string{r.Arm.Identity.Label(), point, e.Reason, relTo(dir, e.File)})
			}
		}
		for _, j := range journal {
			rows = append(rows, j.cells)
		}
	}
	for _, o := range others {
		rows = append(rows, o.cells)
	}
	return rows, noResult
}

// relTo is file relative to dir when under it, else file.
func relTo(dir, file string) string {
	if rel, err := filepath.Rel(dir, file); dir != "" && err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return file
}

var failedHeader = []string{"arm", "point", "why", "file"}

// failedIntro says what the failed points' table lists.
const failedIntro = "Left out of the knees and fits; the throughput charts draw them as × on the x axis, never as a value. " +
	"A point that failed before it wrote a result (its server did not start, its client crashed, it was killed) is listed with the error its sweep's journal records, and has no value to draw."

// failedTitle is the failed points' table's title: "Failed points (3
// results, 1 point with no result)".
func failedTitle(rows, noResult int) string {
	var parts []string
	if n := rows - noResult; n > 0 {
		parts = append(parts, plural.Count(n, "result", "results"))
	}
	if noResult > 0 {
		parts = append(parts, plural.Count(noResult, "point", "points")+" with no result")
	}
	return fmt.Sprintf("Failed points (%s)", strings.Join(parts, ", "))
}

// pointName names a point of r in a table: "c4", "c4 (probe)" when its
// reading is an adaptive search's short probe only.
func pointName(r *knee.Result, conc int) string {
	for _, p := range r.Points {
		if p.Conc == conc && p.Probe {
			return fmt.Sprintf("c%d (probe)", conc)
		}
	}
	return fmt.Sprintf("c%d", conc)
}

func frontierRows(fs []*knee.Frontier) [][]string {
	var rows [][]string
	for _, f := range fs {
		for _, p := range f.OnFrontier() {
			rows = append(rows, []string{f.Group, p.Result.Arm.Identity.Parallelism(), pointName(p.Result, p.Conc),
				fmt.Sprintf("%.1f", p.Intvty), fmt.Sprintf("%.0f", p.Throughput)})
		}
		for _, r := range armsOf(f) {
			if !f.Contributes(r) {
				rows = append(rows, []string{f.Group, r.Arm.Identity.Parallelism(), "dominated", "–", "–"})
			}
		}
	}
	return rows
}

// tputHeader is a table's throughput column under metric.
func tputHeader(metric knee.Metric) string {
	if metric == knee.MetricOutput {
		return "output throughput/GPU (tok/s)"
	}
	return "total throughput/GPU (tok/s)"
}

// metricLine says which throughput the report's tables and charts show.
func (rep *Report) metricLine() string {
	if rep.Metric == knee.MetricOutput {
		return "Throughput: output tokens per second per GPU (--metric output) in every table and chart."
	}
	return "Throughput: total (input + output) tokens per second per GPU (--metric total) in every table and chart."
}

// energyRows lists each point with valid power: energy per output token
// and output tokens per joule beside its throughput.
func energyRows(rs []*knee.Result) [][]string {
	var rows [][]string
	for _, r := range rs {
		for _, p := range r.Points {
			if p.JoulesPerOutputToken == nil {
				continue
			}
			tput := "–"
			if p.Throughput != nil {
				tput = fmt.Sprintf("%.0f", *p.Throughput)
			}
			point := pointName(r, p.Conc)
			if p.Conc == r.Knee {
				point += " (knee)"
			}
			rows = append(rows, []string{r.Arm.Identity.Label(), point, fmt.Sprintf("%.4g", *p.JoulesPerOutputToken),
				fmt.Sprintf("%.4g", *p.TokensPerJoule), tput})
		}
	}
	return rows
}

func energyHeader(metric knee.Metric) []string {
	return []string{"arm", "point", "J per output token", "output tokens per J", tputHeader(metric)}
}

func frontierHeader(metric knee.Metric) []string {
	return []string{"config", "arm", "point", "interactivity (tok/s/user)", tputHeader(metric)}
}

// Provenance says which arms' results came from sweep's simulated engine
// rather than hardware, what a calibration file set for them (sweep sim
// calibrate; knee.Sample.SimCalibration), and which points' readings are
// an adaptive discovery's short probes: nil when every result is a
// full-length hardware measurement. With a comparison it says so of
// BASE's and of HEAD's arms apart, each side named with its directory.
// The summary and the page lead with it (with Incomplete, before a
// comparison), so that simulated curves are never read as measured ones.
func (rep *Report) Provenance() []string {
	if rep.Comparison == nil {
		return provenanceOf(rep.Results, "")
	}
	return append(provenanceOf(rep.Results, sideName("BASE", rep.Dir)), provenanceOf(rep.Head, sideName("HEAD", rep.HeadDir))...)
}

// sideName names a side of a comparison: "HEAD (runs/pr-123)", or
// "HEAD" when its directory is not known.
func sideName(side, dir string) string {
	if dir == "" {
		return side
	}
	return fmt.Sprintf("%s (%s)", side, dir)
}

// provenanceOf is Provenance of the arms rs, of side ("": the report's
// only side).
func provenanceOf(rs []*knee.Result, side string) []string {
	var sim, calibrated, probed []string
	for _, r := range rs {
		var probes []string
		for _, p := range r.Points {
			if p.Probe {
				probes = append(probes, fmt.Sprintf("c%d", p.Conc))
			}
		}
		if len(probes) > 0 {
			probed = append(probed, fmt.Sprintf("%s: %s", r.Arm.Identity.Label(), strings.Join(probes, " ")))
		}
		a := r.Arm
		if !a.Simulated {
			continue
		}
		label := a.Identity.Label()
		sim = append(sim, label)
		if settings := a.Values(func(s *knee.Sample) string { return s.SimCalibration }); len(settings) > 0 {
			calibrated = append(calibrated, fmt.Sprintf("%s (%s)", label, strings.Join(settings, "; ")))
		}
	}
	of, in := "", ""
	if side != "" {
		of, in = " of "+side, " in "+side
	}
	var out []string
	switch {
	case len(sim) == len(rs) && len(sim) > 0:
		out = append(out, fmt.Sprintf("Simulated: every arm%s ran on sweep's simulated engine (--simulate), not on hardware; its numbers rehearse a sweep, they are not measurements.", of))
	case len(sim) > 0:
		out = append(out, fmt.Sprintf("Simulated: %d of %s%s ran on sweep's simulated engine (--simulate), not on hardware: %s.", len(sim), plural.Count(len(rs), "arm", "arms"), of, strings.Join(sim, "; ")))
	}
	if len(calibrated) > 0 {
		out = append(out, "Calibrated (sweep sim calibrate, --sim-calibration)"+in+": "+strings.Join(calibrated, "; ")+".")
	}
	if len(probed) > 0 {
		out = append(out, "Probes"+in+" (an adaptive discovery's short runs, read against the arm's full-length points; marked \"(probe)\" in the tables): "+strings.Join(probed, "; ")+".")
	}
	return out
}

// Markdown is the summary for $GITHUB_STEP_SUMMARY: first the banners
// (Provenance: simulated results, calibrations, probes; Incomplete:
// points a sweep has not finished), the throughput metric, a
// comparison's verdict, the knee table, the failed points with why, the
// frontier at P90 E2E-normalised interactivity, energy, and links to the
// PNG charts under chartsDir (relative).
func (rep *Report) Markdown(chartsDir string) string {
	var b strings.Builder
	if lines := rep.banners(); len(lines) > 0 {
		for i, line := range lines {
			if i > 0 {
				b.WriteString(">\n")
			}
			fmt.Fprintf(&b, "> **%s**\n", markdown.Cell(line))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s\n\n", rep.metricLine())
	rep.comparisonMarkdown(&b)
	fmt.Fprintf(&b, "## Sweep knees (%s)\n\n", plural.Count(len(rep.Results), "arm", "arms"))
	mdTable(&b, kneeHeader, kneeRows(rep.Results))
	if rows, noResult := failedRows(rep.Results, rep.Failed, rep.Dir); len(rows) > 0 {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", failedTitle(len(rows), noResult), failedIntro)
		mdTable(&b, failedHeader, rows)
	}
	fmt.Fprintf(&b, "\n## Pareto frontier (%s)\n\n", knee.AxisE2ENormP90.Title())
	mdTable(&b, frontierHeader(rep.Metric), frontierRows(rep.Frontiers[knee.AxisE2ENormP90]))
	if rows := energyRows(rep.Results); len(rows) > 0 {
		fmt.Fprintf(&b, "\n## Energy (GPU power, valid points)\n\n")
		mdTable(&b, energyHeader(rep.Metric), rows)
	}
	fmt.Fprintf(&b, "\n## Charts\n\n")
	for _, c := range rep.Charts {
		fmt.Fprintf(&b, "- [%s](%s/%s.png)", markdown.Cell(c.Title), chartsDir, c.Name)
		if c.Note != "" {
			fmt.Fprintf(&b, ": %s", markdown.Cell(c.Note))
		}
		b.WriteString("\n")
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "- %s\n", markdown.Cell(n))
	}
	return b.String()
}

// banners are the lines the summary and the page lead with: where the
// results came from (Provenance) and what their sweeps have not finished
// (Incomplete).
func (rep *Report) banners() []string {
	return slices.Concat(rep.Provenance(), rep.Incomplete)
}

func mdTable(b *strings.Builder, head []string, rows [][]string) {
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
	for _, r := range rows {
		for i := range r {
			r[i] = markdown.Cell(r[i])
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(r, " | "))
	}
}

// HTML is one self-contained page: the tables and every chart as inline
// SVG (no external file, script or font).
func (rep *Report) HTML() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Sweep report</title>
<style>
body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
td,th{border:1px solid #bbb;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eee}
figure{display:inline-block;margin:0.5em;border:1px solid #ddd;background:#fff}
figure svg{display:block;width:630px;height:405px}
figcaption{font-size:13px;padding:4px}
</style></head><body>
`)
	b.WriteString("<h1>Sweep report</h1>\n")
	for _, line := range rep.Provenance() {
		fmt.Fprintf(&b, "<p class=\"provenance\"><strong>%s</strong></p>\n", html.EscapeString(line))
	}
	for _, line := range rep.Incomplete {
		fmt.Fprintf(&b, "<p class=\"incomplete\"><strong>%s</strong></p>\n", html.EscapeString(line))
	}
	fmt.Fprintf(&b, "<p>%s. %s</p>\n", plural.Count(len(rep.Results), "arm", "arms"), html.EscapeString(rep.metricLine()))
	rep.comparisonHTML(&b)
	b.WriteString("<h2>Knees</h2>\n")
	htmlTable(&b, "knees", kneeHeader, kneeRows(rep.Results))
	if rows, noResult := failedRows(rep.Results, rep.Failed, rep.Dir); len(rows) > 0 {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<p>%s</p>\n", html.EscapeString(failedTitle(len(rows), noResult)), html.EscapeString(failedIntro))
		htmlTable(&b, "failed", failedHeader, rows)
	}
	fmt.Fprintf(&b, "<h2>Pareto frontier (%s)</h2>\n", html.EscapeString(knee.AxisE2ENormP90.Title()))
	htmlTable(&b, "frontier", frontierHeader(rep.Metric), frontierRows(rep.Frontiers[knee.AxisE2ENormP90]))
	if rows := energyRows(rep.Results); len(rows) > 0 {
		b.WriteString("<h2>Energy (GPU power, valid points)</h2>\n")
		htmlTable(&b, "energy", energyHeader(rep.Metric), rows)
	}
	b.WriteString("<h2>Charts</h2>\n")
	for _, c := range rep.Charts {
		caption := c.Title
		if c.Note != "" {
			caption += ". " + c.Note
		}
		fmt.Fprintf(&b, "<figure id=\"%s\" class=\"chart\">%s<figcaption>%s</figcaption></figure>\n",
			html.EscapeString(c.Name), inlineSVG(c.SVG), html.EscapeString(caption))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(n))
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

func htmlTable(b *strings.Builder, id string, head []string, rows [][]string) {
	fmt.Fprintf(b, "<table id=\"%s\"><tr>", id)
	for _, h := range head {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr>\n")
	for _, r := range rows {
		b.WriteString("<tr>")
		for _, c := range r {
			fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// inlineSVG drops the XML prolog so the SVG can sit inside HTML, and
// gives it a viewBox so CSS can size it.
func inlineSVG(svg []byte) string {
	s := svg
	if i := bytes.Index(s, []byte("<svg")); i > 0 {
		s = s[i:]
	}
	return string(s)
}
