package main

import (
	"math"

	"github.com/spf13/pflag"

	"sweep/recipes"
	"sweep/sweep/run"
)

// defaultSimTimeScale compresses a simulated point so that the official
// 3,600 s profile runs in about 25 s of wall time.
const defaultSimTimeScale = 150

// --sim-clock: the simulated engine's virtual clock (the default) or a
// compressed wall clock.
const (
	simClockVirtual = "virtual"
	simClockWall    = "wall"
	simClockUsage   = "with --simulate: virtual (simulated time advanced by events: the same numbers for a seed whatever the machine load; needs the built-in load generator) or wall (compressed by --time-scale; a real aiperf needs it at --time-scale 1)"
)

// simFlags choose the engine (real or simulated, on which clock and GPU)
// and the load client of the points a command runs: the one place where
// those flags become a run.Setup and the runner's options.
type simFlags struct {
	Simulate  bool
	Aiperf    string // path, "" = PATH lookup then the built-in load generator
	Builtin   bool   // force the built-in load generator
	TimeScale float64
	SimClock  string
	SimFault  string
	SimGPU    string
	SimCalib  string // --sim-calibration, an absolute path once checked
	PowerGPUs string // --power-gpus
}

// bind binds --simulate, --aiperf, --builtin-client, --time-scale,
// --sim-clock, with fault --sim-fault, --sim-gpu (gpuUsage is its help),
// --sim-calibration and --power-gpus.
func (s *simFlags) bind(fs *pflag.FlagSet, fault bool, gpuUsage string) {
	fs.BoolVar(&s.Simulate, "simulate", false, "run against sweep's simulated engine instead of the real one")
	fs.StringVar(&s.Aiperf, "aiperf", "", "aiperf program to run (default: aiperf on PATH, else the built-in load generator)")
	fs.BoolVar(&s.Builtin, "builtin-client", false, "use the built-in load generator even when aiperf is installed")
	fs.Float64Var(&s.TimeScale, "time-scale", defaultSimTimeScale, "with --simulate --sim-clock wall: simulated seconds per wall second")
	fs.StringVar(&s.SimClock, "sim-clock", simClockVirtual, simClockUsage)
	if fault {
		fs.StringVar(&s.SimFault, "sim-fault", "", "with --simulate: engine fault to inject (never-ready, crash:N, hang:N, slow-metrics:D, malformed-metrics)")
	}
	fs.StringVar(&s.SimGPU, "sim-gpu", "", gpuUsage)
	fs.StringVar(&s.SimCalib, "sim-calibration", "", "with --simulate: the simulated engine's step costs and KV pool per arm from FILE (sweep sim calibrate)")
	fs.StringVar(&s.PowerGPUs, "power-gpus", "", powerGPUsUsage)
}

// checkTimeScale rejects a time scale that is not a positive finite
// number (NaN fails every comparison).
func checkTimeScale(scale float64) error {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return flagErrorf("--time-scale %g: want a positive finite number", scale)
	}
	return nil
}

// checkSimClock rejects a --sim-clock value other than virtual or wall.
func checkSimClock(c string) error {
	if c != simClockVirtual && c != simClockWall {
		return flagErrorf("--sim-clock %q: want %s or %s", c, simClockVirtual, simClockWall)
	}
	return nil
}

// setup is the run.Setup the flags choose, planned for aiperfVersion; the
// client is run.ChooseClient's (aiperf or the built-in load generator,
// and why). In an image (inImage) --aiperf names a program there, as
// given.
func (s *simFlags) setup(aiperfVersion string, inImage bool) (run.Setup, error) {
	setup := run.Setup{Simulate: s.Simulate, TimeScale: s.TimeScale, WallClock: s.SimClock == simClockWall, SimFault: s.SimFault, SimGPU: s.SimGPU, SimCalibration: s.SimCalib,
		AiperfSchema: "aiperf@" + aiperfSchemaVersion(aiperfVersion), PowerGPUs: s.PowerGPUs}
	if inImage {
		// nothing of this host's PATH applies
		setup.Aiperf, setup.ClientWhy = s.Aiperf, "--launch: --aiperf in the image"
		if s.Aiperf == "" {
			setup.ClientWhy = "--launch: the image's built-in load generator"
		}
		return setup, nil
	}
	choice, err := run.ChooseClient(run.ClientRequest{Aiperf: s.Aiperf, Builtin: s.Builtin, Simulate: s.Simulate, WallClock: setup.WallClock, TimeScale: s.TimeScale})
	if err != nil {
		return run.Setup{}, &FlagError{Err: err}
	}
	setup.Aiperf, setup.ClientWhy = choice.Aiperf, choice.Why
	return setup, nil
}

// pointOptions are the runner's options po with a simulation's defaults
// (run.Options.Simulated; no stop grace unless --stop-grace was given).
func (s *simFlags) pointOptions(po run.Options, stopGraceSet bool) run.Options {
	if !s.Simulate {
		return po
	}
	if !stopGraceSet {
		po.StopGrace = 0 // the simulation's default
	}
	return po.Simulated(s.TimeScale)
}

func aiperfSchemaVersion(v string) string {
	if v == "fork" {
		return recipes.ForkAiperfVersion
	}
	return v
}

// defaultMultiNodeTimeScale is a simulated multi-node point's time scale:
// on the wall clock every wall-clock delay of the host (scheduling, the
// router's hops) is multiplied by it, so at the single-node default (150)
// a conc-8 point on a loaded 2-core host measured a TTFT p50 of 25 s
// where at 10x it measured 1.1 s; 20x runs a 1200 s point in 1 minute.
const defaultMultiNodeTimeScale = 20

// multiNodeClock makes the wall clock at defaultMultiNodeTimeScale the
// default of a simulated disaggregated multi-node point (its workers are
// separate processes: the virtual clock is kept by one engine) and
// refuses --sim-clock virtual; clockSet and scaleSet are --sim-clock and
// --time-scale given.
func (s *simFlags) multiNodeClock(clockSet, scaleSet bool) error {
	switch {
	case clockSet && s.SimClock == simClockVirtual:
		return &FlagError{Err: run.ErrVirtualMultiNode}
	case !clockSet:
		s.SimClock = simClockWall
	}
	if !scaleSet {
		s.TimeScale = defaultMultiNodeTimeScale
	}
	return nil
}
