package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
	"sweep/internal/plural"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/executor/local"
	"sweep/sweep/executor/slurm"
	"sweep/sweep/knee"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

// campaignOptions are the inputs shared by "sweep discover" and "sweep
// official": which points, how they run, and where they land.
type campaignOptions struct {
	IO      *IOStreams
	Inputs  matrixInputs
	Command string // discover or official

	// Selection filters (zero: every value).
	TP, EP   []int
	DPAttn   string // "", "true" or "false"
	ConcList []int

	Out string

	Simulate  bool
	Aiperf    string
	Builtin   bool
	TimeScale float64
	SimClock  string

	progressOnce sync.Once
	progress     io.Writer
	SimGPU       string
	SimCalib     string // --sim-calibration, an absolute path
	PowerGPUs    string // --power-gpus

	Fast         bool // agentx-fast durations and warm-ups
	Duration     int
	Executor     string
	GPUs         []int
	MaxParallel  int
	Retries      int
	FailFast     bool
	DryRun       bool
	ExactServers bool
	Verbose      bool
	// Adaptive runs only the points knee.Next asks for (discover --adaptive).
	Adaptive bool
	// ProbeDuration is the benchmark duration in seconds of the adaptive
	// search's bracketing probes (0: they run at the full length).
	ProbeDuration int
	// Slurm executor settings.
	SlurmPartition    string
	SlurmPoll         time.Duration
	SlurmStartTimeout time.Duration
	// Launch runs each Slurm arm in its recipe's image through the runner's
	// launch path (srun --container-image in the job); Site changes the
	// runner profile's site facts; SweepBinary is mounted into the image.
	Launch      bool
	Site        []string
	SweepBinary string
	// CostFrom is an earlier sweep directory whose measured server start
	// and point times feed the dry-run's cost model.
	CostFrom string

	Plan  recipes.PlanOptions
	Point run.Options
	// stopGraceSet is --stop-grace given.
	stopGraceSet bool
}

// bind binds the flags every sweep command has.
func (o *campaignOptions) bind(fs *pflag.FlagSet, lists *argparseLists) {
	lists.ints(fs, &o.TP, "tp", "only arms with these tensor parallel sizes")
	lists.ints(fs, &o.EP, "ep", "only arms with these expert parallel sizes")
	fs.StringVar(&o.DPAttn, "dp-attn", "", "only DP-attention arms (true) or only the others (false)")
	lists.ints(fs, &o.ConcList, "conc-list", "only these concurrencies")
	fs.StringVar(&o.Out, "out", "", "sweep directory (required): journal, one directory per point, servers/, summary")
	fs.BoolVar(&o.Simulate, "simulate", false, "run against sweep's simulated engine instead of the real one")
	fs.StringVar(&o.Aiperf, "aiperf", "", "aiperf program to run (default: aiperf on PATH, else the built-in load generator)")
	fs.BoolVar(&o.Builtin, "builtin-client", false, "use the built-in load generator even when aiperf is installed")
	fs.Float64Var(&o.TimeScale, "time-scale", defaultSimTimeScale, "with --simulate --sim-clock wall: simulated seconds per wall second")
	fs.StringVar(&o.SimClock, "sim-clock", simClockVirtual, simClockUsage)
	fs.StringVar(&o.SimGPU, "sim-gpu", "", "with --simulate: GPU to simulate (default: from the runner)")
	fs.StringVar(&o.SimCalib, "sim-calibration", "", "with --simulate: the simulated engine's step costs and KV pool per arm from FILE (sweep sim calibrate)")
	fs.StringVar(&o.PowerGPUs, "power-gpus", "", powerGPUsUsage)
	fs.IntVar(&o.Duration, "duration", 0, "benchmark duration in seconds of every point (default: the mode's)")
	fs.StringVar(&o.Executor, "executor", "local", "where arms run: local (this node's GPUs) or slurm (one sbatch job per arm; the directory must be shared with the nodes)")
	fs.StringVar(&o.SlurmPartition, "slurm-partition", "", "slurm: partition of every job (default: the runner profile's)")
	fs.BoolVar(&o.Launch, "launch", false, "slurm: run each arm in its recipe's image as the runner's InferenceX launcher does (the image imported once under flock, the job's step srun --container-image with the static sweep mounted)")
	fs.StringArrayVar(&o.Site, "site", nil, "with --launch: change a site fact of the runner profile, key=value ("+strings.Join(recipes.SiteKeys, ", ")+"); repeatable")
	fs.StringVar(&o.SweepBinary, "sweep-binary", "", "with --launch: the sweep binary mounted into the image (default: this one; build it with CGO_ENABLED=0)")
	fs.DurationVar(&o.SlurmPoll, "slurm-poll", 2*time.Second, "slurm: how often job states and events are read")
	fs.DurationVar(&o.SlurmStartTimeout, "slurm-start-timeout", 0, "slurm: cancel and fail a job still pending after this long (0: wait)")
	lists.ints(fs, &o.GPUs, "gpus", "local: the node's GPU ids (default: 0..7 with --simulate, else from rocm-smi/nvidia-smi)")
	fs.IntVar(&o.MaxParallel, "max-parallel", 0, "most arms running at once (default: as many as fit the GPUs)")
	fs.IntVar(&o.Retries, "retries", 1, "how often a failed point is run again (over every invocation on --out)")
	fs.BoolVar(&o.FailFast, "fail-fast", false, "stop at the first point that failed for good")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the schedule (arms, points, server starts) and its cost; run nothing")
	fs.BoolVar(&o.ExactServers, "exact-servers", false, "restart the engine for every point whose planned command differs, as InferenceX does, even where the recipe allows one server per arm")
	fs.StringVar(&o.CostFrom, "cost-from", "", "with --dry-run: an earlier sweep directory whose measured times feed the cost model")
	fs.BoolVar(&o.Verbose, "verbose", false, "print every stage of every point")
	fs.IntVar(&o.Plan.Port, "port", 0, "public port of the first arm; arm i uses port+2i (default 8888; with --simulate free ports)")
	fs.StringVar(&o.Plan.ModelPath, "model-path", "", "what the engine loads (default: the model id)")
	fs.StringVar(&o.Plan.AiperfVersion, "aiperf-version", recipes.DefaultAiperfVersion, "aiperf schema version the client command is built for: 0.12.0 or fork")
	fs.DurationVar(&o.Point.ReadyTimeout, "ready-timeout", 30*time.Minute, "how long to wait for an engine's /health")
	fs.DurationVar(&o.Point.StopGrace, "stop-grace", 60*time.Second, "wait between SIGTERM and SIGKILL when stopping processes")
	o.Inputs.bind(fs, lists)
}

