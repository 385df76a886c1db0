package campaign

import (
	"slices"

	"sweep/metrics/result"
)

// Coverage is what a sweep directory's journal records of how its points
// were chosen and how far the sweep got.
type Coverage struct {
	// Adaptive is true for an adaptive discovery, one that ran only the
	// points its knee search asked for: its start's --adaptive setting
	// says so, or a probe or a skip is recorded.
	Adaptive bool
	// Skipped holds the point_skip record (Arm, Point, Conc, Reason) of
	// each point adaptive discovery did not run: its state after every
	// record is skipped. A point that ran and failed before the search
	// gave up on it stays failed (pointState.skip) and is not listed.
	Skipped []Record
	// Unfinished holds one record (Point, Arm, Conc, Status) of each
	// point of the sweep that is not finished: the sweep was killed or
	// interrupted while it ran (a point_start without its point_end, or
	// a point_end "interrupted": Status "interrupted"), or before it got
	// to the point (one its start lists with no record that it ran or
	// was skipped, or one redone after its result failed the check on
	// resume: Status ""), or one that failed for want of space on the
	// sweep directory's disk, which stopped the sweep (Record.DiskFull:
	// Status "interrupted"). Rerunning the sweep's command runs them. Arm
	// and Conc are the point's records', else its arm's in the sweep's
	// start (ArmPlan), else 0: a journal written before its start
	// recorded the arms does not say. A point that ran and failed is
	// finished (failed), whatever retries the sweep has left.
	//
	// In an adaptive discovery's journal, an arm whose last point start
	// lies in a segment of format 1 or later (JournalFormat: its binary
	// records the search's end) with no search_end since was stopped
	// between two steps of its search (a kill can leave every point run
	// once, as a probe): each of its points whose last run was a probe,
	// which the search may still run at the full length, is unfinished
	// too (Probe true, Status the probe's: ok or failed). Points it ran at
	// the full length cannot run again, nor a probe that failed the way a
	// full-length run fails too (its result file's error rate over the
	// limit, or no successful request: knee.Sample.FailedForGood), which
	// stays failed; an arm with no such probe left reads as finished. An
	// arm last run by a binary without a format (no search_end records),
	// or in a journal such a binary resumed since (it may have ended the
	// search unrecorded), is read without this rule.
	Unfinished []Record
	// Failed holds one record (Point, Arm, Conc, Error, Result, Probe;
	// Attempt: its attempts that ended) of each point whose last attempt
	// failed, in the journal's order: also one that failed before it
	// wrote a result (Result ""), and one with retries left that the
	// sweep, interrupted, has not run again.
	Failed []Record
	// Results lists per arm (Record.Arm, 1-based) the result files its
	// points' point_end records name, relative to the directory: what
	// ties an arm's number to the identity its results carry.
	Results map[int][]string
	// Arms holds the identity of each arm (Record.Arm) that the sweep's
	// start records (ArmPlan): the sweep's arms, so that a reader tells
	// an arm outside its selection from one whose points failed; empty
	// for a journal written before it did.
	Arms map[int]result.Identity
	// Planned holds the concurrencies of each arm (Record.Arm) that the
	// sweep's start plans (ArmPlan): a discovery of part of the official
	// conc-list (--conc-list) plans the others nowhere.
	Planned map[int][]int
	// Grid holds each arm's (Record.Arm) concurrencies in the config
	// before the sweep's --conc-list (ArmPlan.Grid); none for a journal
	// whose binary did not record them.
	Grid map[int][]int
	// Searched holds, in the journal's order, why an adaptive search ran
	// or skipped each point whose records say: the point_skip record of
	// a skipped point (Reason: why it is not needed), else a point_start
	// (Point, Arm, Conc, Probe, Status) whose Reason is the rule that
	// asked for the point's last attempt. Empty for a journal whose
	// binary recorded no reasons, or a sweep that ran every point.
	Searched []Record
}

// Plans are the concurrencies a sweep's start plans per arm, by
// result.Identity.ArmKey (Coverage.Plans); nil when its journal records
// no arms (none, or written before it recorded them).
type Plans map[string][]int

// Plans are the concurrencies c's sweep plans per arm.
func (c Coverage) Plans() Plans {
	if len(c.Arms) == 0 {
		return nil
	}
	p := Plans{}
	for arm, id := range c.Arms {
		p[id.ArmKey()] = c.Planned[arm]
	}
	return p
}

