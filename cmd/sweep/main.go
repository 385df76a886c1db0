// Command sweep plans, runs and checks LLM inference benchmark sweeps.
//
// Every subcommand lives in its own file with an options struct, a
// constructor that binds its flags (newXxxCmd) and a function that does the
// work (xxxRun); commands.go lists them. Files shared by several commands
// hold no command: command.go (the Command type and the dispatcher),
// errors.go (usage errors and exit codes), flags.go and lists.go (flag
// parsing), inputs.go (config inputs), simflags.go, ports.go,
// campaignflags.go (the flags discover and official share), ... This file
// holds main and the single place where exit codes are decided.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

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
	ctx, stop := handleSignals(context.Background(), ios.ErrOut, func(code int) { os.Exit(code) })
	defer stop()
	defer startCPUProfile(os.Args[1:])()
	return mainRun(ctx, ios, os.Args[1:])
}

// handleSignals cancels the returned context on SIGINT, SIGTERM or SIGHUP
// (an ssh disconnect), so a running point stops its processes and finishes
// its records. A second signal exits at once with 130, and so does the
// first while a batch command runs. exit is os.Exit outside tests.
func handleSignals(parent context.Context, errOut io.Writer, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			if batchRunning.Load() {
				fmt.Fprintf(errOut, "sweep: %v: stopped\n", s)
				exit(exitCancelled)
				return
			}
			fmt.Fprintf(errOut, "sweep: %v: stopping (send it again to exit at once)\n", s)
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(errOut, "sweep: %v again: exiting without waiting for the cleanup\n", s)
			exit(exitCancelled)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// mainRun dispatches args to a command and maps its error to an exit code.
func mainRun(ctx context.Context, ios *IOStreams, args []string) int {
	root := rootCommand(ios)
	err := dispatch(ctx, ios, root, []string{"sweep"}, args)
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return exitOK
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(ios.ErrOut, "sweep: cancelled")
		return exitCancelled
	}
	fmt.Fprintf(ios.ErrOut, "sweep: %v\n", err)
	if isUsage(err) {
		fmt.Fprintln(ios.ErrOut, "run with --help for usage")
		return exitUsage
	}
	if ce, ok := errors.AsType[*exitCodeError](err); ok && ce != nil {
		return ce.Code
	}
	return exitError
}
