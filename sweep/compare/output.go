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

// VerdictLine is the one-line summary, e.g. "verdict: REGRESSION beyond
// -5 % of total in 1 of 3 arms: qwen3.5 mi325x sglang fp8 mtp tp8 ep8".
func VerdictLine(rep *Report) string {
	switch rep.Verdict {
	case Incomplete:
		return fmt.Sprintf("verdict: INCOMPLETE: %s; no verdict is drawn from incomplete data", plural.Count(len(rep.Problems), "problem", "problems"))
	case Regression, Inconclusive:
		var names []string
		for _, a := range rep.Arms {
			if a.Verdict == rep.Verdict {
				names = append(names, a.Arm)
			}
		}
		what := "beyond"
		if rep.Verdict == Inconclusive {
			what = "not told from"
		}
		return fmt.Sprintf("verdict: %s %s %s in %d of %s: %s", rep.Verdict, what, tolLine(rep), len(names),
			plural.Count(len(rep.Arms), "arm", "arms"), strings.Join(names, "; "))
	}
	return fmt.Sprintf("verdict: PASS: no arm regresses beyond %s (%s)", tolLine(rep), plural.Count(len(rep.Arms), "arm", "arms"))
}

func tolLine(rep *Report) string {
	if rep.Metric.LowerIsBetter() {
		return fmt.Sprintf("+%g %% of %s", rep.Tolerance, rep.Metric)
	}
	return fmt.Sprintf("-%g %% of %s", rep.Tolerance, rep.Metric)
}

// WriteText writes the report for a terminal: one row per arm, the points
// of each arm (after what differs between its sides), the problems and
// the verdict line last.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s %-52s %9s %-20s %s\n", "verdict", "arm", "Δ %", "90% CI", "frontier Δ %")
	for _, a := range rep.Arms {
		fmt.Fprintf(&b, "%-13s %-52s %9s %-20s %s\n", a.Verdict, a.Arm, optPct(a.DeltaPct), ciText(a.CIPct), frontierText(a.Frontier))
	}
	for _, a := range rep.Arms {
		if len(a.Points) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %s\n", a.Arm, armNote(a))
		if len(a.Differs) > 0 {
			fmt.Fprintf(&b, "  differs: %s\n", strings.Join(a.Differs, "; "))
		}
		fmt.Fprintf(&b, "  %6s %12s %12s %9s %5s\n", "conc", "base", "head", "Δ %", "n")
		for _, p := range a.Points {
			fmt.Fprintf(&b, "  %6d %12.1f %12.1f %+9.2f %2d/%d\n", p.Conc, p.Base, p.Head, p.DeltaPct, p.BaseN, p.HeadN)
		}
	}
	writeLists(&b, rep, func(s string) string { return s })
	fmt.Fprintf(&b, "\n%s\n", VerdictLine(rep))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report for a pull request or
// $GITHUB_STEP_SUMMARY: the verdict and the arm table first, then the
// problems and, folded, each arm's points.
func WriteMarkdown(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", markdown.Cell(VerdictLine(rep)))
	b.WriteString("| verdict | arm | Δ % | 90% CI | frontier Δ % | noise | differs |\n|---|---|---:|---|---:|---|---|\n")
	for _, a := range rep.Arms {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", a.Verdict, markdown.Cell(a.Arm), optPct(a.DeltaPct), ciText(a.CIPct),
			frontierText(a.Frontier), markdown.Cell(noiseShort(a)), markdown.Cell(strings.Join(a.Differs, "; ")))
	}
	writeLists(&b, rep, markdown.Cell)
	for _, a := range rep.Arms {
		if len(a.Points) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n<details><summary>%s: %s</summary>\n\n| conc | base | head | Δ %% | n |\n|---:|---:|---:|---:|---|\n", markdown.Cell(a.Arm), markdown.Cell(armNote(a)))
		for _, p := range a.Points {
			fmt.Fprintf(&b, "| %d | %.1f | %.1f | %+.2f | %d/%d |\n", p.Conc, p.Base, p.Head, p.DeltaPct, p.BaseN, p.HeadN)
		}
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
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
	if a.NoisePct > 0 {
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
	if a.NoisePct > 0 {
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

func ciText(ci *[2]float64) string {
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
