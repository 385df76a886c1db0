package main

import (
	"os"
	"runtime/debug"
)

// pointGCPercent is the garbage collector's target in the processes that
// carry a point's load (the simulated engine and the load generator):
// their live heaps are small and they allocate fast, so collecting at
// five times the live heap instead of twice saves about a sixth of their
// CPU for a few hundred MB. $GOGC, when set, still decides.
const pointGCPercent = 400

// setPointGC applies pointGCPercent unless $GOGC is set.
func setPointGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(pointGCPercent)
	}
}
