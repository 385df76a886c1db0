package run

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"

	"strings"
	"sweep/configs"
	"sweep/internal/usage"

	"sweep/configs/matrix"
	"sweep/internal/proc"
	"sweep/internal/selfexe"
	"sweep/internal/simproto"
	"sweep/loadgen"
	"sweep/metrics/result"
	"sweep/recipes"
)

// Setup says how a planned point runs on this machine: with the real
// engine and aiperf, or with sweep's simulated engine and built-in load
// generator standing in for them (only the program is swapped; the argv is
// the recipe's own).
type Setup struct {
	// Simulate runs `sweep sim-engine` in place of the engine program.
	Simulate bool
	// Executable is the sweep binary that provides sim-engine and loadgen
	// (default: this process's executable).
	Executable string
	// Aiperf is the aiperf program to run; "" uses the built-in load
	// generator (`sweep loadgen`).
	Aiperf string
	// ClientWhy says how the client was chosen (ClientChoice.Why); the
	// result records it.
	ClientWhy string
	// AiperfSchema is the aiperf schema the client argv was planned for
	// ("aiperf@0.12.0"); the built-in load generator checks it with it.
	AiperfSchema string
	// TimeScale compresses time for the simulated engine and the built-in
	// load generator (simulated seconds per wall second); 0 means 1.
	TimeScale float64
	// WallClock runs a simulation on the compressed wall clock
	// (TimeScale) instead of the simulated engine's virtual clock. The
	// virtual clock needs the built-in load generator, so a real aiperf
	// (Aiperf) always runs on the wall clock.
	WallClock bool
	// SimFault selects a fault of the simulated engine (see sim-engine --help).
	SimFault string
	// SimGPU names the simulated GPU; "" derives it from the row's runner.
	SimGPU string
	// SimCalibration is a calibration file (sweep sim calibrate) the
	// simulated engine takes its step costs and KV pool from, and
	// SimCalibrationFrom where it was given (FlagSimCalibration,
	// simproto.EnvCalibration; Mode.SimCalibration).
	SimCalibration, SimCalibrationFrom string
	// ALTolerance is recorded with the facts (0 = default).
	ALTolerance float64
	// Environ looks up variables of this machine for Command.EnvFrom
	// (default os.LookupEnv).
	Environ func(string) (string, bool)
	// OnHost, when set, is the launcher prefix that runs a process of a
	// disaggregated point at the node with address host (a Slurm job
	// step: srun --jobid ... --nodelist NODE --), name being its role:
	// the workers at their Host, the router and the client at the
	// router's. Nil runs every role on this host.
	OnHost func(host, name string) ([]string, error)
	// Dir is the directory the run was given (a campaign's output
	// directory): the sidecars' files must lie inside it. "" means the
	// point's result directory.
	Dir string
	// PowerGPUs is which GPUs of the telemetry the power lane integrates:
	// PowerGPUsAll (InferenceX: every GPU the monitor recorded) or
	// PowerGPUsAllocated (only the point's); "" reads EnvPowerGPUs,
	// else all.
	PowerGPUs string
}

// simGPU is the simulated GPU of a row: Setup.SimGPU, else its runner's.
func (s Setup) simGPU(row *matrix.Row) string {
	if s.SimGPU != "" {
		return s.SimGPU
	}
	return configs.GPUOfRunner(row.Runner)
}

// simulateEngine turns an engine's process into `sweep sim-engine` on its
// argv (unchecked are its --unchecked options) on the given GPU and clock,
// telling it the point's runner label ("" none: configs/runners.yaml's
// hardware of the runner bounds its host KV tier).
func (s Setup) simulateEngine(ps *proc.Spec, unchecked []string, gpu, runner string, virtual bool) {
	head := append([]string{s.Executable, "sim-engine"}, unchecked...)
	ps.Argv = append(append(head, "--"), ps.Argv...)
	ps.Env[simproto.EnvTimeScale] = formatScale(s.TimeScale)
	ps.Env[simproto.EnvGPU] = gpu
	if runner != "" {
		ps.Env[simproto.EnvRunner] = runner
	}
	if virtual {
		ps.Env[simproto.EnvClock] = "virtual"
	}
	if s.SimFault != "" {
		ps.Env[simproto.EnvFault] = s.SimFault
	}
	if s.SimCalibration != "" {
		ps.Env[simproto.EnvCalibration] = s.SimCalibration
	}
}

