package knee

// Options tune Analyze. The zero value means the defaults of peers' §2.7.
type Options struct {
	Threshold float64 // X: the knee reaches X × peak; default 0.9
	Metric    Metric  // default MetricTotal
	// Gain is τ, the per-doubling gain at the top of the grid above which
	// an arm counts as unsaturated; default 0.10.
	Gain float64
	// Drop is δ: a fitted fall below (1 − δ) × peak after the peak flags a
	// cliff; default 0.05.
	Drop float64
	// Sigma is the relative noise assumed when no concurrency has
	// replicates; default 0.03.
	Sigma float64
}

func (o Options) withDefaults() Options {
	if o.Threshold <= 0 {
		o.Threshold = 0.9
	}
	if o.Metric == "" {
		o.Metric = MetricTotal
	}
	if o.Gain <= 0 {
		o.Gain = 0.10
	}
	if o.Drop <= 0 {
		o.Drop = 0.05
	}
	if o.Sigma <= 0 {
		o.Sigma = 0.03
	}
	return o
}
