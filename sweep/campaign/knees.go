package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sweep/internal/plural"
	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// Knees are the knee verdicts on the arms of a directory's results, read
// with how far the sweep that wrote them got: what sweep knees prints
// and sweep report draws (ReadKnees).
type Knees struct {
	// Results are the arms' verdicts (knee.Analyze), in knee.Read's
	// order; an arm's knee.Arm.Unfinished holds its points not finished.
	Results []*knee.Result
	// Unfinished are the points the sweep has not finished
	// (Coverage.Unfinished), in its journal's order, also those of arms
	// with no result yet; nil when it finished, or when the directory
	// has no journal (results gathered by hand, InferenceX's own).
	Unfinished []UnfinishedPoint
	// Failed are the points the sweep's journal records as failed
	// (Coverage.Failed), in its order, whose result the knees do not
	// read: one that failed before it wrote a result (its server did
	// not start, its client crashed, it was killed). A failed point whose
	// result the knees read is theirs to list (knee.Point.Excluded). Nil
	// when the directory has no journal.
	Failed []FailedPoint
	// Plans are the concurrencies the sweep's start plans per arm
	// (Coverage.Plans): Plans.NotPlanned names an arm's official points
	// the discovery left out. Nil when the directory has no journal, or
	// one that records no arms.
	Plans Plans
	// Searched says why an adaptive discovery's search ran or skipped
	// each point (Coverage.Searched), in its journal's order; nil for a
	// sweep that ran every point, or a journal with no reasons.
	Searched []SearchedPoint
	// planned counts the points the sweep's start plans (Coverage.
	// Planned); 0 when its journal does not record them.
	planned int
}

// SearchedPoint is why an adaptive discovery's search ran or skipped one
// point (Knees.Searched).
type SearchedPoint struct {
	// Arm is the label of the point's arm (result.Identity.Label); ""
	// when the journal places the point on no arm.
	Arm  string
	Conc int
	// Skipped says the search did not need the point; else Probe says
	// its last attempt ran as a probe (else at the full length).
	Skipped, Probe bool
	// Why is the rule that asked for the point's last attempt, or why a
	// skipped point is not needed (without the "adaptive discovery: not
	// needed to find the knee: " of its point_skip record).
	Why string
}

// Ran says how the search ran p: "probe", "full length" or "skipped".
func (p SearchedPoint) Ran() string {
	switch {
	case p.Skipped:
		return "skipped"
	case p.Probe:
		return "probe"
	}
	return "full length"
}

// Empty says the directory has nothing to show: no result, and no point
// its sweep's journal ends failed (Failed); sweep knees and sweep report
// refuse such a directory alike (exit 2). A sweep whose every point
// failed before it wrote a result is not empty: its failed points are
// listed.
func (k *Knees) Empty() bool { return len(k.Results) == 0 && len(k.Failed) == 0 }

// LeftOut is LeftOutOf the knees' verdicts and failed points.
func (k *Knees) LeftOut() []LeftOut {
	return LeftOutOf(k.Results, k.Failed)
}

// UnfinishedPoint is a point of a sweep that has not finished.
type UnfinishedPoint struct {
	// Arm is the label of the point's arm (result.Identity.Label); ""
	// when the journal places the point on no arm (one written before
	// its start recorded the arms, with no result of the arm).
	Arm string
	// Conc is the point's concurrency; 0 when the journal does not say.
	Conc int
	// Interrupted is true for a point that started and did not end (the
	// sweep was interrupted or killed while it ran); false for one the
	// sweep never got to, or (Probe) one it ran only as a probe.
	Interrupted bool
	// Probe is true for an adaptive search's probe that the search,
	// stopped between two steps, may still run at the full length.
	Probe bool
}

// state is how the point stands: "interrupted", "not run" or "probe
// only".
func (p UnfinishedPoint) state() string {
	switch {
	case p.Interrupted:
		return "interrupted"
	case p.Probe:
		return "probe only"
	}
	return "not run"
}

