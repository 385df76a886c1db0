package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/metrics"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/point"
	"sweep/sweep/run"
)

type runOptions struct {
	IO     *IOStreams
	Inputs matrixInputs
	// Request is the point and how to run it (sweep/point).
	point.Request
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
			lists := cli.NewLists()
			fs.StringVar(&o.ConfigKey, "config-key", "", "master config key of the point (required)")
			fs.IntVar(&o.TP, "tp", 0, "tensor parallel size of the point (required)")
			fs.IntVar(&o.EP, "ep", 1, "expert parallel size of the point")
			fs.BoolVar(&o.DPAttn, "dp-attn", false, "the DP-attention arm of the key")
			fs.IntVar(&o.Conc, "conc", 0, "concurrency of the point (required)")
			bindKVOffloading(fs, &o.KVOffloading, "picks between a key's kv:none and kv:dram points of one layout and concurrency (required only there)")
			fs.BoolVar(&o.Eval, "eval", false, "run the point as an eval (lm-eval instead of aiperf): one InferenceX evaluates (the highest concurrency per model and runner)")
			fs.BoolVar(&o.AllEvals, "all-evals", false, "with --eval: any agentic point of the key, as InferenceX's all-evals label evaluates every one")
			fs.StringVar(&o.Out, "out", "", "output directory (required; created if missing)")
			fs.StringVar(&o.PlanFile, "plan", "", "run the planned point in `FILE` (one element of \"sweep plan --format json\") instead of --config-key/--tp/--ep/--conc; its engine command is checked against its recipe's flag schema, its golden_al against its recipe's golden, and its commands write only under --out (the client's --output-artifact-dir is OUT/aiperf_artifacts, where the point is read)")
			fs.BoolVar(&o.Force, "force", false, "overwrite a non-empty --out: the run there (another point's too, its result included) is deleted, and named")
			bindSimFlags(fs, &o.Mode, true, "with --simulate: GPU to simulate (default: from the runner, e.g. mi325x)")
			fs.BoolVar(&o.Plan.Fast, "fast", false, "agentx-fast discovery settings: 1200 s and 1 warm-up request per lane")
			fs.IntVar(&o.Plan.Duration, "duration", 0, "benchmark duration in seconds (default: the row's, 3600)")
			fs.IntVar(&o.Plan.Port, "port", 0, "the point's public port (default 8888; with --simulate a free port)")
			fs.StringVar(&o.Plan.ModelPath, "model-path", "", "what the engine loads (default: the model id)")
			fs.StringVar(&o.Plan.AiperfVersion, "aiperf-version", recipes.DefaultAiperfVersion, "aiperf schema version the client command is built for: 0.12.0 or fork")
			fs.StringVar(&o.Plan.RunnerName, "runner-name", "", "runner name for RESULT_FILENAME (default: the first runner of the row's label); a runner of the label, or of another launcher of the same GPU")
			fs.DurationVar(&o.Point.ReadyTimeout, "ready-timeout", run.DefaultReadyTimeout, "how long to wait for the engine's /health")
			fs.DurationVar(&o.Point.StopGrace, "stop-grace", 60*time.Second, "wait between SIGTERM and SIGKILL when stopping processes")
			cli.FloatVar(fs, &o.Point.FailedRequestThreshold, "failed-request-threshold", result.DefaultFailedRequestThreshold, "largest accepted failed-request ratio, in [0, 1]", failedRequestRatio)
			cli.FloatVar(fs, &o.Point.ALTolerance, "al-tolerance", metrics.DefaultALTolerance, "accepted |measured - golden| acceptance length", alTolerance)
			fs.BoolVar(&o.Launch, "launch", false, "run the point as the runner's InferenceX launcher does: allocate (or use $SLURM_JOB_ID), import the image under flock, run engine and client in the image (srun --container-image, or docker run), release; see sweep plan --runner-name")
			fs.StringArrayVar(&o.Site, "site", nil, "with --launch: change a site fact of the runner profile, key=value ("+strings.Join(recipes.SiteKeys, ", ")+"); repeatable")
			fs.StringVar(&o.SweepBinary, "sweep-binary", "", "with --launch: the sweep binary mounted into the image (default: this one; build it with CGO_ENABLED=0 for images without glibc)")
			fs.StringVar(&o.JobID, "job-id", "", "with --launch: run in this Slurm allocation instead of allocating (default: $SLURM_JOB_ID)")
			fs.StringVar(&o.Inferencex, "inferencex", "", "with --launch: an InferenceX checkout; its utils/aiperf is installed into a per-job venv with this host's uv and the trace set downloaded with hf, as benchmark_lib.sh does (skipped when there; checked before allocating)")
			fs.StringVar(&o.SubmitDir, "submit-dir", "", "with --launch on a multi-node key: the checkout the launcher submits from (InferenceX's for the AMD job.slurm; the prepared srt-slurm checkout for srtctl apply); default: the current directory")
			fs.BoolVar(&o.Slurm, "slurm", false, "with --simulate on a multi-node key: allocate a node per worker on the Slurm cluster (SLURM_CONF) and run each worker as a job step on its node, the router and the client on the first; the allocation is released at the end")
			fs.DurationVar(&o.SlurmStartTimeout, "slurm-start-timeout", 0, "with --slurm: cancel and fail the allocation still pending after this long (0: wait until it starts)")
			o.Inputs.bind(fs, lists)
			lists.Finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.ParseRest(fs, args); err != nil {
					return err
				}
				o.StopGraceSet = fs.Changed("stop-grace")
				o.SimClockSet = fs.Changed("sim-clock")
				switch {
				case o.Point.StopGrace < 0:
					return flagErrorf("--stop-grace %s: want 0 (kill at once) or a positive duration", o.Point.StopGrace)
				case o.StopGraceSet && o.Point.StopGrace == 0:
					o.Point.StopGrace = run.NoGrace // 0s means no grace, not the default
				}
				required := []string{"config-key", "tp", "conc", "out"}
				if o.PlanFile != "" {
					for _, f := range []string{"config-key", "tp", "ep", "conc", "dp-attn", "kv-offloading", "eval", "all-evals", "fast", "duration", "port", "model-path", "aiperf-version", "runner-name"} {
						if fs.Changed(f) {
							return flagErrorf("--%s cannot be combined with --plan: the plan fixes the point", f)
						}
					}
					required = []string{"out"}
				}
				if o.AllEvals && !o.Eval {
					return flagErrorf("--all-evals widens which points --eval runs: give --eval too")
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
				if err := checkPowerGPUs(o.PowerGPUs); err != nil {
					return err
				}
				if !o.Simulate && (fs.Changed("sim-fault") || fs.Changed("sim-gpu") || fs.Changed("time-scale") || fs.Changed("sim-clock")) {
					return flagErrorf("--sim-fault, --sim-gpu, --sim-clock and --time-scale need --simulate")
				}
				if err := run.CheckSimClock(o.SimClock); err != nil {
					return err
				}
				if err := run.CheckSimFault(o.SimFault); err != nil {
					return err
				}
				if err := checkSimCalibration(o.Simulate, &o.SimCalib, o.IO.ErrOut); err != nil {
					return err
				}
				if !o.Launch && (len(o.Site) > 0 || o.SweepBinary != "" || o.JobID != "" || o.SubmitDir != "" || o.Inferencex != "") {
					return flagErrorf("--site, --sweep-binary, --job-id, --submit-dir and --inferencex need --launch")
				}
				if err := checkInferencex(o); err != nil {
					return err
				}
				if o.Slurm && (!o.Simulate || o.Launch || o.PlanFile != "") {
					return flagErrorf("--slurm runs a simulated multi-node point on a Slurm cluster's nodes: it needs --simulate and --config-key, not --launch or --plan")
				}
				if !o.Slurm && fs.Changed("slurm-start-timeout") {
					return flagErrorf("--slurm-start-timeout bounds --slurm's allocation: give --slurm too")
				}
				if o.Launch && o.PlanFile != "" {
					return flagErrorf("--launch plans the point itself: use --config-key/--tp/--ep/--conc, not --plan")
				}
				return runF(ctx, o)
			}
		},
	}
}

// checkInferencex refuses what --inferencex cannot go with: another
// client (--aiperf, --builtin-client), and an --eval point, which runs
// lm-eval and no load client to install aiperf for.
func checkInferencex(o *runOptions) error {
	switch {
	case o.Inferencex == "":
		return nil
	case o.Aiperf != "" || o.Builtin:
		return flagErrorf("--inferencex installs InferenceX's aiperf: drop --aiperf and --builtin-client, or drop --inferencex")
	case o.Eval:
		return flagErrorf("--inferencex installs InferenceX's aiperf for the load client, and an --eval point runs lm-eval, no load client: drop --inferencex")
	}
	return nil
}

func runRun(ctx context.Context, o *runOptions) error {
	if err := cli.CheckOutDir("out", o.Out); err != nil {
		return err
	}
	o.Generator, o.FreePort, o.FreePorts = o.Inputs.generator, recipes.FreeRouterPort, recipes.FreePorts
	o.Stdout, o.Stderr = o.IO.Out, o.IO.ErrOut
	return point.Run(ctx, &o.Request)
}
