package report

import (
	"bytes"
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
	"sweep/internal/usage"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/run"
)

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
//
// Write writes only into a report directory of its own: dir and its
// charts/ must not be symbolic links (the report would land wherever they
// point), and a summary.md or index.html already there must be one a
// report wrote (CheckDir); otherwise it is a usage error naming the fix.
func (rep *Report) Write(dir string) (string, error) {
	if err := CheckDir(dir); err != nil {
		return "", err
	}
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

// Own files: what CheckDir lets a report replace.
var (
	ownPage = atomicfile.Own{Kind: "report page", Writer: "sweep report", Example: PageFile,
		Is: func(data []byte) bool { return bytes.HasPrefix(data, []byte(pagePrefix)) }}
	ownSummary = atomicfile.Own{Kind: "report summary", Writer: "sweep report", Example: SummaryFile,
		Is: func(data []byte) bool {
			return bytes.Contains(data, []byte("\n## Sweep knees (")) && bytes.Contains(data, []byte("\n## Pareto frontier ("))
		}}
)

// pagePrefix is how every page HTML writes begins.
const pagePrefix = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sweep report</title>\n"

// CheckDir checks that Write may write the report into dir: neither dir
// nor dir/charts is a symbolic link, and its summary.md and index.html,
// where they exist, are a report's. A problem is a *usage.Error (the
// directory is --out, default DIR/report), a refusal naming the fix
// (usage.Refusef).
func CheckDir(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, ChartsDir)} {
		st, err := os.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return usage.Refusef("--out: %w; %s", err, run.OutDirFix)
		case st.Mode()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(d)
			return usage.Refusef("--out: %s is a symbolic link (to %s): sweep report writes only into a directory of its own, not through a link to another; remove the link, or give --out a directory", d, to)
		case !st.IsDir():
			return usage.Refusef("--out: %s is not a directory: give --out a directory for the report (index.html, summary.md, charts/)", d)
		}
	}
	for _, f := range []struct {
		name string
		own  atomicfile.Own
	}{{PageFile, ownPage}, {SummaryFile, ownSummary}} {
		if err := atomicfile.CheckReplace(filepath.Join(dir, f.name), f.own); err != nil {
			return usage.Refusef("%w; give --out an empty directory or one sweep report wrote", err)
		}
	}
	return nil
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

// metricLine says which throughput the report's tables and charts show.
func (rep *Report) metricLine() string {
	if rep.Metric == knee.MetricOutput {
		return "Throughput: output tokens per second per GPU (--metric output) in every table and chart."
	}
	return "Throughput: total (input + output) tokens per second per GPU (--metric total) in every table and chart."
}

// Markdown is the summary for $GITHUB_STEP_SUMMARY: first the banners
// (NoResult: only failed points; Provenance: simulated results, calibrations, probes; Incomplete:
// points a sweep has not finished), the throughput metric, a
// comparison's verdict, the knee table, the failed points with why, the
// superseded probes (an adaptive discovery's), the results made otherwise
// than their arm's reading (neither failed), why an adaptive search ran
// or skipped each point (Searched), the frontier at P90
// E2E-normalised interactivity, energy, and links to the PNG charts
// under chartsDir (relative).
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
	if len(rep.Results) == 0 {
		b.WriteString(noneYet + "\n")
	} else {
		mdTable(&b, kneeHeader, kneeRows(rep.Results))
		fmt.Fprintf(&b, "\n%s\n", kneedleNote)
	}
	if rows, noResult := failedRows(rep.Results, rep.Failed, rep.Dir); len(rows) > 0 {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", failedTitle(len(rows), noResult), failedIntro)
		mdTable(&b, failedHeader, rows)
	}
	if rows := supersededRows(rep.Results, rep.Dir); len(rows) > 0 {
		fmt.Fprintf(&b, "\n## Superseded probes (%d)\n\n%s\n\n", len(rows), supersededIntro)
		mdTable(&b, failedHeader, rows)
	}
	if rows := otherwiseRows(rep.Results, rep.Dir); len(rows) > 0 {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", otherwiseTitle(len(rows)), otherwiseIntro)
		mdTable(&b, failedHeader, rows)
	}
	if rows := searchedRows(rep.Searched); len(rows) > 0 {
		fmt.Fprintf(&b, "\n## Adaptive search: why each point ran or was skipped (%d)\n\n%s\n\n", len(rows), searchedIntro)
		mdTable(&b, searchedHeader, rows)
	}
	fmt.Fprintf(&b, "\n## Pareto frontier (%s)\n\n", knee.AxisE2ENormP90.Title())
	if len(rep.Results) == 0 {
		b.WriteString(noneYet + "\n")
	} else {
		mdTable(&b, frontierHeader(rep.Metric), frontierRows(rep.Frontiers[knee.AxisE2ENormP90]))
	}
	if rows, left := energyRows(rep.Results), campaign.EnergyLeftOut(rep.Results); len(rows) > 0 || len(left) > 0 {
		fmt.Fprintf(&b, "\n## Energy (GPU power, valid points)\n\n")
		if len(rows) > 0 {
			mdTable(&b, energyHeader(rep.Metric), rows)
		}
		if len(left) > 0 {
			if len(rows) > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s\n\n", energyLeftOutIntro)
			for _, l := range left {
				fmt.Fprintf(&b, "- %s\n", markdown.Cell(l))
			}
		}
	}
	fmt.Fprintf(&b, "\n## Charts\n\n")
	if len(rep.Charts) == 0 {
		b.WriteString(noneYet + "\n")
	}
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

