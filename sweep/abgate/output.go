package abgate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sweep/internal/plural"
)

// WriteJSON writes the report in the documented JSON form (indented, one
// trailing newline).
func WriteJSON(w io.Writer, rep *Report) error { return writeIndented(w, rep) }

// writeIndented writes v as JSON indented by two spaces, with one
// trailing newline.
func writeIndented(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteTable writes the report as a Markdown table a person pastes into a
// pull request: per category the cases, A and B in percent, Δ in points,
// its own 90 % CI and the flips (an interrupted leg's: over its complete
// replicates, labelled partial first); then the overall rows, the arms'
// servers, what resumed runs moved aside, the problems, the notes and,
// last, the verdict line.
func WriteTable(w io.Writer, rep *Report) error {
	var b strings.Builder
	if rep.Simulated != nil && *rep.Simulated {
		b.WriteString("**Simulated**: sweep's simulated engines and router, and sweep sim-bfcl in place of bfcl (sweep ab run --simulate): the accuracies are the leg's seeded case model, not a measurement of " + rep.Model + ".\n\n")
	}
	if p := rep.Partial; p != nil {
		incomplete := "none"
		if len(p.Incomplete) > 0 {
			incomplete = strings.Join(p.Incomplete, ", ")
		}
		fmt.Fprintf(&b, "**Partial, no verdict**: the leg was interrupted; the rows are what its complete replicates alone measured (A: %s; B: %s), not the leg's result. Not complete: %s.\n\n",
			rootsText(p.Complete.A), rootsText(p.Complete.B), incomplete)
	}
	b.WriteString("| category | cases | A % | B % | Δ pp | 90% CI | A✓B✗ | A✗B✓ | infra A/B |\n")
	b.WriteString("|---|---:|---:|---:|---:|---|---:|---:|---|\n")
	for _, c := range rep.Categories {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s/%s |\n", c.Category, c.Cases,
			pct(c.A), pct(c.B), pts(c.Delta), ci(c.CI90), count(c.APassBFail), count(c.AFailBPass),
			count(c.InfraErrorsA), count(c.InfraErrorsB))
	}
	cases, flipsA, flipsB := 0, 0, 0
	for _, c := range rep.Categories {
		if c.Clean {
			cases += c.Cases
		}
	}
	flipsA, flipsB = rep.Primary.ABetter, rep.Primary.BBetter
	if rep.Verdict == Incomplete {
		b.WriteString("| **unweighted** | | – | – | – | | | | |\n")
		b.WriteString("| **weighted (primary)** | | – | – | – | | | | |\n")
	} else {
		u, wt := rep.Overall.Unweighted, rep.Overall.Weighted
		fmt.Fprintf(&b, "| **unweighted** | %d | %s | %s | %s | | | | |\n", cases, pct(u.A), pct(u.B), pts(u.Delta))
		fmt.Fprintf(&b, "| **weighted (primary)** | %d | %s | %s | %s | %s | %d | %d | |\n", cases, pct(wt.A), pct(wt.B), pts(wt.Delta),
			ci(rep.Primary.CI90), flipsA, flipsB)
	}
	fmt.Fprintf(&b, "\nA: %s, B: %s; tolerance %.2f points; CI: stratified paired bootstrap", plural.Count(rep.ReplicatesA, "root", "roots"), plural.Count(rep.ReplicatesB, "root", "roots"), rep.Tolerance)
	if rep.Primary.McNemarP != nil {
		fmt.Fprintf(&b, "; McNemar exact one-sided p (B worse) = %.3g", *rep.Primary.McNemarP)
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "\nModel %s; roots A: %s; B: %s.", rep.Model, rootsText(rep.Roots.A), rootsText(rep.Roots.B))
	switch {
	case rep.Simulated == nil:
	case *rep.Simulated:
		b.WriteString(" Simulated: yes.")
	default:
		b.WriteString(" Simulated: no (real engines and bfcl).")
	}
	b.WriteString("\n")
	writeServers(&b, rep.Servers)
	if len(rep.MovedAside) > 0 {
		fmt.Fprintf(&b, "\nMoved aside by resumed runs and kept (never read; remove them by hand once not needed): %s.\n", strings.Join(rep.MovedAside, ", "))
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintf(&b, "\nProblems (%d):\n", len(rep.Problems))
		for _, p := range rep.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "\nNote: %s.\n", n)
	}
	fmt.Fprintf(&b, "\n%s\n", VerdictLine(rep))
	_, err := io.WriteString(w, b.String())
	return err
}

// VerdictLine is the one-line summary of the report, e.g.
// "verdict: PASS: weighted Δ +0.05 pp, 90% CI [-0.52, +0.61], tolerance -2.00".
func VerdictLine(rep *Report) string {
	if rep.Verdict == Incomplete {
		return fmt.Sprintf("verdict: INCOMPLETE: %s; no overall result is computed from incomplete data", plural.Count(len(rep.Problems), "problem", "problems"))
	}
	rel := map[Decision]string{Passed: "lower bound above", Regression: "upper bound below", Inconclusive: "interval contains"}[rep.Verdict]
	return fmt.Sprintf("verdict: %s: weighted Δ %s pp, 90%% CI %s, %s -%.2f", rep.Verdict, pts(rep.Primary.Delta), ci(rep.Primary.CI90), rel, rep.Tolerance)
}

// rootsText is an arm's roots, comma-separated, or "none" (an arm an
// interrupted leg never started).
func rootsText(roots []string) string {
	if len(roots) == 0 {
		return "none"
	}
	return strings.Join(roots, ", ")
}

func pct(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *v)
}

func pts(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%+.2f", *v)
}

func ci(v *[2]float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("[%+.2f, %+.2f]", v[0], v[1])
}

func count(v *int) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprint(*v)
}
