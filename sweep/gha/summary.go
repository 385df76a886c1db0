package gha

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sweep/configs"
	"sweep/internal/markdown"
	"sweep/internal/plural"
	"sweep/internal/pyjson"
	"sweep/internal/usage"
	"sweep/metrics/power"
	"sweep/metrics/result"
)

// SummaryOutcome is what WriteSummary found wanting: the points of the
// fan-out's run jobs that left no result file (Missing, as the summary
// names them) and the result files that cannot be read (Unreadable).
type SummaryOutcome struct {
	Missing    []string
	Unreadable int
}

// Incomplete reports whether a result is missing or unreadable.
func (o SummaryOutcome) Incomplete() bool { return len(o.Missing) > 0 || o.Unreadable > 0 }

// expectedPoint is a point of a run job of the fan-out that writes a
// result file (its result artifact), and what found it.
type expectedPoint struct {
	family, key string
	point       Point
	found       bool
}

// matches reports whether name (a result file's name without .json) is
// the point's RESULT_FILENAME on some runner.
func (e *expectedPoint) matches(name string) bool {
	pre, post, ok := strings.Cut(e.point.ResultFilename, RunnerPlaceholder)
	if !ok {
		return name == e.point.ResultFilename
	}
	return len(name) > len(pre)+len(post) && strings.HasPrefix(name, pre) && strings.HasSuffix(name, post) &&
		!strings.Contains(name[len(pre):len(name)-len(post)], "/")
}

// expectedPoints are the points of the jobs the workflow runs (the canary
// and the workflow's families) that write a result file: the agentic
// ones, not the eval-only ones. The not-run families' points (NotRun:
// fixed-seq-len, multi-node) are not expected.
func (f *FanoutJSON) expectedPoints() []*expectedPoint {
	var out []*expectedPoint
	add := func(family string, jobs []Job) {
		for _, j := range jobs {
			for _, p := range j.Points {
				if p.writesResult() {
					out = append(out, &expectedPoint{family: family, key: j.ConfigKey, point: p})
				}
			}
		}
	}
	add("canary", f.Canary)
	for _, fam := range workflowFamilies {
		add(fam, f.Jobs[fam])
	}
	return out
}

// notRunFamily returns the not-run family (NotRun) one of whose points
// name (a result file's name without .json) is, or "".
func (f *FanoutJSON) notRunFamily(name string) string {
	for _, n := range f.NotRun {
		for _, j := range f.Jobs[n.Family] {
			for _, p := range j.Points {
				if (&expectedPoint{point: p}).matches(name) {
					return n.Family
				}
			}
		}
	}
	return ""
}

