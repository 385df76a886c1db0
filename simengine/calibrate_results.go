package simengine

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Config is the simulator configuration of the arm as far as its results
// say (sweep/simfit fits its step scale with it): the pool is theirs, speculative decoding (spec "none" or empty:
// off) drafts 3 tokens at the measured acceptance length.
func (a *ArmCalibration) Config(spec string, al float64) (Config, error) {
	c := Config{Engine: a.Engine, ModelPath: a.Model, GPU: a.GPU, TP: a.TP, EP: a.EP, DPAttention: a.DPAttention, MaxTotalTokens: a.PoolTokens, KVCacheDType: a.KVCacheDType}
	if a.DPAttention {
		c.DP = a.TP
	}
	if spec != "" && spec != "none" {
		c.Spec = Spec{Algorithm: "EAGLE", NumSteps: 3, TopK: 1, NumDraftTokens: 4, AcceptLength: min(max(al, 1), 4)}
	}
	return c.Normalize()
}

// WriteFits writes each arm's fit: its step scale, pool and error, then a
// table of the measured and the fitted decode step per concurrency.
func (c *Calibration) WriteFits(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range c.Arms {
		fmt.Fprintf(tw, "%s %s %s tp%d ep%d dpa=%t: step scale %.3f, pool %d tokens per rank, rms error %.1f%%\n",
			a.Engine, a.Model, a.GPU, a.TP, a.EP, a.DPAttention, a.StepScale, a.PoolTokens, a.RMSErrorPct)
		fmt.Fprintln(tw, "  conc\tin flight\tmeasured step (ms)\tfitted (ms)\terror")
		for _, p := range a.Points {
			if p.MeasuredStep == 0 {
				continue
			}
			fmt.Fprintf(tw, "  %d\t%.1f\t%.2f\t%.2f\t%+.1f%%\n", p.Conc, p.Running, 1e3*p.MeasuredStep, 1e3*p.FittedStep, p.ErrorPct)
		}
	}
	return tw.Flush()
}
