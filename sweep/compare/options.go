package compare

// Options are the inputs of Compare besides the two sides.
type Options struct {
	// Tolerance is the tolerated loss in percent (> 0); 0 means
	// DefaultTolerance.
	Tolerance float64
	// Metric is what points are compared on; "" means MetricTotal.
	Metric Metric
	// Calibration, when not nil, gives the noise of arms that have no
	// replicates (sweep compare --calibrate).
	Calibration *Calibration
}

// DefaultTolerance is the tolerated loss, in percent.
const DefaultTolerance = 5.0
