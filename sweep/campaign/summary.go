package campaign

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"sweep/internal/atomicfile"
	"sweep/internal/plural"
	"sweep/metrics/result"
	"sweep/sweep/run"
)

// Summary file names in the sweep directory.
const (
	SummaryJSON = "summary.json"
	SummaryText = "summary.txt"
)

// PointSummary is one point's line of the summary.
type PointSummary struct {
	Index  int    `json:"index"`
	ID     string `json:"point"`
	Arm    string `json:"arm"`
	Conc   int    `json:"conc"`
	Status string `json:"status"` // ok, failed, interrupted, "" (not run)
	// Attempts are the point's attempts that ended, ok or failed, over
	// every invocation; one interrupted does not count (it is run again).
	Attempts int     `json:"attempts"`
	Error    string  `json:"error,omitempty"`
	Result   string  `json:"result,omitempty"`
	Seconds  float64 `json:"seconds,omitempty"`
	Reused   bool    `json:"server_reused,omitempty"`
	// StartFailed says the point's last attempt got no server: the one
	// started for it, or for an earlier point of its arm, did not start,
	// or its arm's job never ran it (its Error says why).
	StartFailed bool `json:"server_start_failed,omitempty"`
	// DiskFull says the point's last attempt failed for want of space
	// on a disk, which stopped the sweep (Record.DiskFull): not the
	// point's fault, it is not among Attempts, and a resume runs the
	// point again.
	DiskFull bool `json:"disk_full,omitempty"`
	// Probe says the point ran as an adaptive search's short bracketing
	// probe.
	Probe bool `json:"probe,omitempty"`
	// Why is, for a point an adaptive search ran, the rule that asked for
	// its last attempt (knee.Step.Why); for one it skipped, Error says
	// why it was not needed.
	Why     string   `json:"why,omitempty"`
	Metrics *Metrics `json:"metrics,omitempty"`
	// Warnings are what the point's last attempt warned of (its
	// run.json's run.Record.Warnings, such as poor scraping of the
	// engine's /metrics): they leave its status as it is.
	Warnings []string `json:"warnings,omitempty"`
}

// Summary is the state of every point of a sweep directory.
type Summary struct {
	Dir     string         `json:"dir"`
	Command string         `json:"command"`
	Points  []PointSummary `json:"points"`
	OK      int            `json:"ok"`
	Failed  int            `json:"failed"`
	// Interrupted are the points whose last attempt was interrupted
	// (Ctrl-C, or a sweep killed while they ran); Pending those never
	// run, or redone (their result no longer counts). A resume runs both.
	Interrupted  int     `json:"interrupted"`
	Pending      int     `json:"not_run"`
	Skipped      int     `json:"skipped"`
	ServerStarts int     `json:"server_starts"`
	WallSeconds  float64 `json:"wall_seconds"`
	// Stopped says why the sweep stopped on its own before its points
	// were done, "the sweep stopped: ..." (a point found the disk full,
	// the journal could not be written); "" when it did not. Its points
	// not run then say so in their Error.
	Stopped string `json:"stopped,omitempty"`
	// Spent is what the directory's runs cost on the hardware over every
	// invocation, beside its grid: what its journal records and this
	// invocation ran, also a run whose record's write failed, so that it
	// counts the runs the points' statuses count.
	Spent *Spending `json:"spent,omitempty"`
	// Written are the summary files Write wrote (summary.txt, then
	// summary.json); not in the file.
	Written []string `json:"-"`
}

