package metrics

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sweep/configs"
	"sweep/internal/pyjson"
)

// DefaultALTolerance is the default absolute band around the golden
// acceptance length (engines.md §E.3 suggests ±0.05 for simulated
// acceptance; real acceptance may need a wider band).
const DefaultALTolerance = 0.05

// ALCounters are the counter increases over the measured window that
// acceptance length is computed from. For vLLM, Accepted and Drafts; for
// SGLang, GenerationTokens, Requests and VerifyCalls.
type ALCounters struct {
	Engine configs.Engine `json:"engine"`
	// vLLM
	Accepted *float64 `json:"accepted_tokens,omitempty"` // Δvllm:spec_decode_num_accepted_tokens
	Drafts   *float64 `json:"drafts,omitempty"`          // Δvllm:spec_decode_num_drafts
	// SGLang
	GenerationTokens *float64 `json:"generation_tokens,omitempty"` // Δsglang:generation_tokens
	Requests         *float64 `json:"requests,omitempty"`          // Δsglang:num_requests
	VerifyCalls      *float64 `json:"verify_calls,omitempty"`      // Δsglang:spec_verify_calls
}

// Formula describes how AL is computed for the engine.
func (c ALCounters) Formula() string { return c.Engine.Facts().AL.Formula }

// ALField is one counter of the engine's AL formula and the field of an
// ALCounters that holds its increase.
type ALField struct {
	Counter configs.ALCounter
	Dst     **float64
}

// Fields pairs the counters of c.Engine's AL formula (the engine table's
// ALSeries) with c's fields, in the formula's order; counters the formula
// does not use have an empty name.
func (c *ALCounters) Fields() []ALField {
	al := c.Engine.Facts().AL
	return []ALField{{al.Accepted, &c.Accepted}, {al.Drafts, &c.Drafts},
		{al.Generation, &c.GenerationTokens}, {al.Requests, &c.Requests}, {al.Verify, &c.VerifyCalls}}
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
	al := c.Engine.Facts().AL
	switch {
	case al.PerDraft():
		if c.Accepted == nil || c.Drafts == nil {
			return 0, fmt.Errorf("%s acceptance length needs %s and %s", c.Engine, bare(al.Accepted), bare(al.Drafts))
		}
		if *c.Drafts <= 0 {
			return 0, ErrNoSpecSteps
		}
		return 1 + *c.Accepted / *c.Drafts, nil
	case al.PerVerify():
		if c.GenerationTokens == nil || c.Requests == nil || c.VerifyCalls == nil {
			return 0, fmt.Errorf("%s acceptance length needs %s, %s and %s", c.Engine, bare(al.Generation), bare(al.Requests), bare(al.Verify))
		}
		if *c.VerifyCalls <= 0 {
			return 0, ErrNoSpecSteps
		}
		return (*c.GenerationTokens - *c.Requests) / *c.VerifyCalls, nil
	}
	return 0, fmt.Errorf("acceptance length: unknown engine %q", c.Engine)
}

// bare is a counter's name without its engine prefix.
func bare(c configs.ALCounter) string {
	_, name, _ := strings.Cut(c.Name, ":")
	return name
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
	Source    string          `json:"source"` // where the counters came from
	Formula   string          `json:"formula,omitempty"`
	Counters  ALCounters      `json:"counters"`
	Measured  *pyjson.Rounded `json:"measured"`
	Golden    *pyjson.Rounded `json:"golden"`
	Tolerance pyjson.Rounded  `json:"tolerance"`
	Delta     *pyjson.Rounded `json:"delta,omitempty"` // measured − golden
	Verdict   string          `json:"verdict"`
	Reason    string          `json:"reason,omitempty"`
}

// String summarises the check for a person: "measured 3.374, golden
// 3.390 (±0.05): pass", with n/a for a value that is missing.
func (c *ALCheck) String() string {
	opt := func(f *pyjson.Rounded) string {
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
		Golden: pyjson.OptRounded(golden), Tolerance: pyjson.Rounded(tolerance)}
	al, err := counters.AcceptanceLength()
	if err != nil {
		c.Verdict, c.Reason = ALNotMeasured, err.Error()
		return c
	}
	c.Measured = pyjson.RoundedPtr(al)
	if golden == nil {
		c.Verdict = ALNoGolden
		return c
	}
	d := al - *golden
	c.Delta = pyjson.RoundedPtr(d)
	// A small epsilon keeps 3.44 vs 3.39 ± 0.05 a pass despite binary noise.
	if math.Abs(d) <= tolerance+1e-9 {
		c.Verdict = ALPass
	} else {
		c.Verdict = ALFail
		c.Reason = fmt.Sprintf("measured AL %.4f is outside golden %.4f ± %.4f", al, *golden, tolerance)
	}
	return c
}
