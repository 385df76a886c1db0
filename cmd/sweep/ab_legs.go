package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/sweep/gha"
)

// abLegsOptions are the inputs of "sweep ab legs".
type abLegsOptions struct {
	IO     *IOStreams
	Inputs matrixInputs
	// Only keeps these legs (default: every shipped leg).
	Only []string
	// OnlineRunners is a file of runner names GitHub reports online; ""
	// means unknown (every registered runner counts).
	OnlineRunners string
	// Schedule keeps the legs of one schedule (configs.ABNightly or
	// configs.ABManual); "" or "all" keeps every leg.
	Schedule string
}

func newABLegsCmd(ios *IOStreams, runF func(context.Context, *abLegsOptions) error) *Command {
	if runF == nil {
		runF = abLegsRun
	}
	return &Command{
		Name:  "legs",
		Batch: true,
		Short: "Print the A/B legs to run as a GitHub Actions matrix; skip legs without a runner",
		Long:  helpText("ab_legs"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &abLegsOptions{IO: ios}
			fs := pflag.NewFlagSet("ab legs", pflag.ContinueOnError)
			fs.StringSliceVar(&o.Only, "only", nil, "only these legs, comma separated (default: all)")
			fs.StringVar(&o.Schedule, "schedule", "all", "keep the legs of this schedule: nightly, manual or all")
			fs.StringVar(&o.OnlineRunners, "online-runners", "", "file of runner names that are online (one per line or a JSON list); default: every registered runner counts")
			fs.StringSliceVar(&o.Inputs.ConfigFiles, "config-files", nil, "master config files, comma separated (default: the built-in amd and nvidia masters)")
			fs.StringVar(&o.Inputs.RunnerConfig, "runner-config", "", "runners.yaml (default: the built-in one)")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) != 0 {
					return flagErrorf("ab legs takes no arguments, got %q", args)
				}
				switch o.Schedule {
				case configs.ABNightly, configs.ABManual, "all":
				default:
					return flagErrorf("--schedule %q: want nightly, manual or all", o.Schedule)
				}
				names := configs.ABLegNames()
				for _, n := range o.Only {
					if !slices.Contains(names, n) {
						return flagErrorf("--only %q: no such leg (shipped: %s)", n, strings.Join(names, ", "))
					}
				}
				return runF(ctx, o)
			}
		},
	}
}

func abLegsRun(ctx context.Context, o *abLegsOptions) error {
	var online map[string]bool
	var err error
	if o.OnlineRunners != "" {
		if online, err = gha.ReadOnlineRunners(o.OnlineRunners); err != nil {
			return err
		}
	}
	g, err := o.Inputs.generator()
	if err != nil {
		return err
	}
	out, err := gha.ABLegs(ctx, g, gha.ABLegsOptions{Only: o.Only, Schedule: o.Schedule,
		Avail: gha.Availability{Runners: g.Runners, Online: online}})
	if out == nil {
		return err
	}
	for _, sk := range out.Skipped {
		fmt.Fprintf(o.IO.ErrOut, "::notice title=ab-nightly: %s skipped::leg %s (%s) skipped: %s\n", sk.Name, sk.Name, sk.Model, sk.Reason)
	}
	if err != nil {
		return &FlagError{Err: err}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = o.IO.Out.Write(append(b, '\n'))
	return err
}
