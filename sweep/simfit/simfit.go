// Package simfit fits the simulated engine (sweep/simengine) to measured
// results: `sweep sim calibrate RESULTS_DIR` reads a discovery's or an
// official run's results, groups them into arms as sweep knees does
// (knee.Read) and fits each arm's step-cost scale and KV pool per rank
// (simengine.ArmCalibration; the results report the pool summed over
// the ranks: perRank), the calibration `--sim-calibration FILE`
// hands every simulated engine; a disaggregated arm's per worker role
// (its prefill workers' and its decode workers', ArmCalibration.Role),
// from the worker commands and the per-worker server metrics beside
// each point (disagg.go).
//
//	planned, err := simfit.PlanArms(generator) // the recipes' commands and golden ALs
//	cal, skipped, err := simfit.FitResults(ctx, dir, simfit.Options{Planned: planned})
package simfit

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
	"sweep/internal/pyjson"
	"sweep/internal/simproto"
	"sweep/metrics/aiperf"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/recipes/models"
	"sweep/simengine"
	"sweep/sweep/knee"
	"sweep/sweep/run"
)

// pinnedUsage is the KV usage from which a point is taken to be past the
// pool's capacity: its steps recompute evicted prefixes, which the step
// model does not describe, so the fit leaves it out. An arm with a host
// KV tier is judged by the retractions its results record instead, else
// by its requests' own context (pinned, pastDevicePool).
const pinnedUsage = 0.95

// pastDevicePool says why a point of an arm with a host KV tier (SGLang
// HiCache, LMCache, Mooncake) is past its device pool of pool tokens per
// rank over ranks DP ranks ("" when it is not). Such an arm's device pool
// sits full by design: it caches the prefixes of idle sessions and the
// tier keeps those it evicts, which the next turn loads back rather than
// recomputes, so the pool's usage says nothing of a limit (it read 98-100
// % at every point of the B300 DeepSeek-V4 HiCache arm, whose prefixes
// hit at 93-94 %, and no such arm could be fitted). What does limit it is
// the device pool holding the requests in flight themselves: when their
// context (p.CtxTokens, a rank's share) reaches pinnedUsage of a rank's
// pool, the engine retracts requests and recomputes them, tier or not.
func pastDevicePool(p simengine.FitPoint, pool, ranks int) string {
	perRank := p.CtxTokens / float64(max(ranks, 1))
	if perRank < pinnedUsage*float64(pool) {
		return ""
	}
	return fmt.Sprintf("the requests in flight decode over %.0f tokens of context per rank, %.1f %% of the device pool's %d, at or past %g %%: the engine retracts requests and recomputes them, which the step model does not describe (the host KV tier keeps evicted prefixes only)",
		perRank, 100*perRank/float64(pool), pool, 100*pinnedUsage)
}

// resultFacts is what the calibration reads of a result file beyond what
// knee reads: the file as result.ReadFile reads it (Python's NaN, a
// number written 6172736.0).
type resultFacts struct{ r result.Result }

// num is an optional number of a result, and whether it is there.
func num(v *pyjson.Rounded) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return float64(*v), true
}

// decodeContext is the context the requests in flight decode over: each
// its prompt and, on average, half its output (a decode step reads the
// running requests' KV, not the cached prefixes of idle sessions that the
// pool's usage also counts); 0 when unknown.
func (f resultFacts) decodeContext(running float64) float64 {
	t := f.r.RequestMetrics.Tokens
	in, ok := num(t.Input.Mean)
	if !ok || running <= 0 {
		return 0
	}
	out, _ := num(t.OutputActual.Mean)
	return running * (in + out/2)
}

// hostTierPool is the device pool the result reports (over every rank:
// perRank) when its
// point, of an arm with a host KV tier (hostKV), is judged by its
// requests' own context against that pool (pastDevicePool) rather than
// by the pool's usage, which such an arm keeps full by design: the result
// reports the pool and the requests' context. 0 when it is not.
func (f resultFacts) hostTierPool(hostKV bool) int {
	pool, ok := num(f.r.KVCachePoolTokens)
	if !hostKV || !ok || pool <= 0 || f.decodeContext(f.running()) <= 0 {
		return 0
	}
	return int(pool)
}

