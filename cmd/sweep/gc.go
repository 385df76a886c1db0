package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the garbage collector's target in the processes whose live
// heap is small next to what they allocate: the one-shot batch commands
// (matrix, changelog, plan, validate: a few megabytes, then exit) and the
// processes that carry a point's load (the simulated engine, its router
// and the load generator). Collecting at five times the live heap instead of twice
// costs a few megabytes to a few hundred and saves about a sixth of the
// load processes' CPU; Go's own compiler tunes its collector the same way.
const gcPercent = 400

// raiseGCPercent applies gcPercent unless $GOGC is set.
func raiseGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
