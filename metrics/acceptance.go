package metrics

import (
	"errors"
	"fmt"
	"math"
)

// DefaultALTolerance is the default absolute band around the golden
// acceptance length (engines.md §E.3 suggests ±0.05 for simulated
// acceptance; real acceptance may need a wider band).
const DefaultALTolerance = 0.05

// ALCounters are the counter increases over the measured window that
// acceptance length is computed from. For vLLM, Accepted and Drafts; for
// SGLang, GenerationTokens, Requests and VerifyCalls.
type ALCounters struct {
	Engine Engine `json:"engine"`
	// vLLM
	Accepted *float64 `json:"accepted_tokens,omitempty"` // Δvllm:spec_decode_num_accepted_tokens
	Drafts   *float64 `json:"drafts,omitempty"`          // Δvllm:spec_decode_num_drafts
	// SGLang
	GenerationTokens *float64 `json:"generation_tokens,omitempty"` // Δsglang:generation_tokens
	Requests         *float64 `json:"requests,omitempty"`          // Δsglang:num_requests
	VerifyCalls      *float64 `json:"verify_calls,omitempty"`      // Δsglang:spec_verify_calls
}

// Formula describes how AL is computed for the engine.
func (c ALCounters) Formula() string {
	switch c.Engine {
	case EngineVLLM:
		return "1 + Δspec_decode_num_accepted_tokens / Δspec_decode_num_drafts"
	case EngineSGLang:
		return "(Δgeneration_tokens - Δnum_requests) / Δspec_verify_calls"
	}
	return ""
}

// ErrNoSpecSteps means the window saw no speculative verify step, so AL is
// undefined (spec decoding off, or no traffic).
var ErrNoSpecSteps = errors.New("no speculative decoding steps in the window")

// AcceptanceLength computes the mean acceptance length (accepted draft
// tokens plus the bonus token, per verify step) from counter increases:
// vLLM 1 + Δaccepted/Δdrafts; SGLang (Δgeneration − Δrequests)/Δverify,
// since each request's first token comes from prefill, not a verify pass.
// SGLang's sglang:spec_accept_length gauge is not used: it is the mean of
// the last logging window only (about 40 decode steps on one rank) and
// keeps its value after the run, so it can be far from the run's mean.
func (c ALCounters) AcceptanceLength() (float64, error) {
	switch c.Engine {
	case EngineVLLM:
		if c.Accepted == nil || c.Drafts == nil {
			return 0, errors.New("vllm acceptance length needs spec_decode_num_accepted_tokens and spec_decode_num_drafts")
		}
		if *c.Drafts <= 0 {
			return 0, ErrNoSpecSteps
		}
		return 1 + *c.Accepted / *c.Drafts, nil
	case EngineSGLang:
		if c.GenerationTokens == nil || c.Requests == nil || c.VerifyCalls == nil {
			return 0, errors.New("sglang acceptance length needs generation_tokens, num_requests and spec_verify_calls")
		}
		if *c.VerifyCalls <= 0 {
			return 0, ErrNoSpecSteps
		}
		return (*c.GenerationTokens - *c.Requests) / *c.VerifyCalls, nil
	}
	return 0, fmt.Errorf("acceptance length: unknown engine %q", c.Engine)
}

// AL verdicts.
const (
	ALPass        = "pass"         // |measured − golden| ≤ tolerance
	ALFail        = "fail"         // outside the band
	ALNoGolden    = "no_golden"    // measured, but the recipe has no golden AL
	ALNotMeasured = "not_measured" // counters missing or no spec steps; see Reason
)

// ALCheck is the acceptance_length block of our result: the measured AL,
// the recipe's golden AL, the tolerance and the verdict. Measured is nil
// when it could not be measured (Verdict not_measured, Reason says why).
type ALCheck struct {
	Source    string     `json:"source"` // where the counters came from
	Formula   string     `json:"formula,omitempty"`
	Counters  ALCounters `json:"counters"`
	Measured  *Float     `json:"measured"`
	Golden    *Float     `json:"golden"`
	Tolerance Float      `json:"tolerance"`
	Delta     *Float     `json:"delta,omitempty"` // measured − golden
	Verdict   string     `json:"verdict"`
	Reason    string     `json:"reason,omitempty"`
}

