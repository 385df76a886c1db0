package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
	"sweep/internal/cli"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/simengine"
	"sweep/sweep/campaign"
	"sweep/sweep/executor"
	"sweep/sweep/run"
)

// campaignOptions are the inputs shared by "sweep discover" and "sweep
// official": which points, how they run, and where they land.
type campaignOptions struct {
	IO      *IOStreams
	Inputs  matrixInputs
	Command string // discover or official

	// Selection holds the --tp, --ep, --dp-attn, --kv-offloading and --conc-list filters
	// (zero: every value).
	campaign.Selection

	Out string

	simFlags

	Fast         bool // agentx-fast durations and warm-ups
	Executor     string
	ExactServers bool
	// Run holds how the sweep runs: the executor (Run.Name: Executor,
	// checked), its GPUs and Slurm settings, retries, the dry run, the
	// adaptive search (discover --adaptive) and its probes.
	Run executor.Sweep
	// Launch runs each Slurm arm in its recipe's image through the runner's
	// launch path (srun --container-image in the job); Site changes the
	// runner profile's site facts; SweepBinary is mounted into the image.
	Launch      bool
	Site        []string
	SweepBinary string
	// Inferencex is the host's InferenceX checkout whose utils/aiperf each
	// launched arm installs into a per-job venv (executor.Launch.Client).
	Inferencex string

	Plan  recipes.PlanOptions
	Point run.Options
	// stopGraceSet is --stop-grace given.
	stopGraceSet bool
	// simClockSet is --sim-clock given (a disaggregated multi-node arm
	// defaults to the wall clock).
	simClockSet bool
}

// bind binds the flags every sweep command has.
func (o *campaignOptions) bind(fs *pflag.FlagSet, lists *cli.Lists) {
	lists.Ints(fs, &o.TP, "tp", "only arms with these tensor parallel sizes")
	lists.Ints(fs, &o.EP, "ep", "only arms with these expert parallel sizes")
	fs.StringVar(&o.DPAttn, "dp-attn", "", "only DP-attention arms (true) or only the others (false)")
	bindKVOffloading(fs, &o.KVOffloading, "only the arms of this mode (a key's kv:none and kv:dram search spaces are arms of their own)")
	lists.Ints(fs, &o.ConcList, "conc-list", "only these concurrencies (values no selected arm has are named with the arms' concurrencies)")
	fs.StringVar(&o.Out, "out", "", "sweep directory (required; a new sweep starts only in an empty or new one): journal, one directory per point, servers/, summary")
	o.simFlags.bind(fs, false, "with --simulate: GPU to simulate (default: from the runner)")
	fs.IntVar(&o.Run.Duration, "duration", 0, "benchmark duration in seconds of every point (default: the mode's)")
	fs.StringVar(&o.Executor, "executor", "local", "where arms run: local (this node's GPUs) or slurm (one sbatch job per arm; the directory must be shared with the nodes)")
	fs.StringVar(&o.Run.Partition, "slurm-partition", "", "slurm: partition of every job (default: the runner profile's)")
	fs.BoolVar(&o.Launch, "launch", false, "run each arm in its recipe's image as the runner's InferenceX launcher does, with the static sweep mounted: slurm: the image imported under flock where the launcher imports it (in the job on its node; b300-nv: once on this host), then the job's step srun --container-image; local: docker runners' arms in docker run on this host's GPUs")
	fs.StringArrayVar(&o.Site, "site", nil, "with --launch: change a site fact of the runner profile, key=value ("+strings.Join(recipes.SiteKeys, ", ")+"); repeatable")
	fs.StringVar(&o.Inferencex, "inferencex", "", "with --launch: an InferenceX checkout; each arm's job installs its utils/aiperf into a per-job venv with this host's uv (mounted) and downloads the trace set with hf, once before its engine starts, as benchmark_lib.sh does (skipped when there; checked before anything is allocated); that aiperf measures every point")
	fs.StringVar(&o.SweepBinary, "sweep-binary", "", "with --launch: the sweep binary mounted into the image (default: this one; build it with CGO_ENABLED=0)")
	fs.DurationVar(&o.Run.Poll, "slurm-poll", 2*time.Second, "slurm: how often job states and events are read")
	fs.DurationVar(&o.Run.StartTimeout, "slurm-start-timeout", 0, "slurm, or --slurm's allocations: cancel and fail a job still pending after this long (0: wait)")
	lists.Ints(fs, &o.Run.GPUs, "gpus", "local: the node's GPU ids (default: 0..7 with --simulate, else from rocm-smi/nvidia-smi)")
	fs.IntVar(&o.Run.MaxParallel, "max-parallel", 0, "most arms running at once (default: as many as fit the GPUs)")
	fs.IntVar(&o.Run.Retries, "retries", 1, "how often a failed point is run again (over every invocation on --out)")
	fs.BoolVar(&o.Run.FailFast, "fail-fast", false, "stop at the first point that failed for good")
	fs.BoolVar(&o.Run.DryRun, "dry-run", false, "print the schedule (arms, points, server starts) and its cost; run nothing")
	fs.BoolVar(&o.ExactServers, "exact-servers", false, "restart the engine for every point whose planned command differs, as InferenceX does, even where the recipe allows one server per arm")
	fs.StringVar(&o.Run.CostFrom, "cost-from", "", "with --dry-run: an earlier sweep directory whose measured times feed the cost model")
	fs.BoolVar(&o.Run.Verbose, "verbose", false, "print every stage of every point")
	fs.IntVar(&o.Plan.Port, "port", 0, "public port of the first arm; arm i uses port+2i (default 8888; with --simulate free ports; a real MI325X/MI300X arm with --executor slurm: 40000 + its job id % 10000)")
	fs.StringVar(&o.Plan.ModelPath, "model-path", "", "what the engine loads (default: the model id)")
	fs.StringVar(&o.Plan.AiperfVersion, "aiperf-version", recipes.DefaultAiperfVersion, "aiperf schema version the client command is built for: 0.12.0 or fork")
	fs.DurationVar(&o.Point.ReadyTimeout, "ready-timeout", run.DefaultReadyTimeout, "how long to wait for an engine's /health")
	fs.DurationVar(&o.Point.StopGrace, "stop-grace", 60*time.Second, "wait between SIGTERM and SIGKILL when stopping processes")
	o.Inputs.bind(fs, lists)
}

