package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
	"sweep/internal/cli"
	"sweep/internal/selfexe"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/sweep/launch"
)

// planOptions are the inputs of "sweep plan".
type planOptions struct {
	IO         *IOStreams
	Inputs     matrixInputs
	ConfigKeys []string
	Conc       []int
	TP, EP     []int // keep only points with one of these tp / ep (empty: all)
	DPAttn     *bool // keep only DP-attention (true) or other (false) points; nil: all
	// KVOffloading keeps only the points of this KV offloading mode ("": all).
	KVOffloading string
	Eval         bool   // the evals-only selection: eval rows, lm-eval instead of aiperf
	Format       string // text or json
	Coverage     bool   // a table of every key: planned or not, and why
	Plan         recipes.PlanOptions
	// Site changes the runner profile's site facts (key=value).
	Site []string
	// Workspace is the host directory the launch mounts (default ${GITHUB_WORKSPACE}).
	Workspace string
}

func newPlanCmd(ios *IOStreams, runF func(context.Context, *planOptions) error) *Command {
	if runF == nil {
		runF = planRun
	}
	return &Command{
		Name:  "plan",
		Batch: true,
		Short: "Show the engine, router, client and eval commands of every point, checked against the flag schemas",
		Long:  helpText("plan"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &planOptions{IO: ios}
			fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
			lists := cli.NewLists()
			lists.Strings(fs, &o.ConfigKeys, "config-keys", "config keys or fnmatch patterns to plan (required)")
			o.Inputs.bind(fs, lists)
			lists.Ints(fs, &o.Conc, "conc", "keep only these concurrencies")
			lists.Ints(fs, &o.TP, "tp", "keep only points with these tensor parallel sizes")
			lists.Ints(fs, &o.EP, "ep", "keep only points with these expert parallel sizes")
			dpAttn := fs.Bool("dp-attn", false, "keep only the DP-attention points (--dp-attn=false: only the others)")
			bindKVOffloading(fs, &o.KVOffloading, "keep only the points of this mode, as sweep run --kv-offloading picks between a key's kv:none and kv:dram points of one layout and concurrency")
			fs.BoolVar(&o.Eval, "eval", false, "plan the eval rows InferenceX selects (evals-only: highest concurrency per model and runner) with lm-eval")
			fs.BoolVar(&o.Plan.Fast, "fast", false, "agentx-fast discovery points: 1200 s and 1 warm-up request per lane")
			fs.IntVar(&o.Plan.Duration, "duration", 0, "benchmark duration in seconds (default: the row's, 3600; below 900 adds --unsafe-override)")
			fs.StringVar(&o.Format, "format", "text", "output format: text or json")
			fs.BoolVar(&o.Coverage, "coverage", false, "print one line per config key (default: every key): planned, unsupported or failing, with the reason")
			fs.IntVar(&o.Plan.Port, "port", recipes.DefaultPort, "the point's public port (the engine's, or the router's with DP attention; the engine then uses port+1); with --runner-name, the launcher's")
			fs.StringVar(&o.Plan.ModelPath, "model-path", "", "what the engine loads (default: the model id)")
			fs.StringVar(&o.Plan.ResultDir, "result-dir", recipes.DefaultResultDir, "per-point result directory; with --runner-name, the container's workspace")
			fs.StringVar(&o.Plan.AiperfVersion, "aiperf-version", recipes.DefaultAiperfVersion, "aiperf schema version: 0.12.0 (upstream) or "+recipes.ForkAiperfVersion+" / fork (InferenceX's fork)")
			fs.StringVar(&o.Plan.RunnerName, "runner-name", "", "runner name for routing and RESULT_FILENAME (default: the first runner of the row's label; a runner of the label, or of another launcher of the same GPU); with it, every point also lists the host commands that launch it on that runner (launch)")
			fs.StringArrayVar(&o.Site, "site", nil, "with --runner-name: change a site fact of the runner profile, key=value ("+strings.Join(recipes.SiteKeys, ", ")+"); repeatable")
			fs.StringVar(&o.Workspace, "workspace", "", "with --runner-name: the host directory the launch mounts on the container's workdir, sweep run --launch's --out (default ${GITHUB_WORKSPACE}); on a docker runner it gives the container's name its tag")
			lists.Finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.ParseRest(fs, args); err != nil {
					return err
				}
				if fs.Changed("dp-attn") {
					o.DPAttn = dpAttn
				}
				if len(o.ConfigKeys) == 0 && !o.Coverage {
					return flagErrorf("--config-keys is required")
				}
				if err := checkKVOffloading(o.KVOffloading); err != nil {
					return err
				}
				if o.Format != "text" && o.Format != "json" {
					return flagErrorf("--format %q: want text or json", o.Format)
				}
				if o.Plan.RunnerName == "" && (len(o.Site) > 0 || o.Workspace != "") {
					return flagErrorf("--site and --workspace need --runner-name")
				}
				if o.Workspace != "" {
					if err := recipes.CheckMountPath("--workspace", o.Workspace); err != nil {
						return flagErrorf("%v", err)
					}
				}
				if o.Plan.Duration < 0 {
					return flagErrorf("--duration %d: want a positive number of seconds", o.Plan.Duration)
				}
				return runF(ctx, o)
			}
		},
	}
}

