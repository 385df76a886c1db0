package main

import (
	"context"

	"sweep/internal/cli"
)

// The short names the command files use for the command framework
// (sweep/internal/cli).
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