// check validates the shared flags after parsing.
func (o *campaignOptions) check(fs *pflag.FlagSet) error {
	o.stopGraceSet = fs.Changed("stop-grace")
	switch {
	case o.Out == "":
		return flagErrorf("missing --out DIR (the sweep directory; rerun the same command on it to resume)")
	case o.Executor != "local" && o.Executor != "slurm":
		return flagErrorf("--executor %q: want local or slurm (GitHub Actions fans points out with `sweep ci matrix`)", o.Executor)
	case o.Executor != "slurm" && (fs.Changed("slurm-partition") || fs.Changed("slurm-poll") || fs.Changed("slurm-start-timeout")):
		return flagErrorf("--slurm-* flags need --executor slurm")
	case o.DPAttn != "" && o.DPAttn != "true" && o.DPAttn != "false":
		return flagErrorf("--dp-attn %q: want true or false", o.DPAttn)
	case !(o.TimeScale > 0) || math.IsInf(o.TimeScale, 0):
		return flagErrorf("--time-scale %g: want a positive finite number", o.TimeScale)
	case !o.Simulate && (fs.Changed("sim-gpu") || fs.Changed("time-scale") || fs.Changed("sim-clock")):
		return flagErrorf("--sim-gpu, --sim-clock and --time-scale need --simulate")
	case checkSimClock(o.SimClock) != nil:
		return checkSimClock(o.SimClock)
	case checkSimCalibration(o.Simulate, &o.SimCalib) != nil:
		return checkSimCalibration(o.Simulate, &o.SimCalib)
	case checkPowerGPUs(o.PowerGPUs) != nil:
		return checkPowerGPUs(o.PowerGPUs)
	case o.Retries < 0 || o.Retries > campaign.MaxRetries:
		return flagErrorf("--retries %d: want 0 to %d", o.Retries, campaign.MaxRetries)
	case o.MaxParallel < 0:
		return flagErrorf("--max-parallel %d: want 0 (as many as fit) or more", o.MaxParallel)
	case o.Duration < 0:
		return flagErrorf("--duration %d: want a positive number of seconds", o.Duration)
	case (o.Launch || len(o.Site) > 0 || o.SweepBinary != "") && o.Executor != "slurm":
		return flagErrorf("--launch, --site and --sweep-binary need --executor slurm (sweep run --launch runs one point on its own)")
	case !o.Launch && (len(o.Site) > 0 || o.SweepBinary != ""):
		return flagErrorf("--site and --sweep-binary need --launch")
	case o.Adaptive && o.Executor != "local":
		return flagErrorf("--adaptive runs with --executor local for now (the Slurm job runs a fixed list of points)")
	case o.CostFrom != "" && !o.DryRun:
		return flagErrorf("--cost-from needs --dry-run")
	}
	if o.stopGraceSet && o.Point.StopGrace == 0 {
		o.Point.StopGrace = run.NoGrace
	}
	return nil
}

