package main

import (
	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/simengine"
	"sweep/sweep/run"
)

const (
	simClockUsage = "with --simulate: virtual (simulated time advanced by events: the same numbers for a seed whatever the machine load; needs the built-in load generator) or wall (compressed by --time-scale; a real aiperf needs it at --time-scale 1)"
)

// simFlags are the flags of run.Mode: the engine (real or simulated, on
// which clock and GPU) and the load client of the points a command runs.
type simFlags struct{ run.Mode }

func (s *simFlags) bind(fs *pflag.FlagSet, fault bool, gpuUsage string) {
	bindSimFlags(fs, &s.Mode, fault, gpuUsage)
}

// bindSimFlags binds --simulate, --aiperf, --builtin-client, --time-scale,
// --sim-clock, with fault --sim-fault, --sim-gpu (gpuUsage is its help),
// --sim-calibration and --power-gpus to s.
func bindSimFlags(fs *pflag.FlagSet, s *run.Mode, fault bool, gpuUsage string) {
	fs.BoolVar(&s.Simulate, "simulate", false, "run against sweep's simulated engine instead of the real one")
	fs.StringVar(&s.Aiperf, "aiperf", "", "aiperf program to run (default: aiperf on PATH, else the built-in load generator)")
	fs.BoolVar(&s.Builtin, "builtin-client", false, "use the built-in load generator even when aiperf is installed")
	cli.FloatVar(fs, &s.TimeScale, "time-scale", run.DefaultTimeScale, "with --simulate --sim-clock wall: simulated seconds per wall second", timeScale)
	fs.StringVar(&s.SimClock, "sim-clock", run.ClockVirtual, simClockUsage)
	if fault {
		fs.StringVar(&s.SimFault, "sim-fault", "", "with --simulate: engine faults to inject, comma-separated ("+simengine.FaultForms()+"; see sweep sim-engine --help)")
	}
	fs.StringVar(&s.SimGPU, "sim-gpu", "", gpuUsage)
	fs.StringVar(&s.SimCalib, "sim-calibration", "", "with --simulate: the simulated engine's step costs and KV pool per arm from FILE (sweep sim calibrate)")
	fs.StringVar(&s.PowerGPUs, "power-gpus", "", powerGPUsUsage)
}
