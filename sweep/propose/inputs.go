package propose

import (
	"strings"

	"sweep/configs"
	"sweep/internal/usage"
	"sweep/sweep/knee"
)

// CheckResults refuses discovery results an official matrix must not
// come from, naming the first offending file: a concurrency above
// configs.MaxConc (a broken or forged result, never proposed), and
// results of sweep's simulated engine unless allowSimulated (then Entry
// says the proposal was simulated). Either is a *usage.Error: the input
// is not one to propose from as asked.
func CheckResults(rs []*knee.Result, allowSimulated bool) error {
	for _, r := range rs {
		for _, s := range r.Arm.Samples {
			if s.Conc > configs.MaxConc || s.Conc < 1 {
				return usage.Errorf("%s: conc %d is not a concurrency a sweep runs (1 to %d): a broken result; remove it from the discovery results", s.File, s.Conc, configs.MaxConc)
			}
		}
	}
	if allowSimulated {
		return nil
	}
	for _, r := range rs {
		if r.Arm.Simulated && len(r.Arm.Samples) > 0 {
			return usage.Errorf("%s: a simulated result (\"simulated\": true): an official matrix comes from measurements of real engines; "+
				"pass --allow-simulated to propose from simulated results anyway (the changelog entry then says so)", r.Arm.Samples[0].File)
		}
	}
	return nil
}

// simulated reports whether any planned arm's results were simulated.
func simulated(plans []ArmPlan) bool {
	for _, p := range plans {
		if p.Result.Arm.Simulated {
			return true
		}
	}
	return false
}

// CheckFinished refuses a discovery that has not finished (r.Incomplete,
// or an arm with points its sweep has not finished: knee.Result.
// Unfinished) unless r.AllowUnfinished: an official conc-list read from
// it would take each unfinished arm's grid as ending where the sweep
// stopped, though its knee, peak and frontier points, and so the other
// arms' places on the frontier, could move with the points not run.
func CheckFinished(r Request) error {
	s := unfinishedNote(r)
	if s == "" || r.AllowUnfinished {
		return nil
	}
	return usage.Errorf("%s: the discovery has not finished, so nothing is proposed from it: %s; a proposal now would read its unfinished arms' grids as ending where the sweep stopped, "+
		"though their knees, peaks and frontier points could move with the points not run: propose once it has finished, "+
		"or pass --allow-unfinished to propose its finished arms now and leave the unfinished arms' conc-lists as they are", r.From, s)
}

// unfinishedNote says what of r's discovery has not finished:
// r.Incomplete, else the arms whose results name unfinished points
// ("qwen3.5 ... tp8 c40, c48"); "" when it has finished.
func unfinishedNote(r Request) string {
	if r.Incomplete != "" {
		return r.Incomplete
	}
	var arms []string
	for _, res := range r.Results {
		if len(res.Unfinished) > 0 {
			arms = append(arms, res.Arm.Identity.Label()+" "+concs(res.Unfinished))
		}
	}
	return strings.Join(arms, "; ")
}
