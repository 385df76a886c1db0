package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/pflag"
)

// version is set at link time with -ldflags "-X main.version=..."; the
// module version from the build info is used when it is empty.
var version = ""

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

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "dev"
}
