package main

import (
	"path/filepath"

	"sweep/simengine"
)

// checkSimCalibration checks a --sim-calibration file (it needs
// --simulate and must load) and makes its path absolute, as the engine
// runs in another directory.
func checkSimCalibration(simulate bool, path *string) error {
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
	if _, err := simengine.LoadCalibration(abs); err != nil {
		return flagErrorf("--sim-calibration: %v", err)
	}
	*path = abs
	return nil
}
