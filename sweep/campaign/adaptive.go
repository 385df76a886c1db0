package campaign

import (
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/knee"
)

// Adaptive returns an ArmOptions.Choose for adaptive discovery
// (knee.NextStep) over the results in the sweep directory dir: a point
// counts as measured when it completed in an earlier invocation or ran in
// this one (a run that left no result counts as failed); the points the
// search asks for are run next, in its order, one server for the arm
// throughout, the points it asks for as probes (Point.AsProbe) where they
// have a probe client. A probe that the search asks for again (it failed
// the way a short run fails, or its KV pool came near full and the
// verdict hangs on it: see
// knee.NextStep) runs at the full length; its result is the point's
// reading, and the probe's directory is kept beside it
// (ClearPointDir: DIR/ID.probe/), which readers leave out of the reading
// (knee.Sample.Superseded). Because the choice depends only on the
// results on disk, a resumed sweep chooses as the interrupted one would
// have: a point still to run whose full-length run replaced a probe
// (interrupted, or failed and retried) is read as that kept probe, so the
// search asks for the full length again, not for the probe; and a probe
// complete in an earlier invocation whose full length the search asks
// for (the sweep was killed between the two) runs at the full length
// though the job does not hold it. Run forms a resume's jobs with the
// same function (Options.Choose): an arm whose every point is done gets
// a job, holding no points, exactly when this asks for such a probe, and
// none when the search is finished with it.
func Adaptive(dir string, o knee.SearchOptions) func(Job, map[string]Ran) []*Point {
	return func(job Job, ran map[string]Ran) []*Point {
		pending := map[string]bool{}
		for _, p := range job.Points {
			pending[p.ID] = true
		}
		var grid []int
		var measured []knee.Sample
		candidates := job.Points
		for _, p := range job.Arm.Points {
			grid = append(grid, p.Conc())
			r := ran[p.ID]
			if pending[p.ID] && !r.Any() {
				// To run (again): an earlier attempt's file does not count,
				// the probe a full-length attempt replaced does.
				if smp, ok := keptProbe(dir, p.ID); ok {
					measured = append(measured, smp)
				}
				continue
			}
			smp, ok, err := knee.ReadFile(result.PointPath(dir, p.ID))
			switch {
			case err == nil && ok && !(r.Full && smp.Probe): // a probe's file is not the full run's
				measured = append(measured, smp)
				if smp.Probe && !pending[p.ID] && !r.Any() {
					// A probe complete in an earlier invocation: the search
					// may ask for its full length, which that invocation
					// was killed before it started.
					candidates = append(candidates, p)
				}
			case r.Any():
				measured = append(measured, knee.Sample{Conc: p.Conc(), Probe: !r.Full, Excluded: "the point failed without a result"})
			}
		}
		var out []*Point
		step := knee.NextStep(grid, measured, o)
		for _, c := range step.Conc {
			for _, p := range candidates {
				if p.Conc() != c || step.Probe && !pending[p.ID] {
					continue
				}
				if step.Probe {
					p = p.AsProbe()
				}
				if ran[p.ID].allows(p) {
					out = append(out, p)
				}
			}
		}
		return out
	}
}

// AdaptiveFor is Adaptive over the sweep directory dir of schedule s,
// whose full points run duration seconds (0: the row's): the probes'
// noise is scaled against the full points' length.
func AdaptiveFor(dir string, s *Schedule, duration int) func(Job, map[string]Ran) []*Point {
	p := s.Points[0].Plan
	full := recipes.Duration(&p.Row, p.Fast, duration)
	return Adaptive(dir, knee.SearchOptions{FullSeconds: float64(full)})
}
