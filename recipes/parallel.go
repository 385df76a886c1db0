package recipes

import "strconv"

// EPRule says how a recipe passes the row's expert-parallel size.
type EPRule uint8

// Expert-parallel rules.
const (
	// EPAlways passes the size every time (SGLang --ep-size E, also E=1).
	// For vLLM it means --enable-expert-parallel whenever EP > 1.
	EPAlways EPRule = iota
	// EPAboveOne passes it only when EP > 1 (DSv4 SGLang).
	EPAboveOne
	// EPIgnored never passes it (the recipe has no EP handling).
	EPIgnored
)

// Parallel maps a row's TP / EP / DP attention to engine flags. The mapping
// itself is shared per engine (ParallelArgs):
//
//	SGLang  TP: --tp-size T [--dp-size 1] --ep-size 1     TEP: ... --ep-size T
//	        DEP (dp-attn): --tp-size T --dp-size T --enable-dp-attention, engine on PORT+1
//	        behind sglang_router on PORT
//	vLLM    TP: --tensor-parallel-size T [--data-parallel-size 1]
//	        EP > 1: --enable-expert-parallel
//	        DEP (dp-attn): --tensor-parallel-size 1 --data-parallel-size T, engine on
//	        PORT+1 behind vllm-router on PORT
type Parallel struct {
	// DataParallelOne passes an explicit data-parallel size of 1 on rows
	// without DP attention (--dp 1 / --data-parallel-size 1).
	DataParallelOne bool
	EP              EPRule
	// DPAttention says the recipe has a DP-attention path; rows with
	// dp-attn are a plan error otherwise.
	DPAttention bool
	// DPAttnArgs are extra engine flags on DP-attention rows.
	DPAttnArgs []Arg
}

// ParallelArgs expands the recipe's parallelism mapping at its position.
var ParallelArgs = Arg{Name: "<parallel>", Expand: parallelArgs}

func parallelArgs(c *Ctx, r *Recipe) ([]Arg, error) {
	p, f := r.Parallel, r.Engine.Facts().Parallel
	if f.TP == "" {
		return nil, errUnsupportedEngine(r)
	}
	var out []Arg
	switch {
	case c.DPAttn && f.DPAttention == "": // data parallelism over TP-1 engines
		out = append(out, Flag(f.TP, 1), Flag(f.DP, c.TP))
	case c.DPAttn:
		out = append(out, Flag(f.TP, c.TP), Flag(f.DP, c.TP), Flag(f.DPAttention, nil))
	case p.DataParallelOne:
		out = append(out, Flag(f.TP, c.TP), Flag(f.DP, 1))
	default:
		out = append(out, Flag(f.TP, c.TP))
	}
	switch {
	case f.EPSize != "" && (p.EP == EPAlways || p.EP == EPAboveOne && c.EP > 1):
		out = append(out, Flag(f.EPSize, c.EP))
	case f.EPEnable != "" && p.EP != EPIgnored && c.EP > 1:
		out = append(out, Flag(f.EPEnable, nil))
	}
	if c.DPAttn {
		out = append(out, p.DPAttnArgs...)
	}
	return out, nil
}

// routerCommand is the router InferenceX puts in front of a DP-attention
// engine (the engine table's Router: sglang_router for SGLang, vllm-router
// for vLLM). Its metrics are on PORT+10000. The argv is not checked against
// a schema (there is none for the routers yet); Plan lists it as an escape.
func routerCommand(c *Ctx, r *Recipe) (program string, argv []string, err error) {
	rt := r.Engine.Facts().Router
	if rt.Argv == nil {
		return "", nil, errUnsupportedEngine(r)
	}
	worker := "http://localhost:" + strconv.Itoa(c.EnginePort)
	return rt.Program, rt.Argv(worker, c.Port, RouterMetricsPort(c.Port), c.TP), nil
}

// routerEnv is the aiperf setting that makes the client send the session
// key the router hashes on (exported before the engine starts).
func routerEnv(r *Recipe) map[string]string { return r.Engine.Facts().Router.Env }
