package leg

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"sweep/sweep/abgate"
)

// InterruptedError is a leg interrupted before its report: which
// replicates are complete (a rerun of the same command on the same
// directory keeps them) and which are not (a rerun runs them again in
// fresh roots). It wraps the cancellation's cause: sweep's signal
// handling makes it name the signal ("interrupted by SIGTERM").
type InterruptedError struct {
	Dir                  string
	Complete, Incomplete []string
	// Roots are each arm's replicates' roots, as the directory holds
	// them: the complete attempt's, else the last attempt's, else, when
	// this run started the arm's server, the fresh root it runs in; only
	// those that exist (none for a replicate of an arm not started, or
	// whose root its run had not made yet).
	Roots [2][]string
	Err   error
	// servers are, for an arm whose every replicate is kept from an
	// earlier run, what its server ran (keptServer); for an arm whose
	// server this run did not start, its commands marked NotStarted, ports
	// by name (Made); nil: the plan's, with the ports this run drew.
	servers [2]*abgate.ArmServer
	// complete are each arm's complete replicates' roots, sinceOf the
	// instant before which each one's files are stale: the report's
	// partial rows read them (abgate.PartialRows).
	complete [2][]string
	sinceOf  map[string]time.Time
}

// launches are the arms whose server this run started (from the moment
// it starts it): an interrupted leg's report names the plan's server,
// with the ports this run drew, and the fresh roots only for those.
// Safe for both arms at once; a nil *launches holds none.
type launches struct {
	mu   sync.Mutex
	arms map[string]bool
}

// add records that arm label's server is started (nil: not recorded).
func (l *launches) add(label string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.arms == nil {
		l.arms = map[string]bool{}
	}
	l.arms[label] = true
}

// has reports whether arm label's server was started.
func (l *launches) has(label string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.arms[label]
}

func (e *InterruptedError) Error() string {
	complete, incomplete := "none", "none"
	if len(e.Complete) > 0 {
		complete = strings.Join(e.Complete, ", ")
	}
	if len(e.Incomplete) > 0 {
		incomplete = strings.Join(e.Incomplete, ", ")
	}
	return fmt.Sprintf("%s before the report; complete replicates: %s; not complete: %s; "+
		"run the same command with --out %s to resume: it keeps the complete replicates and runs the others in fresh roots", e.what(), complete, incomplete, e.Dir)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// what is "interrupted", or the cancellation's cause when it says more
// than context.Canceled ("interrupted by SIGINT").
func (e *InterruptedError) what() string {
	if e.Err != nil && e.Err != context.Canceled && errors.Is(e.Err, context.Canceled) {
		return e.Err.Error()
	}
	return "interrupted"
}

// interrupted is the InterruptedError of p's leg in dir, from what dir
// holds now and the arms whose server this run launched, for cause, of
// the run that started at since; nil when dir's records do not read.
func interrupted(dir string, p *Plan, simulated bool, since time.Time, launched *launches, cause error) *InterruptedError {
	now := legMade(p, simulated)
	ie := &InterruptedError{Dir: dir, Err: cause, sinceOf: map[string]time.Time{}}
	for i := range p.Arms {
		states, err := scanReplicates(dir, p, &p.Arms[i], now.Arms[i], p.Leg.Replicates)
		if err != nil {
			return nil
		}
		started := launched.has(p.Arms[i].Label)
		ie.Roots[i] = []string{} // report.json lists an arm with none as []
		ie.complete[i] = []string{}
		ie.servers[i] = keptServer(states, since)
		if ie.servers[i] == nil && !started {
			s := now.Arms[i].Server
			s.NotStarted = true
			ie.servers[i] = &s
		}
		for _, st := range states {
			switch {
			case st.kept != "":
				ie.Complete = append(ie.Complete, relTo(dir, st.kept))
				ie.Roots[i] = append(ie.Roots[i], st.kept)
				ie.complete[i] = append(ie.complete[i], st.kept)
				ie.sinceOf[st.kept] = st.keptRec.since()
				continue
			case st.attempt > 1:
				ie.Roots[i] = appendDir(ie.Roots[i], AttemptRoot(dir, p.Arms[i].Label, st.rep, st.attempt-1))
			case started:
				ie.Roots[i] = appendDir(ie.Roots[i], st.fresh)
			}
			ie.Incomplete = append(ie.Incomplete, fmt.Sprintf("%s/bfcl-r%d", p.Arms[i].Label, st.rep))
		}
	}
	return ie
}

// appendDir appends root to roots when it is a directory: an attempt
// may have written only its record, and a started arm's fresh root is
// made only when its replicate begins, so the report names no root that
// does not exist.
func appendDir(roots []string, root string) []string {
	if st, err := os.Stat(root); err == nil && st.IsDir() {
		return append(roots, root)
	}
	return roots
}

// report is the INCOMPLETE report of the leg e interrupted, drawn from
// p, e and the complete replicates' files (no server is asked): the
// leg's roots as the directory holds them; per category, what the
// complete replicates alone measured (abgate.PartialRows, marked
// Partial: no verdict), with the problems they show; and one problem
// (arm and category abgate.Every, root the leg's directory, reason
// abgate.ReasonInterrupted) that names the interruption, the complete
// and incomplete replicates and the command that resumes the leg. An
// arm's server is the plan's; for an arm all of whose replicates are
// kept from an earlier run, the record of the server that made them
// (keptServer); for an arm whose server this run did not start, the
// commands it would run, not started, ports by name.
func (e *InterruptedError) report(p *Plan, simulated bool) *abgate.Report {
	servers := []abgate.ArmServer{armServer(p.Leg.Model, &p.Arms[0]), armServer(p.Leg.Model, &p.Arms[1])}
	for i, s := range e.servers {
		if s != nil {
			servers[i] = *s
		}
	}
	rows, probs := abgate.PartialRows(abgate.Options{A: e.complete[0], B: e.complete[1], Model: p.Leg.Model, Categories: p.Categories,
		Read: readOptions(p, time.Time{}, e.sinceOf)})
	return &abgate.Report{
		Verdict: abgate.Incomplete, Leg: p.Leg.Name, Model: p.Leg.Model, Simulated: &simulated,
		Tolerance: cmp.Or(p.Leg.Tolerance, abgate.DefaultTolerance),
		Roots:     abgate.ReportRoots{A: e.Roots[0], B: e.Roots[1]}, ReplicatesA: len(e.Roots[0]), ReplicatesB: len(e.Roots[1]),
		Partial:    &abgate.Partial{Complete: abgate.ReportRoots{A: e.complete[0], B: e.complete[1]}, Incomplete: e.incomplete()},
		Servers:    servers,
		Primary:    abgate.Primary{Metric: "weighted"},
		Categories: rows,
		Problems:   append([]abgate.Problem{{Arm: abgate.Every, Root: e.Dir, Category: abgate.Every, Reason: abgate.ReasonInterrupted, Detail: e.Error()}}, probs...),
	}
}

// incomplete is e.Incomplete, [] for none (as report.json lists it).
func (e *InterruptedError) incomplete() []string {
	return append([]string{}, e.Incomplete...)
}