// check validates the shared flags after parsing.
func (o *campaignOptions) check(fs *pflag.FlagSet) error {
	o.stopGraceSet = fs.Changed("stop-grace")
	o.simClockSet = fs.Changed("sim-clock")
	switch {
	case o.Out == "":
		return flagErrorf("missing --out DIR (the sweep directory; rerun the same command on it to resume)")
	case o.Run.Name.Set(o.Executor) != nil:
		return flagErrorf("--executor %q: %v", o.Executor, o.Run.Name.Set(o.Executor))
	case o.slurmFlagsError(fs) != nil:
		return o.slurmFlagsError(fs)
	case checkKVOffloading(o.KVOffloading) != nil:
		return checkKVOffloading(o.KVOffloading)
	case nonPositive(o.ConcList) != "":
		return flagErrorf("--conc-list %s: want concurrencies of 1 or more", nonPositive(o.ConcList))
	case o.DPAttn != "" && o.DPAttn != "true" && o.DPAttn != "false":
		return flagErrorf("--dp-attn %q: want true or false", o.DPAttn)
	case !o.Simulate && (fs.Changed("sim-gpu") || fs.Changed("time-scale") || fs.Changed("sim-clock")):
		return flagErrorf("--sim-gpu, --sim-clock and --time-scale need --simulate")
	case run.CheckSimClock(o.SimClock) != nil:
		return run.CheckSimClock(o.SimClock)
	case checkSimCalibration(o.Simulate, &o.SimCalib, o.IO.ErrOut) != nil:
		return checkSimCalibration(o.Simulate, &o.SimCalib, nil)
	case checkPowerGPUs(o.PowerGPUs) != nil:
		return checkPowerGPUs(o.PowerGPUs)
	case o.Run.Retries < 0 || o.Run.Retries > campaign.MaxRetries:
		return flagErrorf("--retries %d: want 0 to %d", o.Run.Retries, campaign.MaxRetries)
	case o.Run.MaxParallel < 0:
		return flagErrorf("--max-parallel %d: want 0 (as many as fit) or more", o.Run.MaxParallel)
	case o.Run.Duration < 0:
		return flagErrorf("--duration %d: want a positive number of seconds", o.Run.Duration)
	case !o.Launch && (len(o.Site) > 0 || o.SweepBinary != "" || o.Inferencex != ""):
		return flagErrorf("--site, --sweep-binary and --inferencex need --launch")
	case o.Inferencex != "" && (o.Aiperf != "" || o.Builtin):
		return flagErrorf("--inferencex installs InferenceX's aiperf: drop --aiperf and --builtin-client, or drop --inferencex")
	case o.Inferencex != "" && o.Simulate && (o.SimClock != run.ClockWall || o.TimeScale != 1):
		return flagErrorf("--inferencex with --simulate: %v", run.ErrDishonestClock)
	case o.Run.Adaptive && o.Executor != "local":
		return flagErrorf("--adaptive runs with --executor local for now (the Slurm job runs a fixed list of points)")
	case o.Run.CostFrom != "" && !o.Run.DryRun:
		return flagErrorf("--cost-from needs --dry-run")
	}
	if o.stopGraceSet && o.Point.StopGrace == 0 {
		o.Point.StopGrace = run.NoGrace
	}
	return nil
}

