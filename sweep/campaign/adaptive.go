package campaign

import (
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/knee"
)

// Adaptive returns an ArmOptions.Choose for adaptive discovery
// (knee.NextStep) over the results in the sweep directory dir: a point
// counts as measured when it ran in this invocation (Ran) or ended, ok
// or failed, in an earlier one (Job.Earlier, from the journal), read
// alike (runSample: its result file, or a failed run of its kind when it
// left no result, which for a probe is a failure a full-length run may
// pass); the points the search asks for are run next, in its order, one
// server for the arm throughout, the points it asks for as probes
// (Point.AsProbe) where they have a probe client. A probe that the
// search asks for again (it failed the way a short run fails, or its KV
// pool came near full and the verdict hangs on it: see knee.NextStep)
// runs at the full length; its result is the point's reading, and the
// probe's directory is kept beside it (ClearPointDir: DIR/ID.probe/),
// which readers leave out of the reading (knee.Sample.Superseded).
//
// Because the choice depends only on the results on disk and how the
// journal says each point last ran, a resumed sweep chooses as the
// interrupted one would have: a point still to run whose full-length run
// replaced a probe (interrupted, or failed and retried) is read as that
// kept probe, or, interrupted in the probe's search pass, as the failed
// probe that left no result to keep (Job.Earlier), so the search asks
// for the full length again, not for the probe; and a probe that ended
// in an earlier invocation, complete or failed (with no retry left, or
// held: below; with or without a result), whose full length the search
// asks for (the sweep was killed between the two) runs at the full
// length though the job does not hold it.
//
// A failed point is read as it failed for the rest of its arm's search
// pass (a probe a short window explains runs at the full length next;
// one failed for good is stepped past), also by a resume that goes on
// with a killed pass: Run holds a point failed with a retry left out of
// the job until the arm's search records its end (search_end). In Run's
// next round it is to run again (a retry): the search reads none of its
// earlier attempts but a kept probe and asks for it as for a point never
// run, or not at all (it is then given up on). A failed probe's
// full-length run is the point's next attempt, so it counts against
// Options.Retries as a retry does.
//
// Run forms a resume's jobs with the same function (Options.Choose): an
// arm whose every point is done gets a job, holding no points, exactly
// when this asks for such a probe, and none when the search is finished
// with it.
//
// Each point it returns is a copy that says why the search asks for it
// (Point.Why); AdaptiveEnd says why of the points it does not ask for.
func Adaptive(dir string, o knee.SearchOptions) func(Job, map[string]Ran) []*Point {
	return func(job Job, ran map[string]Ran) []*Point {
		step, candidates, pending := search(dir, o, job, ran)
		var out []*Point
		for _, c := range step.Conc {
			for _, p := range candidates {
				if p.Conc() != c || step.Probe && !pending[p.ID] {
					continue
				}
				if step.Probe {
					p = p.AsProbe()
				}
				if ran[p.ID].allows(p) {
					q := *p
					q.Why = step.Why[c]
					out = append(out, &q)
				}
			}
		}
		return out
	}
}

// AdaptiveEnd returns an ArmOptions.Ended for Adaptive over the sweep
// directory dir: the search's last step, read as Adaptive reads it.
func AdaptiveEnd(dir string, o knee.SearchOptions) func(Job, map[string]Ran) SearchEnd {
	return func(job Job, ran map[string]Ran) SearchEnd {
		step, _, _ := search(dir, o, job, ran)
		end := SearchEnd{Skipped: map[string]string{}, Verdict: step.Done}
		for _, p := range job.Arm.Points {
			if why := step.Skipped[p.Conc()]; why != "" {
				end.Skipped[p.ID] = why
			}
		}
		return end
	}
}