// calibratedEngine is what the calibration file (Setup.SimCalibration,
// in the process's environment) sets for the simulated engine ps, a
// process simulateEngine made (`sweep sim-engine [--unchecked FLAG:N]...
// -- ENGINE ARGV`), read as that engine reads it, with the point's
// sidecar files (not written yet at plan time: RecordedCommand.Files): a
// command line it would reject is an error here too.
func calibratedEngine(ps proc.Spec, files []recipes.File) (result.CalibratedEngine, error) {
	engine, unchecked, ok := simEngineArgv(ps.Argv)
	if !ok {
		return result.CalibratedEngine{}, fmt.Errorf("%s: %q is not a simulated engine's command", ps.Name, ps.Argv)
	}
	cfg, err := RecordedCommand{Argv: engine, Unchecked: unchecked, Env: ps.Env, Files: files}.SimConfig(false)
	if err != nil {
		return result.CalibratedEngine{}, fmt.Errorf("%s: %w", ps.Name, err)
	}
	e := result.CalibratedEngine{Name: ps.Name}
	if a := cfg.Calibration; a != nil {
		e.Calibrated, e.StepScale, e.PoolTokens = true, a.StepScale, a.PoolTokens
	}
	return e, nil
}

// simulation is what a simulated point's result records about it.
func (s Setup) simulation(gpu string, virtual bool) *result.Simulation {
	sim := &result.Simulation{TimeScale: s.TimeScale, Seed: simSeed(s.Environ), GPU: gpu, Clock: "wall", Faults: s.SimFault}
	if v, ok := s.Environ(simproto.EnvFault); ok && sim.Faults == "" {
		sim.Faults = v // the engine inherits it (simulateEngine)
	}
	if virtual {
		sim.TimeScale, sim.Clock = 0, "virtual"
	}
	return sim
}

// maxLag is the schedule lag past which a wall-clock simulated point is
// invalid: simproto.EnvMaxLag's share when set, else LagInvalidShare.
func (s Setup) maxLag() (float64, error) {
	v, ok := s.Environ(simproto.EnvMaxLag)
	if !ok {
		return LagInvalidShare, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0 && f <= 1) {
		return 0, usage.Errorf("$%s=%q: want the share of the simulated engine's busy time in late steps past which a point is invalid, in (0, 1] (1: never; unset: %g)", simproto.EnvMaxLag, v, LagInvalidShare)
	}
	return f, nil
}

// ClientProcess is the load client's process name in a Spec (its
// Client) and in the Record of its run (Record.Processes).
const ClientProcess = "client"

// setClient sets the load client of spec from its planned aiperf
// command: aiperf itself (Setup.Aiperf) or the built-in load generator.
func (s Setup) setClient(spec *Spec, cmd recipes.Command, virtual bool) error {
	c := s.proc(ClientProcess, cmd)
	if len(c.Argv) < 2 || c.Argv[1] != "profile" {
		return fmt.Errorf("client command %q is not an aiperf profile command", strings.Join(c.Argv, " "))
	}
	getenv := func(k string) string {
		if v, ok := c.Env[k]; ok {
			return v
		}
		v, _ := s.Environ(k)
		return v
	}
	if s.Aiperf != "" {
		c.Argv[0] = s.Aiperf
	} else {
		head := []string{s.Executable, "loadgen"}
		if s.AiperfSchema != "" {
			head = append(head, "--aiperf-schema", s.AiperfSchema)
		}
		if !s.Simulate {
			// Against a real engine the synthetic traces are no stand-in.
			head = append(head, "--require-traces")
			if err := s.checkTraces(cmd, getenv); err != nil {
				return err
			}
		}
		c.Argv = append(append(head, "--"), c.Argv[1:]...)
	}
	if s.Simulate {
		c.Env[simproto.EnvLoadgenTimeScale] = formatScale(s.TimeScale)
	}
	if virtual {
		c.Env[simproto.EnvLoadgenClock] = "virtual"
	}
	spec.Client = &c
	spec.ClientInfo = s.ClientInfo()
	// The cache the client reads the trace dataset from is where the
	// result's expected output lengths come from, as in InferenceX.
	spec.Facts.HFHubCache = result.HubCache(getenv)
	return nil
}

