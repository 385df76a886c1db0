package run

import (
	"os"
	"path/filepath"
	"strconv"

	"sweep/internal/simproto"
	"sweep/internal/usage"
	"sweep/metrics/power"
	"sweep/recipes"
	"sweep/simengine"
)

// DefaultTimeScale is a simulated point's time scale on the wall clock,
// single-node or multi-node: every wall-clock delay of the host (timers,
// scheduling, the router's hops) is multiplied by it. On an idle 2-core
// host (2026-12-07, main f188a91) the MI325X Qwen3.5 FP8 TP4 c32 point
// fell 64 % behind its schedule at 150x (invalid; TTFT p50 4.8 s against
// the virtual clock's 0.81 s) and 7 % at 50x (TTFT p50 1.25 s); at 20x it
// kept its schedule (1200 s profile: TTFT p50 0.85 s against 0.84 s,
// throughput within 0.3 %; 3600 s: 0.97 s against 0.81 s), and TP8 c64
// fell 1 % behind (0.54 s against 0.44 s). Before, a multi-node conc-8
// point on a loaded host measured a TTFT p50 of 25 s at 150x and 1.1 s at
// 10x. 20x runs a 1200 s point in a minute, a 3600 s one in three.
const DefaultTimeScale = 20

// The simulated engine's clocks (Mode.SimClock): its virtual clock, or a
// compressed wall clock.
const (
	ClockVirtual = "virtual"
	ClockWall    = "wall"
)

// Mode is what a command's flags choose about the points it runs: the
// engine (real or simulated, on which clock and GPU) and the load client.
// It is the one place where those choices become a Setup and the
// runner's Options.
type Mode struct {
	Simulate  bool
	Aiperf    string // path, "" = PATH lookup then the built-in load generator
	Builtin   bool   // force the built-in load generator
	TimeScale float64
	SimClock  string // ClockVirtual or ClockWall
	SimFault  string
	SimGPU    string
	SimCalib  string // a calibration file, an absolute path once checked
	PowerGPUs string
}

// CheckSimClock rejects a clock other than ClockVirtual or ClockWall.
func CheckSimClock(c string) error {
	if c != ClockVirtual && c != ClockWall {
		return usage.Errorf("--sim-clock %q: want %s or %s", c, ClockVirtual, ClockWall)
	}
	return nil
}

// CheckSimFault rejects a --sim-fault value the simulated engine would
// refuse (simengine.ParseFaults, whose errors name the faults' forms),
// before any engine starts; "" is no fault.
func CheckSimFault(s string) error { return checkFaults("--sim-fault", s) }

// checkFaults is a usage error naming where the faults came from (a flag,
// SWEEP_SIM_FAULT=...) when the simulated engine would refuse them.
func checkFaults(from, s string) error {
	if _, err := simengine.ParseFaults(s); err != nil {
		return usage.Errorf("%s: %w", from, err)
	}
	return nil
}

// FlagSimCalibration is where a calibration given by flag comes from,
// for messages and headers (Setup.SimCalibrationFrom).
const FlagSimCalibration = "--sim-calibration"

// SimCalibration is the calibration file the mode's simulated engines
// read, as given, and where it comes from: --sim-calibration (SimCalib),
// else simproto.EnvCalibration of environ (os.LookupEnv), which every
// simulated engine inherits; "" when neither, or not simulating (a real
// engine reads neither).
func (m *Mode) SimCalibration(environ func(string) (string, bool)) (path, from string) {
	switch v, _ := environ(simproto.EnvCalibration); {
	case m.SimCalib != "":
		return m.SimCalib, FlagSimCalibration
	case m.Simulate && v != "":
		return v, simproto.EnvCalibration
	}
	return "", ""
}

// LoadSimCalibration loads the calibration file path given as from
// (FlagSimCalibration, simproto.EnvCalibration) as every simulated engine
// will (simengine.LoadCalibration: its errors name the file's line and
// column, the key and the values wanted) and makes its path absolute, as
// the engines run in other directories; a usage error names from. The
// one check of a calibration before any engine starts, whichever way it
// is given.
func LoadSimCalibration(from, path string) (abs string, cal *simengine.Calibration, err error) {
	if abs, err = filepath.Abs(path); err != nil {
		return "", nil, usage.Errorf("%s: %w", from, err)
	}
	if cal, err = simengine.LoadCalibration(abs); err != nil {
		return "", nil, usage.Errorf("%s: %w", from, err)
	}
	return abs, cal, nil
}

