package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/internal/simproto"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/executor/slurm"
	"sweep/sweep/launch"
	"sweep/sweep/run"
)

type runOptions struct {
	IO     *IOStreams
	Inputs matrixInputs

	ConfigKey string
	TP, EP    int
	DPAttn    bool
	Conc      int
	Eval      bool
	Out       string

	simFlags

	Plan  recipes.PlanOptions
	Point run.Options
	// Force reuses a non-empty --out.
	Force bool
	// PlanFile is a point planned elsewhere (one element of
	// `sweep plan --format json`), run instead of planning by flags.
	PlanFile string
	// stopGraceSet is --stop-grace given (0s then means no grace).
	stopGraceSet bool
	// simClockSet is --sim-clock given (a multi-node point defaults to
	// the wall clock).
	simClockSet bool
	// timeScaleSet is --time-scale given (a multi-node point defaults to
	// defaultMultiNodeTimeScale).
	timeScaleSet bool

	// Launch runs the point the way the runner's launcher does: allocate,
	// import the image, run engine and client inside it (see run_launch.go).
	Launch bool
	// Site changes the runner profile's site facts (key=value).
	Site []string
	// SweepBinary is the sweep mounted into the container (default: this one).
	SweepBinary string
	// JobID is an allocation to run in (default $SLURM_JOB_ID).
	JobID string
	// Inferencex is the host's InferenceX checkout whose utils/aiperf the
	// launched point installs into a per-job venv (launch.ClientSetup).
	Inferencex string
	// SubmitDir is where a multi-node job is submitted from (--submit-dir).
	SubmitDir string
	// Slurm runs a simulated multi-node point's roles as job steps on the
	// nodes of a Slurm allocation (--slurm).
	Slurm bool
}

