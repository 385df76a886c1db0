package propose

import (
	"fmt"

	"sweep/configs"
	"sweep/sweep/knee"
)

// CheckResults refuses discovery results an official matrix must not
// come from, naming the first offending file: a concurrency above
// configs.MaxConc (a broken or forged result, never proposed), and
// results of sweep's simulated engine unless allowSimulated (then Entry
// says the proposal was simulated).
func CheckResults(rs []*knee.Result, allowSimulated bool) error {
	for _, r := range rs {
		for _, s := range r.Arm.Samples {
			if s.Conc > configs.MaxConc || s.Conc < 1 {
				return fmt.Errorf("%s: conc %d is not a concurrency a sweep runs (1 to %d): a broken result; remove it from the discovery results", s.File, s.Conc, configs.MaxConc)
			}
		}
	}
	if allowSimulated {
		return nil
	}
	for _, r := range rs {
		if r.Arm.Simulated && len(r.Arm.Samples) > 0 {
			return fmt.Errorf("%s: a simulated result (\"simulated\": true): an official matrix comes from measurements of real engines; "+
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