// Table renders the summary as the final table: per point its status,
// throughput per GPU, interactivity and acceptance length.
func (sum *Summary) Table() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tarm\tconc\tstatus\ttok/s/GPU\ttok/s/user\tAL\tserver")
	f := func(v *float64, prec int) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.*f", prec, *v)
	}
	for _, p := range sum.Points {
		m := p.Metrics
		if m == nil {
			m = &Metrics{}
		}
		status := p.Status
		if status == "" {
			status = "not run"
		}
		if p.Probe {
			status += " (probe)"
		}
		srv := serverWord(p.StartFailed, p.Reused, p.Status)
		if p.Attempts == 0 && p.Status != StatusInterrupted {
			srv = "-" // never ran (skipped or not run)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.Index, p.Arm, p.Conc, status, f(m.TputPerGPU, 1), f(m.Interactivity, 1), f(m.AL, 2), srv)
	}
	tw.Flush()
	fmt.Fprintf(&b, "%s; %s in this invocation\n", sum.counts(), plural.Count(sum.ServerStarts, "server start", "server starts"))
	if sum.Stopped != "" {
		fmt.Fprintf(&b, "%s\n", sum.Stopped) // "the sweep stopped: ..."
	}
	b.WriteString(sum.failures())
	b.WriteString(sum.searched())
	b.WriteString(sum.warnings())
	if sum.Spent != nil {
		b.WriteString(sum.Spent.Lines(len(sum.Points)))
	}
	return b.String()
}

// serverWord is how a point's last attempt, ended with status, got its
// server, as the progress and the summary's server column say it: it
// started one, reused one, got none (noServer) because the start failed
// or, interrupted, was not started.
func serverWord(noServer, reused bool, status string) string {
	switch {
	case noServer && status == StatusInterrupted:
		return "not started"
	case noServer:
		return "start failed"
	case reused:
		return "reused"
	}
	return "started"
}

// counts is "5 ok, 1 failed, 1 interrupted, 2 not run, 3 skipped by
// adaptive discovery": interrupted and skipped only when there are.
func (sum *Summary) counts() string {
	line := fmt.Sprintf("%d ok, %d failed", sum.OK, sum.Failed)
	if sum.Interrupted > 0 {
		line += fmt.Sprintf(", %d interrupted", sum.Interrupted)
	}
	line += fmt.Sprintf(", %d not run", sum.Pending)
	if sum.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped by adaptive discovery", sum.Skipped)
	}
	return line
}

// failures lists the failed points with why, each under the number of
// its row: "failed (logs and run.json in each point's directory; ...):",
// then "  1  ARM c1, 2 attempts: stage client: ...".
func (sum *Summary) failures() string {
	var b strings.Builder
	for _, p := range sum.Points {
		if p.Status != StatusFailed {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("failed (logs and run.json in each point's directory; a server's that did not start in servers/):\n")
		}
		why := p.Error
		if why == "" {
			why = "no error recorded"
		}
		attempts := plural.Count(p.Attempts, "attempt", "attempts")
		if p.DiskFull {
			attempts += " (the full disk's not counted: a resume runs it again)"
		}
		fmt.Fprintf(&b, "  %d  %s c%d, %s: %s\n", p.Index, p.Arm, p.Conc, attempts, strings.ReplaceAll(why, "\n", "\n      "))
	}
	return b.String()
}

// searched says why an adaptive search ran or skipped each point, under
// the number of its row: "adaptive discovery, why each point ran or was
// skipped:", then "  3  ARM c16 (probe): bracket: ..." and "  2  ARM c2
// skipped: between c1 and c4, measured: ...". Empty for a sweep that ran
// every point.
func (sum *Summary) searched() string {
	var b strings.Builder
	for _, p := range sum.Points {
		why := ": " + p.Why
		switch {
		case p.Status == StatusSkipped:
			why = " skipped: " + notNeededWhy(p.Error)
		case p.Why == "":
			continue
		case p.Probe:
			why = " (probe)" + why
		}
		if b.Len() == 0 {
			b.WriteString("adaptive discovery, why each point ran or was skipped:\n")
		}
		fmt.Fprintf(&b, "  %d  %s c%d%s\n", p.Index, p.Arm, p.Conc, why)
	}
	return b.String()
}