// prefill is the uncached prompt tokens computed per second, per request,
// and the cached context a request's computed tokens follow; 0 when
// unknown.
func (f resultFacts) prefill() (perSecond, perRequest, context float64) {
	t := f.r.ServerMetrics.Tokens
	computed := f.computed()
	prompt, okP := num(t.PromptTotal)
	n, okN := num(t.RequestsCompleted)
	d, okD := num(f.r.RequestMetrics.Throughput.DurationSeconds)
	if computed == nil || !okP || !okN || n <= 0 || !okD || d <= 0 {
		return 0, 0, 0
	}
	return *computed / d, *computed / n, (prompt - *computed) / n
}

// computed is the prompt tokens the engine computed: prompt_by_source's
// (SGLang's realtime counter, vLLM's prompt_tokens_by_source), else the
// prompt tokens less vLLM's prefix-cache hits, device and external (an
// engine without the by-source counter); nil when neither is reported.
func (f resultFacts) computed() *float64 {
	t, c := f.r.ServerMetrics.Tokens, f.r.ServerMetrics.Cache
	if v, ok := num(t.PromptBySource.Computed); ok {
		return &v
	}
	prompt, okP := num(t.PromptTotal)
	hits, okH := num(c.PrefixCacheHits)
	if !okP || !okH {
		return nil
	}
	external, _ := num(c.ExternalPrefixCacheHits)
	v := max(prompt-hits-external, 0)
	return &v
}

// running is the requests in flight by Little's law, 0 when unknown.
func (f resultFacts) running() float64 {
	q, okQ := num(f.r.RequestMetrics.QPS.Mean)
	l, okL := num(f.r.RequestMetrics.Latency.E2EL.Mean)
	if !okQ || !okL {
		return 0
	}
	return q * l
}

// gap is the mean time between two of a request's tokens, weighted by
// tokens (simengine.FitPoint.Gap): (mean latency − mean TTFT) / (mean
// output tokens − 1), the per-request records' Σ(latency − TTFT) /
// Σ(output − 1); and decoding, the requests past their first token by
// Little's law (request rate × (mean latency − mean TTFT)). 0 when
// unknown.
func (f resultFacts) gap() (gap, decoding float64) {
	l, t := f.r.RequestMetrics.Latency, f.r.RequestMetrics.Tokens
	e2el, okL := num(l.E2EL.Mean)
	ttft, okT := num(l.TTFT.Mean)
	out, okO := num(t.OutputActual.Mean)
	if !okL || !okT || !okO || out <= 1 || e2el <= ttft {
		return 0, 0
	}
	span := e2el - ttft
	if q, ok := num(f.r.RequestMetrics.QPS.Mean); ok {
		decoding = q * span
	}
	return span / (out - 1), decoding
}

// Options tune FitResults.
type Options struct {
	// Planned is what the shipped recipes plan for each arm (PlanArms):
	// the engine command of an arm whose results have none beside them
	// (InferenceX's own), and the golden acceptance length of a
	// speculative arm's points whose results carry none. nil: neither.
	Planned Planned
}

// Planned is what the shipped recipes plan for arms, by their result
// identity (plannedKey).
type Planned map[string]PlannedArm

// PlannedArm is what the shipped recipe plans for one arm.
type PlannedArm struct {
	// Command is its engine command as a simulated engine gets it
	// (run.PlannedEngineCommand).
	Command run.RecordedCommand
	// GoldenAL is its golden acceptance length (0: not speculative): the
	// value InferenceX's speculative recipes pin the engine's simulated
	// acceptance at (SGLang's SGLANG_SIMULATE_ACC_LEN with match-expected,
	// vLLM's synthetic_acceptance_length), so the acceptance length of
	// their results, which record none.
	GoldenAL float64
}