// ReadKnees reads every arm of the results under dir (knee.Read), gives
// each arm the concurrencies dir's journal records as not finished
// (ReadCoverage: knee.Arm.Unfinished, placed on their arm by ArmOf) and
// those of its grid in the config the sweep did not plan (knee.Arm.
// NotPlanned: Plans.NotPlanned of Coverage.Grid) and finds each arm's
// knee with o (knee.Analyze), whose verdict then names them. A directory
// without a journal is read as a finished sweep of its whole grid.
func ReadKnees(ctx context.Context, dir string, o knee.Options) (*Knees, error) {
	arms, err := knee.Read(ctx, dir)
	if err != nil {
		return nil, err
	}
	k := &Knees{}
	c, err := ReadCoverage(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		byKey := map[string]*knee.Arm{}
		for _, a := range arms {
			byKey[a.Identity.ArmKey()] = a
		}
		for _, concs := range c.Planned {
			k.planned += len(concs)
		}
		k.Plans = c.Plans()
		for arm, id := range c.Arms {
			if a := byKey[id.ArmKey()]; a != nil {
				a.NotPlanned = k.Plans.NotPlanned(id, c.Grid[arm])
			}
		}
		for _, u := range c.Unfinished {
			p := UnfinishedPoint{Conc: u.Conc, Interrupted: u.Status == StatusInterrupted, Probe: u.Probe}
			if id, ok := c.ArmOf(dir, u.Arm, arms); ok {
				p.Arm = id.Label()
				if a := byKey[id.ArmKey()]; a != nil && u.Conc != 0 && !slices.Contains(a.Unfinished, u.Conc) {
					a.Unfinished = append(a.Unfinished, u.Conc)
				}
			}
			k.Unfinished = append(k.Unfinished, p)
		}
		for _, a := range arms {
			slices.Sort(a.Unfinished)
		}
		k.Failed = failedPoints(dir, c, arms)
		for _, r := range c.Searched {
			p := SearchedPoint{Conc: r.Conc, Skipped: r.Event == EventPointSkip, Probe: r.Probe, Why: notNeededWhy(r.Reason)}
			if id, ok := c.ArmOf(dir, r.Arm, arms); ok {
				p.Arm = id.Label()
			}
			k.Searched = append(k.Searched, p)
		}
	}
	for _, a := range arms {
		k.Results = append(k.Results, knee.Analyze(a, o))
	}
	return k, nil
}

// failedPoints are the points c records as failed whose result file (the
// one their end names, else the point's own: result.PointPath) is none
// of the samples of arms (the arms read from dir): Knees.Failed.
func failedPoints(dir string, c Coverage, arms []*knee.Arm) []FailedPoint {
	read := map[string]bool{}
	for _, a := range arms {
		for _, s := range a.Samples {
			read[filepath.Clean(s.File)] = true
		}
	}
	var out []FailedPoint
	for _, f := range c.Failed {
		p := FailedPoint{Point: f.Point, Conc: f.Conc, Error: f.Error, Attempts: f.Attempt, Probe: f.Probe}
		if f.Result != "" {
			p.Result = filepath.Join(dir, f.Result)
		}
		if read[p.Result] || read[filepath.Clean(result.PointPath(dir, f.Point))] {
			continue
		}
		if _, err := os.Stat(p.Result); err != nil {
			p.Result = "" // none written, or gone since
		}
		if id, ok := c.ArmOf(dir, f.Arm, arms); ok {
			p.Arm = id.Label()
		}
		out = append(out, p)
	}
	return out
}

// Incomplete says which points the sweep has not finished, per arm, and
// that rerunning its command resumes it: "its journal says the sweep has
// not finished 3 of its 7 points: qwen3.5 ... tp8 ep8 c40 (interrupted),
// c48 (not run), c64 (not run); rerun its command to resume it (the
// verdicts on those arms are provisional until then)"; "" when it has
// finished.
func (k *Knees) Incomplete() string {
	if len(k.Unfinished) == 0 {
		return ""
	}
	var arms []string
	byArm := map[string][]string{}
	unknown := map[string]int{} // by arm: points of no known concurrency (never started)
	for _, p := range k.Unfinished {
		if _, ok := byArm[p.Arm]; !ok {
			arms = append(arms, p.Arm)
			byArm[p.Arm] = nil
		}
		if p.Conc == 0 {
			unknown[p.Arm]++
			continue
		}
		byArm[p.Arm] = append(byArm[p.Arm], fmt.Sprintf("c%d (%s)", p.Conc, p.state()))
	}
	var parts []string
	for _, a := range arms {
		label := a
		if label == "" {
			label = "on no arm its journal records:"
		}
		items := byArm[a]
		if n := unknown[a]; n > 0 {
			items = append(items, plural.Count(n, "point", "points")+" (not run)")
		}
		parts = append(parts, label+" "+strings.Join(items, ", "))
	}
	of := plural.Count(len(k.Unfinished), "point", "points")
	if k.planned >= len(k.Unfinished) {
		of = fmt.Sprintf("%d of its %s", len(k.Unfinished), plural.Count(k.planned, "point", "points"))
	}
	return fmt.Sprintf("its journal says the sweep has not finished %s: %s; rerun its command to resume it (the verdicts on those arms are provisional until then)",
		of, strings.Join(parts, "; "))
}

