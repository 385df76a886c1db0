package main

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"sweep/sweep/abgate/bfclsim"
)

// newSimBFCLCmd is the stand-in sweep ab run --simulate runs in place of
// the bfcl program.
func newSimBFCLCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "sim-bfcl",
		Short: "Internal: stand in for bfcl (generate, evaluate, models) in simulated A/B legs",
		Long:  helpText("sim_bfcl"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			fs := pflag.NewFlagSet("sim-bfcl", pflag.ContinueOnError)
			fs.SetInterspersed(false)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("sim-bfcl: want a bfcl command after -- (generate, evaluate or models)")
				}
				return bfclsim.Command(ctx, args, os.Getenv, ios.Out, ios.ErrOut)
			}
		},
	}
}
