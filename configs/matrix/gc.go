package matrix

import (
	"os"
	"runtime/debug"
)

// BatchGCPercent is the garbage-collector target sweep's one-shot batch
// commands (matrix, changelog, plan, validate) run with. They allocate a
// few megabytes and exit, so a collection every few hundred kilobytes of
// the default target (GOGC=100 over a small live heap) is pure overhead;
// 400 lets the heap grow to five times what is live, a few megabytes more
// at most. Go's own compiler tunes its collector the same way.
const BatchGCPercent = 400

// TuneGCForBatch applies BatchGCPercent unless the user set GOGC.
func TuneGCForBatch() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(BatchGCPercent)
	}
}