func newRunCmd(ios *IOStreams, runF func(context.Context, *runOptions) error) *Command {
	if runF == nil {
		runF = runRun
	}
	return &Command{
		Name:  "run",
		Short: "Run one benchmark point end to end (engine, load, metrics, result JSON)",
		Long:  helpText("run"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &runOptions{IO: ios}
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			lists := newArgparseLists()
			fs.StringVar(&o.ConfigKey, "config-key", "", "master config key of the point (required)")
			fs.IntVar(&o.TP, "tp", 0, "tensor parallel size of the point (required)")
			fs.IntVar(&o.EP, "ep", 1, "expert parallel size of the point")
			fs.BoolVar(&o.DPAttn, "dp-attn", false, "the DP-attention arm of the key")
			fs.IntVar(&o.Conc, "conc", 0, "concurrency of the point (required)")
			fs.BoolVar(&o.Eval, "eval", false, "run the point as an eval (lm-eval instead of aiperf)")
			fs.StringVar(&o.Out, "out", "", "output directory (required; created if missing)")
			fs.StringVar(&o.PlanFile, "plan", "", "run this planned point (one element of `sweep plan --format json`, a file) instead of --config-key/--tp/--ep/--conc")
			fs.BoolVar(&o.Force, "force", false, "overwrite a non-empty --out (another point's files are replaced)")
			o.simFlags.bind(fs, true, "with --simulate: GPU to simulate (default: from the runner, e.g. mi325x)")
			fs.BoolVar(&o.Plan.Fast, "fast", false, "agentx-fast discovery settings: 1200 s and 1 warm-up request per lane")
			fs.IntVar(&o.Plan.Duration, "duration", 0, "benchmark duration in seconds (default: the row's, 3600)")
			fs.IntVar(&o.Plan.Port, "port", 0, "the point's public port (default 8888; with --simulate a free port)")
			fs.StringVar(&o.Plan.ModelPath, "model-path", "", "what the engine loads (default: the model id)")
			fs.StringVar(&o.Plan.AiperfVersion, "aiperf-version", recipes.DefaultAiperfVersion, "aiperf schema version the client command is built for: 0.12.0 or fork")
			fs.StringVar(&o.Plan.RunnerName, "runner-name", "", "runner name for RESULT_FILENAME (default: the first runner of the row's label)")
			fs.DurationVar(&o.Point.ReadyTimeout, "ready-timeout", 30*time.Minute, "how long to wait for the engine's /health")
			fs.DurationVar(&o.Point.StopGrace, "stop-grace", 60*time.Second, "wait between SIGTERM and SIGKILL when stopping processes")
			fs.Float64Var(&o.Point.FailedRequestThreshold, "failed-request-threshold", 0.10, "largest accepted failed-request ratio")
			fs.Float64Var(&o.Point.ALTolerance, "al-tolerance", 0.05, "accepted |measured - golden| acceptance length")
			fs.BoolVar(&o.Launch, "launch", false, "run the point as the runner's InferenceX launcher does: allocate (or use $SLURM_JOB_ID), import the image under flock, run engine and client in the image (srun --container-image, or docker run), release; see sweep plan --runner-name")
			fs.StringArrayVar(&o.Site, "site", nil, "with --launch: change a site fact of the runner profile, key=value ("+strings.Join(recipes.SiteKeys, ", ")+"); repeatable")
			fs.StringVar(&o.SweepBinary, "sweep-binary", "", "with --launch: the sweep binary mounted into the image (default: this one; build it with CGO_ENABLED=0 for images without glibc)")
			fs.StringVar(&o.JobID, "job-id", "", "with --launch: run in this Slurm allocation instead of allocating (default: $SLURM_JOB_ID)")
			fs.StringVar(&o.Inferencex, "inferencex", "", "with --launch: an InferenceX checkout; its utils/aiperf is installed into a per-job venv with this host's uv and the trace set downloaded with hf, as benchmark_lib.sh does (skipped when there; checked before allocating)")
			fs.StringVar(&o.SubmitDir, "submit-dir", "", "with --launch on a multi-node key: the checkout the launcher submits from (InferenceX's for the AMD job.slurm; the prepared srt-slurm checkout for srtctl apply); default: the current directory")
			fs.BoolVar(&o.Slurm, "slurm", false, "with --simulate on a multi-node key: allocate a node per worker on the Slurm cluster (SLURM_CONF) and run each worker as a job step on its node, the router and the client on the first; the allocation is released at the end")
			o.Inputs.bind(fs, lists)
			lists.finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.parseRest(fs, args); err != nil {
					return err
				}
				o.stopGraceSet = fs.Changed("stop-grace")
				o.simClockSet = fs.Changed("sim-clock")
				o.timeScaleSet = fs.Changed("time-scale")
				switch {
				case o.Point.StopGrace < 0:
					return flagErrorf("--stop-grace %s: want 0 (kill at once) or a positive duration", o.Point.StopGrace)
				case o.stopGraceSet && o.Point.StopGrace == 0:
					o.Point.StopGrace = run.NoGrace // 0s means no grace, not the default
				}
				required := []string{"config-key", "tp", "conc", "out"}
				if o.PlanFile != "" {
					for _, f := range []string{"config-key", "tp", "ep", "conc", "dp-attn", "eval", "fast", "duration", "port", "model-path", "aiperf-version", "runner-name"} {
						if fs.Changed(f) {
							return flagErrorf("--%s cannot be combined with --plan: the plan fixes the point", f)
						}
					}
					required = []string{"out"}
				}
				var missing []string
				for _, f := range required {
					if !fs.Changed(f) {
						missing = append(missing, "--"+f)
					}
				}
				if len(missing) > 0 {
					return flagErrorf("missing %s", strings.Join(missing, ", "))
				}
				if err := checkTimeScale(o.TimeScale); err != nil {
					return err
				}
				if err := checkPowerGPUs(o.PowerGPUs); err != nil {
					return err
				}
				if !o.Simulate && (fs.Changed("sim-fault") || fs.Changed("sim-gpu") || fs.Changed("time-scale") || fs.Changed("sim-clock")) {
					return flagErrorf("--sim-fault, --sim-gpu, --sim-clock and --time-scale need --simulate")
				}
				if err := checkSimClock(o.SimClock); err != nil {
					return err
				}
				if err := checkSimCalibration(o.Simulate, &o.SimCalib); err != nil {
					return err
				}
				if !o.Launch && (len(o.Site) > 0 || o.SweepBinary != "" || o.JobID != "" || o.SubmitDir != "" || o.Inferencex != "") {
					return flagErrorf("--site, --sweep-binary, --job-id, --submit-dir and --inferencex need --launch")
				}
				if o.Inferencex != "" && (o.Aiperf != "" || o.Builtin) {
					return flagErrorf("--inferencex installs InferenceX's aiperf: drop --aiperf and --builtin-client, or drop --inferencex")
				}
				if o.Slurm && (!o.Simulate || o.Launch || o.PlanFile != "") {
					return flagErrorf("--slurm runs a simulated multi-node point on a Slurm cluster's nodes: it needs --simulate and --config-key, not --launch or --plan")
				}
				if o.Launch && o.PlanFile != "" {
					return flagErrorf("--launch plans the point itself: use --config-key/--tp/--ep/--conc, not --plan")
				}
				return runF(ctx, o)
			}
		},
	}
}

