package gha

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sweep/internal/markdown"
	"sweep/internal/plural"
	"sweep/internal/pyjson"
	"sweep/metrics/power"
	"sweep/metrics/result"
)

// WriteSummary writes the Markdown summary of a sweep for
// $GITHUB_STEP_SUMMARY: what the labels asked for, the legs skipped, and one
// row per result file found under dir (result.ReadDir; other files are left
// out, files with the result keys that cannot be read are listed as
// unreadable).
func WriteSummary(w io.Writer, fan *FanoutJSON, dir string) error {
	rs, problems, err := result.ReadDir(context.Background(), dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	base := func(f *result.File) string { return filepath.Base(f.Path) }
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := base(rs[i]), base(rs[j])
		if a[:strings.LastIndex(a, "_conc")+1] != b[:strings.LastIndex(b, "_conc")+1] {
			return a < b
		}
		return rs[i].Conc < rs[j].Conc
	})
	b := &strings.Builder{}
	b.WriteString("## sweep\n\n")
	if fan != nil {
		if !fan.Sweep {
			b.WriteString("No sweep label on this pull request: nothing ran.\n")
			_, err := io.WriteString(w, b.String())
			return err
		}
		fmt.Fprintf(b, "Label %s", markdown.Cell(fan.Primary))
		if fan.AgentxFast {
			b.WriteString(" with `agentx-fast`")
		}
		fmt.Fprintf(b, ": %s run.\n\n", plural.Count(fan.Runs(), "job", "jobs"))
		for _, n := range fan.NotRun {
			fmt.Fprintf(b, "- not run: %s of %s: %s\n", plural.Count(n.Jobs, "job", "jobs"), markdown.Cell(n.Family), markdown.Cell(n.Reason))
		}
		for _, s := range fan.Skipped {
			fmt.Fprintf(b, "- skipped %s of %s on %s: %s\n", plural.Count(s.Jobs, "job", "jobs"), markdown.Cell(s.Bucket), markdown.Cell(s.Runner), markdown.Cell(s.Reason))
		}
		if len(fan.Skipped)+len(fan.NotRun) > 0 {
			b.WriteString("\n")
		}
	}
	if len(rs) == 0 {
		b.WriteString("No result files were collected.\n")
	} else {
		b.WriteString("| result | conc | tok/s/GPU | output tok/s/GPU | TTFT p50 (s) | interactivity p50 (tok/s) | power_valid | J/output tok | valid |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, r := range rs {
			m := r.RequestMetrics
			var tot, outp *pyjson.Rounded
			if m.Throughput.PerGPU != nil {
				tot, outp = m.Throughput.PerGPU.TotalTputTPS, m.Throughput.PerGPU.OutputTputTPS
			}
			valid := "yes"
			switch {
			case r.ValidStated && !r.Valid:
				valid = "no: " + strings.Join(r.InvalidReasons, "; ")
			case !r.ValidStated:
				valid = "(not stated)"
			}
			if r.Simulated {
				valid += " (simulated)"
			}
			powerValid, jpt := "–", "–"
			if r.Fields != nil {
				powerValid = fmt.Sprint(r.Fields.Valid)
			}
			if j := power.JoulesPerOutputTokenOf(r.Fields); j != nil {
				jpt = fmt.Sprintf("%.3f", *j)
			}
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", markdown.Cell(strings.TrimSuffix(base(r), ".json")), r.Conc,
				num(tot, 1), num(outp, 1), num(m.Latency.TTFT.P50, 3), num(m.Latency.Intvty.P50, 1), powerValid, jpt, markdown.Cell(valid))
		}
	}
	for _, e := range problems {
		fmt.Fprintf(b, "\n- unreadable: %s", markdown.Cell(fmt.Sprint(e)))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func num(v *pyjson.Rounded, prec int) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, float64(*v))
}