// filter keeps the single-node agentic rows the filters select, stamped
// with their recipe fingerprint as InferenceX's CI stamps them.
func (o *campaignOptions) filter(rows matrix.Matrix) matrix.Matrix {
	var out matrix.Matrix
	for _, r := range rows {
		switch {
		case r.Kind != matrix.AgenticSingleNode:
		case len(o.TP) > 0 && !slices.Contains(o.TP, r.TP):
		case len(o.EP) > 0 && !slices.Contains(o.EP, r.EP):
		case o.DPAttn != "" && strconv.FormatBool(r.DPAttn) != o.DPAttn:
		case len(o.ConcList) > 0 && !slices.Contains(o.ConcList, r.Conc):
		default:
			r.StampFingerprint()
			out = append(out, r)
		}
	}
	return out
}

// settings are the choices that change what the sweep measures: a
// directory started with other values is a different sweep.
func (o *campaignOptions) settings(extra ...campaign.Setting) []campaign.Setting {
	ints := func(xs []int) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = strconv.Itoa(x)
		}
		return strings.Join(s, " ")
	}
	out := append(extra,
		campaign.Setting{Name: "--tp", Value: ints(o.TP)},
		campaign.Setting{Name: "--ep", Value: ints(o.EP)},
		campaign.Setting{Name: "--dp-attn", Value: o.DPAttn},
		campaign.Setting{Name: "--conc-list", Value: ints(o.ConcList)},
		campaign.Setting{Name: "--duration", Value: strconv.Itoa(o.Duration)},
		campaign.Setting{Name: "--simulate", Value: strconv.FormatBool(o.Simulate)},
		campaign.Setting{Name: "--exact-servers", Value: strconv.FormatBool(o.ExactServers)},
		campaign.Setting{Name: "--aiperf-version", Value: o.Plan.AiperfVersion},
		campaign.Setting{Name: "--adaptive", Value: strconv.FormatBool(o.Adaptive)},
		// What is loaded and which client measures it; "" when not given,
		// as directories from before these were recorded have them.
		campaign.Setting{Name: "--model-path", Value: o.Plan.ModelPath},
		campaign.Setting{Name: "--aiperf", Value: o.Aiperf},
		campaign.Setting{Name: "--builtin-client", Value: map[bool]string{true: "true"}[o.Builtin]},
		campaign.Setting{Name: "--config-files", Value: strings.Join(o.Inputs.ConfigFiles, " ")},
	)
	if o.PowerGPUs != "" && o.PowerGPUs != run.PowerGPUsAll {
		out = append(out, campaign.Setting{Name: "--power-gpus", Value: o.PowerGPUs})
	}
	if o.Simulate {
		out = append(out, campaign.Setting{Name: "--time-scale", Value: strconv.FormatFloat(o.TimeScale, 'g', -1, 64)},
			campaign.Setting{Name: "--sim-gpu", Value: o.SimGPU}, campaign.Setting{Name: "--sim-clock", Value: o.SimClock})
		if o.SimCalib != "" {
			out = append(out, campaign.Setting{Name: "--sim-calibration", Value: o.SimCalib})
		}
	}
	return out
}

