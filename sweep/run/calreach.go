package run

import (
	"cmp"
	"slices"
	"strings"

	"sweep/internal/simproto"
	"sweep/internal/usage"
	"sweep/metrics/result"
)

// CheckCalibrationReach refuses a calibration (s.SimCalibration, given as
// s.SimCalibrationFrom) that calibrates none of a run's simulated
// engines: cals are what it sets for the run's points or arms
// (Spec.Simulation.Calibration, as FromPlan plans them), named by names.
// A calibration is given to rehearse a measured engine; one whose arms
// match no engine of the run (another GPU, model or layout, a KV cache
// dtype or draft count of another fit) would run every engine on the
// model's step costs and pool, its results uncalibrated with nothing but
// a header line to say so. nil when some engine is calibrated, when the
// run's engines are not known (no point planned, a point whose engines
// the plan does not read), or without a calibration. The error lists the
// file's arms (simengine.ArmCalibration.Describe) and the run's, and the
// fix.
func (s Setup) CheckCalibrationReach(names []string, cals []*result.SimCalibration) error {
	if !s.Simulate || s.SimCalibration == "" || len(cals) == 0 {
		return nil
	}
	for _, c := range cals {
		if c == nil || len(c.Engines) == 0 || slices.ContainsFunc(c.Engines, func(e result.CalibratedEngine) bool { return e.Calibrated }) {
			return nil
		}
	}
	from := cmp.Or(s.SimCalibrationFrom, FlagSimCalibration)
	_, cal, err := LoadSimCalibration(from, s.SimCalibration)
	if err != nil {
		return err
	}
	arms := make([]string, len(cal.Arms))
	for i := range cal.Arms {
		arms[i] = cal.Arms[i].Describe()
	}
	drop := "drop " + FlagSimCalibration
	if from == simproto.EnvCalibration {
		drop = "unset " + simproto.EnvCalibration
	}
	return usage.Errorf("%s %s calibrates none of this run's simulated engines, which would all run on the model's step costs and pool: its arms are %s; the run's are %s (an arm calibrates the engines of its engine, model, GPU, TP, EP, DP attention, host KV tier and role, and of its KV cache dtype's width and draft steps where it names them): give the calibration sweep sim calibrate fitted on these arms' results, or %s to run the model's",
		from, s.SimCalibration, strings.Join(arms, "; "), strings.Join(names, "; "), drop)
}
