package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"sweep/sweep/launch"
)

// newLaunchGuardCmd is the release guard that sweep run --launch starts
// beside an allocation (internal).
func newLaunchGuardCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "launch-guard",
		Short: "Release an allocation when its launcher dies (internal: started by run --launch)",
		Long: `Wait for standard input to end; unless the launcher wrote "done" first,
run the release command given after -- (scancel JOB, docker rm -f NAME).
sweep run --launch starts it in its own process group, so a kill -9 of the
launcher still releases the allocation.`,
		Args: "-- RELEASE...",
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			fs := pflag.NewFlagSet("launch-guard", pflag.ContinueOnError)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("launch-guard needs the release command after --")
				}
				return launch.Guard(os.Stdin, args, ios.ErrOut)
			}
		},
	}
}
