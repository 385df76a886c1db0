package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
	"sweep/internal/selfexe"
	"sweep/recipes"
	"sweep/sweep/launch"
)

// planOptions are the inputs of "sweep plan".
type planOptions struct {
	IO         *IOStreams
	Inputs     matrixInputs
	ConfigKeys []string
	Conc       []int
	TP, EP     []int  // keep only points with one of these tp / ep (empty: all)
	DPAttn     *bool  // keep only DP-attention (true) or other (false) points; nil: all
	Eval       bool   // the evals-only selection: eval rows, lm-eval instead of aiperf
	Format     string // text or json
	Coverage   bool   // a table of every key: planned or not, and why
	Plan       recipes.PlanOptions
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
		Long: `Plan the benchmark points of the named config keys: for every matrix row,
the recipe that serves it (routed as InferenceX's launchers do) and the
exact commands the point runs, each built through the versioned flag schema
of its tool:

  engine   python3 -m sglang.launch_server ... | vllm serve MODEL ... (argv + env)
  router   sglang_router / vllm-router in front of DP-attention engines
  client   aiperf profile ... (trace replay), or
  eval     python3 -m lm_eval ... for eval rows (--eval)

plus the Prometheus endpoints aiperf records, the metric prefix the run
must export and the golden acceptance length the engine simulates.

Planning fails, listing every offending point with its recipe, the flag and
the closest real flag, when any command does not validate. A config key
with no recipe is an error too. Exit status: 0 planned, 1 a point could not
be planned, 2 usage error.

Clients target upstream aiperf 0.12.0 by default; --aiperf-version
fork (sa-754356e9) gives InferenceX's fork and its exact command (the differences
are documented in "go doc sweep/recipes").

--format text is for review and pasting: one block per point, its header
as '#' comments, each command as shell text (the environment as KEY=value
prefixes, one flag per line with " \" continuations, quoted for the shell).
--tp, --ep, --dp-attn and --conc keep only the points they match, as
"sweep run" selects one.

--coverage prints one line per config key (every key without
--config-keys): planned, unsupported (another engine, multi-node or
disaggregated serving, no agentic scenario: "not supported yet: <why>") or
failing (the first problem), and a summary; --format json gives the same
as an array of {"key", "status", "points", "reason"}.

--format json is an array of {"row", "engine": {"argv", "env"}, "router",
"client", "eval", "metrics_urls", "required_metric_prefix", "golden_al", ...}.

--runner-name R adds each point's launch on R, as "sweep run --launch"
runs it: the host commands in order (allocate, read the job id back,
import the image under flock, the container run, release), each with its
argv and the variables the launcher exports, after InferenceX's
runners/launch_<R>.sh; "launch" in --format json, a list of {"role",
"argv", "env"}. Values known only at run time are named: ${JOB_ID} and
${PORT} (40000 + JOB_ID % 10000 on MI300X/MI325X). --site key=value
adapts the profile to another cluster (partition, squash-dir, ...).

Examples:
  sweep plan --config-keys qwen3.5-fp8-mi325x-sglang-agentic-mtp
  sweep plan --config-keys 'dsv4-fp4-mi355x-*' --conc 64 --format json
  sweep plan --config-keys dsv4-fp4-mi355x-vllm-agentic-mtp --tp 8 --dp-attn --conc 64
  sweep plan --config-keys qwen3.5-fp8-mi325x-sglang-agentic-mtp --eval
  sweep plan --config-keys glm5.2-fp8-mi325x-sglang-agentic-mtp --fast --aiperf-version fork
  sweep plan --coverage                      # every key: planned / unsupported / failing, and why
  sweep plan --config-keys qwen3.5-fp8-mi325x-sglang-agentic-mtp --tp 2 --conc 1 --runner-name mi325x-amds_00`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &planOptions{IO: ios}
			fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
			lists := newArgparseLists()
			lists.strings(fs, &o.ConfigKeys, "config-keys", "config keys or fnmatch patterns to plan (required)")
			o.Inputs.bind(fs, lists)
			lists.ints(fs, &o.Conc, "conc", "keep only these concurrencies")
			lists.ints(fs, &o.TP, "tp", "keep only points with these tensor parallel sizes")
			lists.ints(fs, &o.EP, "ep", "keep only points with these expert parallel sizes")
			dpAttn := fs.Bool("dp-attn", false, "keep only the DP-attention points (--dp-attn=false: only the others)")
			fs.BoolVar(&o.Eval, "eval", false, "plan the eval rows InferenceX selects (evals-only: highest concurrency per model and runner) with lm-eval")
			fs.BoolVar(&o.Plan.Fast, "fast", false, "agentx-fast discovery points: 1200 s and 1 warm-up request per lane")
			fs.IntVar(&o.Plan.Duration, "duration", 0, "benchmark duration in seconds (default: the row's, 3600; below 900 adds --unsafe-override)")
			fs.StringVar(&o.Format, "format", "text", "output format: text or json")
			fs.BoolVar(&o.Coverage, "coverage", false, "print one line per config key (default: every key): planned, unsupported or failing, with the reason")
			fs.IntVar(&o.Plan.Port, "port", recipes.DefaultPort, "the point's public port (the engine's, or the router's with DP attention; the engine then uses port+1)")
			fs.StringVar(&o.Plan.ModelPath, "model-path", "", "what the engine loads (default: the model id)")
			fs.StringVar(&o.Plan.ResultDir, "result-dir", recipes.DefaultResultDir, "per-point result directory")
			fs.StringVar(&o.Plan.AiperfVersion, "aiperf-version", recipes.DefaultAiperfVersion, "aiperf schema version: 0.12.0 (upstream) or "+recipes.ForkAiperfVersion+" / fork (InferenceX's fork)")
			fs.StringVar(&o.Plan.RunnerName, "runner-name", "", "runner name for routing and RESULT_FILENAME (default: the first runner of the row's label); with it, every point also lists the host commands that launch it on that runner (launch)")
			fs.StringArrayVar(&o.Site, "site", nil, "with --runner-name: change a site fact of the runner profile, key=value ("+strings.Join(recipes.SiteKeys, ", ")+"); repeatable")
			fs.StringVar(&o.Workspace, "workspace", "", "with --runner-name: the host directory the launch mounts on the container's workdir (default ${GITHUB_WORKSPACE})")
			lists.finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.parseRest(fs, args); err != nil {
					return err
				}
				if fs.Changed("dp-attn") {
					o.DPAttn = dpAttn
				}
				if len(o.ConfigKeys) == 0 && !o.Coverage {
					return flagErrorf("--config-keys is required")
				}
				if o.Format != "text" && o.Format != "json" {
					return flagErrorf("--format %q: want text or json", o.Format)
				}
				if o.Plan.RunnerName == "" && (len(o.Site) > 0 || o.Workspace != "") {
					return flagErrorf("--site and --workspace need --runner-name")
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
	o.Plan.Runners = g.Runners
	o.Plan = withCatalog(o.Plan)
	if multi := slices.IndexFunc(rows, recipes.IsMultiNodeRow); multi >= 0 {
		return o.planMultiNode(rows, multi)
	}
	points, err := recipes.Plan(rows, o.Plan)
	if err != nil {
		return planFailure(err)
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
	return writeProfiles(o.IO.Out, points, g)
}

// addLaunch fills every point's launch: the host commands that run it on
// --runner-name as sweep run --launch does (the container runs the
// mounted sweep on the planned point).
func (o *planOptions) addLaunch(points []recipes.Point) error {
	prof, err := recipes.ProfileFor(o.Plan.RunnerName)
	if err != nil {
		return &FlagError{Err: fmt.Errorf("--runner-name: %w", err)}
	}
	for _, s := range o.Site {
		if err := prof.ApplySite(s); err != nil {
			return &FlagError{Err: err}
		}
	}
	bin, err := selfexe.Path()
	if err != nil {
		return err
	}
	for i := range points {
		p := &points[i]
		ws := launch.ContainerWorkspace(prof, &p.Row)
		pl, err := launch.Build(prof, &p.Row, launch.Options{RunnerName: o.Plan.RunnerName, Workspace: o.Workspace,
			Payload: launch.SweepPayload(bin, ws), Mounts: []string{launch.SweepMount(bin)}})
		if err != nil {
			return fmt.Errorf("%s: %w", p.Row.ConfigKey, err)
		}
		p.Launch = pl.Commands
	}
	return nil
}

// filter keeps the rows --tp, --ep and --dp-attn select, as "sweep run"
// selects its point; none left is a usage error naming the arms there are.
func (o *planOptions) filter(rows matrix.Matrix) (matrix.Matrix, error) {
	if len(o.TP) == 0 && len(o.EP) == 0 && o.DPAttn == nil {
		return rows, nil
	}
	var kept matrix.Matrix
	var arms []string
	for _, r := range rows {
		if (len(o.TP) == 0 || slices.Contains(o.TP, r.TP)) && (len(o.EP) == 0 || slices.Contains(o.EP, r.EP)) && (o.DPAttn == nil || *o.DPAttn == r.DPAttn) {
			kept = append(kept, r)
		}
		arm := fmt.Sprintf("--tp %d --ep %d", r.TP, r.EP)
		if r.DPAttn {
			arm += " --dp-attn"
		}
		if !slices.Contains(arms, arm) {
			arms = append(arms, arm)
		}
	}
	if len(kept) == 0 {
		return nil, flagErrorf("no point matches the --tp/--ep/--dp-attn filters; the selected points have:\n  %s", strings.Join(arms, "\n  "))
	}
	return kept, nil
}

// writeProfiles says which runner profile (launcher behaviour: container,
// Slurm allocation, site environment) applies to the planned points.
func writeProfiles(w io.Writer, points []recipes.Point, g *matrix.Generator) error {
	seen := map[string]bool{}
	var lines []string
	for i := range points {
		runner := recipes.RunnerName(&points[i].Row, g.Runners)
		if seen[runner] {
			continue
		}
		seen[runner] = true
		prof, err := recipes.ProfileFor(runner)
		if err != nil {
			lines = append(lines, fmt.Sprintf("#   %s: no runner profile (%v)", runner, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("#   %s -> profile %s", runner, prof))
	}
	_, err := fmt.Fprintf(w, "\n# runner profiles applied:\n%s\n", strings.Join(lines, "\n"))
	return err
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
	cov, err := recipes.Coverage(rows, keys, noAgenticRows, withCatalog(opts))
	if err != nil {
		return err
	}
	if o.Format == "json" {
		return writeIndentedJSON(o.IO.Out, cov)
	}
	return writeCoverage(o, cov)
}

// writeCoverage prints the coverage table and a summary line per group:
// keys with agentic rows, then the others.
func writeCoverage(o *planOptions, cov []recipes.KeyCoverage) error {
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATUS\tPOINTS\tREASON")
	count := map[recipes.Status]int{}
	other := 0
	for _, c := range cov {
		if c.Points == 0 && c.Reason == noAgenticRows {
			other++
			continue
		}
		count[c.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", c.Key, c.Status, c.Points, c.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(o.IO.Out, "\n%d agentic keys: %d %s, %d %s, %d %s; %d other keys without agentic-coding rows (%s)\n",
		len(cov)-other, count[recipes.Planned], recipes.Planned, count[recipes.NotSupported], recipes.NotSupported,
		count[recipes.Failing], recipes.Failing, other, noAgenticRows)
	return err
}
