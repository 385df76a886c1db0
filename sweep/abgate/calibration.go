package abgate

import (
	"fmt"

	"sweep/configs"
	"sweep/internal/plural"
)

// CalibrationFile is the name of an A/A calibration in a leg's directory.
const CalibrationFile = "calibration.json"

// Calibration is an A/A measurement (bfcl-ab.md §5.3): Runs identical
// runs of one arm, the per-category flip rate between them and the
// false-alarm rate of the gate on A-against-A comparisons. Compare uses
// its flip rates to say how many replicates an INCONCLUSIVE leg needs.
type Calibration struct {
	Model string `json:"model"`
	// Arm is the arm that ran against itself ("a").
	Arm string `json:"arm"`
	// Simulated says whether the runs were sweep's simulated engine and
	// bfcl (sweep ab calibrate --simulate): their flip rate is the
	// simulated case model's. nil in a file written before sweep recorded
	// it.
	Simulated *bool `json:"simulated,omitempty"`
	// Runs is the number of identical runs (roots) of the arm.
	Runs int `json:"runs"`
	// Replicates is the number of runs per side in each A/A comparison
	// (the leg's replicates per arm).
	Replicates int `json:"replicates"`
	// Tolerance is the gate's tolerated drop in points.
	Tolerance  float64         `json:"tolerance"`
	Categories []CategoryFlips `json:"categories"`
	// Overall pools every case (the primary, weighted metric).
	Overall CategoryFlips `json:"overall"`
	// FalseAlarm is nil when the data is incomplete.
	FalseAlarm *FalseAlarm `json:"false_alarm"`
	// ReplicatesFor80Power is the replicates per arm the weighted Δ needs
	// to detect a drop of Tolerance with a one-sided 5 % test and 80 %
	// power, from the measured flip rates (0 when incomplete).
	ReplicatesFor80Power int       `json:"replicates_for_80_power"`
	Roots                []string  `json:"roots"`
	Problems             []Problem `json:"problems"`

	// File is where the calibration was read from ("" when computed).
	File string `json:"-"`
}

// CategoryFlips is one category's flip rate between identical runs: the
// share of (case, pair of runs) whose verdicts differ, an unbiased
// estimate of mean 2p(1−p) over the cases.
type CategoryFlips struct {
	Category string  `json:"category"`
	Cases    int     `json:"cases"`
	FlipRate float64 `json:"flip_rate"`
	// Unstable counts the cases whose verdict is not the same in every run.
	Unstable int `json:"unstable_cases"`
}

// FalseAlarm is the gate run on A-against-A comparisons (disjoint sets of
// Replicates runs on each side), where every REGRESSION is a false alarm,
// and the rates the measured flips predict for one such comparison.
type FalseAlarm struct {
	Comparisons int `json:"comparisons"`
	Regression  int `json:"regression"`
	NotPass     int `json:"not_pass"`
	// PredictedRegression is P(U < −tolerance) and PredictedNotPass
	// P(L ≤ −tolerance) under no difference, normal approximation with
	// the measured flip rates.
	PredictedRegression float64 `json:"predicted_regression"`
	PredictedNotPass    float64 `json:"predicted_not_pass"`
}

// FlipRate returns the calibration's A/A flip rate of category, and
// whether it has one.
func (c *Calibration) FlipRate(category string) (float64, bool) {
	for _, cf := range c.Categories {
		if cf.Category == category {
			return cf.FlipRate, true
		}
	}
	return 0, false
}

// Source names the calibration in notes: its file and runs.
func (c *Calibration) Source() string {
	file := c.File
	if file == "" {
		file = "A/A calibration"
	}
	return fmt.Sprintf("%s: %d identical runs of arm %s", file, c.Runs, c.Arm)
}

// CheckFor refuses c for the comparison of a leg run on real engines
// (simulated false) when c was measured on simulated ones: its flip rates
// are the simulated case model's, and would size the replicates of a
// real leg. It returns a warning (or "") when c does not say (a file
// written before sweep recorded it) or when c is real and the leg
// simulated.
func (c *Calibration) CheckFor(simulated bool) (warning string, err error) {
	name := c.File
	if name == "" {
		name = "the A/A calibration"
	}
	switch {
	case c.Simulated == nil && !simulated:
		return fmt.Sprintf("%s does not say whether it was simulated (written by an older sweep): if it was (sweep ab calibrate --simulate), its flip rates are not the model's; rerun sweep ab calibrate without --simulate", name), nil
	case c.Simulated != nil && *c.Simulated && !simulated:
		return "", fmt.Errorf("%s is a simulated A/A calibration (sweep ab calibrate --simulate): its flip rates are the simulated case model's, not the model's: calibrate the leg on its real engines (sweep ab calibrate LEG without --simulate) and give that calibration.json, or run this leg with --simulate", name)
	case c.Simulated != nil && !*c.Simulated && simulated:
		return fmt.Sprintf("%s was measured on real engines; this leg is simulated", name), nil
	}
	return "", nil
}

// ReadCalibration reads a calibration written by WriteCalibrationJSON and
// refuses one that cannot inform a comparison (incomplete, too few runs,
// rates out of range).
func ReadCalibration(file string) (*Calibration, error) {
	var c Calibration
	if _, err := configs.ReadJSON(file, &c, "the "+CalibrationFile+" sweep ab calibrate writes"); err != nil {
		return nil, err
	}
	switch {
	case len(c.Problems) > 0:
		return nil, fmt.Errorf("%s: the A/A calibration is incomplete (%s, first: %s %s: %s): rerun sweep ab calibrate", file, plural.Count(len(c.Problems), "problem", "problems"), c.Problems[0].Reason, c.Problems[0].categoryText(), c.Problems[0].Detail)
	case c.Runs < 2:
		return nil, fmt.Errorf("%s: runs %d: an A/A calibration needs at least 2 identical runs", file, c.Runs)
	case c.Model == "":
		return nil, fmt.Errorf("%s: no model", file)
	case len(c.Categories) == 0:
		return nil, fmt.Errorf("%s: no categories", file)
	}
	for i, cf := range c.Categories {
		if !(cf.FlipRate >= 0 && cf.FlipRate <= 1) || cf.Cases <= 0 {
			return nil, fmt.Errorf("%s: categories[%d] (%s): flip_rate %g over %d cases: want a rate in [0, 1] over at least one case", file, i, cf.Category, cf.FlipRate, cf.Cases)
		}
	}
	c.File = file
	return &c, nil
}