func runRun(ctx context.Context, o *runOptions) error {
	started := time.Now()
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return err
	}
	if o.Launch {
		return runLaunched(ctx, o, out, started)
	}
	var p *recipes.Point
	if o.PlanFile != "" {
		if p, err = readPlanFile(o.PlanFile, out); err != nil {
			return err
		}
	} else {
		g, err := o.Inputs.generator()
		if err != nil {
			return err
		}
		multi, err := o.multiNodeRows(g)
		if err != nil {
			return err
		}
		if len(multi) > 0 {
			return runMultiNode(ctx, o, out, started, multi)
		}
		if o.Slurm {
			return flagErrorf("--slurm runs multi-node keys only; %s is a single-node key (sweep discover --executor slurm runs single-node arms as Slurm jobs)", o.ConfigKey)
		}
		if p, err = o.planRow(g, out); err != nil {
			return err
		}
	}
	row := p.Row
	if len(p.ClientSetup) > 0 {
		// In the launched container: the client's environment first, so
		// the aiperf it makes is there to be chosen.
		err := launch.RunSetup(ctx, p.ClientSetup, launch.ExecSteps{Out: o.IO.ErrOut}, func(line string) {
			fmt.Fprintf(o.IO.ErrOut, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
		})
		if err != nil {
			return &exitCodeError{Code: exitError, Err: err}
		}
	}
	setup, err := o.setup(o.Plan.AiperfVersion, false)
	if err != nil {
		return err
	}
	setup.ALTolerance = o.Point.ALTolerance
	spec, err := run.FromPlan(p, setup)
	if err != nil {
		return err
	}
	client := fmt.Sprintf("%s (%s)", spec.ClientInfo.Name, setup.ClientWhy)
	engine := "engine: " + p.Engine.Argv[0]
	if o.Simulate {
		engine = fmt.Sprintf("simulated %s on %s, time scale %gx", row.Framework, spec.Engine.Env[simproto.EnvGPU], o.TimeScale)
		if setup.Virtual() {
			engine = fmt.Sprintf("simulated %s on %s, virtual clock", row.Framework, spec.Engine.Env[simproto.EnvGPU])
		}
	}
	fmt.Fprintf(o.IO.ErrOut, "point %s %s (recipe %s)\n  %s; client: %s\n  output: %s\n",
		row.ConfigKey, result.RowIdentity(&row).PointLabel(row.Conc), p.Recipe, engine, client, out)

	return o.runSpec(ctx, spec, out, started)
}

// selectRow finds the matrix row of the requested point, or lists the
// points the key has.
func (o *runOptions) selectRow(g *matrix.Generator) (*matrix.Row, error) {
	evals := matrix.EvalOptions{NoEvals: !o.Eval, EvalsOnly: o.Eval}
	key, err := resolveRunKey(g.Masters, o.ConfigKey)
	if err != nil {
		return nil, err
	}
	if err := configs.CheckHardware(g.Masters, g.Runners, key); err != nil {
		return nil, fmt.Errorf("%s cannot run on its runner:\n%w", key, err)
	}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: evals})
	if err != nil {
		return nil, matrixError(err)
	}
	var have []string
	for _, r := range rows {
		if r.Kind != matrix.AgenticSingleNode {
			continue
		}
		if r.TP == o.TP && r.EP == o.EP && r.DPAttn == o.DPAttn && r.Conc == o.Conc {
			r.StampFingerprint()
			return r, nil
		}
		have = append(have, fmt.Sprintf("--tp %d --ep %d%s --conc %d", r.TP, r.EP, map[bool]string{true: " --dp-attn"}[r.DPAttn], r.Conc))
	}
	what := "points"
	if o.Eval {
		what = "eval points"
	}
	if len(have) == 0 {
		return nil, &FlagError{Err: fmt.Errorf("%s has no single-node agentic %s", key, what)}
	}
	return nil, &FlagError{Err: fmt.Errorf("%s has no point tp%d ep%d dp-attn=%t conc%d; its %s are:\n  %s",
		key, o.TP, o.EP, o.DPAttn, o.Conc, what, strings.Join(have, "\n  "))}
}

// resolveRunKey resolves --config-key as every command resolves keys
// (matrix.ResolveKeys: a plain key must exist, a key holding '*' or '?' is
// an fnmatch pattern) and requires exactly one key, since a run is one
// point.
func resolveRunKey(masters *configs.Masters, pattern string) (string, error) {
	ms, err := matrix.ResolveKeys(masters, []string{pattern})
	if err != nil {
		return "", &FlagError{Err: fmt.Errorf("--config-key: %w", err)}
	}
	if len(ms) > 1 {
		keys := make([]string, len(ms))
		for i, m := range ms {
			keys[i] = m.Key
		}
		return "", &FlagError{Err: fmt.Errorf("--config-key %q matches %d config keys; a run is one point, name one of:\n  %s", pattern, len(ms), strings.Join(keys, "\n  "))}
	}
	return ms[0].Key, nil
}

