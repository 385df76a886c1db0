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
		Long:  helpText("launchguard"),
		Args:  "-- RELEASE...",
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