// ArmOf is the identity of the sweep's arm number arm (Record.Arm): the
// one its start records (Arms), else the one the results carry that its
// point_end records name for that arm (Results; measured: the arms read
// from dir, each sample's file as found under dir); ok is false when
// neither says.
func (c Coverage) ArmOf(dir string, arm int, measured []*knee.Arm) (id result.Identity, ok bool) {
	if id, ok := c.Arms[arm]; ok {
		return id, true
	}
	files := map[string]bool{}
	for _, rel := range c.Results[arm] {
		files[filepath.Join(dir, rel)] = true
	}
	for _, a := range measured {
		for _, s := range a.Samples {
			if files[filepath.Clean(s.File)] {
				return a.Identity, true
			}
		}
	}
	return result.Identity{}, false
}

// WriteTable prints the verdicts as sweep knees does (knee.WriteTable:
// the table, then the energy lines of the valid points), the points the
// energy lines leave out for an invalid power measurement
// (EnergyLeftOut), the points the knees leave out (WriteLeftOut) and,
// when the sweep has not finished, which points it has not (Incomplete).
func (k *Knees) WriteTable(w io.Writer) error {
	if err := knee.WriteTable(w, k.Results); err != nil {
		return err
	}
	if err := writeEnergyLeftOut(w, k.Results); err != nil {
		return err
	}
	if err := k.WriteLeftOut(w); err != nil {
		return err
	}
	if s := k.Incomplete(); s != "" {
		if _, err := fmt.Fprintf(w, "\nincomplete: %s\n", s); err != nil {
			return err
		}
	}
	return nil
}

// MadeOtherwiseWhy says why the results made otherwise than their arm's
// reading are left out, where sweep knees and a report list them.
const MadeOtherwiseWhy = "not one measurement with the arm's reading: another client, trace set, aiperf version or image than most of its results, or another benchmark duration than the point's reading; kept, never read, no failure"

// WriteLeftOut prints, under "excluded points:", the points the knees
// leave out (LeftOut, in its order): each excluded result file with its
// arm, point (LeftOut.Name), reason and file, and each point the journal
// ends failed with no result the knees read, with the journal's error and
// "no result file" (or the file they did not read); then, under
// "superseded probes", the probes their full-length runs superseded, and
// under "made otherwise", the results not one measurement with their
// arm's reading (LeftOut.OtherMeasurement), each with what differed:
// neither failed, and a report lists them apart too. Nothing when there
// is none.
func (k *Knees) WriteLeftOut(w io.Writer) error {
	var failed, superseded, otherwise strings.Builder
	for _, l := range k.LeftOut() {
		if f := l.Failed; f != nil {
			file := "no result file"
			if f.Result != "" {
				file = f.Result + ", not read"
			}
			fmt.Fprintf(&failed, "  %s %s: %s (%s)\n", f.ArmLabel(), l.Name(), f.Why(), file)
			continue
		}
		b := &failed
		switch {
		case l.Superseded:
			b = &superseded
		case l.OtherMeasurement:
			b = &otherwise
		}
		fmt.Fprintf(b, "  %s %s: %s (%s)\n", l.Arm, l.Name(), l.Exclusion.Reason, l.Exclusion.File)
	}
	for _, sec := range []struct {
		head string
		b    *strings.Builder
	}{
		{"excluded points", &failed},
		{"superseded probes (run again at the full length; kept, never read, no failure)", &superseded},
		{"made otherwise (" + MadeOtherwiseWhy + ")", &otherwise},
	} {
		if sec.b.Len() == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "\n%s:\n%s", sec.head, sec.b.String()); err != nil {
			return err
		}
	}
	return nil
}