// printRunSummary prints where the results are and the headline numbers.
func printRunSummary(ios *IOStreams, rec *run.Record, elapsed time.Duration) {
	if rec == nil {
		return
	}
	w := ios.Out
	status := "ok"
	if f := rec.Failed(); f != nil {
		status = fmt.Sprintf("FAILED at stage %s: %s", f.Name, f.Error)
		if len(f.LogTail) > 0 {
			fmt.Fprintf(ios.ErrOut, "last lines of the log:\n  %s\n", strings.Join(f.LogTail, "\n  "))
		}
	}
	fmt.Fprintf(w, "point %s: %s (%s)\n", rec.Name, status, elapsed.Round(time.Second))
	summary, err := run.Summarize(rec.ResultFile)
	haveResult := rec.ResultFile != "" && err == nil
	if rec.ResultFile != "" {
		fmt.Fprintf(w, "  result:     %s\n", rec.ResultFile)
	}
	if s := summary; haveResult {
		fmt.Fprintf(w, "  client:     %s\n", s.Client)
		fmt.Fprintf(w, "  requests:   %d ok of %d recorded (warm-up included)\n", s.Successful, s.Total)
		fmt.Fprintf(w, "  throughput: %.1f tok/s/GPU total, %.1f output\n", s.TotalPerGPU, s.OutputPerGPU)
		fmt.Fprintf(w, "  latency:    TTFT p50 %.3f s, p90 %.3f s; interactivity p50 %.1f tok/s\n", s.TTFTP50, s.TTFTP90, s.IntvtyP50)
	}
	if haveResult {
		if res, err := result.ReadFile(rec.ResultFile); err == nil && res.MultiNodeShape != nil {
			m := res.MultiNodeShape
			fmt.Fprintf(w, "  layout:     prefill %d x tp%d ep%d, decode %d x tp%d ep%d, %d GPUs\n",
				m.PrefillNumWorkers, m.PrefillTP, m.PrefillEP, m.DecodeNumWorkers, m.DecodeTP, m.DecodeEP, m.NumPrefillGPU+m.NumDecodeGPU)
		}
	}
	if a := rec.Acceptance; a != nil {
		fmt.Fprintf(w, "  accept len: %s\n", a)
	}
	if s := summary; haveResult {
		verdict := "valid"
		if !s.Valid {
			verdict = "invalid: " + strings.Join(s.InvalidReasons, "; ")
		}
		fmt.Fprintf(w, "  validation: %s\n", verdict)
		if s.Submission != "" {
			fmt.Fprintf(w, "  scenario:   %s\n", s.Submission)
		}
	} else if v := rec.Validation; v != nil {
		verdict := "valid"
		if !v.Valid {
			verdict = "invalid: " + v.Reason
		}
		fmt.Fprintf(w, "  validation: %s\n", verdict)
	}
	fmt.Fprintf(w, "  run record: %s\n", filepath.Join(filepath.Dir(rec.ArtifactDir), run.RecordFile))
}

// planByFlags plans the point --config-key, --tp, --ep, --dp-attn and
// --conc name, writing into out.
func (o *runOptions) planByFlags(out string) (*recipes.Point, error) {
	g, err := o.Inputs.generator()
	if err != nil {
		return nil, err
	}
	return o.planRow(g, out)
}

// planRow is planByFlags with the matrix generator at hand.
func (o *runOptions) planRow(g *matrix.Generator, out string) (*recipes.Point, error) {
	row, err := o.selectRow(g)
	if err != nil {
		return nil, err
	}
	if o.Plan.Port == 0 {
		o.Plan.Port = recipes.DefaultPort
		if o.Simulate {
			if o.Plan.Port, err = freePortPair(); err != nil {
				return nil, err
			}
		}
	}
	o.Plan.ResultDir = out
	o.Plan.Eval = o.Eval
	o.Plan.Runners = g.Runners
	o.Plan = withCatalog(o.Plan)
	points, err := recipes.Plan(matrix.Matrix{row}, o.Plan)
	if err != nil {
		if errors.Is(err, recipes.ErrInvalidOptions) {
			return nil, &FlagError{Err: err}
		}
		return nil, fmt.Errorf("plan: %w", err)
	}
	return &points[0], nil
}