// plannedKey is the key of an arm in Planned: its identity's values,
// the runner's without the "cluster:" prefix of InferenceX's cluster
// runner labels (results name the runner with or without it: results
// InferenceX's aggregation wrote in the conformance data have
// "b200-dgxc" where the shipped configs' rows have "cluster:b200-dgxc").
func plannedKey(id result.Identity) string {
	parts := make([]string, len(result.IdentityKeys))
	for i, k := range result.IdentityKeys {
		parts[i] = id.Get(k)
		if k == "hw" {
			parts[i] = strings.TrimPrefix(parts[i], "cluster:")
		}
	}
	return strings.Join(parts, " ")
}

// PlanArms plans one point of every single-node agentic arm of g's
// config keys with the shipped recipes: its engine command and golden
// acceptance length. An arm whose point cannot be planned is left out.
// The embedded golden AL curves are read once for every arm (each plan
// read them again: 2.8 s of sim calibrate's 8 s in cmd/sweep's tests under
// the race detector).
func PlanArms(g *matrix.Generator) (Planned, error) {
	golden, err := configs.DefaultGoldenAL()
	if err != nil {
		return nil, err
	}
	opts := recipes.PlanOptions{Catalog: models.Builtin(), Runners: g.Runners, Golden: golden}
	rows, _, err := g.AgenticRows([]string{"*"}, nil, matrix.EvalOptions{NoEvals: true})
	if err != nil {
		return nil, err
	}
	out, seen := Planned{}, map[string]bool{}
	for _, r := range rows {
		key := plannedKey(result.RowIdentity(r))
		if r.Kind != matrix.AgenticSingleNode || seen[key] {
			continue
		}
		seen[key] = true
		points, err := recipes.Plan(matrix.Matrix{r}, opts)
		if err != nil || len(points) != 1 {
			continue
		}
		cmd, err := run.PlannedEngineCommand(&points[0])
		if err != nil {
			continue
		}
		pa := PlannedArm{Command: cmd}
		if points[0].GoldenAL != nil {
			pa.GoldenAL = *points[0].GoldenAL
		}
		out[key] = pa
	}
	return out, nil
}

// basedCommand is an engine command an arm's configuration may be read
// from, and the basis that names it (simengine.BasisCommand,
// BasisPlanned).
type basedCommand struct {
	cmd   run.RecordedCommand
	basis string
}

// armConfig is the simulator configuration an arm's step scale is
// fitted against, and arm.Basis says which: the engine's own, read from
// the first of commands the simulated engine reads (the one sweep writes
// beside every point, then the one the shipped recipe plans for the arm,
// as for InferenceX's own results), since its flags set the step costs
// (a draft model, the batch limits, the cache's dtype), without a
// calibration that run had (the fit is against the model; the caller
// sets the results' pool in place of the model's, a rank's share of it:
// armPool);
// else (no command, or none the simulator reads) the configuration
// rebuilt from the results' identity (ArmCalibration.Config: the spec's
// drafts at the acceptance length al), the basis saying why. From the
// command, the arm takes the engine, model path, GPU, layout and host KV
// tier, cache dtype and draft steps the engine matches a calibration by
// (simengine.Config.CalibrationArm).
func armConfig(arm *simengine.ArmCalibration, commands []basedCommand, spec string, al float64) (simengine.Config, error) {
	var unread []string
	for _, c := range commands {
		cfg, err := commandConfig(c.cmd, arm.GPU)
		if err != nil {
			unread = append(unread, fmt.Sprintf("%s was not read: %v", c.basis, err))
			continue
		}
		a := cfg.CalibrationArm()
		arm.Engine, arm.Model, arm.GPU, arm.TP, arm.EP, arm.DPAttention = a.Engine, a.Model, a.GPU, a.TP, a.EP, a.DPAttention
		arm.HostKV, arm.KVCacheDType, arm.DraftSteps, arm.Basis = a.HostKV, a.KVCacheDType, a.DraftSteps, c.basis+hostTierFrom(c.cmd, cfg)
		if len(unread) > 0 {
			arm.Basis += " (" + strings.Join(unread, "; ") + ")"
		}
		return cfg, nil
	}
	arm.Basis = simengine.BasisIdentity
	if len(unread) > 0 {
		arm.Basis += " (" + strings.Join(unread, "; ") + ")"
	}
	return arm.Config(spec, al)
}