// Setup is the Setup the mode chooses, planned for aiperfVersion; the
// client is ChooseClient's (aiperf or the built-in load generator, and
// why). In an image (inImage) Aiperf names a program there, as given.
func (m *Mode) Setup(aiperfVersion string, inImage bool) (Setup, error) {
	if m.Simulate {
		// The engine reads SWEEP_SIM_FAULT too (discover's faults): a
		// value it would refuse is refused here, before any engine starts.
		if v := os.Getenv(simproto.EnvFault); v != "" {
			if err := checkFaults(simproto.EnvFault+"="+v, v); err != nil {
				return Setup{}, err
			}
		}
	}
	setup := Setup{Simulate: m.Simulate, TimeScale: m.TimeScale, WallClock: m.SimClock == ClockWall, SimFault: m.SimFault, SimGPU: m.SimGPU,
		AiperfSchema: "aiperf@" + aiperfSchemaVersion(aiperfVersion), PowerGPUs: m.PowerGPUs}
	if path, from := m.SimCalibration(os.LookupEnv); path != "" {
		// The engines inherit SWEEP_SIM_CALIBRATION too: a file they
		// would refuse is refused here, before any engine starts, and
		// the headers and results name it as they name the flag's.
		abs, _, err := LoadSimCalibration(from, path)
		if err != nil {
			return Setup{}, err
		}
		setup.SimCalibration, setup.SimCalibrationFrom = abs, from
	}
	if inImage {
		// nothing of this host's PATH applies
		setup.Aiperf, setup.ClientWhy = m.Aiperf, "--launch: --aiperf in the image"
		if m.Aiperf == "" {
			setup.ClientWhy = "--launch: the image's built-in load generator"
		}
		return setup, nil
	}
	choice, err := ChooseClient(ClientRequest{Aiperf: m.Aiperf, Builtin: m.Builtin, Simulate: m.Simulate, WallClock: setup.WallClock, TimeScale: m.TimeScale})
	if err != nil {
		return Setup{}, &usage.Error{Err: err}
	}
	setup.Aiperf, setup.ClientWhy = choice.Aiperf, choice.Why
	return setup, nil
}

// PointOptions are the runner's options po with a simulation's defaults
// (Options.Simulated; no stop grace unless stopGraceSet).
func (m *Mode) PointOptions(po Options, stopGraceSet bool) Options {
	if !m.Simulate {
		return po
	}
	if !stopGraceSet {
		po.StopGrace = 0 // the simulation's default
	}
	return po.Simulated(m.TimeScale)
}

// TimeScaleMatters reports whether the mode's points run at its time
// scale: simulated on the wall clock. The simulated engine's virtual
// clock ignores it: a point's numbers are the same at any scale.
func (m *Mode) TimeScaleMatters() bool { return m.Simulate && m.SimClock == ClockWall }

// PowerGPUsIn is the power lane's GPU choice of the mode's points in the
// environment environ (os.LookupEnv): PowerGPUs (--power-gpus), else
// EnvPowerGPUs, else PowerGPUsAll, as FromPlan reads it.
func (m *Mode) PowerGPUsIn(environ func(string) (string, bool)) string {
	return powerGPUs(m.PowerGPUs, environ)
}

// EnvValue is a variable of the environment with its effective value.
type EnvValue struct{ Name, Value string }

// MeasuredEnv lists the variables of the environment environ
// (os.LookupEnv) that change what the mode's points measure, each that
// is set to other than its default, with its effective value, one that
// means what the variable's value means (SWEEP_SIM_SEED=007 is 7): the
// power lane's switch (power.EnvEnable, "0" when the lane is off) and,
// simulated, what the simulated processes inherit and no flag sets:
// the engine's seed and faults (simproto.EnvSeed, EnvFault without a
// --sim-fault), its calibration file without --sim-calibration, and the
// simulated GPU tools' node size and faults (EnvSMINodeGPUs,
// EnvSMIFault). Not EnvPowerGPUs (PowerGPUsIn), nor what changes only
// how long a point takes (the simulated model load and warm-up), nor
// what the mode sets itself (the clock, time scale and GPU).
func (m *Mode) MeasuredEnv(environ func(string) (string, bool)) []EnvValue {
	var out []EnvValue
	get := func(name string) string {
		v, _ := environ(name)
		return v
	}
	if !power.LaneFromEnv(environ, false).Enabled {
		out = append(out, EnvValue{power.EnvEnable, "0"})
	}
	if !m.Simulate {
		return out
	}
	if v := get(simproto.EnvSeed); v != "" {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			v = strconv.FormatUint(n, 10)
		}
		if v != "0" { // the simulator's default
			out = append(out, EnvValue{simproto.EnvSeed, v})
		}
	}
	if v := get(simproto.EnvFault); v != "" && m.SimFault == "" {
		out = append(out, EnvValue{simproto.EnvFault, v})
	}
	if v := get(simproto.EnvCalibration); v != "" && m.SimCalib == "" {
		out = append(out, EnvValue{simproto.EnvCalibration, v})
	}
	if n, err := strconv.Atoi(get(simproto.EnvSMINodeGPUs)); err == nil && n > 0 && n != simengine.DefaultNodeGPUs {
		out = append(out, EnvValue{simproto.EnvSMINodeGPUs, strconv.Itoa(n)})
	}
	if v := get(simproto.EnvSMIFault); v != "" {
		out = append(out, EnvValue{simproto.EnvSMIFault, v})
	}
	return out
}

func aiperfSchemaVersion(v string) string {
	if v == "fork" {
		return recipes.ForkAiperfVersion
	}
	return v
}

// MultiNodeClock makes the wall clock the default of a simulated
// disaggregated multi-node point (its workers are separate processes: the
// virtual clock is kept by one engine) and refuses the virtual clock asked
// for; clockSet is whether a clock was given.
func (m *Mode) MultiNodeClock(clockSet bool) error {
	switch {
	case clockSet && m.SimClock == ClockVirtual:
		return &usage.Error{Err: ErrVirtualMultiNode}
	case !clockSet:
		m.SimClock = ClockWall
	}
	return nil
}
