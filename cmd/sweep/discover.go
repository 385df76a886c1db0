package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/sweep/campaign"
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
		Long:  helpText("discover"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &discoverOptions{campaignOptions: campaignOptions{IO: ios, Command: "discover"}}
			fs := pflag.NewFlagSet("discover", pflag.ContinueOnError)
			lists := cli.NewLists()
			lists.Strings(fs, &o.ConfigKeys, "config-keys", "master config keys (fnmatch patterns allowed) whose arms to run (required)")
			o.bind(fs, lists)
			fs.BoolVar(&o.OfficialDurations, "official-durations", false, "run the points at their official durations and warm-ups instead of agentx-fast's")
			fs.BoolVar(&o.Run.SlurmNodes, "slurm", false, "with --simulate: run each multi-node arm's workers, router and client as job steps on a Slurm allocation of its own (the cluster SLURM_CONF names), released when the arm ends")
			fs.BoolVar(&o.NoReport, "no-report", false, "skip the knee table and report at the end")
			fs.BoolVar(&o.Run.Adaptive, "adaptive", false, "run only the points that find each arm's knee: x4 bracketing until the gain falls under 10 % per doubling, then the knee's doubling neighbours that can still move it (the rest are skipped)")
			fs.IntVar(&o.Run.ProbeDuration, "probe-duration", defaultProbeSeconds, "with --adaptive: benchmark duration in seconds of the search's probes (0: every point at the full length)")
			lists.Finish(fs)
			return fs, func(ctx context.Context, args []string) error {
				if err := lists.ParseRest(fs, args); err != nil {
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
				case o.Run.ProbeDuration < 0 || o.Run.ProbeDuration > 0 && o.Run.ProbeDuration < campaign.MinProbeSeconds:
					return flagErrorf("--probe-duration %d: want 0 (every point at the full length) or %d s or more (a shorter probe reads little past its warm-up; %d s by default)", o.Run.ProbeDuration, campaign.MinProbeSeconds, defaultProbeSeconds)
				case fs.Changed("probe-duration") && !o.Run.Adaptive:
					return flagErrorf("--probe-duration needs --adaptive")
				}
				if !o.Run.Adaptive {
					o.Run.ProbeDuration = 0
				}
				o.Fast = !o.OfficialDurations
				if o.Fast && fs.Changed("duration") {
					return cli.Refusef("--duration %d would not be used: agentx-fast points run at agentx-fast's duration, as InferenceX runs them (--dry-run shows it); add --official-durations to run every point at %d s, or drop --duration", o.Run.Duration, o.Run.Duration)
				}
				return runF(ctx, o)
			}
		},
	}
}

func discoverRun(ctx context.Context, o *discoverOptions) error {
	if err := cli.CheckOutDir("out", o.Out); err != nil {
		return err
	}
	rows, keys, g, err := o.keyRows(o.ConfigKeys)
	if err != nil {
		return err
	}
	extra := []campaign.Setting{{Name: "--config-keys", Value: fmt.Sprint(keys)},
		{Name: "--official-durations", Value: fmt.Sprint(o.OfficialDurations)}}
	if o.Run.Adaptive {
		extra = append(extra, campaign.Setting{Name: "--probe-duration", Value: fmt.Sprint(o.Run.ProbeDuration)})
	}
	settings := o.settings(extra...)
	runErr := o.execute(ctx, rows, g, settings)
	if o.Run.DryRun || o.NoReport || ctx.Err() != nil {
		return runErr
	}
	if cli.IsUsage(runErr) {
		return runErr
	}
	if err := report.WriteSweep(ctx, o.IO.Out, o.Out); err != nil {
		if _, ok := errors.AsType[*report.InterruptedError](err); ok {
			fmt.Fprintf(o.IO.ErrOut, "sweep discover: %v\n", err)
			return errors.Join(runErr, err) // a cancellation: exit 130
		}
		fmt.Fprintf(o.IO.ErrOut, "warning: knees/report: %v\n", err)
	}
	if ctx.Err() != nil {
		// Interrupted as the report was written: it is, but the command
		// stops as one interrupted does.
		return errors.Join(runErr, context.Cause(ctx))
	}
	return runErr
}

// defaultProbeSeconds is the length of an adaptive search's bracketing
// probe: 0.15 of agentx-fast's 1200 s, sqrt(1200/180) (2.6) times its
// noise, which a ×4 step's gain still clears until saturation. With the
// top gate's re-run of an ambiguous knee (knee.Next), 180 s costs
// 1.2-2.0 points of the full grid's GPU-hours less than 240 s on every
// corpus of the knee benchmark, the knee agreeing on at least 97 % of
// arms on each (TestAdaptiveSearch in sweep/knee).
const defaultProbeSeconds = 180
