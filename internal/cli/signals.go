package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Interrupt is the cause (context.Cause) of a context HandleSignals
// cancelled: the signal that stopped the command. It is a
// context.Canceled (errors.Is), and reads "interrupted by SIGTERM".
type Interrupt struct {
	Signal os.Signal
}

func (e *Interrupt) Error() string {
	name := map[os.Signal]string{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[e.Signal]
	if name == "" {
		name = e.Signal.String()
	}
	return "interrupted by " + name
}

func (e *Interrupt) Unwrap() error { return context.Canceled }

// HandleSignals cancels the returned context on SIGINT, SIGTERM or SIGHUP
// (an ssh disconnect), its cause an *Interrupt naming the signal, so a
// running point stops its processes and finishes its records. A second
// signal exits at once with ExitCancelled, and so does the first while a
// batch command runs. exit is os.Exit outside tests; the returned
// function stops the handling.
func HandleSignals(parent context.Context, errOut io.Writer, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			if batchRunning.Load() {
				fmt.Fprintf(errOut, "%s: %v: stopped\n", prog, s)
				exit(ExitCancelled)
				return
			}
			fmt.Fprintf(errOut, "%s: %v: stopping (send it again to exit at once)\n", prog, s)
			cancel(&Interrupt{Signal: s})
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(errOut, "%s: %v again: exiting without waiting for the cleanup\n", prog, s)
			exit(ExitCancelled)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