// schedule plans rows into the sweep directory: each point writes into
// DIR/<RESULT_FILENAME>, each arm gets its own port.
func (o *campaignOptions) schedule(rows matrix.Matrix, g *matrix.Generator, dir string) (*campaign.Schedule, error) {
	po := o.Plan
	po.Runners = g.Runners
	po.Fast = o.Fast
	po.Duration = o.Duration
	po.ResultDir = dir
	if po.Port == 0 {
		po.Port = recipes.DefaultPort
	}
	// First pass: learn the points' names and arms.
	first, err := recipes.Plan(rows, po)
	if err != nil {
		return nil, planError(err)
	}
	sched, err := campaign.BuildSchedule(first, campaign.ScheduleOptions{ExactServers: o.ExactServers, Official: o.Command == "official"})
	if err != nil {
		return nil, err
	}
	// Second pass: each point into its directory, each arm on its port;
	// with adaptive probes, each point's client once more as a probe.
	base := po.Port
	points := make([]recipes.Point, 0, len(first))
	probes := map[string]*recipes.Command{}
	for _, a := range sched.Arms {
		port := base + 2*a.Index
		if o.Simulate && o.Plan.Port == 0 {
			if port, err = freePortPair(); err != nil {
				return nil, err
			}
		}
		for _, p := range a.Points {
			pp := po
			pp.Port = port
			pp.ResultDir = result.PointDir(dir, p.ID)
			got, err := recipes.Plan(matrix.Matrix{&p.Plan.Row}, pp)
			if err != nil {
				return nil, planError(err)
			}
			points = append(points, got[0])
			if o.Adaptive && o.ProbeDuration > 0 {
				pp.ProbeDuration = o.ProbeDuration
				probe, err := recipes.Plan(matrix.Matrix{&p.Plan.Row}, pp)
				if err != nil {
					return nil, planError(err)
				}
				probes[p.ID] = probe[0].Client
			}
		}
	}
	s, err := campaign.BuildSchedule(points, campaign.ScheduleOptions{ExactServers: o.ExactServers, Official: o.Command == "official"})
	if err != nil {
		return nil, err
	}
	for _, p := range s.Points {
		if c := probes[p.ID]; c != nil {
			p.ProbeClient, p.ProbeDuration = c, o.ProbeDuration
		}
	}
	return s, nil
}

func planError(err error) error {
	if errors.Is(err, recipes.ErrInvalidOptions) {
		return &FlagError{Err: err}
	}
	return fmt.Errorf("plan: %w", err)
}

