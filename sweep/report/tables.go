package report

import (
	"fmt"
	"html"
	"path/filepath"
	"slices"
	"strings"

	"sweep/internal/markdown"
	"sweep/internal/plural"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
)

// cOrDash is a concurrency as the report's tables print it (c32), or a
// dash for none; the row builders below make those tables' rows.
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
		if r.NoBend() {
			kneedle = knee.NoBend
		}
		excl := 0
		for _, p := range slices.Concat(r.Points, r.MadeOtherwise) {
			excl += len(p.Excluded)
		}
		rows = append(rows, []string{r.Arm.Identity.Label(), string(r.Status), cOrDash(r.Knee), cOrDash(r.Peak),
			kneedle, fmt.Sprint(excl), cliff, r.Reason})
	}
	return rows
}

var kneeHeader = []string{"arm", "status", "knee", "peak", "Kneedle", "excluded files", "cliff", "reason"}

// kneedleNote says under the knee table what its Kneedle column holds,
// in the words of sweep knees' help and the README.
const kneedleNote = "Kneedle: the knee kneed's KneeLocator (its defaults) finds on the fitted rising side, " +
	"a diagnostic beside the knee for comparison with InferenceX's tooling; " +
	"\"" + knee.NoBend + "\": it finds none there (fewer than 4 points on the rising side, or no bend in them); " +
	"– for an unsaturated or insufficient arm, which has no knee to look for."

// failedRows lists the points the knees leave out
// (campaign.LeftOutOf: in its order), with why: every result file left
// out because it failed (knee.Point.Excluded; not a probe its
// full-length run superseded nor a result made otherwise than its arm's
// reading, which are no failures: supersededRows, otherwiseRows): the
// arm, the point (campaign.LeftOut.Name, with "other results used" when
// the point has usable ones too), the
// reason and the file (relative to dir when under it); and each point of
// failed (its sweep's journal's failed points with no result the knees
// read) with the journal's error and the number of its attempts, its
// file "no result file" (or the result file the knees did not read).
// noResult counts the rows of failed.
func failedRows(rs []*knee.Result, failed []campaign.FailedPoint, dir string) (rows [][]string, noResult int) {
	for _, l := range campaign.LeftOutOf(rs, failed) {
		if f := l.Failed; f != nil {
			file := "no result file"
			if f.Result != "" {
				file = relTo(dir, f.Result) + " (not read)"
			}
			rows = append(rows, []string{f.ArmLabel(), f.Name(), f.Why(), file})
			noResult++
			continue
		}
		if l.Superseded || l.OtherMeasurement {
			continue
		}
		point := l.Name()
		if l.Point.Usable {
			point += " (other results used)"
		}
		rows = append(rows, []string{l.Arm, point, l.Exclusion.Reason, relTo(dir, l.Exclusion.File)})
	}
	return rows, noResult
}

// supersededRows lists the probes their full-length runs superseded
// (campaign.LeftOutOf's, in its order), as sweep knees lists them apart
// from the failed points: the arm, the point (campaign.LeftOut.Name:
// "c4 (probe, superseded)"), the reason and the file (relative to dir
// when under it).
func supersededRows(rs []*knee.Result, dir string) [][]string {
	var rows [][]string
	for _, l := range campaign.LeftOutOf(rs, nil) {
		if l.Superseded {
			rows = append(rows, []string{l.Arm, l.Name(), l.Exclusion.Reason, relTo(dir, l.Exclusion.File)})
		}
	}
	return rows
}

// otherwiseRows lists the results made otherwise than their arm's
// reading (campaign.LeftOut.OtherMeasurement, in LeftOutOf's order), as
// sweep knees lists them under "made otherwise": the arm, the point
// ("c32 (other results used)" when the point has a reading from its
// other results), what differed and the file (relative to dir when under
// it).
func otherwiseRows(rs []*knee.Result, dir string) [][]string {
	var rows [][]string
	for _, l := range campaign.LeftOutOf(rs, nil) {
		if !l.OtherMeasurement || l.Superseded {
			continue
		}
		point := l.Name()
		if !l.NoReading && l.Point.Usable {
			point += " (other results used)"
		}
		rows = append(rows, []string{l.Arm, point, l.Exclusion.Reason, relTo(dir, l.Exclusion.File)})
	}
	return rows
}

// otherwiseIntro says what the table of results made otherwise lists,
// in the words of sweep knees' heading (campaign.MadeOtherwiseWhy).
const otherwiseIntro = "Left out of the knees and fits, " + campaign.MadeOtherwiseWhy +
	". Each row says what differed; a point with only such results has no reading and no mark on its arm's chart."

// supersededIntro says what the superseded probes' table lists.
const supersededIntro = "An adaptive discovery's short probes that its search ran again at the full length: each kept beside its point (RESULT_FILENAME.probe/) and counted among the knees' excluded files, but never read and no failure; the full-length run is the point's reading."

// searchedHeader, searchedRows and searchedIntro are the table of why an
// adaptive discovery's search ran or skipped each point
// (campaign.Knees.Searched, in its journal's order): the arm, the point,
// how it ran (probe, full length, skipped) and why.
var searchedHeader = []string{"arm", "point", "ran", "why"}

func searchedRows(ps []campaign.SearchedPoint) [][]string {
	var rows [][]string
	for _, p := range ps {
		rows = append(rows, []string{p.Arm, fmt.Sprintf("c%d", p.Conc), p.Ran(), p.Why})
	}
	return rows
}

const searchedIntro = "The rule of the adaptive search that asked for each point's last run, with the numbers it read, and why it needed none of the points it skipped (the journal's point_start and point_skip reasons)."

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
	"A point that failed before it wrote a result (its server did not start, its client crashed, it was killed) is listed with the error its sweep's journal records, and marked × as well on its arm's chart (an arm with no usable result has no chart)."

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

// otherwiseTitle is the title of the table of results made otherwise:
// "Results made otherwise (2)".
func otherwiseTitle(rows int) string { return fmt.Sprintf("Results made otherwise (%d)", rows) }

func frontierRows(fs []*knee.Frontier) [][]string {
	var rows [][]string
	for _, f := range fs {
		for _, p := range f.OnFrontier() {
			rows = append(rows, []string{f.Group, p.Result.Arm.Identity.Parallelism(), p.Result.PointName(p.Conc),
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
			point := r.PointName(p.Conc)
			if p.Conc == r.Knee {
				point += " (knee)"
			}
			rows = append(rows, []string{r.Arm.Identity.Label(), point, fmt.Sprintf("%.4g", *p.JoulesPerOutputToken),
				fmt.Sprintf("%.4g", *p.TokensPerJoule), tput})
		}
	}
	return rows
}

// energyLeftOutIntro heads the list of the points the energy table
// leaves out (campaign.EnergyLeftOut) in the report.
const energyLeftOutIntro = "Left out (power measured, not valid): " + campaign.EnergyLeftOutWhy + "."

func energyHeader(metric knee.Metric) []string {
	return []string{"arm", "point", "J per output token", "output tokens per J", tputHeader(metric)}
}

func frontierHeader(metric knee.Metric) []string {
	return []string{"config", "arm", "point", "interactivity (tok/s/user)", tputHeader(metric)}
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