// slurmFlagsError refuses the --slurm-* flags of a sweep that submits and
// allocates nothing: --slurm-start-timeout also bounds discover --slurm's
// allocations.
func (o *campaignOptions) slurmFlagsError(fs *pflag.FlagSet) error {
	switch {
	case o.Executor == "slurm":
		return nil
	case fs.Changed("slurm-partition") || fs.Changed("slurm-poll"):
		return flagErrorf("--slurm-* flags need --executor slurm")
	case fs.Changed("slurm-start-timeout") && !o.Run.SlurmNodes && fs.Lookup("slurm") != nil:
		return flagErrorf("--slurm-start-timeout needs --executor slurm, or --slurm (multi-node arms' allocations)")
	case fs.Changed("slurm-start-timeout") && !o.Run.SlurmNodes:
		return flagErrorf("--slurm-* flags need --executor slurm")
	}
	return nil
}

// nonPositive lists the values of xs below 1, "" when none is.
func nonPositive(xs []int) string {
	var bad []string
	for _, x := range xs {
		if x < 1 {
			bad = append(bad, strconv.Itoa(x))
		}
	}
	return strings.Join(bad, ", ")
}

// settings are the choices that change what the sweep measures, flags
// and variables of the environment (run.Mode.MeasuredEnv): a directory
// started with other values is a different sweep. Each is recorded as
// campaign compares it: sets (--tp, --ep, --conc-list) in any order,
// files by their absolute paths, --time-scale only where the clock
// runs at it, --power-gpus as the points read it (the flag, else
// SWEEP_POWER_GPUS).
func (o *campaignOptions) settings(extra ...campaign.Setting) []campaign.Setting {
	out := append(extra,
		campaign.IntSet("--tp", o.TP),
		campaign.IntSet("--ep", o.EP),
		campaign.Setting{Name: "--dp-attn", Value: o.DPAttn},
		campaign.IntSet("--conc-list", o.ConcList),
		campaign.Setting{Name: "--duration", Value: strconv.Itoa(o.Run.Duration)},
		campaign.SimulateSetting(o.Simulate),
		campaign.Setting{Name: "--exact-servers", Value: strconv.FormatBool(o.ExactServers)},
		campaign.Setting{Name: "--aiperf-version", Value: o.Plan.AiperfVersion},
		campaign.AdaptiveSetting(o.Run.Adaptive),
		// What is loaded and which client measures it; "" when not given,
		// as directories from before these were recorded have them.
		campaign.Setting{Name: "--model-path", Value: o.Plan.ModelPath},
		campaign.Setting{Name: "--aiperf", Value: o.Aiperf},
		campaign.Setting{Name: "--builtin-client", Value: map[bool]string{true: "true"}[o.Builtin]},
		campaign.Setting{Name: "--inferencex", Value: map[bool]string{true: "true"}[o.Inferencex != ""]},
		campaign.Paths("--config-files", o.Inputs.ConfigFiles),
	)
	// Absent when every mode, as directories from before it was recorded have it.
	if o.KVOffloading != "" {
		out = append(out, campaign.Setting{Name: "--kv-offloading", Value: o.KVOffloading})
	}
	// Absent when all, as directories from before it was recorded have it.
	if pg := o.PowerGPUsIn(os.LookupEnv); pg != run.PowerGPUsAll {
		out = append(out, campaign.Setting{Name: "--power-gpus", Value: pg,
			Hint: "--power-gpus, else " + run.EnvPowerGPUs + ", else all: give the directory's value"})
	}
	if o.Simulate {
		scale := campaign.Setting{Name: "--time-scale", Value: strconv.FormatFloat(o.TimeScale, 'g', -1, 64)}
		if !o.TimeScaleMatters() {
			scale = scale.Unused() // the virtual clock's numbers are the same at any scale
		}
		out = append(out, scale, campaign.Setting{Name: "--sim-gpu", Value: o.SimGPU}, campaign.Setting{Name: "--sim-clock", Value: o.SimClock})
		if o.SimCalib != "" {
			// The file's path and what it sets: fitting it again in place
			// changes the second, not the first.
			sets := "unreadable"
			if cal, err := simengine.LoadCalibration(o.SimCalib); err == nil {
				sets = cal.Sets()
			}
			out = append(out, campaign.Setting{Name: "--sim-calibration", Value: o.SimCalib},
				campaign.Setting{Name: "--sim-calibration's arms", Value: sets,
					Hint: "the file sets other values than when the directory's sweep started, or the directory was started before sweep recorded them: its points would run on two calibrations; restore the file, or use another --out"})
		}
	}
	for _, e := range o.MeasuredEnv(os.LookupEnv) {
		out = append(out, campaign.EnvSetting(e.Name, e.Value))
	}
	return out
}