// noneYet stands in a section of a report with no result (only failed
// points) for its empty table.
const noneYet = "None: no point has a result."

// banners are the lines the summary and the page lead with: where the
// results came from (Provenance) and what their sweeps have not finished
// (Incomplete).
func (rep *Report) banners() []string {
	return slices.Concat(rep.noResult(), rep.Provenance(), rep.Incomplete)
}

// noResult is the banner NoResult, when there is one.
func (rep *Report) noResult() []string {
	if rep.NoResult == "" {
		return nil
	}
	return []string{rep.NoResult}
}

// HTML is one self-contained page: the tables and every chart as inline
// SVG (no external file, script or font).
func (rep *Report) HTML() string {
	var b strings.Builder
	b.WriteString(pagePrefix)
	b.WriteString(`<style>
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
	for _, line := range rep.noResult() {
		fmt.Fprintf(&b, "<p class=\"no-result\"><strong>%s</strong></p>\n", html.EscapeString(line))
	}
	for _, line := range rep.Provenance() {
		fmt.Fprintf(&b, "<p class=\"provenance\"><strong>%s</strong></p>\n", html.EscapeString(line))
	}
	for _, line := range rep.Incomplete {
		fmt.Fprintf(&b, "<p class=\"incomplete\"><strong>%s</strong></p>\n", html.EscapeString(line))
	}
	fmt.Fprintf(&b, "<p>%s. %s</p>\n", plural.Count(len(rep.Results), "arm", "arms"), html.EscapeString(rep.metricLine()))
	rep.comparisonHTML(&b)
	b.WriteString("<h2>Knees</h2>\n")
	if len(rep.Results) == 0 {
		fmt.Fprintf(&b, "<p>%s</p>\n", noneYet)
	} else {
		htmlTable(&b, "knees", kneeHeader, kneeRows(rep.Results))
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(kneedleNote))
	}
	if rows, noResult := failedRows(rep.Results, rep.Failed, rep.Dir); len(rows) > 0 {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<p>%s</p>\n", html.EscapeString(failedTitle(len(rows), noResult)), html.EscapeString(failedIntro))
		htmlTable(&b, "failed", failedHeader, rows)
	}
	if rows := supersededRows(rep.Results, rep.Dir); len(rows) > 0 {
		fmt.Fprintf(&b, "<h2>Superseded probes (%d)</h2>\n<p>%s</p>\n", len(rows), html.EscapeString(supersededIntro))
		htmlTable(&b, "superseded", failedHeader, rows)
	}
	if rows := otherwiseRows(rep.Results, rep.Dir); len(rows) > 0 {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<p>%s</p>\n", html.EscapeString(otherwiseTitle(len(rows))), html.EscapeString(otherwiseIntro))
		htmlTable(&b, "made-otherwise", failedHeader, rows)
	}
	if rows := searchedRows(rep.Searched); len(rows) > 0 {
		fmt.Fprintf(&b, "<h2>Adaptive search: why each point ran or was skipped (%d)</h2>\n<p>%s</p>\n", len(rows), html.EscapeString(searchedIntro))
		htmlTable(&b, "searched", searchedHeader, rows)
	}
	fmt.Fprintf(&b, "<h2>Pareto frontier (%s)</h2>\n", html.EscapeString(knee.AxisE2ENormP90.Title()))
	if len(rep.Results) == 0 {
		fmt.Fprintf(&b, "<p>%s</p>\n", noneYet)
	} else {
		htmlTable(&b, "frontier", frontierHeader(rep.Metric), frontierRows(rep.Frontiers[knee.AxisE2ENormP90]))
	}
	if rows, left := energyRows(rep.Results), campaign.EnergyLeftOut(rep.Results); len(rows) > 0 || len(left) > 0 {
		b.WriteString("<h2>Energy (GPU power, valid points)</h2>\n")
		if len(rows) > 0 {
			htmlTable(&b, "energy", energyHeader(rep.Metric), rows)
		}
		if len(left) > 0 {
			fmt.Fprintf(&b, "<p>%s</p>\n<ul id=\"energy-left-out\">\n", html.EscapeString(energyLeftOutIntro))
			for _, l := range left {
				fmt.Fprintf(&b, "<li>%s</li>\n", html.EscapeString(l))
			}
			b.WriteString("</ul>\n")
		}
	}
	b.WriteString("<h2>Charts</h2>\n")
	if len(rep.Charts) == 0 {
		fmt.Fprintf(&b, "<p>%s</p>\n", noneYet)
	}
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

// inlineSVG drops the XML prolog so the SVG can sit inside HTML, and
// gives it a viewBox so CSS can size it.
func inlineSVG(svg []byte) string {
	s := svg
	if i := bytes.Index(s, []byte("<svg")); i > 0 {
		s = s[i:]
	}
	return string(s)
}