// String summarises the check for a person: "measured 3.374, golden
// 3.390 (±0.05): pass", with n/a for a value that is missing.
func (c *ALCheck) String() string {
	opt := func(f *Float) string {
		if f == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.3f", float64(*f))
	}
	return fmt.Sprintf("measured %s, golden %s (±%.2f): %s", opt(c.Measured), opt(c.Golden), float64(c.Tolerance), c.Verdict)
}

// Passed reports whether the verdict is a pass.
func (c *ALCheck) Passed() bool { return c != nil && c.Verdict == ALPass }

// CheckAL measures AL from counters and compares it with golden (nil = the
// recipe has none) within tolerance (≤0 = DefaultALTolerance).
func CheckAL(source string, counters ALCounters, golden *float64, tolerance float64) *ALCheck {
	if tolerance <= 0 {
		tolerance = DefaultALTolerance
	}
	c := &ALCheck{Source: source, Formula: counters.Formula(), Counters: counters,
		Golden: optFloat(golden), Tolerance: Float(tolerance)}
	al, err := counters.AcceptanceLength()
	if err != nil {
		c.Verdict, c.Reason = ALNotMeasured, err.Error()
		return c
	}
	c.Measured = fp(al)
	if golden == nil {
		c.Verdict = ALNoGolden
		return c
	}
	d := al - *golden
	c.Delta = fp(d)
	// A small epsilon keeps 3.44 vs 3.39 ± 0.05 a pass despite binary noise.
	if math.Abs(d) <= tolerance+1e-9 {
		c.Verdict = ALPass
	} else {
		c.Verdict = ALFail
		c.Reason = fmt.Sprintf("measured AL %.4f is outside golden %.4f ± %.4f", al, *golden, tolerance)
	}
	return c
}

// ALCountersFromExport reads the counter totals aiperf exported over the
// profiling window (server_metrics_export.json names counters without
// _total). The engine is picked from the metric prefix. A missing counter
// is a *MissingSeriesError.
func ALCountersFromExport(exp *ServerMetricsExport) (ALCounters, error) {
	if exp == nil || len(exp.Metrics) == 0 {
		return ALCounters{}, errors.New("no server metrics exported")
	}
	v := exportView(exp.Metrics)
	total := func(e Engine, name string) (*float64, error) {
		s := v.sum(names(name), []string{"total"}, nil)
		if s == nil {
			return nil, &MissingSeriesError{Engine: e, Series: name}
		}
		return s, nil
	}
	var err1, err2, err3 error
	switch detectExportBackend(v, "") {
	case "sglang":
		c := ALCounters{Engine: EngineSGLang}
		c.GenerationTokens, err1 = total(EngineSGLang, "sglang:generation_tokens")
		c.Requests, err2 = total(EngineSGLang, "sglang:num_requests")
		c.VerifyCalls, err3 = total(EngineSGLang, "sglang:spec_verify_calls")
		return c, errors.Join(err1, err2, err3)
	case "vllm", "dynamo-vllm":
		c := ALCounters{Engine: EngineVLLM}
		c.Accepted, err1 = total(EngineVLLM, "vllm:spec_decode_num_accepted_tokens")
		c.Drafts, err2 = total(EngineVLLM, "vllm:spec_decode_num_drafts")
		return c, errors.Join(err1, err2)
	}
	return ALCounters{}, errors.New("server metrics are neither sglang: nor vllm:")
}

// CheckALFromExport is CheckAL over the exported counters; a missing
// counter gives a not_measured verdict naming it.
func CheckALFromExport(exp *ServerMetricsExport, golden *float64, tolerance float64) *ALCheck {
	counters, err := ALCountersFromExport(exp)
	c := CheckAL(ServerMetricsFile, counters, golden, tolerance)
	if err != nil {
		c.Measured, c.Delta, c.Verdict, c.Reason = nil, nil, ALNotMeasured, err.Error()
	}
	return c
}
