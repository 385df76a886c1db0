package recipes

import (
	"strconv"
	"sweep/configs"
)

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
	p := r.Parallel
	var out []Arg
	switch r.Engine {
	case configs.SGLang:
		out = append(out, Flag("--tp-size", c.TP))
		switch {
		case c.DPAttn:
			out = append(out, Flag("--dp-size", c.TP), Flag("--enable-dp-attention", nil))
		case p.DataParallelOne:
			out = append(out, Flag("--dp-size", 1))
		}
		if p.EP == EPAlways || p.EP == EPAboveOne && c.EP > 1 {
			out = append(out, Flag("--ep-size", c.EP))
		}
	case configs.VLLM:
		switch {
		case c.DPAttn:
			out = append(out, Flag("--tensor-parallel-size", 1), Flag("--data-parallel-size", c.TP))
		default:
			out = append(out, Flag("--tensor-parallel-size", c.TP))
			if p.DataParallelOne {
				out = append(out, Flag("--data-parallel-size", 1))
			}
		}
		if p.EP != EPIgnored && c.EP > 1 {
			out = append(out, Flag("--enable-expert-parallel", nil))
		}
	default:
		return nil, errUnsupportedEngine(r)
	}
	if c.DPAttn {
		out = append(out, p.DPAttnArgs...)
	}
	return out, nil
}

// routerCommand is the router InferenceX puts in front of a DP-attention
// engine: sglang_router for SGLang, vllm-router for vLLM. Its metrics are on
// PORT+10000. The argv is not checked against a schema (there is none for
// the routers yet); Plan lists it as an escape.
func routerCommand(c *Ctx, r *Recipe) (program string, argv []string, err error) {
	worker := "http://localhost:" + strconv.Itoa(c.EnginePort)
	port, prom := strconv.Itoa(c.Port), strconv.Itoa(c.Port+10000)
	switch r.Engine {
	case configs.SGLang:
		return "sglang_router", []string{"python3", "-m", "sglang_router.launch_router",
			"--worker-urls", worker, "--policy", "consistent_hashing",
			"--request-id-headers", "x-correlation-id", "--dp-aware",
			"--host", "0.0.0.0", "--port", port,
			"--prometheus-host", "127.0.0.1", "--prometheus-port", prom,
			"--connect-timeout-secs", "900", "--request-timeout-secs", "14400",
			"--disable-health-check", "--disable-retries"}, nil
	case configs.VLLM:
		return "vllm-router", []string{"vllm-router",
			"--worker-urls", worker, "--policy", "consistent_hash",
			"--intra-node-data-parallel-size", strconv.Itoa(c.TP),
			"--host", "0.0.0.0", "--port", port,
			"--prometheus-host", "127.0.0.1", "--prometheus-port", prom,
			"--request-timeout-secs", "14400", "--disable-retries"}, nil
	}
	return "", nil, errUnsupportedEngine(r)
}

// routerEnv is the aiperf setting that makes the client send the session
// key the router hashes on (exported before the engine starts).
func routerEnv(r *Recipe) map[string]string {
	switch r.Engine {
	case configs.SGLang:
		return map[string]string{"AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID": "true"}
	case configs.VLLM:
		return map[string]string{"AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID": "1"}
	}
	return nil
}
