package recipes

import "strconv"

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
