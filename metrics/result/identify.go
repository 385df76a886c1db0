package result

// Identify is the part of a result its facts decide: the point it
// measures (hardware, model, framework, topology, concurrency, recipe
// fingerprint), with no measurement. A resumed sweep compares a result
// file with it to tell its point's result from another's.
func Identify(facts RunFacts) *Result {
	res, _ := newResult(facts)
	return res
}

// newResult is the result of a run before any measurement: its identity,
// image and topology from the facts (InferenceX's key order), and the
// run's GPU count.
func newResult(facts RunFacts) (*Result, int) {
	res := &Result{
		HW:                 facts.RunnerType,
		Conc:               facts.Conc,
		Image:              facts.Image,
		RecipeFingerprint:  facts.RecipeFingerprint,
		Model:              facts.Model,
		InfmaxModelPrefix:  facts.ModelPrefix,
		Framework:          facts.Framework,
		Precision:          facts.Precision,
		SpecDecoding:       facts.SpecDecoding,
		Disagg:             facts.Disagg,
		ScenarioType:       "agentic-coding",
		IsMultinode:        facts.Multinode,
		KVOffloading:       facts.KVOffloading,
		KVOffloadBackend:   facts.KVOffloadBackendMeta,
		AllocatedCPUDRAMGB: facts.TotalCPUDRAMGB,
		Router:             facts.Router,
		KVP2PTransfer:      facts.KVP2PTransfer,
	}
	return res, applyShape(res, facts)
}

// applyShape fills the topology fields and returns the GPU count.
func applyShape(res *Result, f RunFacts) int {
	if !f.Multinode {
		res.TP, res.EP, res.DPAttention = f.TP, f.EP, f.DPAttention
		res.SingleNodeShape = &SingleNodeShape{PP: f.PP, DCPSize: f.DCP, PCPSize: f.PCP}
		return f.NumGPUs()
	}
	p, d := f.Prefill, f.Decode
	np, nd := p.gpus(), d.gpus()
	if nd <= 0 {
		// Aggregated worker: no separate decode GPUs, so the decode side
		// adds nothing to TP/EP.
		d.TP, d.EP, d.PP, d.DCP, d.PCP = 0, 0, 1, 1, 1
	}
	res.TP = p.TP + d.TP
	res.EP = max(p.EP, d.EP)
	res.DPAttention = "false"
	if envBool(p.DPAttention) || envBool(d.DPAttention) {
		res.DPAttention = "true"
	}
	res.MultiNodeShape = &MultiNodeShape{
		PrefillNumWorkers: p.NumWorkers, PrefillTP: p.TP, PrefillPP: p.PP, PrefillDCPSize: p.DCP,
		PrefillPCPSize: p.PCP, PrefillEP: p.EP, PrefillDPAttention: p.DPAttention, NumPrefillGPU: np,
		DecodeNumWorkers: d.NumWorkers, DecodeTP: d.TP, DecodePP: d.PP, DecodeDCPSize: d.DCP,
		DecodePCPSize: d.PCP, DecodeEP: d.EP, DecodeDPAttention: d.DPAttention, NumDecodeGPU: nd,
	}
	if f.PrefillHW != "" {
		res.MultiNodeShape.PrefillHW, res.MultiNodeShape.DecodeHW = f.PrefillHW, f.DecodeHW
	}
	return np + nd
}
