// Command sweep plans, runs and checks LLM inference benchmark sweeps.
//
// Every subcommand lives in its own file with an options struct, a
// constructor that binds its flags (newXxxCmd) and a function that does the
// work (xxxRun); commands.go lists them. Files shared by several commands
// hold no command: names.go (the names of the command framework,
// sweep/internal/cli: commands, usage errors, exit codes),
// inputs.go (config inputs), simflags.go,
// campaignflags.go (the flags discover and official share), ... This file
// holds main; cli.ExitCode decides the exit code.
package main

import (
	"context"
	"os"

	"sweep/internal/cli"
	"sweep/simengine"
)

func main() {
	if tool, ok := simulatedSMI(os.Args[0]); ok {
		os.Exit(simengine.SMIMain(tool))
	}
	os.Exit(Main())
}

// Main runs sweep with the process's arguments and returns the exit code.
func Main() int {
	ios := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	ctx, stop := cli.HandleSignals(context.Background(), ios.ErrOut, func(code int) { os.Exit(code) })
	defer stop()
	defer startCPUProfile(os.Args[1:])()
	return mainRun(ctx, ios, os.Args[1:])
}

// mainRun dispatches args to a command and maps its error to an exit code.
func mainRun(ctx context.Context, ios *IOStreams, args []string) int {
	return cli.ExitCode(ctx, ios.ErrOut, dispatch(ctx, ios, rootCommand(ios), []string{"sweep"}, args))
}