// planRun generates the rows of the named keys and prints their plan.
func planRun(ctx context.Context, o *planOptions) error {
	if o.Coverage {
		return planCoverage(ctx, o)
	}
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	rows, keys, err := agenticRows(g, o.ConfigKeys, o.Conc, matrix.EvalOptions{NoEvals: !o.Eval, EvalsOnly: o.Eval})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("no agentic points for %v (sweep plan covers agentic-coding configs)", keys)
	}
	if rows, err = o.filter(rows); err != nil {
		return err
	}
	// Stamped as sweep run stamps the row it picks (and a sweep its
	// rows), so the plan names the result file the run writes.
	for _, r := range rows {
		r.StampFingerprint()
	}
	o.Plan.Runners = g.Runners
	o.Plan = models.WithBuiltin(o.Plan)
	if multi, err := recipes.MultiNodeRows(rows); err != nil {
		return &FlagError{Err: err}
	} else if multi {
		return o.planMultiNode(rows)
	}
	points, err := recipes.Plan(rows, o.Plan)
	if err != nil {
		return recipes.Failure(err)
	}
	if o.Plan.RunnerName != "" {
		if err := o.addLaunch(points); err != nil {
			return err
		}
	}
	if o.Format == "json" {
		return writeIndentedJSON(o.IO.Out, points)
	}
	if err := recipes.WriteText(o.IO.Out, points); err != nil {
		return err
	}
	return recipes.WriteProfiles(o.IO.Out, points, g.Runners)
}

// addLaunch plans every point as sweep run --launch runs it on
// --runner-name (launch.PlanPoints: its results in the container's
// workspace, the launcher's port) and fills its launch: the host commands
// that run it (the container runs the mounted sweep on the planned point).
func (o *planOptions) addLaunch(points []recipes.Point) error {
	prof, err := recipes.SiteProfile(o.Plan.RunnerName, o.Site)
	if errors.Is(err, recipes.ErrNoProfile) {
		return &FlagError{Err: fmt.Errorf("--runner-name: %w", err)}
	}
	if err != nil {
		return &FlagError{Err: err}
	}
	bin, err := selfexe.Path()
	if err != nil {
		return err
	}
	// A launch that cannot be built is a site or runner sweep was given
	// (as sweep run --launch says of the same launch): exit 2.
	if err := launch.PlanPoints(points, o.Plan, prof, o.Plan.RunnerName, o.Workspace, bin); err != nil {
		return &FlagError{Err: err}
	}
	return nil
}

// filter keeps the rows --tp, --ep and --dp-attn select, as "sweep run"
// selects its point, and of them those of --kv-offloading's mode; none
// left is a usage error naming the arms (or modes) there are.
func (o *planOptions) filter(rows matrix.Matrix) (matrix.Matrix, error) {
	if len(o.TP) > 0 || len(o.EP) > 0 || o.DPAttn != nil {
		kept, arms := rows.SelectArms(o.TP, o.EP, o.DPAttn)
		if len(kept) == 0 {
			return nil, flagErrorf("no point matches the --tp/--ep/--dp-attn filters; the selected points have:\n  %s", strings.Join(arms, "\n  "))
		}
		rows = kept
	}
	if o.KVOffloading == "" {
		return rows, nil
	}
	kept := slices.DeleteFunc(slices.Clone(rows), func(r *matrix.Row) bool { return r.KVOffloading != o.KVOffloading })
	if len(kept) == 0 {
		var modes []string
		for _, r := range rows {
			if !slices.Contains(modes, r.KVOffloading) {
				modes = append(modes, r.KVOffloading)
			}
		}
		return nil, flagErrorf("no point selected has --kv-offloading %s; theirs is %s: drop --kv-offloading, or give one of those", o.KVOffloading, strings.Join(modes, ", "))
	}
	return kept, nil
}

// noAgenticRows is the coverage reason of a key without agentic-coding rows.
const noAgenticRows = "not supported yet: no agentic-coding scenario (fixed-seq-len only); sweep plans agentic-coding points only"

// planCoverage prints, for every key --config-keys names (default all),
// whether its points plan, and why not.
func planCoverage(ctx context.Context, o *planOptions) error {
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	patterns := o.ConfigKeys
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	rows, keys, err := agenticRows(g, patterns, o.Conc, matrix.EvalOptions{NoEvals: !o.Eval, EvalsOnly: o.Eval})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	opts := o.Plan
	opts.Runners = g.Runners
	cov, err := recipes.Coverage(rows, keys, noAgenticRows, models.WithBuiltin(opts))
	if err != nil {
		return err
	}
	if o.Format == "json" {
		return writeIndentedJSON(o.IO.Out, cov)
	}
	return recipes.WriteCoverage(o.IO.Out, cov, noAgenticRows)
}

// planMultiNode prints the plan of multi-node agentic rows: roles, nodes,
// GPUs, worker and router commands, and the submission (sbatch or srtctl
// apply) as the runner's launcher does it.
func (o *planOptions) planMultiNode(rows matrix.Matrix) error {
	points, err := recipes.PlanMultiNode(rows, o.Plan)
	if err != nil {
		return recipes.Failure(err)
	}
	if o.Format == "json" {
		return writeIndentedJSON(o.IO.Out, points)
	}
	return recipes.WriteMultiNodeText(o.IO.Out, points)
}