// engineEnvReaches says whether a variable of this environment reaches
// a point's engine when the recipe leaves it (campaign.EngineEnv): on
// this host and through Slurm (--export=ALL) every one does; in a
// docker runner's container (--launch) only those its launcher passes
// by name (recipes.DockerRun.Env).
func (o *campaignOptions) engineEnvReaches() func(*campaign.Point, string) bool {
	if !o.Launch {
		return nil
	}
	return func(p *campaign.Point, name string) bool {
		prof, err := recipes.ProfileFor(p.Plan.Row.Runner)
		if err != nil || prof.Launch.Docker == nil {
			return true
		}
		return slices.Contains(prof.Launch.Docker.Env, name)
	}
}

// schedule plans rows into the sweep directory: each point writes into
// DIR/<RESULT_FILENAME>, each arm gets its own port (a free one when
// simulated without --port).
func (o *campaignOptions) schedule(rows matrix.Matrix, g *matrix.Generator, dir string) (*campaign.Schedule, error) {
	po := o.Plan
	po.Runners = g.Runners
	po = models.WithBuiltin(po)
	po.Fast = o.Fast
	po.Duration = o.Run.Duration
	co := campaign.PlanOptions{Recipe: po, ExactServers: o.ExactServers, Official: o.Command == "official"}
	if o.Run.Adaptive {
		co.ProbeDuration = o.Run.ProbeDuration
	}
	if o.Simulate && o.Plan.Port == 0 {
		co.ArmPort = func(int) (int, error) { return recipes.FreeRouterPort() }
		co.MultiNodePorts = func(_, n int) ([]int, error) { return recipes.FreePorts(n) }
	}
	s, err := campaign.Plan(rows, dir, co)
	if errors.Is(err, recipes.ErrInvalidOptions) {
		return nil, &FlagError{Err: err}
	}
	return s, err
}