// hostTierFrom says, for the basis, which file sized the host KV tier of
// cfg, the configuration cmd sets: a Mooncake store's config, the one
// beside the results (run.EngineCommand) or the one the recipe plans
// (not written: run.RecordedCommand.Files); "" for none.
func hostTierFrom(cmd run.RecordedCommand, cfg simengine.Config) string {
	path := cmd.Env[simengine.EnvMooncakeConfig]
	switch {
	case path == "" || !cfg.HostKV.Enabled():
		return ""
	case slices.ContainsFunc(cmd.Files, func(f recipes.File) bool { return filepath.Clean(f.Path) == filepath.Clean(path) }):
		return ", its host KV tier from the Mooncake store's config the recipe plans"
	}
	return ", its host KV tier from the Mooncake store's config " + path
}

// commandConfig is the simulator configuration an engine command sets,
// read as the simulated engine reads it (gpu where the command names
// none), without the calibration that run had (a fit is against the
// model).
func commandConfig(cmd run.RecordedCommand, gpu string) (simengine.Config, error) {
	env := map[string]string{}
	maps.Copy(env, cmd.Env)
	delete(env, simproto.EnvCalibration)
	if env[simproto.EnvGPU] == "" {
		env[simproto.EnvGPU] = gpu
	}
	cmd.Env = env
	return cmd.SimConfig(true)
}

// engineLabel names the engine configuration cmd sets: a calibration's
// arm, and the flags that set the step costs the same way at every point.
func engineLabel(cmd run.RecordedCommand, gpu string) (string, error) {
	cfg, err := commandConfig(cmd, gpu)
	if err != nil {
		return "", err
	}
	a := cfg.CalibrationArm()
	// The flags that set the step costs beside the arm's identity: the
	// cache's dtype and the drafts. Not the batch limit, the chunk or the
	// memory fraction: recipes set those per point (the DeepSeek-V4 B300
	// DP-attention recipe's --max-running-requests is 2x conc), and they
	// bound the batch and size the pool, which the fit reads from each
	// point's results.
	return a.Describe(), nil
}

// noALReason is why a speculative arm's point without an acceptance
// length is left out of the fit: a verify step yields AL tokens, so its
// time is the gap × AL, and without the AL it cannot be read (taking 1
// put the scale of an MTP arm too low by its AL, 2.49-3.84 in the
// shipped recipes).
const noALReason = "no acceptance length (speculative decoding: a decode step is ITL × AL)"

// fitPoint is the fit's point of the sample s, whose result file says
// facts, in an arm of poolTokens over every rank (as the result reports
// it: its context is the requests' over every rank) that the recipe plans as
// planned: its gap, requests in flight and decoding, context, prefill and
// acceptance length (measured, else the recipe's golden one, alFrom
// saying so), or why it is left out (its per-request records do not
// read, noALReason, no requests in flight).
func fitPoint(s knee.Sample, facts resultFacts, poolTokens int, planned PlannedArm) (p simengine.FitPoint, alFrom, why string) {
	running := facts.running()
	p = simengine.FitPoint{Conc: s.Conc, ITL: float64(*s.ITL.P50), AL: 1, Running: running, CtxTokens: facts.decodeContext(running)}
	if s.Probe {
		p.ProbeSeconds = s.Seconds
	}
	p.Gap, p.Decoding = facts.gap()
	if p.CtxTokens <= 0 {
		p.CtxTokens = *s.KVUsage * float64(poolTokens)
	}
	p.PrefillPerSecond, p.PrefillTokens, p.PrefillContext = facts.prefill()
	if p.PrefillPerSecond > 0 {
		var err error
		if p.PrefillMidContext, err = prefillMidContext(s.File); err != nil {
			return p, "", "its per-request records do not read: " + err.Error()
		}
	}
	switch {
	case s.AL != nil && s.AL.Measured != nil:
		p.AL = float64(*s.AL.Measured)
	case result.Speculative(facts.r.SpecDecoding) && planned.GoldenAL > 0:
		p.AL = planned.GoldenAL
		alFrom = fmt.Sprintf("the recipe's golden %g at the points without a measured one (the results carry none; InferenceX's recipes pin the engine's acceptance there)", planned.GoldenAL)
	case result.Speculative(facts.r.SpecDecoding):
		return p, "", noALReason
	}
	if p.Running <= 0 {
		return p, "", "no request rate and mean latency (the requests in flight)"
	}
	return p, alFrom, ""
}

