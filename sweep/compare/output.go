package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sweep/internal/markdown"

	"sweep/internal/plural"
)

// WriteJSON writes the report in its documented JSON form.
func WriteJSON(w io.Writer, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// Formats are the output formats Write takes.
var Formats = []string{"text", "json", "markdown"}

// Write writes rep in format (one of Formats; any other is text).
func Write(w io.Writer, rep *Report, format string) error {
	switch format {
	case "json":
		return WriteJSON(w, rep)
	case "markdown":
		return WriteMarkdown(w, rep)
	}
	return WriteText(w, rep)
}

// VerdictLine is the one-line summary, e.g. "verdict: INCOMPLETE: 7
// problems (7 length-mismatch); no verdict is drawn from incomplete data"
// or "verdict: REGRESSION beyond
// -5 % of total in 1 of 3 arms (Holm: 90 % family-wise over 3 arms, 99 %
// over their 21 points): qwen3.5 mi325x sglang fp8 mtp tp8 ep8 (at c64)",
// a regressing arm named with its points whose own interval lies beyond
// the tolerance, and the correction the REGRESSION claims are read at
// named.
func VerdictLine(rep *Report) string {
	switch rep.Verdict {
	case Incomplete:
		return fmt.Sprintf("verdict: INCOMPLETE: %s (%s); no verdict is drawn from incomplete data", plural.Count(len(rep.Problems), "problem", "problems"), problemKinds(rep.Problems))
	case Regression, Inconclusive:
		var names []string
		for _, a := range rep.Arms {
			if a.Verdict == rep.Verdict {
				names = append(names, a.Arm+regressingText(a))
			}
		}
		what := "beyond"
		if rep.Verdict == Inconclusive {
			what = "not told from"
		}
		return fmt.Sprintf("verdict: %s %s %s in %d of %s%s: %s", rep.Verdict, what, tolLine(rep), len(names),
			plural.Count(len(rep.Arms), "arm", "arms"), familyNote(rep), strings.Join(names, "; "))
	}
	side := "above"
	if rep.Metric.LowerIsBetter() {
		side = "below"
	}
	return fmt.Sprintf("verdict: PASS: no arm regresses beyond %s (%s, %s 90 %% interval %s it)", tolLine(rep),
		plural.Count(len(rep.Arms), "arm", "arms"), plural.Word(len(rep.Arms), "its", "each one's"), side)
}

// problemKinds counts the problems by kind, in the order of their first:
// "7 length-mismatch" or "2 missing-point, 1 invalid-result".
func problemKinds(ps []Problem) string {
	var kinds []string
	n := map[string]int{}
	for _, p := range ps {
		if n[p.Kind] == 0 {
			kinds = append(kinds, p.Kind)
		}
		n[p.Kind]++
	}
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(kinds, ", ")
}

// familyNote names the correction the REGRESSION claims are read at
// (Correction): " (Holm: 90 % family-wise over 12 arms, 99 % over their
// 84 points)"; "" when no arm has an interval.
func familyNote(rep *Report) string {
	c := rep.Correction
	if c.Arms == 0 {
		return ""
	}
	arms := plural.Count(c.Arms, "arm", "arms")
	if c.Arms < len(rep.Arms) {
		arms = "the " + arms + " with an interval"
	}
	return fmt.Sprintf(" (Holm: %g %% family-wise over %s, %g %% over %s %s)", c.ArmConfidencePct, arms,
		c.PointConfidencePct, plural.Word(c.Arms, "its", "their"), plural.Count(c.Points, "point", "points"))
}

// regressingText names the points of a REGRESSION arm whose own
// interval lies beyond the tolerance: " (at c48 and c64)".
func regressingText(a *ArmReport) string {
	if a.Verdict != Regression {
		return ""
	}
	var cs []int
	for _, p := range a.Points {
		if p.Verdict == Regression {
			cs = append(cs, p.Conc)
		}
	}
	if len(cs) == 0 {
		return ""
	}
	return " (at " + concList(cs) + ")"
}

func tolLine(rep *Report) string {
	if rep.Metric.LowerIsBetter() {
		return fmt.Sprintf("+%g %% of %s", rep.Tolerance, rep.Metric)
	}
	return fmt.Sprintf("-%g %% of %s", rep.Tolerance, rep.Metric)
}

// WriteText writes the report for a terminal: one row per arm, then per
// arm what decided its verdict, its noise, what differs between its sides
// (also for an arm with no paired point), its frontier's coverage and its
// points with their intervals and verdicts, the problems and the verdict
// line last.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %-52s %9s %-20s %-29s %9s %s\n", "verdict", "arm", "Δ %", "90% CI", ArmFamilyHeader, "peak Δ %", "frontier Δ %")
	for _, a := range rep.Arms {
		fmt.Fprintf(&b, "%-13s %-52s %9s %-20s %-29s %9s %s\n", a.Verdict, a.Arm, optPct(a.DeltaPct), CIText(a.CIPct),
			FamilyCIText(a.FamilyCIPct, a.FamilyConfidencePct), optPct(a.Frontier.PeakDeltaPct), frontierText(a.Frontier))
	}
	for _, a := range rep.Arms {
		if len(a.Points) == 0 && len(a.Differs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %s\n", a.Arm, armNote(a))
		if a.Why != "" {
			fmt.Fprintf(&b, "  %s: %s\n", a.Verdict, a.Why)
		}
		if len(a.Differs) > 0 {
			fmt.Fprintf(&b, "  differs: %s\n", strings.Join(a.Differs, "; "))
		}
		if len(a.Points) == 0 {
			continue // nothing paired: its problems say why, what differs may
		}
		if f := frontierNote(a.Frontier); f != "" {
			fmt.Fprintf(&b, "  frontier: %s\n", f)
		}
		unit := rep.Metric.Unit()
		fmt.Fprintf(&b, "  %6s %14s %14s %9s %-29s %5s  %s\n", "conc", "base "+unit, "head "+unit, "Δ %", PointFamilyHeader, "n", "verdict")
		for _, p := range a.Points {
			fmt.Fprintf(&b, "  %6d %14s %14s %+9.2f %-29s %2d/%-2d  %s\n", p.Conc, rep.Metric.Format(p.Base), rep.Metric.Format(p.Head),
				p.DeltaPct, FamilyCIText(p.CIPct, p.ConfidencePct), p.BaseN, p.HeadN, pointFlag(p))
		}
	}
	writeLists(&b, rep, func(s string) string { return s })
	fmt.Fprintf(&b, "\ncorrection: %s\n", rep.Correction.Rule)
	fmt.Fprintf(&b, "\n%s\n", VerdictLine(rep))
	_, err := io.WriteString(w, b.String())
	return err
}

// ArmFamilyHeader and PointFamilyHeader head the columns of the
// intervals that decide REGRESSION (Correction): the arms' 90 %
// family-wise, the points' 99 %, each with its own confidence
// (FamilyCIText). sweep report's comparison table heads its columns so
// too.
const (
	ArmFamilyHeader   = "90%-family CI"
	PointFamilyHeader = "99%-family CI"
)

// FamilyCIText is an interval with its own confidence, as the reports
// print ArmReport.FamilyCIPct and PointReport.CIPct: "[-9.71, -7.11]
// 99.167%"; "–" without one.
func FamilyCIText(ci *[2]float64, confPct float64) string {
	if ci == nil {
		return "–"
	}
	return fmt.Sprintf("%s %g%%", CIText(ci), confPct)
}

// WriteMarkdown writes the report for a pull request or
// $GITHUB_STEP_SUMMARY: the verdict and the arm table first, then the
// problems and, folded, each arm's points.
func WriteMarkdown(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", markdown.Cell(VerdictLine(rep)))
	fmt.Fprintf(&b, "| verdict | arm | Δ %% | 90%% CI | %s | peak Δ %% | frontier Δ %% | noise | differs |\n|---|---|---:|---|---|---:|---:|---|---|\n", ArmFamilyHeader)
	for _, a := range rep.Arms {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", a.Verdict, markdown.Cell(a.Arm), optPct(a.DeltaPct), CIText(a.CIPct),
			FamilyCIText(a.FamilyCIPct, a.FamilyConfidencePct), optPct(a.Frontier.PeakDeltaPct), frontierText(a.Frontier), markdown.Cell(noiseShort(a)), markdown.Cell(strings.Join(a.Differs, "; ")))
	}
	fmt.Fprintf(&b, "\nCorrection: %s\n", markdown.Cell(rep.Correction.Rule))
	writeLists(&b, rep, markdown.Cell)
	unit := rep.Metric.Unit()
	for _, a := range rep.Arms {
		if len(a.Points) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n<details><summary>%s: %s</summary>\n\n", markdown.HTML(a.Arm), markdown.HTML(armNote(a)))
		if a.Why != "" {
			fmt.Fprintf(&b, "%s: %s\n\n", a.Verdict, markdown.Cell(a.Why))
		}
		if f := frontierNote(a.Frontier); f != "" {
			fmt.Fprintf(&b, "Frontier: %s\n\n", markdown.Cell(f))
		}
		fmt.Fprintf(&b, "| conc | base %s | head %s | Δ %% | %s | n | verdict |\n|---:|---:|---:|---:|---|---|---|\n", markdown.Cell(unit), markdown.Cell(unit), PointFamilyHeader)
		for _, p := range a.Points {
			fmt.Fprintf(&b, "| %d | %s | %s | %+.2f | %s | %d/%d | %s |\n", p.Conc, rep.Metric.Format(p.Base), rep.Metric.Format(p.Head),
				p.DeltaPct, FamilyCIText(p.CIPct, p.ConfidencePct), p.BaseN, p.HeadN, pointFlag(p))
		}
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pointFlag is a point's verdict, marked when the paired scatter left it
// out as not uniform; "–" without a noise estimate or past BASE's cliff.
func pointFlag(p PointReport) string {
	s := string(p.Verdict)
	if s == "" {
		s = "–"
	}
	if p.PastBaseCliff {
		s += " (past BASE's cliff: not judged)"
	}
	if p.NotUniform {
		s += " (not uniform)"
	}
	return s
}

// frontierNote is the frontier's axis and coverage, or why there is
// none.
func frontierNote(f FrontierReport) string {
	if f.Coverage == "" {
		return f.Reason
	}
	return fmt.Sprintf("%s: %s", f.Axis.Title(), f.Coverage)
}

func writeLists(b *strings.Builder, rep *Report, esc func(string) string) {
	if len(rep.Problems) > 0 {
		fmt.Fprintf(b, "\nProblems (%d):\n", len(rep.Problems))
		for _, p := range rep.Problems {
			fmt.Fprintf(b, "- %s\n", esc(p.String()))
		}
	}
	for _, a := range rep.Arms {
		for _, x := range a.Excluded {
			fmt.Fprintf(b, "\nLeft out: %s, conc %d, %s result %s: %s\n", esc(a.Arm), x.Conc, x.Side, esc(x.File), esc(x.Reason))
		}
	}
	if len(rep.OnlyInHead) > 0 {
		fmt.Fprintf(b, "\nOnly in HEAD (not compared): %s\n", esc(strings.Join(rep.OnlyInHead, "; ")))
	}
}

func armNote(a *ArmReport) string {
	s := a.NoiseSource
	if a.CIPct != nil {
		s = fmt.Sprintf("noise %.2f %% per result from %s", a.NoisePct, s)
	}
	if a.ReplicatesNeeded > 0 {
		s += fmt.Sprintf("; about %d results per point and side would decide it", a.ReplicatesNeeded)
	}
	if len(a.OnlyInHead) > 0 {
		s += fmt.Sprintf("; only HEAD has conc %v", a.OnlyInHead)
	}
	return s
}

func noiseShort(a *ArmReport) string {
	src, _, _ := strings.Cut(a.NoiseSource, ":")
	if a.CIPct != nil {
		return fmt.Sprintf("%.2f %% (%s)", a.NoisePct, src)
	}
	return src
}

func optPct(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%+.2f", *v)
}

// CIText is an interval in percent as the reports print it: "[-2.26,
// -1.43]"; "–" without one.
func CIText(ci *[2]float64) string {
	if ci == nil {
		return "–"
	}
	return fmt.Sprintf("[%+.2f, %+.2f]", ci[0], ci[1])
}

func frontierText(f FrontierReport) string {
	if !f.Covered {
		return "–"
	}
	return optPct(f.DeltaPct)
}