// warnings lists the points' warnings, each under the number of its
// row: "warnings (...):", then "  1  ARM c4: poor metrics scraping: ...".
func (sum *Summary) warnings() string {
	var b strings.Builder
	for _, p := range sum.Points {
		for _, w := range p.Warnings {
			if b.Len() == 0 {
				b.WriteString("warnings (in each point's run.json; a point keeps its status):\n")
			}
			fmt.Fprintf(&b, "  %d  %s c%d: %s\n", p.Index, p.Arm, p.Conc, strings.ReplaceAll(w, "\n", "\n      "))
		}
	}
	return b.String()
}

// pointWarnings are the warnings the last attempt of point id recorded
// in its run.json in the sweep directory dir (run.Record.Warnings);
// none when it has none or no run.json; a run.json that does not read is
// a warning of its own, at its line and column.
func pointWarnings(dir, id string) []string {
	rec, err := run.ReadRecordFile(result.PointDir(dir, id))
	switch {
	case err != nil:
		return []string{fmt.Sprintf("its %s does not read, so its warnings and how it was made are unknown: %v", run.RecordFile, err)}
	case rec == nil:
		return nil
	}
	return rec.Warnings
}

// Lines says what the runs cost on the hardware against the grid of n
// points: "GPU-hours on the hardware: 43.1 spent, 14 % of InferenceX's
// 300.8 (32 points, a server start each) and 19 % of 220.1 (each point
// once at the full length on this schedule's server starts)", then
// what was spent and how it is priced.
func (sp *Spending) Lines(n int) string {
	share := func(of float64) string {
		if of <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f %%", 100*sp.GPUHours/of)
	}
	price := fmt.Sprintf("priced as planned (simulated: the hardware's times, not this host's): a server start %.0f s, a run its length + 60 s", sp.StartSeconds)
	if sp.Measured {
		price = fmt.Sprintf("priced as measured: each run its own time, a server start this directory's mean, %.0f s", sp.StartSeconds)
	}
	on := plural.Count(sp.ServerStarts, "server start", "server starts")
	runs := plural.Count(sp.Runs, "full-length run", "full-length runs")
	if sp.Probes > 0 {
		on += ", " + runs + " and " + plural.Count(sp.Probes, "probe", "probes")
	} else {
		on += " and " + runs
	}
	if sp.Interrupted > 0 {
		whole := "priced whole"
		if sp.Measured {
			whole = "priced at its time"
		}
		on += fmt.Sprintf(" (%d of them interrupted, each %s)", sp.Interrupted, whole)
	}
	var unended string
	if sp.Unended > 0 {
		unended = fmt.Sprintf("\n  not priced: %s the sweep was killed during, whose end the journal does not record", plural.Count(sp.Unended, "run", "runs"))
	}
	return fmt.Sprintf("GPU-hours on the hardware: %.1f spent, %s of InferenceX's %.1f (%s, a server start each) and %s of %.1f (each point once at the full length on this schedule's server starts)\n  spent on %s; %s%s\n",
		sp.GPUHours, share(sp.InferenceXGPUHours), sp.InferenceXGPUHours, plural.Count(n, "point", "points"), share(sp.GridGPUHours), sp.GridGPUHours, on, price, unended)
}

// Write writes summary.txt and summary.json into dir atomically, and
// lists in Written those it wrote: a file it could not write (a full
// disk) is not there, or is an earlier invocation's.
func (sum *Summary) Write(dir string) error {
	sum.Written = nil
	txt := filepath.Join(dir, SummaryText)
	if err := atomicfile.Write(txt, []byte(sum.Table()), 0o644); err != nil {
		return err
	}
	sum.Written = append(sum.Written, txt)
	js := filepath.Join(dir, SummaryJSON)
	if err := atomicfile.WriteJSON(js, sum); err != nil {
		return err
	}
	sum.Written = append(sum.Written, js)
	return nil
}
