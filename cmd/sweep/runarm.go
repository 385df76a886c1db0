package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"sweep/sweep/campaign"
)

// runArmOptions are the inputs of "sweep run-arm".
type runArmOptions struct {
	IO     *IOStreams
	Job    string // the arm job file
	Events string // where the events go
}

func newRunArmCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "run-arm",
		Short: "Run one arm's planned points on this node (internal: a Slurm job of discover/official --executor slurm)",
		Long:  helpText("runarm"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &runArmOptions{IO: ios}
			fs := pflag.NewFlagSet("run-arm", pflag.ContinueOnError)
			fs.StringVar(&o.Job, "job", "", "the arm job file (required)")
			fs.StringVar(&o.Events, "events", "", "the events file to append to (required)")
			return fs, func(ctx context.Context, args []string) error {
				switch {
				case len(args) > 0:
					return flagErrorf("run-arm takes no arguments, got %q", args)
				case o.Job == "" || o.Events == "":
					return flagErrorf("run-arm needs --job and --events")
				}
				return runArm(ctx, o)
			}
		},
	}
}

func runArm(ctx context.Context, o *runArmOptions) error {
	return campaign.RunArmJob(ctx, o.Job, o.Events, os.Getenv("SLURM_JOB_ID"), o.IO.ErrOut)
}
