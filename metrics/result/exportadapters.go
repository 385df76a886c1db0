package result

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sweep/configs"
	"sweep/internal/pyjson"
	"sweep/metrics/aiperf"
)

// This file normalises aiperf's server_metrics_export.json into
// ServerMetrics the way InferenceX's backend adapters do. The adapters are
// tried in InferenceX's order: dynamo-vllm, atom, sglang, vllm.

// UnsupportedBackendError is returned when server metrics were exported
// but no adapter recognises them.
type UnsupportedBackendError struct {
	Framework configs.Engine
	Preview   []string // the first ten metric names, sorted
}

func (e *UnsupportedBackendError) Error() string {
	return fmt.Sprintf("unsupported agentic server metrics backend; framework=%q, metric_names=[%s]",
		strings.ToLower(string(e.Framework)), strings.Join(e.Preview, ", "))
}

var (
	keysCounter = []string{"total", "sum", "max", "avg"}
	keysGauge   = []string{"max", "avg", "total"}
	keysAvgGau  = []string{"avg", "max", "total"}
	keysCap     = []string{"max", "avg", "total", "sum"}
)

type seriesFilter func(*aiperf.ExportedSeries) bool

type exportView map[string]*aiperf.ExportedMetric

func (v exportView) series(names ...string) []*aiperf.ExportedSeries {
	var out []*aiperf.ExportedSeries
	for _, n := range names {
		m := v[n]
		if m == nil {
			continue
		}
		for i := range m.Series {
			out = append(out, &m.Series[i])
		}
	}
	return out
}

// sum adds the first available stat of every series (InferenceX sum_stat).
func (v exportView) sum(names []string, keys []string, filter seriesFilter) *float64 {
	total, found := 0.0, false
	for _, s := range v.series(names...) {
		if filter != nil && !filter(s) {
			continue
		}
		if x, ok := s.Stat(keys...); ok {
			total += x
			found = true
		}
	}
	if !found {
		return nil
	}
	return &total
}

