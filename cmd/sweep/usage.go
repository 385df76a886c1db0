package main

import (
	"errors"

	"sweep/internal/usage"
)

// isUsage reports whether err is a usage mistake: a FlagError of a
// command's own checks, or a library's usage.Error about what it was
// asked (Main then adds the hint and exits 2).
func isUsage(err error) bool {
	if fe, ok := errors.AsType[*FlagError](err); ok && fe != nil {
		return true
	}
	_, ok := errors.AsType[*usage.Error](err)
	return ok
}
