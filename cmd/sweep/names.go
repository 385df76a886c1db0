package main

import (
	"context"

	"github.com/spf13/pflag"

	"sweep/internal/cli"
	"sweep/recipes"
	"sweep/sweep/gha"
)

// The names the command files use for what moved out of cmd/sweep: the
// command framework (sweep/internal/cli) and the free ports of a simulated
// point (recipes), the online runners of the CI fan-out (sweep/gha).
type (
	IOStreams     = cli.IOStreams
	Command       = cli.Command
	FlagError     = cli.FlagError
	exitCodeError = cli.ExitCodeError
)

// Exit codes (cli.ExitCode decides them).
const (
	exitOK        = cli.ExitOK
	exitError     = cli.ExitError
	exitUsage     = cli.ExitUsage
	exitCancelled = cli.ExitCancelled
)

// flagErrorf makes a usage error (cli.FlagErrorf).
func flagErrorf(format string, a ...any) error { return cli.FlagErrorf(format, a...) }

// dispatch runs the command c along args (cli.Dispatch), a batch command
// with the batch garbage collector setting.
func dispatch(ctx context.Context, ios *IOStreams, c *Command, path, args []string) error {
	return cli.Dispatch(ctx, ios, c, path, args, raiseGCPercent)
}

// wrapFlags lays a list of flags out for a help text (cli.WrapWords).
func wrapFlags(flags []string) string { return cli.WrapWords(flags) }

// argparseLists are a command's argparse-style list flags (cli.Lists).
type argparseLists struct{ *cli.Lists }

func newArgparseLists() argparseLists { return argparseLists{cli.NewLists()} }

func (l argparseLists) strings(fs *pflag.FlagSet, p *[]string, name, usage string) {
	l.Strings(fs, p, name, usage)
}

func (l argparseLists) ints(fs *pflag.FlagSet, p *[]int, name, usage string) {
	l.Ints(fs, p, name, usage)
}

func (l argparseLists) finish(fs *pflag.FlagSet) { l.Finish(fs) }

func (l argparseLists) parseRest(fs *pflag.FlagSet, args []string) error {
	return l.ParseRest(fs, args)
}

// freePortPair is a simulated point's public port (recipes.FreeRouterPort).
func freePortPair() (int, error) { return recipes.FreeRouterPort() }

// freePorts are n free ports of a disaggregated point (recipes.FreePorts).
func freePorts(n int) ([]int, error) { return recipes.FreePorts(n) }

// readOnlineRunners reads the runners GitHub reports online
// (gha.ReadOnlineRunners).
func readOnlineRunners(path string) (map[string]bool, error) { return gha.ReadOnlineRunners(path) }

// isUsage reports whether err is a usage mistake: a command's FlagError or
// a library's usage.Error, the same type (cli.IsUsage).
func isUsage(err error) bool { return cli.IsUsage(err) }