// gauge combines the first available stat of every series by max, avg or
// sum (InferenceX gauge_stat).
func (v exportView) gauge(names []string, keys []string, combine string, filter seriesFilter) *float64 {
	var vals []float64
	for _, s := range v.series(names...) {
		if filter != nil && !filter(s) {
			continue
		}
		if x, ok := s.Stat(keys...); ok {
			vals = append(vals, x)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	var r float64
	switch combine {
	case "avg":
		var m moments
		for _, x := range vals {
			m.add(x)
		}
		r = m.mean()
	case "sum":
		for _, x := range vals {
			r += x
		}
	default:
		r = vals[0]
		for _, x := range vals[1:] {
			if x > r {
				r = x
			}
		}
	}
	return &r
}

// byLabel sums series per value of the first present label key.
func (v exportView) byLabel(name string, labelKeys []string, keys []string) FloatMap {
	var out FloatMap
	for _, s := range v.series(name) {
		label, ok := "", false
		for _, k := range labelKeys {
			if label, ok = s.Labels[k]; ok {
				break
			}
		}
		if !ok {
			continue
		}
		if x, ok := s.Stat(keys...); ok {
			out.Add(label, x)
		}
	}
	return out
}

func labelEquals(key, value string) seriesFilter {
	return func(s *aiperf.ExportedSeries) bool {
		v, ok := s.Labels[key]
		return ok && v == value
	}
}

func names(n ...string) []string { return n }

// ratio is numerator/denominator when both exist and the denominator is
// positive.
func ratio(num, den *float64) *float64 {
	if num == nil || den == nil || *den <= 0 {
		return nil
	}
	r := *num / *den
	return &r
}

// normalizeFraction turns a 0-100 percentage into 0-1 (values above 1.5).
func normalizeFraction(v *float64) *float64 {
	if v == nil || *v <= 1.5 {
		return v
	}
	r := *v / 100.0
	return &r
}

// counterInt rounds a counter total to an integer, half to even (Python's
// round).
func counterInt(v *float64) *float64 {
	if v == nil {
		return nil
	}
	r := math.RoundToEven(*v)
	return &r
}

// exportAdapter reads one engine's metrics out of an export: populate
// fills sm and returns the prompt and generation token totals it found;
// kvPool, when set, reads the GPU KV pool size from an engine log.
type exportAdapter struct {
	populate func(v exportView, sm *ServerMetrics) (promptTotal, genTotal *float64)
	kvPool   func(log string) (tokens int64, ok bool)
}

// exportAdapters are InferenceX's backend adapters by the name the engine
// table gives each engine's (configs.EngineFacts.ExportAdapter). They are
// per-engine code, so they live beside the code they call; which engine
// an export is, and which adapter reads it, come from the engine table.
var exportAdapters = map[string]exportAdapter{
	"sglang": {populateSGLang, SGLangKVPoolFromLog},
	"vllm": {func(v exportView, sm *ServerMetrics) (*float64, *float64) {
		return populateVLLM(v, sm, false)
	}, VLLMKVPoolFromLog},
	"dynamo-vllm": {func(v exportView, sm *ServerMetrics) (*float64, *float64) {
		p, g := populateVLLM(v, sm, true)
		populateDynamo(v, sm)
		return p, g
	}, VLLMKVPoolFromLog},
	"atom": {populate: populateAtom},
}

// detectExportBackend picks the adapter as InferenceX's detect_backend does
// (configs.DetectEngine; the framework is compared in lower case).
func detectExportBackend(v exportView, framework configs.Engine) configs.Engine {
	has := func(prefixes ...string) bool {
		for n := range v {
			for _, p := range prefixes {
				if strings.HasPrefix(n, p) {
					return true
				}
			}
		}
		return false
	}
	return configs.DetectEngine(has, len(v) == 0, configs.Engine(strings.ToLower(string(framework))))
}

// serverMetrics builds server_metrics from the export (nil = missing).
func serverMetrics(exp *aiperf.ServerMetricsExport, framework configs.Engine, recs []*aiperf.Record, logs []string) (ServerMetrics, []string, error) {
	var v exportView
	if exp != nil {
		v = exp.Metrics
	}
	sm := ServerMetrics{Present: len(v) > 0, Adapter: "none", MetricCount: len(v), Sources: []Source{}}
	var warnings []string
	adapter := detectExportBackend(v, framework)
	var promptTotal, genTotal *float64

	if len(v) == 0 {
		warnings = append(warnings, "server_metrics_export.json missing or empty")
	} else {
		if adapter == "" {
			return sm, nil, &UnsupportedBackendError{Framework: framework, Preview: previewNames(v)}
		}
		sm.Adapter = string(adapter)
		if populate := exportAdapters[adapter.Facts().ExportAdapter].populate; populate != nil {
			promptTotal, genTotal = populate(v, &sm)
		}
	}
	if parse := exportAdapters[adapter.Facts().ExportAdapter].kvPool; parse != nil {
		if n, ok := sumLogCapacities(logs, parse); ok {
			sm.KVCache.GPUTotalTokens = pyjson.RoundedPtr(float64(n))
		}
	}
	// Profile totals fill what the engine did not export.
	if promptTotal == nil {
		if s, ok := recordTokenSum(recs, pickISL); ok {
			promptTotal = &s
		}
	}
	if genTotal == nil {
		if s, ok := recordTokenSum(recs, pickOSL); ok {
			genTotal = &s
		}
	}
	if sm.Tokens.PromptTotal == nil {
		sm.Tokens.PromptTotal = pyjson.OptRounded(promptTotal)
	}
	if sm.Tokens.GenerationTotal == nil {
		sm.Tokens.GenerationTotal = pyjson.OptRounded(genTotal)
	}
	sm.Tokens.RequestsCompleted = pyjson.RoundedPtr(float64(len(recs)))
	return sm, warnings, nil
}

func previewNames(v exportView) []string {
	n := make([]string, 0, len(v))
	for k := range v {
		n = append(n, k)
	}
	sort.Strings(n)
	if len(n) > 10 {
		n = n[:10]
	}
	return n
}

func recordTokenSum(recs []*aiperf.Record, pick func(*aiperf.RecordMetrics) *aiperf.MetricValue) (float64, bool) {
	var total int64
	found := false
	for _, r := range recs {
		m := pick(&r.Metrics)
		if m == nil || !m.Value.Present() {
			continue
		}
		if v, ok := m.Value.Int(); ok {
			total += v
			found = true
		}
	}
	return float64(total), found
}

func populateSGLang(v exportView, sm *ServerMetrics) (prompt, gen *float64) {
	promptRaw := v.sum(names("sglang:prompt_tokens"), keysCounter, nil)
	genRaw := v.sum(names("sglang:generation_tokens"), keysCounter, nil)
	prompt, gen = counterInt(promptRaw), counterInt(genRaw)

	bySource := v.byLabel("sglang:cached_tokens", names("cache_source"), keysCounter)
	device, hasDevice := bySource.Get("device")
	host, hasHost := bySource.Get("host")
	var devP, hostP *float64
	if hasDevice {
		devP = &device
	}
	if hasHost {
		hostP = &host
	}
	c := &sm.Cache
	gpu := ratio(devP, promptRaw)
	cpu := ratio(hostP, promptRaw)
	overall := ratio(bySource.Sum(), promptRaw)
	if overall == nil {
		overall = normalizeFraction(v.gauge(names("sglang:cache_hit_rate"), keysAvgGau, "avg", nil))
	}
	c.GPUCacheHitRate, c.CPUCacheHitRate, c.ExternalCacheHitRate = pyjson.OptRounded(gpu), pyjson.OptRounded(cpu), pyjson.OptRounded(cpu)
	c.OverallCacheHitRate = pyjson.OptRounded(overall)
	c.CachedTokensBySource = bySource

	hostUsed := v.gauge(names("sglang:hicache_host_used_tokens"), keysGauge, "max", nil)
	hostTotal := v.gauge(names("sglang:hicache_host_total_tokens"), keysGauge, "max", nil)
	kv := &sm.KVCache
	kv.GPUUsagePct = pyjson.OptRounded(normalizeFraction(v.gauge(names("sglang:token_usage"), keysGauge, "max", nil)))
	kv.GPUTotalTokens = pyjson.OptRounded(counterInt(v.sum(names("sglang:max_total_num_tokens"), keysCap, nil)))
	kv.CPUUsagePct = pyjson.OptRounded(ratio(hostUsed, hostTotal))
	kv.CPUUsedTokens, kv.CPUTotalTokens = pyjson.OptRounded(hostUsed), pyjson.OptRounded(hostTotal)

	computed := v.sum(names("sglang:realtime_tokens"), keysCounter, labelEquals("mode", "prefill_compute"))
	sm.Tokens.PromptTotal, sm.Tokens.GenerationTotal = pyjson.OptRounded(prompt), pyjson.OptRounded(gen)
	sm.Tokens.PromptBySource = PromptBySource{
		GPUCacheHit: pyjson.OptRounded(devP), CPUOrExternalCacheHit: pyjson.OptRounded(hostP),
		Computed: pyjson.OptRounded(computed), Raw: bySource,
	}
	return prompt, gen
}

func firstCounterTotal(v exportView, ns ...string) *float64 {
	for _, n := range ns {
		if s := v.sum(names(n), keysCounter, nil); s != nil {
			return s
		}
	}
	return nil
}

func populateVLLM(v exportView, sm *ServerMetrics, dynamo bool) (prompt, gen *float64) {
	var promptRaw, genRaw *float64
	if dynamo {
		promptRaw = firstCounterTotal(v, "dynamo_frontend_input_sequence_tokens", "vllm:prompt_tokens")
		genRaw = firstCounterTotal(v, "dynamo_frontend_output_tokens", "vllm:generation_tokens")
	} else {
		promptRaw = v.sum(names("vllm:prompt_tokens"), keysCounter, nil)
		genRaw = v.sum(names("vllm:generation_tokens"), keysCounter, nil)
	}
	prompt, gen = counterInt(promptRaw), counterInt(genRaw)

	hits := v.sum(names("vllm:prefix_cache_hits"), keysCounter, nil)
	queries := v.sum(names("vllm:prefix_cache_queries"), keysCounter, nil)
	gpu := ratio(hits, queries)
	extHits := v.sum(names("vllm:external_prefix_cache_hits"), keysCounter, nil)
	extQueries := v.sum(names("vllm:external_prefix_cache_queries"), keysCounter, nil)
	ext := ratio(extHits, extQueries)
	cpu := ext
	var overall *float64

	bySource := v.byLabel("vllm:prompt_tokens_by_source", names("source"), keysCounter)
	if bySource.Len() > 0 {
		get := func(k string) *float64 {
			if x, ok := bySource.Get(k); ok {
				return &x
			}
			return nil
		}
		local, transfer, compute := get("local_cache_hit"), get("external_kv_transfer"), get("local_compute")
		if total := *bySource.Sum(); total > 0 {
			if local != nil {
				gpu = ratio(local, &total)
			}
			if transfer != nil {
				cpu = ratio(transfer, &total)
				ext = cpu
			}
			cached := 0.0
			if local != nil {
				cached += *local
			}
			if transfer != nil {
				cached += *transfer
			}
			overall = ratio(&cached, &total)
		}
		sm.Tokens.PromptBySource = PromptBySource{
			GPUCacheHit: pyjson.OptRounded(local), CPUOrExternalCacheHit: pyjson.OptRounded(transfer),
			Computed: pyjson.OptRounded(compute), Raw: bySource,
		}
	} else if gpu != nil {
		overall = gpu
	}
	usageNames := names("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
	sm.KVCache.GPUUsagePct = pyjson.OptRounded(normalizeFraction(v.gauge(usageNames, keysGauge, "max", nil)))
	sm.KVCache.CPUUsagePct = pyjson.OptRounded(normalizeFraction(v.gauge(names("vllm:cpu_kv_cache_usage_perc"), keysGauge, "max", nil)))

	o := &sm.KVOffload
	bg2c := v.sum(names("vllm:kv_offload_bytes_gpu_to_cpu"), keysCounter, nil)
	bc2g := v.sum(names("vllm:kv_offload_bytes_cpu_to_gpu"), keysCounter, nil)
	tg2c := v.sum(names("vllm:kv_offload_time_gpu_to_cpu"), keysCounter, nil)
	tc2g := v.sum(names("vllm:kv_offload_time_cpu_to_gpu"), keysCounter, nil)
	o.BytesGPUToCPU, o.BytesCPUToGPU = pyjson.OptRounded(bg2c), pyjson.OptRounded(bc2g)
	o.TimeGPUToCPU, o.TimeCPUToGPU = pyjson.OptRounded(tg2c), pyjson.OptRounded(tc2g)
	o.BandwidthGPUToCPUBytesPerSecond = pyjson.OptRounded(ratio(bg2c, tg2c))
	o.BandwidthCPUToGPUBytesPerSecond = pyjson.OptRounded(ratio(bc2g, tc2g))

	c := &sm.Cache
	c.GPUCacheHitRate, c.CPUCacheHitRate = pyjson.OptRounded(gpu), pyjson.OptRounded(cpu)
	c.ExternalCacheHitRate, c.OverallCacheHitRate = pyjson.OptRounded(ext), pyjson.OptRounded(overall)
	c.PrefixCacheHits, c.PrefixCacheQueries = pyjson.OptRounded(hits), pyjson.OptRounded(queries)
	c.ExternalPrefixCacheHits, c.ExternalPrefixCacheQueries = pyjson.OptRounded(extHits), pyjson.OptRounded(extQueries)
	sm.Tokens.PromptTotal, sm.Tokens.GenerationTotal = pyjson.OptRounded(prompt), pyjson.OptRounded(gen)
	sm.Sources = vllmSources(v)
	return prompt, gen
}

func populateDynamo(v exportView, sm *ServerMetrics) {
	usage := normalizeFraction(v.gauge(names("dynamo_component_gpu_cache_usage_percent"), keysGauge, "max", nil))
	if sm.KVCache.GPUUsagePct == nil {
		sm.KVCache.GPUUsagePct = pyjson.OptRounded(usage)
	}
	cached := v.sum(names("dynamo_frontend_cached_tokens"), keysCounter, nil)
	input := v.sum(names("dynamo_frontend_input_sequence_tokens"), keysCounter, nil)
	frontend := ratio(cached, input)
	routerKV := normalizeFraction(v.gauge(names("dynamo_component_router_kv_hit_rate"), keysAvgGau, "avg", nil))
	routerShared := normalizeFraction(v.gauge(names("dynamo_component_router_shared_cache_hit_rate"), keysAvgGau, "avg", nil))
	// InferenceX falls back to frontend/router rates for its internal flat
	// overall rate only; the written server_metrics.cache keeps the vLLM one.
	c := &sm.Cache
	c.FrontendCacheHitRate, c.RouterKVHitRate = pyjson.OptRounded(frontend), pyjson.OptRounded(routerKV)
	c.RouterSharedCacheHitRate = pyjson.OptRounded(routerShared)
	c.FrontendCachedTokens, c.FrontendInputTokens = pyjson.OptRounded(cached), pyjson.OptRounded(input)
}

func atomNames(suffix string) []string { return names("atom:"+suffix, "atom_"+suffix) }

func atomCounterNames(stem string) []string {
	return append(atomNames(stem), atomNames(stem+"_total")...)
}

func populateAtom(v exportView, sm *ServerMetrics) (prompt, gen *float64) {
	prompt = counterInt(v.sum(atomCounterNames("prompt_tokens"), keysCounter, nil))
	gen = counterInt(v.sum(atomCounterNames("generation_tokens"), keysCounter, nil))
	cached := v.sum(atomCounterNames("prefix_cache_cached_tokens"), keysCounter, nil)
	full := v.sum(atomCounterNames("prefix_cache_full_tokens"), keysCounter, nil)
	hit := ratio(cached, full)
	extTokens := v.sum(atomCounterNames("lmcache_loaded_tokens"), keysCounter, nil)
	ext := ratio(extTokens, full)
	c := &sm.Cache
	c.GPUCacheHitRate, c.CPUCacheHitRate, c.ExternalCacheHitRate = pyjson.OptRounded(hit), pyjson.OptRounded(ext), pyjson.OptRounded(ext)
	c.OverallCacheHitRate = pyjson.OptRounded(hit)
	c.PrefixCacheHits, c.PrefixCacheQueries = pyjson.OptRounded(cached), pyjson.OptRounded(full)
	c.ExternalPrefixCacheHits, c.ExternalPrefixCacheQueries = pyjson.OptRounded(extTokens), pyjson.OptRounded(full)
	sm.KVCache.GPUUsagePct = pyjson.OptRounded(normalizeFraction(v.gauge(atomNames("kv_cache_usage_ratio"), keysGauge, "max", nil)))
	sm.Tokens.PromptTotal, sm.Tokens.GenerationTotal = pyjson.OptRounded(prompt), pyjson.OptRounded(gen)
	return prompt, gen
}

// sourceID names the engine or component a vLLM series comes from.
func sourceID(s *aiperf.ExportedSeries) string {
	comp := s.Labels["dynamo_component"]
	if comp == "" {
		comp = s.Labels["component"]
	}
	role := "combined"
	switch comp {
	case "prefill":
		role = "prefill"
	case "backend", "decode":
		role = "decode"
	case "frontend", "router":
		role = "router"
	}
	parts := []string{role}
	if s.EndpointURL != "" {
		parts = append(parts, s.EndpointURL)
	}
	for _, k := range []string{"worker_id", "dp_rank", "engine"} {
		if val, ok := s.Labels[k]; ok {
			parts = append(parts, k+"="+val)
		}
	}
	return strings.Join(parts, "|")
}

func vllmSources(v exportView) []Source {
	ids := map[string]bool{}
	for _, n := range []string{"vllm:prompt_tokens", "vllm:generation_tokens", "vllm:prefix_cache_hits",
		"vllm:prefix_cache_queries", "vllm:kv_cache_usage_perc", "vllm:prompt_tokens_by_source"} {
		for _, s := range v.series(n) {
			ids[sourceID(s)] = true
		}
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		if id != "" {
			sorted = append(sorted, id)
		}
	}
	sort.Strings(sorted)
	out := []Source{}
	for _, id := range sorted {
		match := func(s *aiperf.ExportedSeries) bool { return sourceID(s) == id }
		hits := v.sum(names("vllm:prefix_cache_hits"), keysCounter, match)
		queries := v.sum(names("vllm:prefix_cache_queries"), keysCounter, match)
		role, _, _ := strings.Cut(id, "|")
		out = append(out, Source{
			ID:                 id,
			Role:               role,
			PromptTokens:       pyjson.OptRounded(v.sum(names("vllm:prompt_tokens"), keysCounter, match)),
			GenerationTokens:   pyjson.OptRounded(v.sum(names("vllm:generation_tokens"), keysCounter, match)),
			PrefixCacheHitRate: pyjson.OptRounded(ratio(hits, queries)),
			GPUKVCacheUsagePct: pyjson.OptRounded(normalizeFraction(v.gauge(names("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"), keysGauge, "max", match))),
		})
	}
	return out
}
