package main

import "sweep/sweep/run"

// powerGPUsUsage is the help of --power-gpus (sweep run, discover, official).
const powerGPUsUsage = "GPUs the power lane integrates: all (InferenceX: every GPU the monitor recorded, so a point using part of the node is never power-valid) or allocated (only the point's: its *_VISIBLE_DEVICES, else 0..TP*PP*PCP-1); default from SWEEP_POWER_GPUS, else all"

// checkPowerGPUs rejects a --power-gpus value other than all or allocated.
func checkPowerGPUs(v string) error {
	switch v {
	case "", run.PowerGPUsAll, run.PowerGPUsAllocated:
		return nil
	}
	return flagErrorf("--power-gpus %q: want %s or %s", v, run.PowerGPUsAll, run.PowerGPUsAllocated)
}