// NotPlanned returns the concurrencies of official (arm id's conc-list
// in the config: its official window, or the grid the sweep narrowed)
// that p does not plan for the arm, in official's order: a discovery
// narrowed with --conc-list left them out, so they are not among its
// points, neither measured nor failed. The one rule of sweep sim
// agreement (knee.WindowPoint.NotMeasured), sweep knees (knee.Arm.
// NotPlanned) and sweep official --propose (propose.Request.NotPlanned).
// Nil when p plans nothing for the arm (no journal's arms, or an arm
// outside the discovery: its own rule).
func (p Plans) NotPlanned(id result.Identity, official []int) []int {
	planned, ok := p[id.ArmKey()]
	if !ok {
		return nil
	}
	var out []int
	for _, c := range official {
		if !slices.Contains(planned, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// ReadCoverage reads dir's journal (ReadJournal) for its Coverage,
// replaying each point's records as a resumed sweep does.
func ReadCoverage(dir string) (Coverage, error) {
	recs, err := ReadJournal(dir)
	if err != nil {
		return Coverage{}, err
	}
	c := Coverage{Results: map[int][]string{}, Arms: map[int]result.Identity{}, Planned: map[int][]int{}, Grid: map[int][]int{}}
	state := map[string]*pointState{}
	last := map[string]Record{}
	// where is each point's arm and concurrency (Arm, Conc).
	where := map[string]Record{}
	var order []string
	// format is the format of the segment read (segmentFormat), first
	// the journal's start's; recordsEnd says of an arm (Record.Arm) that
	// its search's end is recorded if it ended: its last point start and
	// every segment since are of format 1 or later.
	format, first := 0, -1
	searches, recordsEnd := searchState{}, map[int]bool{}
	point := func(id string) *pointState {
		st := state[id]
		if st == nil {
			st = &pointState{}
			state[id] = st
			order = append(order, id)
		}
		return st
	}
	for _, r := range recs {
		if r.Event == EventSweepStart {
			if first < 0 {
				first = r.Format
			}
			if format = segmentFormat(r, first); format < 1 {
				clear(recordsEnd) // an older binary may end any search unrecorded
			}
		}
		if r.Event == EventPointStart && r.Arm != 0 {
			recordsEnd[r.Arm] = format >= 1
		}
		switch {
		case r.Event == EventSweepStart && r.Identity != nil:
			c.Adaptive = c.Adaptive || r.Identity.has(AdaptiveSetting(true))
			for _, a := range r.Arms {
				c.Arms[a.Arm] = a.Identity
				if len(a.Grid) > 0 {
					c.Grid[a.Arm] = a.Grid
				}
				for _, p := range a.Points {
					point(p.Point)
					where[p.Point] = Record{Arm: a.Arm, Conc: p.Conc}
					c.Planned[a.Arm] = append(c.Planned[a.Arm], p.Conc)
				}
			}
			for _, id := range r.Identity.Points {
				point(id)
			}
		case r.Event == EventPointSkip || r.Probe:
			c.Adaptive = true
		}
		searches.apply(r)
		if r.Point == "" {
			continue
		}
		point(r.Point).apply(r, 0)
		w := where[r.Point]
		if r.Arm != 0 {
			w.Arm = r.Arm
		}
		if r.Conc != 0 {
			w.Conc = r.Conc
		}
		where[r.Point] = w
		if r.Event == EventPointSkip {
			last[r.Point] = r
		}
		if r.Event == EventPointEnd && r.Result != "" && !slices.Contains(c.Results[r.Arm], r.Result) {
			c.Results[r.Arm] = append(c.Results[r.Arm], r.Result)
		}
	}
	for _, id := range order {
		switch st := state[id]; {
		case st.status == StatusSkipped && last[id].Reason != "":
			c.Searched = append(c.Searched, last[id])
		case st.why != "":
			w := where[id]
			c.Searched = append(c.Searched, Record{Event: EventPointStart, Point: id, Arm: w.Arm, Conc: w.Conc, Probe: st.probe, Status: st.status, Reason: st.why})
		}
		switch st := state[id]; st.status {
		case StatusSkipped:
			c.Skipped = append(c.Skipped, last[id])
		case "", StatusInterrupted:
			w := where[id]
			c.Unfinished = append(c.Unfinished, Record{Point: id, Arm: w.Arm, Conc: w.Conc, Status: st.status})
		case StatusFailed:
			if st.diskFull { // the sweep stopped on it: a resume runs it
				w := where[id]
				c.Unfinished = append(c.Unfinished, Record{Point: id, Arm: w.Arm, Conc: w.Conc, Status: StatusInterrupted})
				continue
			}
			fallthrough
		case StatusOK:
			w := where[id]
			if st.status == StatusFailed {
				c.Failed = append(c.Failed, Record{Point: id, Arm: w.Arm, Conc: w.Conc, Status: st.status, Error: st.err,
					Result: st.result, Attempt: st.attempts, Probe: st.probe})
			}
			if st.probe && c.Adaptive && recordsEnd[w.Arm] && !searches[w.Arm] && !failedForGood(dir, id, w.Conc, st) {
				c.Unfinished = append(c.Unfinished, Record{Point: id, Arm: w.Arm, Conc: w.Conc, Status: st.status, Probe: true})
			}
		}
	}
	return c, nil
}
