// Package usage marks an error as a mistake in what the caller asked for
// (a flag, an argument, a file or name given on the command line) rather
// than a failure of the work: sweep prints it with a usage hint and exits 2.
package usage

import "fmt"

// Error is a usage mistake; its text is Err's.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an Error.
func Errorf(format string, a ...any) error {
	return &Error{Err: fmt.Errorf(format, a...)}
}
