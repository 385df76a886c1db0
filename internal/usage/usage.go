// Package usage marks an error as a mistake in what the caller asked for
// (a flag, an argument, a file or name given on the command line) rather
// than a failure of the work: sweep prints it and exits 2, with a hint to
// run --help unless it is a refusal that names its own fix (Refusef).
package usage

import (
	"errors"
	"fmt"
)

// Error is a usage mistake; its text is Err's.
type Error struct {
	Err error
	// Refusal marks a refusal of what was given whose text names the
	// fix (an --out that holds something else or is in use: what to
	// give instead), where a hint to run --help would only bury it;
	// false for a mistake in the command line's shape (an unknown flag,
	// a missing argument, a value of the wrong form).
	Refusal bool
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an Error.
func Errorf(format string, a ...any) error {
	return &Error{Err: fmt.Errorf(format, a...)}
}

// Refusef makes an Error that is a refusal naming its fix (Refusal).
func Refusef(format string, a ...any) error {
	return Refuse(fmt.Errorf(format, a...))
}

// Refuse makes err, whose text names its fix, an Error that is a
// refusal (Refusal); nil stays nil.
func Refuse(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err, Refusal: true}
}

// IsRefusal reports whether err is a usage Error that is a refusal: one
// of the Errors along its chain (the outermost, then the one it wraps,
// and so on) has Refusal set, so a refusal wrapped by a plain Error
// ("--out: %w") stays one.
func IsRefusal(err error) bool {
	for {
		u, ok := errors.AsType[*Error](err)
		switch {
		case !ok || u == nil:
			return false
		case u.Refusal:
			return true
		}
		err = u.Err
	}
}
