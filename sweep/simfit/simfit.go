// Package simfit fits the simulated engine (sweep/simengine) to measured
// results: `sweep sim calibrate RESULTS_DIR` reads a discovery's or an
// official run's results, groups them into arms as sweep knees does
// (knee.Read) and fits each arm's step-cost scale and KV pool
// (simengine.ArmCalibration), the calibration `--sim-calibration FILE`
// hands every simulated engine.
//
//	cal, skipped, err := simfit.FitResults(ctx, dir, run.EngineFlags)
package simfit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"sweep/configs"
	"sweep/simengine"
	"sweep/sweep/knee"
)

// pinnedUsage is the KV usage from which a point is taken to be past the
// pool's capacity: its steps recompute evicted prefixes, which the step
// model does not describe, so the fit leaves it out.
const pinnedUsage = 0.95

// resultFacts are the fields of a result file the calibration needs
// beyond what knee reads.
type resultFacts struct {
	Model         string `json:"model"`
	HW            string `json:"hw"`
	SpecDecoding  string `json:"spec_decoding"`
	PoolTokens    *int   `json:"kv_cache_pool_tokens"`
	ServerMetrics struct {
		Tokens struct {
			PromptTotal       *float64 `json:"prompt_total"`
			RequestsCompleted *float64 `json:"requests_completed"`
			BySource          struct {
				Computed *float64 `json:"computed"`
			} `json:"prompt_by_source"`
		} `json:"tokens"`
	} `json:"server_metrics"`
	RequestMetric struct {
		Throughput struct {
			Duration *float64 `json:"duration_seconds"`
		} `json:"throughput"`
		QPS     struct{ Mean *float64 } `json:"qps"`
		Latency struct {
			E2EL struct{ Mean *float64 } `json:"e2el"`
		} `json:"latency"`
		Tokens struct {
			Input  struct{ Mean *float64 } `json:"input"`
			Output struct{ Mean *float64 } `json:"output_actual"`
		} `json:"tokens"`
	} `json:"request_metrics"`
}

// decodeContext is the context the requests in flight decode over: each
// its prompt and, on average, half its output (a decode step reads the
// running requests' KV, not the cached prefixes of idle sessions that the
// pool's usage also counts); 0 when unknown.
func (f resultFacts) decodeContext(running float64) float64 {
	t := f.RequestMetric.Tokens
	if t.Input.Mean == nil || running <= 0 {
		return 0
	}
	out := 0.0
	if t.Output.Mean != nil {
		out = *t.Output.Mean
	}
	return running * (*t.Input.Mean + out/2)
}

// prefill is the uncached prompt tokens computed per second, per request,
// and the cached context a request's computed tokens follow; 0 when
// unknown.
func (f resultFacts) prefill() (perSecond, perRequest, context float64) {
	t, d := f.ServerMetrics.Tokens, f.RequestMetric.Throughput.Duration
	if t.BySource.Computed == nil || t.PromptTotal == nil || t.RequestsCompleted == nil || *t.RequestsCompleted <= 0 || d == nil || *d <= 0 {
		return 0, 0, 0
	}
	n := *t.RequestsCompleted
	return *t.BySource.Computed / *d, *t.BySource.Computed / n, (*t.PromptTotal - *t.BySource.Computed) / n
}

// running is the requests in flight by Little's law, 0 when unknown.
func (f resultFacts) running() float64 {
	q, l := f.RequestMetric.QPS.Mean, f.RequestMetric.Latency.E2EL.Mean
	if q == nil || l == nil {
		return 0
	}
	return *q * *l
}

// FitResults fits every arm of the results under dir (a discovery, an
// official run, real or simulated) and returns the calibration. An arm
// keeps the KV pool its results report (kv_cache_pool_tokens, from the
// engine's log) and gets the step scale simengine.FitStepScale finds on its points
// below a pinned pool (KV usage under 95 %). Arms of engines the
// simulator does not serve, or without a point to fit, are skipped with
// a reason in skipped.
//
// engineFlags, when not nil, returns the engine flags recorded beside a
// result file (nil when none): the fit takes the KV cache dtype from them.
func FitResults(ctx context.Context, dir string, engineFlags func(resultFile string) map[string]string) (cal *simengine.Calibration, skipped []string, err error) {
	arms, err := knee.Read(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	cal = &simengine.Calibration{Version: simengine.CalibrationVersion, Source: dir}
	for _, a := range arms {
		label := a.Identity.Label()
		engine := configs.Engine(a.Identity.Get("framework"))
		if engine != configs.SGLang && engine != configs.VLLM {
			skipped = append(skipped, fmt.Sprintf("%s: engine %q is not simulated", label, engine))
			continue
		}
		tp, _ := strconv.Atoi(a.Identity.Get("tp"))
		ep, _ := strconv.Atoi(a.Identity.Get("ep"))
		arm := simengine.ArmCalibration{Engine: engine, TP: tp, EP: max(ep, 1), DPAttention: a.Identity.Get("dp_attention") == "true"}
		var points []simengine.FitPoint
		spec, al := "", 0.0
		for _, s := range a.Samples {
			facts, err := readResultFacts(s.File)
			if err != nil {
				return nil, nil, err
			}
			if arm.Model == "" {
				arm.Model, arm.GPU, spec = facts.Model, simengine.GPUFromRunner(facts.HW), facts.SpecDecoding
			}
			if facts.PoolTokens != nil {
				arm.PoolTokens = *facts.PoolTokens
			}
			if arm.KVCacheDType == "" && engineFlags != nil {
				arm.KVCacheDType = engineFlags(s.File)["--kv-cache-dtype"]
			}
			if s.Excluded != "" || s.ITL.P50 == nil || s.KVUsage == nil || *s.KVUsage >= pinnedUsage {
				continue
			}
			p := simengine.FitPoint{Conc: s.Conc, ITL: float64(*s.ITL.P50), AL: 1, Running: facts.running(), CtxTokens: facts.decodeContext(facts.running())}
			if p.CtxTokens <= 0 {
				p.CtxTokens = *s.KVUsage * float64(arm.PoolTokens)
			}
			p.PrefillPerSecond, p.PrefillTokens, p.PrefillContext = facts.prefill()
			if s.AL != nil && s.AL.Measured != nil {
				p.AL = float64(*s.AL.Measured)
				al = p.AL
			}
			points = append(points, p)
		}
		if arm.GPU == "" {
			skipped = append(skipped, fmt.Sprintf("%s: runner %q names no GPU the simulator knows", label, a.Identity.Get("hw")))
			continue
		}
		cfg, err := arm.Config(spec, al)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", label, err))
			continue
		}
		arm.StepScale, arm.RMSErrorPct, err = simengine.FitStepScale(cfg, points)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v (points need a median ITL, request rate and latency, and KV usage below %g %%)", label, err, 100*pinnedUsage))
			continue
		}
		arm.Points = points
		cal.Arms = append(cal.Arms, arm)
	}
	return cal, skipped, nil
}

func readResultFacts(path string) (resultFacts, error) {
	var f resultFacts
	data, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
