package knee

// Test-only views of the search's own rules, so the benchmarks in
// knee_test read a reading's noise and a cliff as the search does.

// SearchSigma is the relative noise the search assumes for s with the
// default options (Analyze's Sigma, more for a probe).
func SearchSigma(s *Sample) float64 {
	return SearchOptions{FullSeconds: 1200}.sigma(s, Options{}.withDefaults())
}

// FellOff is the search's cliff test (fellOff).
var FellOff = fellOff

// SureUnsaturated is the search's test for an unsaturated verdict it
// keeps on probes (sureUnsaturated).
var SureUnsaturated = sureUnsaturated

// UnsteadyLow is the factor the search moves an unsteady probe by to ask
// whether the verdict hangs on it (unsteadyDecides).
const UnsteadyLow = unsteadyLow

// ScaleThroughput scales s's throughputs by f (scaleThroughput), as a
// run-to-run noise the benchmark gives the simulated corpora moves them.
func (s *Sample) ScaleThroughput(f float64) { s.scaleThroughput(f) }