// CheckOut checks the file a calibration is to be written to: a new file
// in an existing directory, or a calibration file, which it replaces
// (fitting again to the same file is the usual way). Anything else, a
// result or a directory, is refused: the fit would overwrite it.
func CheckOut(path string) error {
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("--out %s: the directory %s does not exist: create it or name a file in another", path, filepath.Dir(path))
	}
	return atomicfile.CheckReplace(path, atomicfile.Own{Kind: "calibration file", Writer: "sweep sim calibrate", Example: "sim-calibration.json", Is: simengine.IsCalibrationFile})
}

// perRank is a rank's share of a KV pool a result reports: its
// kv_cache_pool_tokens is every rank's pool summed, as the engine logs
// and exports each rank's and InferenceX sums them
// (metrics/result.SGLangKVPoolFromLog, VLLMKVPoolFromLog: SGLang's
// "DPn TPn EPn" ranks, vLLM's EngineCore_DPn engines), while the
// simulator's pool (simengine.Config.MaxTotalTokens) and a
// calibration's (ArmCalibration.PoolTokens) are a rank's. ranks is the
// arm's simengine.Config.Ranks: its DP-attention or data-parallel ranks,
// each with its own pool. Taken as a rank's, a DeepSeek-V4 B300 TP4 DP-attention
// arm's 4 x 3994880 tokens made a calibration of 15979520 per rank.
func perRank(total, ranks int) int { return total / max(ranks, 1) }

// armPool is the KV pool per rank an arm's calibration sets, from the
// pools its points' results report by concurrency (over every rank of
// cfg, the arm's configuration: perRank): the one at its largest
// concurrency, where a pool pins first; and, where they differ, from
// names it and their spread, since the file sets one pool for every point
// while the engine sized it per point (recipes set the batch limit and
// memory fraction per point: the B300 DeepSeek-V4 DP-attention recipe's
// --max-running-requests of 2x conc takes SGLang's per-request state off
// the pool, 3.99 M tokens per rank at c8, 3.93 M at c64). Before, the last point
// read set it, silently. For an arm of more than one rank, from also
// names the division. 0 and "" when no point reports one.
func armPool(pools map[int]int, cfg simengine.Config) (pool int, from string) {
	if len(pools) == 0 {
		return 0, ""
	}
	ranks := cfg.Ranks()
	var division string
	if ranks > 1 {
		what := "data-parallel ranks"
		switch {
		case cfg.Engine == configs.SGLang && cfg.DPAttention:
			what = "DP-attention ranks"
		case cfg.Engine == configs.VLLM:
			what = "data-parallel engines"
		}
		division = fmt.Sprintf("the results' kv_cache_pool_tokens (every rank's pool summed, as the engine logs each) divided by the arm's %d %s", ranks, what)
	}
	per := map[int]int{}
	for c, total := range pools {
		per[c] = perRank(total, ranks)
	}
	concs := slices.Sorted(maps.Keys(per))
	top := concs[len(concs)-1]
	lo, hi := concs[0], concs[0]
	for _, c := range concs {
		if per[c] < per[lo] {
			lo = c
		}
		if per[c] > per[hi] {
			hi = c
		}
	}
	if per[lo] == per[hi] {
		return per[top], division
	}
	from = fmt.Sprintf("c%d's, the arm's largest concurrency: its points report %d (c%d) to %d (c%d) tokens per rank, %.1f %% apart (the engine sized it per point; the file sets one pool for every point)",
		top, per[lo], lo, per[hi], hi, 100*float64(per[hi]-per[lo])/float64(per[hi]))
	if division != "" {
		from += "; " + division
	}
	return per[top], from
}

