package main

import (
	"fmt"
	"io"
	"path/filepath"

	"sweep/simengine"
)

// checkSimCalibration checks a --sim-calibration file (it needs
// --simulate and must load) and makes its path absolute, as the engine
// runs in another directory. A calibration fitted on simulated results
// is warned of on errOut (nil: not).
func checkSimCalibration(simulate bool, path *string, errOut io.Writer) error {
	if *path == "" {
		return nil
	}
	if !simulate {
		return flagErrorf("--sim-calibration needs --simulate")
	}
	abs, err := filepath.Abs(*path)
	if err != nil {
		return flagErrorf("--sim-calibration: %v", err)
	}
	cal, err := simengine.LoadCalibration(abs)
	if err != nil {
		return flagErrorf("--sim-calibration: %v", err)
	}
	if cal.Simulated && errOut != nil {
		fmt.Fprintf(errOut, "warning: --sim-calibration %s was fitted on simulated results (%s): it reproduces the simulator, not a measured engine\n", *path, cal.Source)
	}
	*path = abs
	return nil
}
