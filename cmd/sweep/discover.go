package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"sweep/configs/matrix"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/report"
)

// discoverOptions are the inputs of "sweep discover".
type discoverOptions struct {
	campaignOptions
	ConfigKeys        []string
	OfficialDurations bool
	NoReport          bool
}

func newDiscoverCmd(ios *IOStreams, runF func(context.Context, *discoverOptions) error) *Command {
	if runF == nil {
		runF = discoverRun
	}
	return &Command{
		Name:  "discover",
		Short: "Run every point of the selected arms (agentx-fast), resumable, one server per arm where the recipe allows",
		Long: `Run the full concurrency grid of the selected config keys' single-node
agentic arms in InferenceX's agentx-fast mode (1200 s, one warm-up request
per lane; --official-durations for the official ones), then print the
knee of every arm and write a report.

An arm is the points of one search-space entry that differ only in
concurrency. Its points run in a row on one node: points whose planned
engine command is identical share one server (caches flushed between
points, counters taken per point); a recipe that declares one server sized
for the arm's largest concurrency serves the smaller ones too (--dry-run
says which and why; --exact-servers restarts per point as InferenceX
does). The local executor packs arms onto the node's GPUs (four TP2 arms
on 8 GPUs at once), pinning each with CUDA/HIP/ROCR_VISIBLE_DEVICES.

--out holds journal.jsonl (append-only, one event per line), one
directory per point named with InferenceX's RESULT_FILENAME, servers/ and
summary.txt/summary.json. Rerunning the same command resumes: completed
valid points are skipped, failed ones retried up to --retries, interrupted
ones redone; a different command on the same directory is refused with
the difference named. Ctrl-C stops cleanly.

--adaptive measures fewer points: per arm, the first grid point, then the
first one at least 4x the last until a step gains under 10 % per doubling
(a failure is retried at the next grid point; a cliff beyond the noise or
two failures in a row cap the arm), then the grid point nearest to half
the knee, and the one nearest to twice the knee only when no point above
the knee is measured yet; an arm still gaining at the top of its grid
gets the point below the top, and the gaps below only when that gain is
within the noise of the gate. Never a point twice, one server for the
arm. The bracketing points only tell which way the curve goes, so they
run as short probes (--probe-duration, 300 s; aiperf gets
--unsafe-override below 900 s, as InferenceX passes it) where their grid
neighbours lie within a doubling and they are not the top of the grid;
the points that settle the knee run at the full length. A knee that
lands on a probe keeps the probe's value (weighed by its length in the
fit): its neighbours, measured at the full length within a doubling,
bound it. The journal and the result files mark the probes ("probe":
true). On the knee benchmark's seeded corpora, against InferenceX's full
grid with a server start per point: on doubling grids (9-11 points) the
knee within one doubling on 96.6 % of arms with 24 % of the GPU-hours
(42 % with --probe-duration 0); on the shipped conc-lists (7.4 points) on
96.8 % with 35 % (45 %).

Exit status: 0 when every point is ok, 1 when points failed, 2 for usage
errors, 130 when interrupted.

Examples:
  sweep discover --simulate --config-keys qwen3.5-fp8-mi325x-sglang-agentic-mtp --tp 8 --ep 8 --out /tmp/d
  sweep discover --config-keys 'qwen3.5-fp8-mi3*' --dry-run --out /tmp/d`,
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &discoverOptions{campaignOptions: campaignOptions{IO: ios, Command: "discover"}}
			fs := pflag.NewFlagSet("discover", pflag.ContinueOnError)
			lists := newArgparseLists()
			lists.strings(fs, &o.ConfigKeys, "config-keys", "master config keys (fnmatch patterns allowed) whose arms to run (required)")
			o.bind(fs, lists)
			fs.BoolVar(&o.OfficialDurations, "official-durations", false, "run the points at their official durations and warm-ups instead of agentx-fast's")
			fs.BoolVar(&o.NoReport, "no-report", false, "skip the knee table and report at the end")
			fs.BoolVar(&o.Adaptive, "adaptive", false, "run only the points that find each arm's knee: x4 bracketing until the gain falls under 10 % per doubling, then the knee's doubling neighbours that can still move it (the rest are skipped)")
			fs.IntVar(&o.ProbeDuration, "probe-duration", defaultProbeSeconds, "with --adaptive: benchmark duration in seconds of the bracketing probes (0: every point at the full length)")
			lists.finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.parseRest(fs, args); err != nil {
					return err
				}
				if len(fs.Args()) > 0 {
					return flagErrorf("discover takes no arguments, got %q", fs.Args())
				}
				if len(o.ConfigKeys) == 0 {
					return flagErrorf("missing --config-keys")
				}
				if err := o.check(fs); err != nil {
					return err
				}
				switch {
				case o.ProbeDuration < 0:
					return flagErrorf("--probe-duration %d: want 0 (no probes) or a positive number of seconds", o.ProbeDuration)
				case fs.Changed("probe-duration") && !o.Adaptive:
					return flagErrorf("--probe-duration needs --adaptive")
				}
				if !o.Adaptive {
					o.ProbeDuration = 0
				}
				o.Fast = !o.OfficialDurations
				return runF(ctx, o)
			}
		},
	}
}

func discoverRun(ctx context.Context, o *discoverOptions) error {
	if err := ensureOutParent(o.Out); err != nil {
		return err
	}
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	rows, keys, err := agenticRows(g, o.ConfigKeys, nil, matrix.EvalOptions{NoEvals: true})
	if err != nil {
		return err
	}
	extra := []campaign.Setting{{Name: "--config-keys", Value: fmt.Sprint(keys)},
		{Name: "--official-durations", Value: fmt.Sprint(o.OfficialDurations)}}
	if o.Adaptive {
		extra = append(extra, campaign.Setting{Name: "--probe-duration", Value: fmt.Sprint(o.ProbeDuration)})
	}
	settings := o.settings(extra...)
	runErr := o.execute(ctx, rows, g, settings)
	if o.DryRun || o.NoReport || ctx.Err() != nil {
		return runErr
	}
	if _, isFlag := runErr.(*FlagError); isFlag {
		return runErr
	}
	if err := writeKneesAndReport(ctx, o.IO, o.Out); err != nil {
		fmt.Fprintf(o.IO.ErrOut, "warning: knees/report: %v\n", err)
	}
	return runErr
}

// defaultProbeSeconds is the length of an adaptive search's bracketing
// probe: a quarter of agentx-fast's 1200 s, twice its noise, which a ×4
// step's gain still clears until saturation.
const defaultProbeSeconds = 300

// writeKneesAndReport prints the knee table of a sweep directory and
// writes its report under DIR/report. It runs after the sweep's results
// are written, so a panic in it is an error (a warning), never a crash.
func writeKneesAndReport(ctx context.Context, ios *IOStreams, dir string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error (the sweep's results are complete; please report this): %v", v)
		}
	}()
	rs, err := knee.ReadAnalyze(ctx, dir, knee.Options{Threshold: 0.9, Metric: knee.MetricTotal})
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		return fmt.Errorf("no results in %s yet", dir)
	}
	fmt.Fprintln(ios.Out, "\nknees:")
	if err := knee.WriteTable(ios.Out, rs); err != nil {
		return err
	}
	rep, err := report.Build(rs, knee.MetricTotal)
	if err != nil {
		return err
	}
	page, err := rep.Write(filepath.Join(dir, "report"))
	if err != nil {
		return err
	}
	fmt.Fprintf(ios.Out, "report: %s\n", page)
	return nil
}