// readPlanFile reads one planned point: a JSON object, or an array of
// exactly one, as `sweep plan --format json` prints them. The plan's
// result directory must be out, since its commands write there.
func readPlanFile(path, out string) (*recipes.Point, error) {
	data, err := inputfile.Read(path, inputfile.SmallJSON)
	if err != nil {
		return nil, &FlagError{Err: fmt.Errorf("--plan: %w", err)}
	}
	var points []recipes.Point
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &points); err != nil {
			return nil, &FlagError{Err: fmt.Errorf("--plan %s: not the output of `sweep plan --format json`: %w", path, err)}
		}
	} else {
		var p recipes.Point
		if err := json.Unmarshal(t, &p); err != nil {
			return nil, &FlagError{Err: fmt.Errorf("--plan %s: not a planned point: %w", path, err)}
		}
		points = append(points, p)
	}
	if len(points) != 1 {
		return nil, &FlagError{Err: fmt.Errorf("--plan %s holds %d points; give one (e.g. jq '.[i]')", path, len(points))}
	}
	p := &points[0]
	if p.Row.Model == "" || len(p.Engine.Argv) == 0 {
		return nil, &FlagError{Err: fmt.Errorf("--plan %s: the point has no row or no engine command", path)}
	}
	if filepath.Clean(p.ResultDir) != out {
		return nil, &FlagError{Err: fmt.Errorf("--plan %s writes into %s, not --out %s: plan it with --result-dir %s, or run it with --out %s", path, p.ResultDir, out, out, p.ResultDir)}
	}
	return p, nil
}