// checkTraces is the built-in client's trace set against a real engine,
// checked before the engine starts: a set its command names that the hub
// cache the client will search (getenv: the client's environment) does
// not hold is an error naming where it looked and the fix. A command the
// load generator cannot read is left to it to report.
func (s Setup) checkTraces(cmd recipes.Command, getenv func(string) string) error {
	cl := loadgen.CommandLine{Argv: cmd.Argv[1:], Schema: s.AiperfSchema, Getenv: getenv}
	o, err := cl.Options(io.Discard)
	if err != nil {
		return nil
	}
	if _, _, err := loadgen.TraceSet(&o, getenv); err != nil {
		return fmt.Errorf("built-in client against a real engine: %w", err)
	}
	return nil
}

// ClientInfo is what a result records about the client of a Setup.
func (s Setup) ClientInfo() *result.Client {
	version := strings.TrimPrefix(s.AiperfSchema, "aiperf@")
	if version == recipes.ForkAiperfVersion {
		version = "fork"
	}
	c := &result.Client{Schema: s.AiperfSchema, Why: s.ClientWhy, Program: s.Aiperf}
	c.Name = result.ClientName(s.Aiperf == "", version)
	return c
}

// defaults fills Environ (this process's environment) and Executable
// (this process's binary) when unset.
func (s *Setup) defaults() error {
	if s.Environ == nil {
		s.Environ = os.LookupEnv
	}
	if s.Executable == "" {
		exe, err := selfexe.Path()
		if err != nil {
			return fmt.Errorf("find the sweep executable: %w", err)
		}
		s.Executable = exe
	}
	return nil
}

// Virtual reports whether a simulated point runs on the simulated
// engine's virtual clock (see WallClock).
func (s Setup) Virtual() bool { return s.Simulate && !s.WallClock && s.Aiperf == "" }

// proc builds a process spec from a planned command, resolving EnvFrom
// against this machine's environment.
func (s Setup) proc(name string, c recipes.Command) proc.Spec {
	env := maps.Clone(c.Env)
	if env == nil {
		env = map[string]string{}
	}
	for dst, src := range c.EnvFrom {
		if v, ok := s.Environ(src); ok {
			env[dst] = v
		}
	}
	return proc.Spec{Name: name, Argv: slices.Clone(c.Argv), Env: env, Unset: slices.Clone(c.Unset)}
}

// uncheckedArgs are sim-engine's --unchecked options for specs
// (simengine.UncheckedSpecs).
func uncheckedArgs(specs []string) []string {
	out := make([]string, 0, 2*len(specs))
	for _, spec := range specs {
		out = append(out, "--unchecked", spec)
	}
	return out
}

// unresolved rejects commands that still carry ${...} placeholders: sweep
// runs argv directly, so nothing would expand them.
func unresolved(spec Spec) error {
	var errs []error
	check := func(ps *proc.Spec) {
		if ps == nil {
			return
		}
		for _, a := range ps.Argv {
			if strings.Contains(a, "${") {
				errs = append(errs, fmt.Errorf("%s argument %q has an unresolved placeholder", ps.Name, a))
			}
		}
		for k, v := range ps.Env {
			if strings.Contains(v, "${") {
				errs = append(errs, fmt.Errorf("%s variable %s=%q has an unresolved placeholder", ps.Name, k, v))
			}
		}
	}
	check(&spec.Engine)
	check(spec.Router)
	check(spec.Client)
	check(spec.Eval)
	return errors.Join(errs...)
}

func formatScale(f float64) string {
	if f <= 0 {
		f = 1
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// simSeed is the simulated engine's seed: SWEEP_SIM_SEED from the
// environment the engine inherits, else the simulator's default, 0.
func simSeed(environ func(string) (string, bool)) uint64 {
	if v, ok := environ(simproto.EnvSeed); ok {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			return n
		}
	}
	return 0
}
