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
(a failure is retried at the next grid point; a cliff or two failures in
a row cap the arm), then the grid point nearest to half the knee, and the
one nearest to twice the knee only when no point above the knee is
measured yet; an arm still gaining at the top of its grid gets the point
below the top, and the gaps below only when that gain is within the
noise of the gate. Never a point twice, one server for the arm. On the
knee benchmark corpus it finds the full grid's knee within one doubling
on 97.1 % of arms with 60 % of the points, about 45 % of the GPU-hours
of InferenceX's full grid with a server start per point.

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
	settings := o.settings(campaign.Setting{Name: "--config-keys", Value: fmt.Sprint(keys)},
		campaign.Setting{Name: "--official-durations", Value: fmt.Sprint(o.OfficialDurations)})
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

// writeKneesAndReport prints the knee table of a sweep directory and
// writes its report under DIR/report.
func writeKneesAndReport(ctx context.Context, ios *IOStreams, dir string) error {
	arms, err := knee.Read(ctx, dir)
	if err != nil {
		return err
	}
	if len(arms) == 0 {
		return fmt.Errorf("no results in %s yet", dir)
	}
	rs := make([]*knee.Result, len(arms))
	for i, a := range arms {
		rs[i] = knee.Analyze(a, knee.Options{Threshold: 0.9, Metric: knee.MetricTotal})
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