// WriteSummary writes the Markdown summary of a sweep for
// $GITHUB_STEP_SUMMARY: what the labels asked for, the families not run
// (with their config keys and why), the legs skipped, and one
// row per result file found under dir (result.ReadDir; other files are left
// out). It then names the points of the fan-out's run jobs that left no
// result file, the result files found more than once with the same bytes
// (listed once), those of a point the workflow does not run (NotRun) or
// that the fan-out has no point for, and the files with
// the result keys that cannot be read; the text ends with a newline. A dir
// that is not a directory, or does not exist when there is no fan-out to
// name what is missing, is a *usage.Error; with a fan-out, one that does
// not exist holds no results.
func WriteSummary(w io.Writer, fan *FanoutJSON, dir string) (SummaryOutcome, error) {
	var outcome SummaryOutcome
	st, err := os.Stat(dir)
	absent := errors.Is(err, fs.ErrNotExist)
	switch {
	case absent && fan == nil:
		return outcome, usage.Errorf("RESULTS_DIR %s does not exist: give the directory the results were downloaded into", dir)
	case err == nil && !st.IsDir():
		return outcome, usage.Errorf("RESULTS_DIR %s is a file, not a directory: give the directory the results were downloaded into", dir)
	}
	b := &strings.Builder{}
	b.WriteString("## sweep\n\n")
	if fan != nil && !fan.Sweep {
		b.WriteString("No sweep label on this pull request: nothing ran.\n")
		_, err := io.WriteString(w, b.String())
		return outcome, err
	}
	var rs []*result.File
	var problems []error
	if !absent { // none downloaded: every point is missing
		if rs, problems, err = result.ReadDir(context.Background(), dir); err != nil {
			return outcome, err
		}
	}
	rs, dups := dedupe(rs)
	base := func(f *result.File) string { return filepath.Base(f.Path) }
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := base(rs[i]), base(rs[j])
		if a[:strings.LastIndex(a, "_conc")+1] != b[:strings.LastIndex(b, "_conc")+1] {
			return a < b
		}
		return rs[i].Conc < rs[j].Conc
	})
	var expected []*expectedPoint
	if fan != nil {
		expected = fan.expectedPoints()
		fmt.Fprintf(b, "Label %s", markdown.Cell(fan.Primary))
		if fan.AgentxFast {
			b.WriteString(" with `agentx-fast`")
		}
		fmt.Fprintf(b, ": %s run.\n\n", plural.Count(fan.Runs(), "job", "jobs"))
		for _, n := range fan.NotRun {
			fmt.Fprintf(b, "- not run: %s of %s (%s): %s\n", plural.Count(n.Jobs, "job", "jobs"), markdown.Cell(n.Family), markdown.Cell(strings.Join(n.ConfigKeys, ", ")), markdown.Cell(n.Reason))
		}
		for _, s := range fan.Skipped {
			fmt.Fprintf(b, "- skipped %s of %s on %s: %s\n", plural.Count(s.Jobs, "job", "jobs"), markdown.Cell(s.Bucket), markdown.Cell(s.Runner), markdown.Cell(s.Reason))
		}
		if len(fan.Skipped)+len(fan.NotRun) > 0 {
			b.WriteString("\n")
		}
	}
	// Which point each file is; a file of no point is named below.
	var stray []string
	found := func(path string) bool {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		hit := false
		for _, e := range expected {
			if e.matches(name) {
				e.found, hit = true, true
			}
		}
		return hit
	}
	for _, r := range rs {
		if !found(r.Path) && fan != nil {
			stray = append(stray, r.Path)
		}
	}
	for _, e := range problems {
		if ce, ok := errors.AsType[*configs.Error](e); ok {
			found(ce.File)
		}
	}
	switch {
	case len(rs) == 0 && len(problems) > 0:
		fmt.Fprintf(b, "No readable result files were collected (%s, below).\n", plural.Count(len(problems), "unreadable file", "unreadable files"))
	case len(rs) == 0 && absent:
		fmt.Fprintf(b, "No result files were collected (%s does not exist).\n", markdown.Cell(dir))
	case len(rs) == 0:
		b.WriteString("No result files were collected.\n")
	default:
		writeTable(b, rs)
	}
	outcome.Missing = writeMissing(b, expected)
	if len(dups)+len(stray)+len(problems) > 0 {
		b.WriteString("\n")
	}
	for _, d := range dups {
		fmt.Fprintf(b, "- duplicate: %s has the same bytes as %s (listed once)\n", markdown.Cell(d[0]), markdown.Cell(d[1]))
	}
	for _, p := range stray {
		if fam := fan.notRunFamily(strings.TrimSuffix(filepath.Base(p), ".json")); fam != "" {
			fmt.Fprintf(b, "- not run by this workflow: %s (a point of %s, listed as not run above)\n", markdown.Cell(p), markdown.Cell(fam))
			continue
		}
		fmt.Fprintf(b, "- not in the fan-out: %s (no run job's point has its name)\n", markdown.Cell(p))
	}
	for _, e := range problems {
		fmt.Fprintf(b, "- unreadable: %s\n", markdown.Cell(fmt.Sprint(e)))
	}
	outcome.Unreadable = len(problems)
	_, err = io.WriteString(w, b.String())
	return outcome, err
}

// writeMissing names the expected points that no result file was found
// for, and returns their names.
func writeMissing(b *strings.Builder, expected []*expectedPoint) []string {
	var names []string
	for _, e := range expected {
		if !e.found {
			names = append(names, fmt.Sprintf("%s conc %d (%s): %s.json", e.key, e.point.Conc, e.family, e.point.ResultFilename))
		}
	}
	if len(names) == 0 {
		return nil
	}
	fmt.Fprintf(b, "\n%d of the run jobs' %s left no result file:\n\n", len(names), plural.Count(len(expected), "benchmark point", "benchmark points"))
	for _, n := range names {
		fmt.Fprintf(b, "- no result: %s\n", markdown.Cell(n))
	}
	return names
}

