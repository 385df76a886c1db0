package main

import (
	"math"

	"sweep/internal/cli"
)

// The ranges of sweep's float flags (cli.FloatVar, cli.FloatsVar: a
// value out of its range, NaN, ±Inf or beyond float64's is refused at
// parse time naming the flag and the range, exit 2). A flag of several
// commands takes its range from here; TestFloatFlagsHaveRanges checks
// that every float flag has one.
var (
	// kneeThreshold: --threshold of knees, report, official --propose.
	kneeThreshold = cli.Range{Min: 0, Max: 1, MinOpen: true, MaxOpen: true, What: "a fraction", Example: "0.9"}
	// lossPercent: --tolerance of compare and report.
	lossPercent = cli.Range{Min: 0, Max: 100, MinOpen: true, MaxOpen: true, What: "a percentage", Example: "5"}
	// accuracyPoints: --tolerance of ab compare.
	accuracyPoints = cli.Range{Min: 0, Max: 100, MinOpen: true, MaxOpen: true, What: "points", Example: "2"}
	// timeScale: --time-scale of the simulated engine and the load client.
	timeScale = positive("a factor", "150")
	// failedRequestRatio: --failed-request-threshold of run and result validate.
	failedRequestRatio = cli.Range{Min: 0, Max: 1, What: "a fraction", Example: "0.1"}
	// goldenAL and alTolerance: the acceptance length check's.
	goldenAL    = positive("an acceptance length", "3.39")
	alTolerance = positive("an absolute tolerance", "0.05")
	// interactivity: official --propose's --target.
	interactivity = positive("interactivities (tok/s/user)", "50")
)

// positive is the range of a finite number above zero.
func positive(what, example string) cli.Range {
	return cli.Range{Min: 0, Max: math.Inf(1), MinOpen: true, MaxOpen: true, What: what, Example: example}
}