// execute runs (or with --dry-run prints) the sweep of rows
// (executor.Sweep).
func (o *campaignOptions) execute(ctx context.Context, rows matrix.Matrix, g *matrix.Generator, settings []campaign.Setting) error {
	if m := o.Selection.CheckConcList(rows); m != nil {
		if m.None {
			return &FlagError{Err: m}
		}
		fmt.Fprintf(o.IO.ErrOut, "sweep %s: %v\n", o.Command, m)
	}
	if m := o.Selection.CheckEmpty(rows); m != nil {
		return &FlagError{Err: m}
	}
	if err := o.Selection.CheckKV(rows); err != nil {
		return &FlagError{Err: err}
	}
	grid := rows // the arms' concurrencies before --conc-list (Schedule.SetGrids)
	rows = o.Selection.Select(rows)
	if len(rows) == 0 {
		return &FlagError{Err: errors.New("no agentic point matches the selection (check --config-keys and the --tp/--ep/--dp-attn/--kv-offloading/--conc-list filters against `sweep plan`)")}
	}
	sw := o.Run // --executor, --gpus, --max-parallel, --slurm-*, --retries, --dry-run, ...
	sw.Official, sw.Profile, sw.Command, sw.Settings = o.Command == "official", o.profile, o.Command, settings
	sw.Simulate, sw.TimeScale, sw.Out, sw.Log = o.Simulate, o.TimeScale, o.IO.Out, o.IO.ErrOut
	if err := sw.CheckMultiNode(rows, o.Launch); err != nil {
		return &FlagError{Err: err}
	}
	dir, err := filepath.Abs(o.Out)
	if err != nil {
		return err
	}
	sched, err := o.schedule(rows, g, dir)
	if err != nil {
		return err
	}
	sched.SetGrids(grid)
	sw.Dir, sw.Schedule = dir, sched
	// The engines' own variables that reach them: part of what the
	// sweep measures, as its flags are.
	sw.Settings = append(slices.Clone(sw.Settings), campaign.EngineEnv(sched, os.Environ(), o.engineEnvReaches())...)
	if sw.GPUs, err = executor.NodeGPUs(o.Run.Name, o.Run.GPUs, o.Simulate || o.Run.DryRun); err != nil {
		return &FlagError{Err: err}
	}
	if !o.Run.DryRun {
		// With --launch the client runs in the image: --aiperf names a
		// program there; nothing of this host's PATH applies.
		if sw.Setup, err = o.Setup(o.Plan.AiperfVersion, o.Launch); err != nil {
			return err
		}
		sw.Point = o.PointOptions(o.Point, o.stopGraceSet)
	} else if calibration, _ := o.SimCalibration(os.LookupEnv); calibration != "" {
		// The dry run names what the calibration sets for each arm, as
		// the engines will read it; no client is chosen.
		if sw.Setup, err = o.Setup(o.Plan.AiperfVersion, true); err != nil {
			return err
		}
	}
	if o.Run.DryRun {
		// The clock the points run on prices their simulated load: the
		// wall clock of --sim-clock wall or of a disaggregated arm
		// (multiNodeClock), else the virtual one.
		sw.Setup.Simulate, sw.Setup.WallClock = o.Simulate, o.TimeScaleMatters()
	}
	if o.Launch {
		sw.NewLaunch = func() (executor.Launch, error) { return executor.NewLaunch(dir, o.Site, o.SweepBinary, o.Inferencex) }
	}
	err = sw.Run(ctx)
	if pe, ok := errors.AsType[*executor.ProfileError](err); ok {
		return &FlagError{Err: pe.Err}
	}
	if de, ok := errors.AsType[*campaign.DifferenceError](err); ok && de != nil {
		return &FlagError{Err: err, Refusal: true} // it names the fix
	}
	return err
}

// keyRows are the agentic rows of the config keys (patterns) a sweep
// runs, with the resolved keys and the generator, and the clock of their
// multi-node arms when simulated (multiNodeClock).
func (o *campaignOptions) keyRows(patterns []string) (matrix.Matrix, []string, *matrix.Generator, error) {
	g, err := o.Inputs.generator()
	if err != nil {
		return nil, nil, nil, err
	}
	rows, keys, err := agenticRows(g, patterns, nil, matrix.EvalOptions{NoEvals: true})
	if err != nil {
		return nil, nil, nil, err
	}
	return rows, keys, g, o.multiNodeClock(rows)
}

// multiNodeClock is run.Mode.MultiNodeClock for a simulated sweep whose
// selection holds a disaggregated multi-node arm, as `sweep run` does for
// such a point.
func (o *campaignOptions) multiNodeClock(rows matrix.Matrix) error {
	if !o.Simulate || !o.Selection.Select(rows).HasAgenticMultiNode() {
		return nil
	}
	return o.MultiNodeClock(o.simClockSet)
}

// profile is the runner's profile with the --site changes.
func (o *campaignOptions) profile(runner string) (recipes.Profile, error) {
	return recipes.SiteProfile(runner, o.Site)
}