// dedupe drops the result files whose bytes equal an earlier one's (a
// result downloaded into two directories), returning each dropped path
// with the path it repeats.
func dedupe(rs []*result.File) (kept []*result.File, dups [][2]string) {
	seen := map[[sha256.Size]byte]string{}
	for _, r := range rs {
		if data, err := os.ReadFile(r.Path); err == nil {
			sum := sha256.Sum256(data)
			if first, ok := seen[sum]; ok {
				dups = append(dups, [2]string{r.Path, first})
				continue
			}
			seen[sum] = r.Path
		}
		kept = append(kept, r)
	}
	return kept, dups
}

// writeTable writes one row per result: what made it (its client, and
// whether the engine was sweep's simulated one), its numbers and whether
// it counts, with its first reason when not; then what "built-in" and
// "simulated" mean when a row says either.
func writeTable(b *strings.Builder, rs []*result.File) {
	b.WriteString("| result | conc | client | engine | tok/s/GPU | output tok/s/GPU | TTFT p50 (s) | interactivity p50 (tok/s) | power_valid | J/output tok | valid |\n")
	b.WriteString("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	var builtin, simulated bool
	for _, r := range rs {
		m := r.RequestMetrics
		var tot, outp *pyjson.Rounded
		if m.Throughput.PerGPU != nil {
			tot, outp = m.Throughput.PerGPU.TotalTputTPS, m.Throughput.PerGPU.OutputTputTPS
		}
		engine := "real"
		if r.Simulated {
			engine, simulated = "simulated", true
		}
		builtin = builtin || r.Client.Builtin()
		powerValid, jpt := "–", "–"
		if r.Fields != nil {
			powerValid = fmt.Sprint(r.Fields.Valid)
		}
		if j := power.JoulesPerOutputTokenOf(r.Fields); j != nil {
			jpt = fmt.Sprintf("%.3f", *j)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", markdown.Cell(strings.TrimSuffix(filepath.Base(r.Path), ".json")), r.Conc,
			markdown.Cell(clientCell(r.Client)), engine, num(tot, 1), num(outp, 1), num(m.Latency.TTFT.P50, 3), num(m.Latency.Intvty.P50, 1), powerValid, jpt, markdown.Cell(validCell(r)))
	}
	if builtin || simulated {
		b.WriteString("\n")
	}
	if builtin {
		b.WriteString("- client built-in: sweep's own load generator replayed the trace set, writing aiperf's artifacts; not the aiperf InferenceX measures with, so its numbers are another client's than InferenceX's\n")
	}
	if simulated {
		b.WriteString("- engine simulated: sweep's simulated engine, not the hardware; its numbers rehearse a sweep, they are not measurements\n")
	}
}

// clientCell names the client that made a result: its name ("aiperf
// 0.12.0", "built-in (aiperf fork artifacts)") and, when the name does
// not say it, the aiperf version its artifacts name ("built-in (aiperf
// fork artifacts), aiperf_version 0.12.0"); "not stated" for a
// result without a client (InferenceX's own).
func clientCell(c *result.Client) string {
	switch {
	case c == nil:
		return "not stated"
	case c.AiperfVersion != "" && !strings.Contains(c.Name, c.AiperfVersion):
		return fmt.Sprintf("%s, aiperf_version %s", c.Name, c.AiperfVersion)
	}
	return c.Name
}

// validCell says whether a result counts: "yes", "no: " its first reason
// (and how many more its invalid_reasons list), or "not stated" for a
// result that does not say (InferenceX's own).
func validCell(r *result.File) string {
	switch {
	case !r.ValidStated:
		return "not stated"
	case r.Valid:
		return "yes"
	case len(r.InvalidReasons) == 0:
		return "no"
	case len(r.InvalidReasons) == 1:
		return "no: " + r.InvalidReasons[0]
	}
	return fmt.Sprintf("no: %s (and %d more in its invalid_reasons)", r.InvalidReasons[0], len(r.InvalidReasons)-1)
}

func num(v *pyjson.Rounded, prec int) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, float64(*v))
}
