package main

import (
	"fmt"
	"io"
	"os"

	"sweep/sweep/run"
)

// checkSimCalibration checks the calibration file the simulated engines
// will read, before any starts (run.LoadSimCalibration, the one check):
// --sim-calibration (it needs --simulate; its path made absolute, as the
// engines run in another directory), else, simulating, the
// SWEEP_SIM_CALIBRATION they inherit (run.Mode.SimCalibration; left as
// given, the sweep's identity records it so). A calibration fitted on
// simulated results is warned of on errOut (nil: not).
func checkSimCalibration(simulate bool, path *string, errOut io.Writer) error {
	if *path != "" && !simulate {
		return flagErrorf("--sim-calibration needs --simulate")
	}
	m := run.Mode{Simulate: simulate, SimCalib: *path}
	given, from := m.SimCalibration(os.LookupEnv)
	if given == "" {
		return nil
	}
	abs, cal, err := run.LoadSimCalibration(from, given)
	if err != nil {
		return err
	}
	if cal.Simulated && errOut != nil {
		fmt.Fprintf(errOut, "warning: %s %s was fitted on simulated results (%s): it reproduces the simulator, not a measured engine\n", from, given, cal.Source)
	}
	if *path != "" {
		*path = abs
	}
	return nil
}