// runLaunched is "sweep run --launch": the point runs through its
// runner's launch path (sweep/launch) with the engine and the client in
// the image, run there by the mounted sweep binary.
func runLaunched(ctx context.Context, o *runOptions, out string, started time.Time) error {
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	if multi, err := o.multiNodeRows(g); err != nil {
		return err
	} else if len(multi) > 0 {
		return runMultiNodeLaunched(ctx, o, out, started, multi)
	}
	row, err := o.selectRow(g)
	if err != nil {
		return err
	}
	runner := o.Plan.RunnerName
	if runner == "" {
		runner = recipes.RunnerName(row, g.Runners)
	}
	prof, err := recipes.SiteProfile(runner, o.Site)
	if errors.Is(err, recipes.ErrNoProfile) {
		return &FlagError{Err: fmt.Errorf("--launch: %w", err)}
	}
	if err != nil {
		return &FlagError{Err: err}
	}
	bin, err := sweepBinary(o.SweepBinary)
	if err != nil {
		return err
	}
	jobID := o.JobID
	if jobID == "" && prof.Launch.Docker == nil {
		jobID = os.Getenv("SLURM_JOB_ID")
	}
	ws := launch.ContainerWorkspace(prof, row)
	// Plan now, so a point that cannot be planned fails before allocating,
	// and check the output directory as a plain run does.
	p, err := o.planLaunched(g, row, ws, recipes.DefaultPort)
	if err != nil {
		return err
	}
	mounts, inner := []string{launch.SweepMount(bin)}, o.innerRunArgs()
	var client *launch.ClientSetup
	if !o.Builtin && (o.Inferencex != "" || o.Aiperf != "") {
		client = &launch.ClientSetup{Checkout: o.Inferencex, Aiperf: o.Aiperf}
		ce, m, err := client.Prepare(ctx, prof, row, p.Client, launch.JobKey(prof, jobID, runner), launch.Dialer{})
		if err != nil {
			return err
		}
		mounts = append(mounts, m...)
		if o.Inferencex != "" {
			inner = append(inner, "--aiperf", ce.AiperfProgram())
		}
	}
	lo := launch.Options{RunnerName: runner, Workspace: out, JobID: jobID,
		Payload: launch.SweepPayload(bin, ws, inner...), Mounts: mounts, Export: []string{launch.SweepExport(bin)}}
	if u, err := user.Current(); err == nil {
		lo.User = u.Username
	}
	pl, err := launch.Build(prof, row, lo)
	if err != nil {
		return &FlagError{Err: err}
	}
	if err := launch.Preflight(pl); err != nil {
		return err
	}
	release, _, err := run.ClaimOutDir(out, p.ResultFilename, o.Force)
	if errors.Is(err, run.ErrAlreadyDone) {
		fmt.Fprintf(o.IO.ErrOut, "point %s already completed in %s; nothing to do (use --force to run it again)\n", p.ResultFilename, out)
		return nil
	}
	if err != nil {
		return &FlagError{Err: err}
	}
	release()
	fmt.Fprintf(o.IO.ErrOut, "point %s tp%d ep%d dpa=%t conc%d on %s (%s), image %s\n  output: %s (mounted at %s)\n",
		row.ConfigKey, row.TP, row.EP, row.DPAttn, row.Conc, runner, pl.Launcher, row.Image, out, ws)
	ex := launch.Exec{
		Stdout: o.IO.Out, Stderr: o.IO.ErrOut, Guard: []string{bin, "launch-guard"},
		// The container's sweep stops its processes with --stop-grace.
		StopWait: max(o.Point.StopGrace, 0) + 20*time.Second,
		Progress: func(line string) {
			fmt.Fprintf(o.IO.ErrOut, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
		},
		BeforeRun: func(bound *launch.Plan) error {
			port := recipes.DefaultPort
			if n, err := strconv.Atoi(bound.RunEnv("PORT")); err == nil {
				port = n
			}
			if o.Simulate {
				// A simulated engine shares the host's network: a free port.
				if port, err = freePortPair(); err != nil {
					return err
				}
			}
			p, err := o.planLaunched(g, row, ws, port)
			if err != nil {
				return err
			}
			p.Launch = bound.Commands
			if client != nil {
				ce, _, err := client.Env(prof, row, p.Client, launch.JobKey(prof, bound.JobID, runner))
				if err != nil {
					return err
				}
				if p.ClientSetup, err = ce.Steps(); err != nil {
					return err
				}
			}
			if err := os.MkdirAll(filepath.Join(out, filepath.Dir(launch.PlanFile)), 0o755); err != nil {
				return err
			}
			return atomicfile.WriteJSON(filepath.Join(out, launch.PlanFile), p)
		},
	}
	res, runErr := ex.Run(ctx, pl)
	if res.Released {
		status := "released"
		if res.ReleaseErr != nil {
			status = "release FAILED: " + res.ReleaseErr.Error()
		}
		if pl.ContainerName != "" {
			fmt.Fprintf(o.IO.ErrOut, "container %s %s\n", pl.ContainerName, strings.Replace(status, "released", "removed", 1))
		} else {
			fmt.Fprintf(o.IO.ErrOut, "allocation %s %s\n", res.JobID, status)
		}
	}
	switch {
	case runErr != nil && ctx.Err() != nil:
		return fmt.Errorf("%v: %w", runErr, context.Canceled)
	case runErr != nil:
		return &exitCodeError{Code: exitError, Err: runErr}
	case res.ReleaseErr != nil:
		return &exitCodeError{Code: exitError, Err: res.ReleaseErr}
	}
	return nil
}

// planLaunched plans the point with its results in the container's
// workspace ws on the given port.
func (o *runOptions) planLaunched(g *matrix.Generator, row *matrix.Row, ws string, port int) (*recipes.Point, error) {
	po := o.Plan
	po.Port = port
	po.ResultDir = ws
	po.Eval = o.Eval
	po.Runners = g.Runners
	points, err := recipes.Plan(matrix.Matrix{row}, withCatalog(po))
	if err != nil {
		if errors.Is(err, recipes.ErrInvalidOptions) {
			return nil, &FlagError{Err: err}
		}
		return nil, fmt.Errorf("plan: %w", err)
	}
	return &points[0], nil
}

// innerRunArgs are the flags of the container's `sweep run --plan`: the
// simulation, the client and the point options.
func (o *runOptions) innerRunArgs() []string {
	var a []string
	if o.Simulate {
		a = append(a, "--simulate", "--sim-clock", o.SimClock, "--time-scale", strconv.FormatFloat(o.TimeScale, 'g', -1, 64))
		if o.SimFault != "" {
			a = append(a, "--sim-fault", o.SimFault)
		}
		if o.SimGPU != "" {
			a = append(a, "--sim-gpu", o.SimGPU)
		}
	}
	if o.Builtin {
		a = append(a, "--builtin-client")
	}
	if o.Aiperf != "" {
		a = append(a, "--aiperf", o.Aiperf)
	}
	a = append(a, "--ready-timeout", o.Point.ReadyTimeout.String(),
		"--failed-request-threshold", strconv.FormatFloat(o.Point.FailedRequestThreshold, 'g', -1, 64),
		"--al-tolerance", strconv.FormatFloat(o.Point.ALTolerance, 'g', -1, 64))
	if o.stopGraceSet {
		g := o.Point.StopGrace
		if g == run.NoGrace {
			g = 0
		}
		a = append(a, "--stop-grace", g.String())
	}
	return a
}

// multiNodeRows are the multi-node agentic rows of --config-key (none for
// a single-node key).
func (o *runOptions) multiNodeRows(g *matrix.Generator) (matrix.Matrix, error) {
	key, err := resolveRunKey(g.Masters, o.ConfigKey)
	if err != nil {
		return nil, err
	}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	if err != nil {
		return nil, matrixError(err)
	}
	return slices.DeleteFunc(rows, func(r *matrix.Row) bool { return r.Kind != matrix.AgenticMultiNode }), nil
}

// selectMultiNodeRow is the row of a multi-node key whose prefill layout
// is --tp/--ep/--dp-attn and whose concurrencies hold --conc.
func (o *runOptions) selectMultiNodeRow(rows matrix.Matrix) (*matrix.Row, error) {
	var have []string
	for _, r := range rows {
		p := r.Prefill
		if p.TP == o.TP && p.EP == o.EP && p.DPAttn == o.DPAttn && slices.Contains(r.Concs, o.Conc) {
			r.StampFingerprint()
			return r, nil
		}
		for _, c := range r.Concs {
			have = append(have, fmt.Sprintf("--tp %d --ep %d%s --conc %d  (%s)", p.TP, p.EP, map[bool]string{true: " --dp-attn"}[p.DPAttn], c, r.ExpName))
		}
	}
	return nil, &FlagError{Err: fmt.Errorf("%s has no multi-node point with prefill tp%d ep%d dp-attn=%t at conc %d; --tp, --ep and --dp-attn name the prefill workers' layout, and its points are:\n  %s",
		rows[0].ConfigKey, o.TP, o.EP, o.DPAttn, o.Conc, strings.Join(have, "\n  "))}
}

// runMultiNode is `sweep run --simulate` on a multi-node key: the
// disaggregated point's prefill and decode workers (simulated engines on
// this host's loopback), the PD router in front of them and the client
// against the router, on the compressed wall clock.
func runMultiNode(ctx context.Context, o *runOptions, out string, started time.Time, rows matrix.Matrix) error {
	if !o.Simulate {
		return flagErrorf("%s is a multi-node key: its points run as one Slurm job over several nodes (sweep plan --config-keys %s shows the job); on this host they run only with --simulate", o.ConfigKey, o.ConfigKey)
	}
	if err := o.multiNodeClock(o.simClockSet, o.timeScaleSet); err != nil {
		return err
	}
	row, err := o.selectMultiNodeRow(rows)
	if err != nil {
		return err
	}
	setup, err := o.setup(o.Plan.AiperfVersion, false)
	if err != nil {
		return err
	}
	setup.ALTolerance = o.Point.ALTolerance
	po := o.Plan
	po.ResultDir = out
	po.Runners = nil
	planned, err := recipes.PlanMultiNode(matrix.Matrix{row}, withCatalog(po))
	if err != nil {
		return planFailure(err)
	}
	workers := recipes.LocalWorkerCount(&planned[0])
	ports, err := freePorts(1 + workers)
	if err != nil {
		return err
	}
	// plan lays the point out with the router and workers at hosts (nil:
	// this host's loopback) and makes its Spec.
	plan := func(hosts []string, setup run.Setup) (*recipes.LocalMultiNode, run.Spec, error) {
		l, err := recipes.PlanMultiNodeOnHosts(row, o.Conc, withCatalog(po), ports, hosts)
		if errors.Is(err, recipes.ErrNotSupported) {
			return nil, run.Spec{}, &FlagError{Err: err}
		}
		if err != nil {
			return nil, run.Spec{}, fmt.Errorf("plan: %w", err)
		}
		spec, err := run.FromLocalMultiNode(l, setup)
		if err != nil {
			return nil, run.Spec{}, &FlagError{Err: err}
		}
		return l, spec, nil
	}
	// The plan on this host checks the point before anything is allocated
	// and names its result.
	l, spec, err := plan(nil, setup)
	if err != nil {
		return err
	}
	announce := func(l *recipes.LocalMultiNode, spec run.Spec, where string) {
		var roles []string
		for _, w := range l.Workers {
			roles = append(roles, w.Name)
		}
		fmt.Fprintf(o.IO.ErrOut, "point %s %s conc %d (multi-node, disaggregated, KV transfer %s)\n  simulated %s on %s, time scale %gx: %s behind the PD router%s; client: %s (%s)\n  output: %s\n",
			row.ConfigKey, row.ExpName, o.Conc, l.Point.KVTransfer, row.Framework, spec.Simulation.GPU, o.TimeScale,
			strings.Join(roles, ", "), where, spec.ClientInfo.Name, setup.ClientWhy, out)
	}
	if !o.Slurm {
		announce(l, spec, "")
		return o.runSpec(ctx, spec, out, started)
	}
	return o.runClaimed(ctx, spec.Name, out, started, func() (run.Spec, func(), error) {
		c := slurm.NewClient(slurm.Exec{})
		gpus := 0
		for _, r := range planned[0].Roles {
			gpus = max(gpus, r.GPUsPerNode)
		}
		// The point's planned time, twice, and ten minutes for the rest.
		d := time.Duration(recipes.Duration(row, po.Fast, po.Duration)) * time.Second
		limit := 2*time.Duration(float64(d)/o.TimeScale) + 10*time.Minute
		a, err := c.Allocate(ctx, slurm.AllocSpec{Name: "sweep-" + row.ConfigKey, Nodes: workers, GPUsPerNode: gpus, TimeLimit: limit, Dir: out})
		if err != nil {
			return run.Spec{}, nil, fmt.Errorf("allocating %d node(s) on the Slurm cluster: %w", workers, err)
		}
		release := func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := c.Release(rctx, a); err != nil {
				fmt.Fprintf(o.IO.ErrOut, "releasing Slurm job %s: %v\n", a.ID, err)
				return
			}
			fmt.Fprintf(o.IO.ErrOut, "released Slurm job %s\n", a.ID)
		}
		hosts, err := a.Hosts(workers)
		if err == nil {
			setup.OnHost = a.StepArgv
			l, spec, err = plan(hosts, setup)
		}
		if err != nil {
			release()
			return run.Spec{}, nil, err
		}
		var nodes []string
		for _, n := range a.Nodes {
			nodes = append(nodes, n.Name+" "+n.Addr)
		}
		announce(l, spec, fmt.Sprintf(" on Slurm job %s (%s)", a.ID, strings.Join(nodes, ", ")))
		return spec, release, nil
	})
}