// execute runs (or with --dry-run prints) the sweep of rows.
func (o *campaignOptions) execute(ctx context.Context, rows matrix.Matrix, g *matrix.Generator, settings []campaign.Setting) error {
	started := time.Now()
	rows = o.filter(rows)
	if len(rows) == 0 {
		return &FlagError{Err: errors.New("no single-node agentic point matches the selection (check --config-keys and the --tp/--ep/--dp-attn/--conc-list filters against `sweep plan`)")}
	}
	dir, err := filepath.Abs(o.Out)
	if err != nil {
		return err
	}
	sched, err := o.schedule(rows, g, dir)
	if err != nil {
		return err
	}
	gpus, err := o.nodeGPUs()
	if err != nil {
		return err
	}
	cost := o.costModel()
	if o.DryRun {
		if o.Adaptive {
			probes := "at the full length"
			if o.ProbeDuration > 0 {
				probes = fmt.Sprintf("as %d s probes where their grid neighbours lie within a doubling", o.ProbeDuration)
			}
			fmt.Fprintf(o.IO.Out, "adaptive: each arm runs the points knee.Next asks for as results come in (x4 bracketing %s, then the knee's doubling neighbours that can still move it, at the full length); the cost below is the full grid's upper bound; on the knee benchmark the search needs 24 %% (doubling grids) to 35 %% (conc-lists) of InferenceX's GPU-hours with 300 s probes, 42-45 %% without\n", probes)
		}
		if err := writeDryRun(o.IO.Out, sched, cost, gpus, o.MaxParallel, o.Simulate, o.TimeScale); err != nil {
			return err
		}
		if o.Launch {
			return o.writeLaunchDryRun(sched, dir)
		}
		return nil
	}
	setup := run.Setup{Simulate: o.Simulate, TimeScale: o.TimeScale, WallClock: o.SimClock == simClockWall, SimGPU: o.SimGPU, SimCalibration: o.SimCalib,
		AiperfSchema: "aiperf@" + aiperfSchemaVersion(o.Plan.AiperfVersion), PowerGPUs: o.PowerGPUs}
	if o.Launch {
		// The client runs in the image: --aiperf names a program there;
		// nothing of this host's PATH applies.
		setup.Aiperf, setup.ClientWhy = o.Aiperf, "--launch: --aiperf in the image"
		if o.Aiperf == "" {
			setup.ClientWhy = "--launch: the image's built-in load generator"
		}
	} else {
		choice, err := run.ChooseClient(run.ClientRequest{Aiperf: o.Aiperf, Builtin: o.Builtin, Simulate: o.Simulate, WallClock: setup.WallClock, TimeScale: o.TimeScale})
		if err != nil {
			return &FlagError{Err: err}
		}
		setup.Aiperf, setup.ClientWhy = choice.Aiperf, choice.Why
	}
	po := o.Point
	if o.Simulate {
		if !o.stopGraceSet {
			po.StopGrace = 0
		}
		po = po.Simulated(o.TimeScale)
	}
	if o.Verbose {
		po.Progress = func(line string) {
			fmt.Fprintf(o.IO.ErrOut, "[%7s]     %s\n", time.Since(started).Round(time.Second), line)
		}
	}
	pointTime := func(p *campaign.Point) time.Duration { return cost.pointWall(p, o.Simulate, o.TimeScale) }
	// The watchdog: twice the point's expected time, plus slack for the
	// client's own start and drain.
	watchdog := func(p *campaign.Point) time.Duration { return 2*pointTime(p) + time.Minute }
	var ex campaign.Executor
	if o.Executor == "slurm" {
		if ex, err = o.slurmExecutor(dir, setup, po, watchdog); err != nil {
			return err
		}
	} else {
		backend := &campaign.RunBackend{Dir: dir, Setup: setup, Options: po, Official: o.Command == "official"}
		armOpts := campaign.ArmOptions{PointTimeout: watchdog}
		if o.Adaptive {
			// The probes' noise is scaled against the full points' length.
			full := recipes.Duration(&sched.Points[0].Plan.Row, o.Fast, o.Duration)
			armOpts.Choose = campaign.Adaptive(dir, knee.SearchOptions{FullSeconds: float64(full)})
		}
		ex = &local.Executor{GPUs: gpus, MaxParallel: o.MaxParallel, Backend: backend, Arm: armOpts}
	}
	where := fmt.Sprintf("GPUs %v", gpus)
	if o.Executor == "slurm" {
		where = "one Slurm job per arm"
	}
	fmt.Fprintf(o.IO.ErrOut, "sweep %s: %s in %s, %s planned; %s; client: %s (%s); directory %s\n",
		o.Command, plural.Count(len(sched.Points), "point", "points"), plural.Count(len(sched.Arms), "arm", "arms"),
		plural.Count(sched.ServerStarts(), "server start", "server starts"), where, setup.ClientInfo().Name, setup.ClientWhy, dir)
	sum, runErr := campaign.Run(ctx, campaign.Options{
		Dir: dir, Schedule: sched, Executor: ex, Retries: o.Retries, FailFast: o.FailFast,
		Identity: campaign.Identity{Command: o.Command, Settings: settings},
		Progress: o.progressOut(), Estimate: pointTime, Parallel: max(1, min(len(sched.Arms), len(gpus)/max(1, sched.Arms[0].GPUs))),
	})
	if sum != nil {
		fmt.Fprintf(o.IO.Out, "\n%s", sum.Table())
		fmt.Fprintf(o.IO.Out, "summary: %s\n         %s\n", filepath.Join(dir, campaign.SummaryText), filepath.Join(dir, campaign.SummaryJSON))
	}
	if runErr != nil {
		if de, ok := errors.AsType[*campaign.DifferenceError](runErr); ok && de != nil {
			return &FlagError{Err: runErr}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%v (rerun the same command to resume): %w", runErr, context.Canceled)
		}
		return &exitCodeError{Code: exitError, Err: runErr}
	}
	return nil
}

// nodeGPUs are the local executor's GPUs: --gpus, else 0..7 for a
// simulation, else what rocm-smi or nvidia-smi lists.
func (o *campaignOptions) nodeGPUs() ([]int, error) {
	if len(o.GPUs) > 0 {
		ids := slices.Clone(o.GPUs)
		slices.Sort(ids)
		if len(slices.Compact(ids)) != len(o.GPUs) {
			return nil, flagErrorf("--gpus %v: a GPU is listed twice", o.GPUs)
		}
		return ids, nil
	}
	if o.Simulate || o.DryRun {
		return []int{0, 1, 2, 3, 4, 5, 6, 7}, nil
	}
	mem, checked, err := run.SystemGPUProbe(context.Background())
	if err != nil || !checked || len(mem) == 0 {
		return nil, flagErrorf("cannot list this node's GPUs (rocm-smi/nvidia-smi: %v); give them with --gpus 0 1 2 ...", err)
	}
	ids := make([]int, len(mem))
	for i := range ids {
		ids[i] = i
	}
	return ids, nil
}

