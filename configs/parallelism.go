package configs

// Parallelism is the parallel layout of one engine (a single-node row, or
// one prefill or decode worker of a multi-node row): tensor, pipeline,
// decode-context, prefill-context and expert parallel sizes and DP
// attention, with the master config's defaults filled in (pp, dcp-size
// and pcp-size 1). Matrix rows and workers embed it, and InferenceX's
// result file name is built from it, so the layout travels as one value.
type Parallelism struct {
	TP      int
	PP      int
	DCPSize int // dcp-size
	PCPSize int // pcp-size
	EP      int
	DPAttn  bool // dp-attn
}

// GPUs is how many GPUs one engine of the layout spans: TP·PP·PCP, each
// size at least 1.
func (p Parallelism) GPUs() int {
	return max(p.TP, 1) * max(p.PP, 1) * max(p.PCPSize, 1)
}