// mostCommon is the calibration (knee.Sample.SimCalibration) most of
// samples ran under ("" for none), the first met on a tie.
func mostCommon(samples []knee.Sample) string {
	count := map[string]int{}
	best := ""
	for _, s := range samples {
		count[s.SimCalibration]++
		if count[s.SimCalibration] > count[best] {
			best = s.SimCalibration
		}
	}
	return best
}

// orNone is s, or "none" when empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// unusable says why a point is left out of every fit, a disaggregated
// arm's roles' too ("" when it is not): a superseded probe, a result
// made otherwise than the arm's reading (knee.Sample.OtherMeasurement:
// its reason, which says what differed; it did not fail, and was listed
// as "failed: made otherwise ..." before) or a failed point.
func unusable(s knee.Sample) string {
	switch {
	case s.Superseded:
		return "a probe its full-length run superseded"
	case s.OtherMeasurement:
		return s.Excluded
	case s.Excluded != "":
		return "failed: " + s.Excluded
	}
	return ""
}

// unfit says why a point is left out of the fit ("" when it is fitted).
// tiered: the arm has a host KV tier and the point's requests' context and
// device pool are known, so the pool's usage does not decide
// (pastDevicePool does, once the arm's DP ranks are read).
func unfit(s knee.Sample, tiered bool) string {
	if why := unusable(s); why != "" {
		return why
	}
	switch {
	case s.ITL.P50 == nil:
		return "no median inter-token latency"
	case s.KVUsage == nil:
		return "no KV usage"
	case *s.KVUsage >= pinnedUsage && !tiered:
		return fmt.Sprintf("KV usage %.1f %%, at or past %g %%: the pool is pinned and steps recompute evicted prefixes, which the step model does not describe", 100**s.KVUsage, 100*pinnedUsage)
	}
	return ""
}

// pointName names a sample in the fit's output: its concurrency, and its
// length when it was a probe.
func pointName(s knee.Sample) string {
	if s.Probe {
		return fmt.Sprintf("c%d (%.0f s probe)", s.Conc, s.Seconds)
	}
	return fmt.Sprintf("c%d", s.Conc)
}

func readResultFacts(path string) (resultFacts, error) {
	f, err := result.ReadFile(path)
	if err != nil {
		return resultFacts{}, err
	}
	return resultFacts{f.Result}, nil
}

// prefillMidContext is the context a computed prompt token attends to on
// average (simengine.FitPoint.PrefillMidContext), from the per-request
// records beside a result (aiperf's profile_export.jsonl: each profiled
// request's prompt tokens and those the engine served from its prefix
// cache): Σ n·(c + n/2) / Σ n over the requests, n the tokens a request
// computed and c its cached prefix. The prefill's attention grows with
// n·c, so its mean is not the means' product: a session's first turn
// computes its whole prompt with nothing cached, a later turn a few
// thousand tokens after a long cached prefix. 0 (the fit then takes the
// means) when there are no records, or none says what was cached.
func prefillMidContext(resultFile string) (float64, error) {
	path := filepath.Join(aiperf.ResolveArtifactDir(filepath.Dir(resultFile)), aiperf.RecordsFile)
	if _, err := os.Stat(path); err != nil {
		return 0, nil
	}
	f, err := inputfile.Open(path, inputfile.AiperfRecords)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var computed, weighted float64
	err = aiperf.EachRecord(f, path, func(rec *aiperf.Record) error {
		if rec.Warmup() || rec.Failed() {
			return nil
		}
		prompt, cached := rec.Metrics.Get("usage_prompt_tokens"), rec.Metrics.Get("usage_prompt_cache_read_tokens")
		if prompt == nil || cached == nil {
			return nil
		}
		p, okP := prompt.Value.Float()
		c, okC := cached.Value.Float()
		if !okP || !okC || p <= c || c < 0 {
			return nil
		}
		n := p - c
		computed += n
		weighted += n * (c + n/2)
		return nil
	})
	if err != nil || computed <= 0 {
		return 0, err
	}
	return weighted / computed, nil
}
