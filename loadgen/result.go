package loadgen

// Result is what a run did. Success is a nil error from Run; a Result is
// returned alongside most errors too, describing the partial run.
type Result struct {
	BenchmarkID string
	Dir         string   // artifact directory
	Files       []string // artifacts written, base names
	Warmup      Counts
	Profiling   Counts
	Cancelled   bool   // was_cancelled: the run stopped early (abort or ctx)
	Dataset     string // trace source description
}

// Counts is the number of requests of one phase by outcome. Cancelled
// requests (still open when the load generator cancelled them) have no
// record and are in neither OK nor Failed, as in aiperf.
type Counts struct{ OK, Failed, Cancelled int }

// RunError is a run that executed but failed the way aiperf fails (exit
// code 1): every request failed, the live failed-request threshold was
// exceeded, or a warm-up request failed. Artifacts were still written.
type RunError struct {
	Reason string // "all_failed", "none_completed", "failed_request_threshold", "warmup_failed"
	Err    error
}

// Error returns the underlying error's message.
func (e *RunError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *RunError) Unwrap() error { return e.Err }