// search is the search's next step for job after what ran (Adaptive's
// reading of the directory dir), the points it may run (candidates: the
// job's, and the probes an earlier invocation ended) and which of them
// the job holds (pending).
func search(dir string, o knee.SearchOptions, job Job, ran map[string]Ran) (step knee.Step, candidates []*Point, pending map[string]bool) {
	pending = map[string]bool{}
	for _, p := range job.Points {
		pending[p.ID] = true
	}
	var grid []int
	var measured []knee.Sample
	candidates = job.Points
	for _, p := range job.Arm.Points {
		grid = append(grid, p.Conc())
		r := ran[p.ID]
		if pending[p.ID] && !r.Any() {
			// To run (again): an earlier attempt's file does not count,
			// the probe a full-length attempt replaced does: kept, or,
			// when the attempt was interrupted in the probe's pass
			// (Job.Earlier), a probe that left no result to keep.
			if smp, ok := keptProbe(dir, p.ID); ok {
				measured = append(measured, smp)
			} else if job.Earlier[p.ID].Probe {
				measured = append(measured, failedRun(p.Conc(), Ran{Probe: true}))
			}
			continue
		}
		last := r
		if !r.Any() {
			last = job.Earlier[p.ID]
		}
		smp, ok := runSample(result.PointPath(dir, p.ID), p.Conc(), last)
		if !ok {
			continue
		}
		measured = append(measured, smp)
		if smp.Probe && !pending[p.ID] && !r.Any() {
			// A probe ended in an earlier invocation (complete, or
			// failed with no retry left or held by Run): the search
			// may ask for its full length, which that invocation was
			// killed before it started.
			candidates = append(candidates, p)
		}
	}
	return knee.NextStep(grid, measured, o), candidates, pending
}

// noResult is the Excluded reason of a run that left no readable result.
const noResult = "the point failed without a result"

// runSample is what the search reads of a point (at conc) whose result
// file is path and whose last run ended as last says (a probe or the full
// length; none: not known to have run): its result file's sample, but a
// probe's file does not stand for a full-length run (that run failed
// before it cleared the point's directory); a run that left no readable
// result is a failure of its kind with no reading, which for a probe is
// a failure a full-length run may pass (knee.Sample.FailedForGood is
// false). ok is false when there is nothing to read. Adaptive reads a
// point this invocation ran (Ran) and one an earlier invocation ran
// (Job.Earlier) through it, and ReadCoverage a killed search's probes,
// so the three read one sample.
func runSample(path string, conc int, last Ran) (smp knee.Sample, ok bool) {
	smp, ok, err := knee.ReadFile(path)
	switch {
	case err == nil && ok && !(last.Full && smp.Probe):
		return smp, true
	case last.Any():
		return failedRun(conc, last), true
	}
	return knee.Sample{}, false
}

// failedRun is a run at conc, ended as last says, that left no readable
// result: a failure of its kind with no reading.
func failedRun(conc int, last Ran) knee.Sample {
	return knee.Sample{Conc: conc, Probe: !last.Full, Excluded: noResult}
}

// AdaptiveFor is Adaptive over the sweep directory dir of schedule s,
// whose full points run duration seconds (0: the row's): the probes'
// noise is scaled against the full points' length.
func AdaptiveFor(dir string, s *Schedule, duration int) func(Job, map[string]Ran) []*Point {
	return Adaptive(dir, searchOptions(s, duration))
}

// AdaptiveEndFor is AdaptiveEnd over the sweep directory dir of schedule
// s, as AdaptiveFor searches it.
func AdaptiveEndFor(dir string, s *Schedule, duration int) func(Job, map[string]Ran) SearchEnd {
	return AdaptiveEnd(dir, searchOptions(s, duration))
}

// searchOptions are the search's options for schedule s, whose full
// points run duration seconds (0: the row's): the probes' noise is
// scaled against the full points' length.
func searchOptions(s *Schedule, duration int) knee.SearchOptions {
	p := s.Points[0].Plan
	return knee.SearchOptions{FullSeconds: float64(recipes.Duration(&p.Row, p.Fast, duration))}
}
