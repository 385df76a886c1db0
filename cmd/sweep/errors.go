package main

import "fmt"

// Exit codes decided by Main.
const (
	exitOK        = 0
	exitError     = 1 // the command ran and failed (invalid input, failed stage)
	exitUsage     = 2 // bad flags or arguments
	exitCancelled = 130
)

// FlagError is a usage mistake: Main prints it with a hint and exits 2.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }

func (e *FlagError) Unwrap() error { return e.Err }

// flagErrorf makes a FlagError.
func flagErrorf(format string, a ...any) error {
	return &FlagError{Err: fmt.Errorf(format, a...)}
}

// exitCodeError lets a command pick its exit code while still printing err.
type exitCodeError struct {
	Code int
	Err  error
}

func (e *exitCodeError) Error() string { return e.Err.Error() }

func (e *exitCodeError) Unwrap() error { return e.Err }