func aiperfSchemaVersion(v string) string {
	if v == "fork" {
		return recipes.ForkAiperfVersion
	}
	return v
}

// costModel returns the per-point and per-start times of the dry run:
// measured ones from --cost-from when given, else the plan's.
func (o *campaignOptions) costModel() *costModel {
	c := &costModel{startSeconds: defaultServerStartSeconds, duration: o.Duration}
	if o.CostFrom == "" {
		return c
	}
	recs, err := campaign.ReadJournal(o.CostFrom)
	if err != nil {
		fmt.Fprintf(o.IO.ErrOut, "warning: --cost-from %s: %v; using the planned times\n", o.CostFrom, err)
		return c
	}
	var starts, points []float64
	for _, r := range recs {
		switch {
		case r.Event == campaign.EventServerReady && r.Seconds > 0:
			starts = append(starts, r.Seconds)
		case r.Event == campaign.EventPointEnd && r.Status == campaign.StatusOK && r.Seconds > 0:
			points = append(points, r.Seconds)
		}
	}
	if len(starts) > 0 {
		c.startSeconds, c.measuredStart = mean(starts), true
	}
	if len(points) > 0 {
		c.pointSeconds, c.measuredPoint = mean(points), true
	}
	return c
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// defaultServerStartSeconds is the planned time from engine start to
// /health: weight loading plus graph capture of a large MoE model on
// one node, about 10 minutes on MI325X/MI355X-class nodes.
const defaultServerStartSeconds = 600

// costModel predicts a schedule's wall time and GPU-hours.
type costModel struct {
	startSeconds  float64
	pointSeconds  float64 // 0: from the plan
	duration      int     // --duration
	measuredStart bool
	measuredPoint bool
}

// point is a point's load time on a real cluster in seconds: measured
// (--cost-from), else its benchmark duration plus a minute for warm-up
// and drain; a probe's is its own duration plus the minute.
func (c *costModel) point(p *campaign.Point) float64 {
	if p.Plan.ProbeDuration > 0 {
		return float64(p.Plan.ProbeDuration) + 60
	}
	if c.pointSeconds > 0 {
		return c.pointSeconds
	}
	return float64(recipes.Duration(&p.Plan.Row, p.Plan.Fast, c.duration)) + 60
}

// pointWall is a point's expected wall time here (compressed when
// simulated).
func (c *costModel) pointWall(p *campaign.Point, simulate bool, scale float64) time.Duration {
	s := c.point(p)
	if simulate {
		s = s/scale + 3
	}
	return time.Duration(s * float64(time.Second))
}

// armSeconds is an arm's time with the schedule's server starts, and
// InferenceX's (one server start per point).
func (c *costModel) armSeconds(a *campaign.Arm) (ours, theirs float64) {
	for _, p := range a.Points {
		ours += c.point(p)
		theirs += c.point(p) + c.startSeconds
	}
	ours += float64(a.Servers) * c.startSeconds
	return ours, theirs
}

// packedWall is the wall time of arms of the given lengths on a node of
// nGPUs, placed in order as the local executor places them.
func packedWall(arms []*campaign.Arm, seconds []float64, nGPUs, maxParallel int) float64 {
	type run struct {
		end  float64
		gpus int
	}
	free := nGPUs
	var running []run
	now, wall := 0.0, 0.0
	for i, a := range arms {
		need := max(a.GPUs, 1)
		if need > nGPUs {
			continue
		}
		for free < need || (maxParallel > 0 && len(running) >= maxParallel) {
			j := 0
			for k := range running {
				if running[k].end < running[j].end {
					j = k
				}
			}
			now = max(now, running[j].end)
			free += running[j].gpus
			running = slices.Delete(running, j, j+1)
		}
		free -= need
		running = append(running, run{end: now + seconds[i], gpus: need})
		wall = max(wall, now+seconds[i])
	}
	return wall
}

// writeDryRun prints the schedule and its cost, ours and InferenceX's.
func writeDryRun(w io.Writer, s *campaign.Schedule, c *costModel, gpus []int, maxParallel int, simulate bool, scale float64) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "arm\tGPUs\tconcs\tserver starts\twhy")
	var oursGPUh, theirsGPUh float64
	ours := make([]float64, len(s.Arms))
	theirs := make([]float64, len(s.Arms))
	for i, a := range s.Arms {
		concs := make([]string, len(a.Points))
		for j, p := range a.Points {
			concs[j] = strconv.Itoa(p.Conc())
		}
		ours[i], theirs[i] = c.armSeconds(a)
		oursGPUh += ours[i] * float64(a.GPUs) / 3600
		theirsGPUh += theirs[i] * float64(a.GPUs) / 3600
		fmt.Fprintf(tw, "%d %s\t%d\t%s\t%d\t%s\n", a.Index+1, a.Name, a.GPUs, strings.Join(concs, " "), a.Servers, a.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\norder:")
	for _, p := range s.Points {
		srv := "reuse"
		if p.Index == 0 || s.Points[p.Index-1].Arm != p.Arm || s.Points[p.Index-1].Server != p.Server {
			srv = "start server"
		}
		fmt.Fprintf(w, "  %3d  arm %d  conc %-4d %-12s %s\n", p.Index+1, p.Arm+1, p.Conc(), srv, p.ID)
	}
	src := func(measured bool) string {
		if measured {
			return "measured"
		}
		return "planned"
	}
	n := len(gpus)
	fmt.Fprintf(w, "\ncost (server start %.0f s %s; point = duration + 60 s, %s):\n", c.startSeconds, src(c.measuredStart), src(c.measuredPoint))
	fmt.Fprintf(w, "  this schedule:   %d server starts, %.1f GPU-hours, wall %s on %d GPUs\n",
		s.ServerStarts(), oursGPUh, fmtHours(packedWall(s.Arms, ours, n, maxParallel)), n)
	fmt.Fprintf(w, "  InferenceX's:    %d server starts (one job and one model load per point), %.1f GPU-hours, wall %s on %d GPUs\n",
		len(s.Points), theirsGPUh, fmtHours(packedWall(s.Arms, theirs, n, maxParallel)), n)
	if theirsGPUh > 0 {
		fmt.Fprintf(w, "  saving:          %.1f GPU-hours (%.0f %%)\n", theirsGPUh-oursGPUh, 100*(theirsGPUh-oursGPUh)/theirsGPUh)
	}
	if simulate {
		total := 0.0
		for _, p := range s.Points {
			total += c.pointWall(p, true, scale).Seconds()
		}
		fmt.Fprintf(w, "  simulated here:  about %s of load at time scale %g\n", fmtHours(total), scale)
	}
	return nil
}

// fmtHours is "1h05m" or "42s".
func fmtHours(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	if d < time.Hour {
		return d.String()
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// ensureOutParent refuses an --out whose parent does not exist, before
// anything is planned (a typo should not create a tree somewhere).
func ensureOutParent(out string) error {
	parent := filepath.Dir(filepath.Clean(out))
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return flagErrorf("--out %s: the parent directory %s does not exist", out, parent)
	}
	return nil
}

// slurmExecutor submits one job per arm running this sweep binary's
// run-arm on the node.
func (o *campaignOptions) slurmExecutor(dir string, setup run.Setup, po run.Options, watchdog func(*campaign.Point) time.Duration) (*slurm.Executor, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	settings := campaign.ArmSettings{Simulate: o.Simulate, TimeScale: o.TimeScale, WallClock: setup.WallClock, SimGPU: o.SimGPU, SimCalibration: o.SimCalib, Aiperf: setup.Aiperf,
		AiperfSchema: setup.AiperfSchema, PowerGPUs: setup.PowerGPUs, StopGrace: po.StopGrace.Seconds(), ReadyTimeout: po.ReadyTimeout.Seconds()}
	var armProgram func(context.Context, *campaign.Arm) ([]string, error)
	if o.Launch {
		if armProgram, err = o.armLauncher(dir); err != nil {
			return nil, err
		}
	}
	return &slurm.Executor{
		Client: slurm.NewClient(slurm.Exec{Timeout: time.Minute}), Dir: dir, Program: []string{exe}, Settings: settings, ArmProgram: armProgram,
		Poll: o.SlurmPoll, StartTimeout: o.SlurmStartTimeout, PointTimeout: watchdog,
		Progress: func(line string) { fmt.Fprintln(o.progressOut(), "  "+line) },
		// --time: the arm's planned time on its node, twice over.
		TimeLimit: func(j campaign.Job) time.Duration {
			var sec float64
			for _, p := range j.Points {
				sec += watchdog(p).Seconds()
			}
			return time.Duration(sec*float64(time.Second)) + 10*time.Minute
		},
		Spec: func(a *campaign.Arm) slurm.JobSpec {
			var spec slurm.JobSpec
			// A simulated engine needs no exclusive node or CPU allocation:
			// the runner profile's allocation applies to real engines and
			// to launched arms (their site facts from --site).
			if prof, err := o.profile(a.Runner); err == nil && (!o.Simulate || o.Launch) {
				spec.Partition = prof.Slurm.Partition
				if prof.Slurm.Account != "" {
					spec.Options = append(spec.Options, "--account="+prof.Slurm.Account)
				}
				if prof.Slurm.Exclusive {
					spec.Options = append(spec.Options, "--exclusive")
				}
				if prof.Slurm.MemAll {
					spec.Options = append(spec.Options, "--mem=0")
				}
				if prof.Slurm.CPUsPerTask > 0 {
					spec.Options = append(spec.Options, "--cpus-per-task="+strconv.Itoa(prof.Slurm.CPUsPerTask))
				}
			}
			if o.SlurmPartition != "" {
				spec.Partition = o.SlurmPartition
			}
			return spec
		},
	}, nil
}

// profile is the runner's profile with the --site changes.
func (o *campaignOptions) profile(runner string) (recipes.Profile, error) {
	prof, err := recipes.ProfileFor(runner)
	if err != nil {
		return prof, err
	}
	for _, s := range o.Site {
		if err := prof.ApplySite(s); err != nil {
			return prof, err
		}
	}
	return prof, nil
}

// armLauncher gives each arm's job the container step of its runner's
// launch (sweep/launch.InJob) around the mounted sweep, importing each
// image once (under the launcher's flock) before the first job that
// needs it.
func (o *campaignOptions) armLauncher(dir string) (func(context.Context, *campaign.Arm) ([]string, error), error) {
	for _, s := range o.Site {
		if err := (&recipes.Profile{}).ApplySite(s); err != nil {
			return nil, &FlagError{Err: err}
		}
	}
	bin, err := sweepBinary(o.SweepBinary)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	imported := map[string]error{}
	return func(ctx context.Context, a *campaign.Arm) ([]string, error) {
		prof, err := o.profile(a.Runner)
		if err != nil {
			return nil, fmt.Errorf("--launch: %w", err)
		}
		imp, step, err := launch.InJob(prof, a.ServerRow, launch.Options{RunnerName: recipes.RunnerName(a.ServerRow, nil), Mounts: []string{launch.SweepMount(bin)}}, dir)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		ierr, done := imported[imp.SquashFile]
		if !done {
			if ierr = launch.Preflight(imp); ierr == nil {
				ex := launch.Exec{Stdout: o.progressOut(), Stderr: o.progressOut(), Progress: func(line string) { fmt.Fprintln(o.progressOut(), "  "+line) }}
				_, ierr = ex.Run(ctx, imp)
			}
			imported[imp.SquashFile] = ierr
		}
		if ierr != nil {
			return nil, fmt.Errorf("image %s: %w", imp.Image, ierr)
		}
		return append(step, launch.SweepDir+"/"+filepath.Base(bin)), nil
	}, nil
}

// writeLaunchDryRun prints what --launch runs per arm: the image import on
// this host and the job's container step (run-arm follows it).
func (o *campaignOptions) writeLaunchDryRun(sched *campaign.Schedule, dir string) error {
	bin, err := sweepBinary(o.SweepBinary)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.IO.Out, "\nlaunch (--launch): per arm, the image import on this host, then the sbatch job's step")
	for _, a := range sched.Arms {
		prof, err := o.profile(a.Runner)
		if err != nil {
			return &FlagError{Err: err}
		}
		imp, step, err := launch.InJob(prof, a.ServerRow, launch.Options{RunnerName: recipes.RunnerName(a.ServerRow, nil), Mounts: []string{launch.SweepMount(bin)}}, dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(o.IO.Out, "  arm %d (%s, %s):\n    import: %s\n    step:   %s %s run-arm --job ... --events ...\n", a.Index+1, prof.Name, imp.Launcher,
			launch.Oneline(imp.Commands[0].Argv), strings.Join(step, " "), launch.SweepDir+"/"+filepath.Base(bin))
	}
	return nil
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// progressOut is the one writer of the sweep's progress lines: the
// campaign and the Slurm executor's job-state lines come from different
// goroutines.
func (o *campaignOptions) progressOut() io.Writer {
	o.progressOnce.Do(func() { o.progress = &lockedWriter{w: o.IO.ErrOut} })
	return o.progress
}