// runMultiNodeLaunched is `sweep run --launch` on a multi-node key: the
// row holding --conc is submitted as its launcher submits it (sbatch of
// job.slurm, or srtctl apply), from --submit-dir, and waited for; the job
// runs every concurrency of the row and writes InferenceX's
// <RESULT_FILENAME>_conc<N>.json where its launcher puts them. Ctrl-C
// cancels the job.
func runMultiNodeLaunched(ctx context.Context, o *runOptions, out string, started time.Time, rows matrix.Matrix) error {
	if o.Simulate {
		return flagErrorf("--launch --simulate on a multi-node key: a simulated multi-node point runs on this host (drop --launch)")
	}
	row, err := o.selectMultiNodeRow(rows)
	if err != nil {
		return err
	}
	po := o.Plan
	po.Runners = nil
	planned, err := recipes.PlanMultiNode(matrix.Matrix{row}, withCatalog(po))
	if err != nil {
		return planFailure(err)
	}
	dir := o.SubmitDir
	if dir == "" {
		dir = "."
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	logs := filepath.Join(out, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	j := launch.MultiNodeJob{Point: &planned[0], Dir: dir, LogsDir: logs, Exec: launch.Exec{Stdout: o.IO.Out, Stderr: o.IO.ErrOut,
		Progress: func(line string) {
			fmt.Fprintf(o.IO.ErrOut, "[%6s] %s\n", time.Since(started).Round(time.Second), line)
		}}}
	if u, err := user.Current(); err == nil {
		j.User = u.Username
	}
	submit, err := j.Submit()
	if err != nil {
		return &FlagError{Err: err}
	}
	p := &planned[0]
	fmt.Fprintf(o.IO.ErrOut, "point %s %s conc %v: launch_%s.sh submits with %s from %s (%d node(s), %d worker GPU(s))\n  %s\n  results: %s_conc<N>.json\n",
		row.ConfigKey, row.ExpName, row.Concs, p.Launcher, p.Submitter, dir, p.Nodes, p.GPUs, launch.Oneline(submit.Argv), p.ResultFilename)
	id, err := j.Run(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("job %s cancelled: %v: %w", id, err, context.Canceled)
	case err != nil:
		return &exitCodeError{Code: exitError, Err: err}
	}
	fmt.Fprintf(o.IO.Out, "job %s finished; its logs are in %s\n", id, logs)
	if p.Submitter != "sbatch" {
		return nil
	}
	// job.slurm writes the results into the checkout (the container's
	// workspace), where InferenceX's workflow looks for them.
	found, _ := filepath.Glob(filepath.Join(dir, p.ResultFilename+"_conc*.json"))
	if len(found) == 0 {
		return &exitCodeError{Code: exitError, Err: fmt.Errorf("job %s wrote no %s_conc*.json in %s (see %s)", id, p.ResultFilename, dir, logs)}
	}
	for _, f := range found {
		fmt.Fprintf(o.IO.Out, "  result: %s\n", f)
	}
	return nil
}
