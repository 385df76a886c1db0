package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/pflag"
)

func newVersionCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "version",
		Short: "Print the sweep version and the Go toolchain it was built with",
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			fs := pflag.NewFlagSet("version", pflag.ContinueOnError)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return flagErrorf("version takes no arguments, got %q", args)
				}
				fmt.Fprintf(ios.Out, "sweep %s (%s %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return nil
			}
		},
	}
}
