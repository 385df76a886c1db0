package leg

import (
	"context"
	"fmt"
	"io"

	"sweep/configs"
	"sweep/internal/plural"
	"sweep/sweep/abgate"
)

// CalibrationTable is the Markdown form of a leg's calibration, beside
// abgate.CalibrationFile.
const CalibrationTable = "calibration.md"

// Calibration is the outcome of Calibrate.
type Calibration struct {
	Calibration *abgate.Calibration
	// Roots are arm A's BFCL_PROJECT_ROOTs, one per run.
	Roots []string
	// Output is the calibration: its files in the leg's directory and
	// their content; the JSON file is what Options.Calibration (sweep ab
	// run --calibration) reads.
	Output
}

// Calibrate runs arm A against itself (bfcl-ab.md §5.3, §6 step 5): its
// server comes up once, runs identical runs (0: twice the leg's
// replicates, at least 2) in fresh roots, and stops; then the flip rate
// between the runs and the gate's false alarms on A-against-A comparisons
// of the leg's replicates per side are measured and written. Like Run, it
// returns an error only for unusable options, an unusable directory,
// cancellation or a file that cannot be written (a *NotWrittenError,
// returned with the Calibration); a failed stage is a Problem of the
// calibration.
func Calibrate(ctx context.Context, p *Plan, o Options, runs int) (*Calibration, error) {
	if runs == 0 {
		runs = max(2, 2*p.Leg.Replicates)
	}
	if runs < 2 {
		return nil, fmt.Errorf("calibrate: %s: an A/A calibration needs at least 2", plural.Count(runs, "run", "runs"))
	}
	if runs > 2*configs.MaxABReplicates {
		return nil, fmt.Errorf("calibrate: %s: at most %d (twice the most replicates a leg may have)", plural.Count(runs, "run", "runs"), 2*configs.MaxABReplicates)
	}
	since, release, err := o.defaults(p, false)
	if err != nil {
		return nil, err
	}
	defer release()
	arm := &p.Arms[0]
	o.Progress(fmt.Sprintf("A/A calibration: %d identical runs of arm %s (%s)", runs, arm.Label, arm.Name))
	ran, err := runArm(ctx, p, arm, o, runs)
	if err != nil {
		return nil, err
	}
	roots, probs := ran.roots, ran.problems
	cal, err := abgate.Calibrate(ctx, abgate.CalibrateOptions{
		Roots: roots, Model: p.Leg.Model, Arm: arm.Label, Categories: p.Categories,
		Replicates: min(max(1, p.Leg.Replicates), runs/2), Tolerance: p.Leg.Tolerance,
		Read: readOptions(p, since, ran.kept), Problems: probs,
		Simulated: &o.Setup.Simulate,
	})
	if err != nil {
		return nil, err
	}
	heading := fmt.Sprintf("## BFCL A/A calibration: %s (%s): arm %s (%s) against itself%s\n\n", p.Leg.Name, p.Leg.Model, arm.Label, arm.Name, simulatedSuffix(o.Setup.Simulate))
	out, err := o.writeOutputs(CalibrationTable, heading, func(w io.Writer) error { return abgate.WriteCalibrationTable(w, cal) },
		abgate.CalibrationFile, func(w io.Writer) error { return abgate.WriteCalibrationJSON(w, cal) })
	if out == nil {
		return nil, err
	}
	if err == nil {
		cal.File = out.JSON
	}
	return &Calibration{Calibration: cal, Roots: roots, Output: *out}, err
}
