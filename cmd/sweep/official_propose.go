package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/internal/cli"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/propose"
)

// officialProposeOptions are the inputs of "sweep official --propose".
type officialProposeOptions struct {
	IO      *IOStreams
	Propose bool
	DryRun  bool
	// Threshold is the knee threshold (knee.Options) the discovery's
	// knees are read with.
	Threshold float64
	// Request is the proposal: the discovery results (From; its verdicts
	// are read by officialProposeRun), the files edited and the targets
	// (ConfigKey "": resolved from the results; AllowSimulated: the
	// changelog entry says so; AllowUnfinished: see the help).
	propose.Request
}

// newOfficialProposeCmd binds "sweep official" flags; today it only has
// --propose (the entry point is separate so "sweep official" proper can
// grow beside it).
func newOfficialProposeCmd(ios *IOStreams, runF func(context.Context, *officialProposeOptions) error) *Command {
	if runF == nil {
		runF = officialProposeRun
	}
	return &Command{
		Name:  "official",
		Short: "Propose the official conc-lists from a discovery sweep (--propose --from DIR)",
		Long:  helpText("official_propose"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &officialProposeOptions{IO: ios}
			fs := pflag.NewFlagSet("official", pflag.ContinueOnError)
			fs.BoolVar(&o.Propose, "propose", false, "propose official conc-lists from a discovery sweep")
			fs.StringVar(&o.From, "from", "", "directory of discovery results")
			fs.StringSliceVar(&o.ConfigFiles, "config-files", configs.DefaultMasterFiles, "master config files to edit in place")
			fs.StringVar(&o.Runners, "runner-config", configs.DefaultRunnerFile, "runners.yaml (for validation)")
			fs.StringVar(&o.Changelog, "changelog", configs.DefaultChangelog, "perf-changelog.yaml to append to")
			fs.StringVar(&o.ConfigKey, "config-key", "", "config key of every arm (default: resolved from the results' model prefix, precision, framework and hardware)")
			fs.BoolVar(&o.DryRun, "dry-run", false, "print the diff; write nothing")
			cli.FloatVar(fs, &o.Threshold, "threshold", 0.9, "knee threshold, a fraction of the arm's peak in (0, 1)", kneeThreshold)
			cli.FloatsVar(fs, &o.Targets, "target", []float64{20, 50, 100}, "target interactivities (tok/s/user) whose bracketing frontier points are kept, each above 0", interactivity)
			fs.IntVar(&o.Max, "max", 4, "points per arm (floor, knee and first post-knee point always stay)")
			fs.BoolVar(&o.AllowSimulated, "allow-simulated", false, "propose from simulated results (refused otherwise; the changelog entry says they were simulated)")
			fs.BoolVar(&o.AllowUnfinished, "allow-unfinished", false, "propose from a discovery that has not finished (refused otherwise): its unfinished arms' conc-lists stay as they are")
			return fs, func(ctx context.Context, args []string) error {
				switch {
				case len(args) > 0:
					return flagErrorf("official takes no arguments, got %q", args)
				case !o.Propose:
					return flagErrorf("official: only --propose is implemented; run sweep official --propose --from DIR")
				case o.From == "":
					return flagErrorf("--propose needs --from DIR (the discovery results)")
				case !(o.Threshold > 0 && o.Threshold < 1):
					return flagErrorf("--threshold %g: want a fraction in (0, 1)", o.Threshold)
				case o.Max < 1:
					return flagErrorf("--max %d: want at least 1", o.Max)
				}
				return runF(ctx, o)
			}
		},
	}
}

// officialProposeRun reads the discovery's knees as sweep knees does
// (campaign.ReadKnees: with the points its journal says it has not
// finished), then plans, edits, validates and (unless dry-run) writes.
func officialProposeRun(ctx context.Context, o *officialProposeOptions) error {
	k, err := campaign.ReadKnees(ctx, o.From, knee.Options{Threshold: o.Threshold})
	if err != nil {
		return inputError(err) // exit 2, as sweep knees'
	}
	req := o.Request
	req.Results, req.Incomplete, req.NotPlanned = k.Results, k.Incomplete(), k.Plans.NotPlanned
	req.Log = o.IO.ErrOut
	p, err := propose.Propose(req)
	if err != nil {
		return err
	}
	if err := p.Valid(); err != nil {
		for _, pr := range p.Problems {
			fmt.Fprintln(o.IO.ErrOut, pr)
		}
		return err
	}
	fmt.Fprint(o.IO.Out, propose.Diff(p.Changes))
	if o.DryRun {
		return nil
	}
	return p.Write()
}
