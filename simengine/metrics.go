package simengine

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/internal/pyjson"
)

// label is one Prometheus label pair; order is kept as written.
type label struct{ k, v string }

// expo writes the Prometheus text exposition format (0.0.4) the way
// Python's prometheus_client does: HELP/TYPE per family, counters named
// with _total, floats in Python's repr ("655360.0", "2.62144e+06").
type expo struct {
	b bytes.Buffer
	// vals collects every sample's value in page order; with values set
	// no text is written (a sample of the virtual clock's log).
	vals   []float64
	values bool
	// index writes each sample's index in vals instead of its value (the
	// virtual clock's log schema: the load generator maps the records'
	// indexes to series by it).
	index bool
}

func (e *expo) head(name, typ, help string) {
	if e.values {
		return
	}
	e.b.WriteString("# HELP ")
	e.b.WriteString(name)
	e.b.WriteByte(' ')
	e.b.WriteString(help)
	e.b.WriteString("\n# TYPE ")
	e.b.WriteString(name)
	e.b.WriteByte(' ')
	e.b.WriteString(typ)
	e.b.WriteByte('\n')
}

func (e *expo) sample(name string, ls []label, v float64) {
	e.vals = append(e.vals, v)
	if e.values {
		return
	}
	e.b.WriteString(name)
	if len(ls) > 0 {
		e.b.WriteByte('{')
		for i, l := range ls {
			if i > 0 {
				e.b.WriteByte(',')
			}
			e.b.WriteString(l.k)
			e.b.WriteString(`="`)
			e.b.WriteString(escapeLabel(l.v))
			e.b.WriteByte('"')
		}
		e.b.WriteByte('}')
	}
	e.b.WriteByte(' ')
	if e.index {
		e.b.WriteString(strconv.Itoa(len(e.vals) - 1))
	} else {
		e.b.WriteString(pyjson.PromFloat(v))
	}
	e.b.WriteByte('\n')
}

func (e *expo) hist(name string, ls []label, h *histogram) {
	cum := 0.0
	if e.values { // the values of the samples below, without their names
		for _, c := range h.counts {
			cum += c
			e.vals = append(e.vals, cum)
		}
		e.vals = append(e.vals, h.sum, h.n)
		return
	}
	for i, c := range h.counts {
		cum += c
		le := "+Inf"
		if e.values {
			le = ""
		} else if i < len(h.bounds) {
			le = pyjson.PromFloat(h.bounds[i])
		}
		e.sample(name+"_bucket", append(slicesClip(ls), label{"le", le}), cum)
	}
	e.sample(name+"_sum", ls, h.sum)
	e.sample(name+"_count", ls, h.n)
}

func slicesClip(ls []label) []label { return ls[:len(ls):len(ls)] }

func escapeLabel(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// snapshot copies a rank's stats under its lock.
func (r *rank) snapshot() stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.st
	for _, h := range []**histogram{&s.ttft, &s.itl, &s.e2e, &s.queue, &s.promptHist, &s.genHist, &s.tpot, &s.inference, &s.prefill, &s.decode, &s.iterTok, &s.maxToks} {
		if *h != nil {
			*h = (*h).clone()
		}
	}
	s.perPos = append([]float64(nil), s.perPos...)
	s.success = map[string]float64{}
	for k, v := range r.st.success {
		s.success[k] = v
	}
	return s
}

// renderMetrics writes the /metrics page of the configured engine.
func (s *Server) renderMetrics() []byte {
	var e expo
	s.renderInto(&e)
	return e.b.Bytes()
}

// renderInto renders the metrics into e and returns their values in
// page order.
func (s *Server) renderInto(e *expo) []float64 {
	snaps := make([]stats, len(s.ranks))
	if e.values {
		// A sample of the virtual clock's log (values only, taken tens of
		// thousands of times a point): the ranks' stats are read in place
		// under their locks instead of cloned.
		for i, r := range s.ranks {
			r.mu.Lock()
			snaps[i] = r.st
		}
		defer func() {
			for _, r := range s.ranks {
				r.mu.Unlock()
			}
		}()
	} else {
		for i, r := range s.ranks {
			snaps[i] = r.snapshot()
		}
	}
	if s.cfg.Engine == configs.SGLang {
		s.renderSGLang(e, snaps)
	} else {
		s.renderVLLM(e, snaps)
	}
	return e.vals
}

func (s *Server) renderSGLang(e *expo, snaps []stats) {
	c := &s.cfg
	model := c.ServedModelName
	sched := func(i int) []label {
		// Each DP rank's attention-TP rank 0 publishes; its global TP rank
		// is dp_rank x attention TP size (0 without DP attention).
		tpRank, epRank := 0, 0
		if c.DPAttention && len(snaps) > 1 {
			tpRank = i * (c.TP / len(snaps))
			if c.EP > 1 {
				epRank = tpRank
			}
		}
		ls := []label{{"model_name", model}, {"engine_type", "unified"}, {"tp_rank", strconv.Itoa(tpRank)}, {"pp_rank", "0"}, {"moe_ep_rank", strconv.Itoa(epRank)}}
		if len(snaps) > 1 {
			ls = append(ls, label{"dp_rank", strconv.Itoa(i)})
		}
		return ls
	}
	gauge := func(name, help string, f func(st *stats) float64) {
		e.head("sglang:"+name, "gauge", help)
		for i := range snaps {
			e.sample("sglang:"+name, sched(i), f(&snaps[i]))
		}
	}
	startup := max(s.cfg.LoadTime, 0).Seconds()
	gauge("num_running_reqs", "The number of running requests.", func(st *stats) float64 { return float64(st.running) })
	gauge("num_queue_reqs", "The number of requests in the waiting queue.", func(st *stats) float64 { return float64(st.waiting) })
	gauge("num_grammar_queue_reqs", "The number of requests in the grammar waiting queue.", func(*stats) float64 { return 0 })
	gauge("gen_throughput", "The generation throughput (token/s).", func(st *stats) float64 { return st.genTP })
	gauge("token_usage", "The token usage.", func(st *stats) float64 { return float64(st.used) / float64(max(st.pool, 1)) })
	gauge("full_token_usage", "The token usage of the full attention pool.", func(st *stats) float64 { return float64(st.used) / float64(max(st.pool, 1)) })
	gauge("num_used_tokens", "The number of used tokens.", func(st *stats) float64 { return float64(st.used) })
	gauge("kv_used_tokens", "The number of KV tokens held by running requests.", func(st *stats) float64 { return float64(st.used) })
	gauge("kv_available_tokens", "The number of free KV tokens.", func(st *stats) float64 { return float64(st.available) })
	gauge("kv_evictable_tokens", "The number of evictable KV tokens in the prefix cache.", func(st *stats) float64 { return float64(st.evictable) })
	gauge("cache_hit_rate", "The prefix cache hit rate.", func(st *stats) float64 { return st.cacheHitRate })
	gauge("decode_sum_seq_lens", "The sum of all sequence lengths in decode.", func(st *stats) float64 { return float64(st.decodeSumSeqLens) })
	gauge("spec_accept_length", "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).", func(st *stats) float64 { return st.specAcceptLength })
	gauge("spec_accept_rate", "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).", func(st *stats) float64 { return st.specAcceptRate })
	if c.Spec.Enabled() {
		gauge("spec_num_steps", "The number of speculative steps.", func(*stats) float64 { return float64(c.Spec.NumSteps) })
		gauge("spec_num_draft_tokens", "The number of speculative draft tokens.", func(*stats) float64 { return float64(c.Spec.NumDraftTokens) })
	}
	gauge("max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", func(st *stats) float64 { return float64(st.pool) })
	gauge("page_size", "The KV cache page size.", func(*stats) float64 { return float64(c.PageSize) })
	gauge("num_pages", "The number of KV cache pages.", func(st *stats) float64 { return float64(st.pool / c.PageSize) })
	gauge("context_len", "The context length.", func(*stats) float64 { return float64(c.ContextLength) })
	gauge("utilization", "The utilization.", func(st *stats) float64 { return b2f(st.running > 0) })
	gauge("is_cuda_graph", "Whether the batch is using CUDA graph.", func(*stats) float64 { return 1 })
	gauge("engine_startup_time", "The time taken for the engine to start up.", func(*stats) float64 { return startup })
	gauge("engine_load_weights_time", "The time taken for the engine to load weights.", func(*stats) float64 { return startup * 0.7 })
	pid := strconv.Itoa(os.Getpid())
	for _, name := range []string{"num_retracted_reqs", "num_paused_reqs"} {
		e.head("sglang:"+name, "gauge", "The number of "+strings.TrimPrefix(name, "num_")+".")
		for i := range snaps {
			e.sample("sglang:"+name, append(sched(i), label{"pid", pid}), 0)
		}
	}
	counter := func(name, help string, f func(st *stats) float64) {
		e.head("sglang:"+name, "counter", help)
		for i := range snaps {
			e.sample("sglang:"+name, sched(i), f(&snaps[i]))
		}
	}
	counter("num_retracted_requests_total", "Number of retracted requests.", func(st *stats) float64 { return st.retracted })
	counter("num_retracted_input_tokens_total", "Number of retracted input tokens.", func(st *stats) float64 { return st.retractedIn })
	counter("num_retracted_output_tokens_total", "Number of retracted output tokens.", func(st *stats) float64 { return st.retractedOut })
	e.head("sglang:realtime_tokens_total", "counter", "Total number of tokens processed, updated in real time.")
	for i := range snaps {
		st := &snaps[i]
		for _, m := range []struct {
			mode string
			v    float64
		}{{"prefill_compute", st.rtPrefillCompute}, {"prefill_cache", st.rtPrefillCache}, {"decode", st.rtDecode}} {
			e.sample("sglang:realtime_tokens_total", append(sched(i), label{"mode", m.mode}), m.v)
		}
	}
	e.head("sglang:forward_execution_seconds_total", "counter", "Forward execution time in seconds by category.")
	for i := range snaps {
		e.sample("sglang:forward_execution_seconds_total", append(sched(i), label{"category", "prefill"}), snaps[i].fwdPrefill)
		e.sample("sglang:forward_execution_seconds_total", append(sched(i), label{"category", "decode"}), snaps[i].fwdDecode)
	}
	e.head("sglang:cuda_graph_passes_total", "counter", "Number of forward passes by CUDA graph mode.")
	for i := range snaps {
		e.sample("sglang:cuda_graph_passes_total", append(sched(i), label{"mode", "decode_cuda_graph"}), snaps[i].decodePasses)
	}
	e.head("sglang:queue_time_seconds", "histogram", "Histogram of queueing time in seconds.")
	for i := range snaps {
		e.hist("sglang:queue_time_seconds", sched(i), snaps[i].queue)
	}

	// Tokenizer metrics: one series for the whole server.
	tok := []label{{"model_name", model}, {"engine_type", "unified"}}
	var sum stats
	sum.init(c)
	for i := range snaps {
		st := &snaps[i]
		sum.promptTokens += st.promptTokens
		sum.genTokens += st.genTokens
		sum.cachedTokens += st.cachedTokens
		sum.requests += st.requests
		sum.aborted += st.aborted
		sum.verifyCalls += st.verifyCalls
		sum.ttft.add(st.ttft)
		sum.itl.add(st.itl)
		sum.e2e.add(st.e2e)
		sum.promptHist.add(st.promptHist)
		sum.genHist.add(st.genHist)
	}
	for _, m := range []struct {
		name, help string
		v          float64
	}{
		{"prompt_tokens_total", "Number of prefill tokens processed.", sum.promptTokens},
		{"generation_tokens_total", "Number of generation tokens processed.", sum.genTokens},
		{"cached_tokens_total", "Number of cached prompt tokens.", sum.cachedTokens},
		{"num_requests_total", "Number of requests processed.", sum.requests},
		{"num_so_requests_total", "Number of structured output requests processed.", 0},
		{"num_aborted_requests_total", "Number of requests aborted.", sum.aborted},
		{"spec_verify_calls_total", "Number of speculative decoding verification calls.", sum.verifyCalls},
	} {
		e.head("sglang:"+m.name, "counter", m.help)
		e.sample("sglang:"+m.name, tok, m.v)
	}
	for _, h := range []struct {
		name, help string
		h          *histogram
	}{
		{"time_to_first_token_seconds", "Histogram of time to first token in seconds.", sum.ttft},
		{"inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", sum.itl},
		{"e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", sum.e2e},
		{"prompt_tokens_histogram", "Histogram of prompt token length.", sum.promptHist},
		{"generation_tokens_histogram", "Histogram of generation token length.", sum.genHist},
	} {
		e.head("sglang:"+h.name, "histogram", h.help)
		e.hist("sglang:"+h.name, tok, h.h)
	}
}

func (s *Server) renderVLLM(e *expo, snaps []stats) {
	c := &s.cfg
	lbl := func(i int, extra ...label) []label {
		return append([]label{{"model_name", c.ServedModelName}, {"engine", strconv.Itoa(i)}}, extra...)
	}
	each := func(name, typ, help string, f func(i int, st *stats)) {
		e.head("vllm:"+name, typ, help)
		for i := range snaps {
			f(i, &snaps[i])
		}
	}
	simple := func(name, typ, help string, v func(st *stats) float64) {
		each(name, typ, help, func(i int, st *stats) { e.sample("vllm:"+name, lbl(i), v(st)) })
	}
	simple("num_requests_running", "gauge", "Number of requests in model execution batches.", func(st *stats) float64 { return float64(st.running) })
	simple("num_requests_waiting", "gauge", "Number of requests waiting to be processed.", func(st *stats) float64 { return float64(st.waiting) })
	simple("kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", func(st *stats) float64 { return float64(st.used) / float64(max(st.pool, 1)) })
	each("cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", func(i int, st *stats) {
		e.sample("vllm:cache_config_info", lbl(i,
			label{"block_size", strconv.Itoa(c.PageSize)},
			label{"cache_dtype", cmp.Or(c.KVCacheDType, "auto")},
			label{"enable_prefix_caching", strconv.FormatBool(!c.NoPrefixCache)},
			label{"gpu_memory_utilization", strconv.FormatFloat(c.MemFraction, 'g', -1, 64)},
			label{"num_gpu_blocks", strconv.Itoa(st.pool / c.PageSize)},
		), 1)
	})
	simple("prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", func(st *stats) float64 { return st.prefixQueries })
	simple("prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", func(st *stats) float64 { return st.prefixHits })
	simple("num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", func(st *stats) float64 { return st.preemptions })
	simple("prompt_tokens_total", "counter", "Number of prefill tokens processed.", func(st *stats) float64 { return st.vPrompt })
	each("prompt_tokens_by_source_total", "counter", "Number of prompt tokens by source.", func(i int, st *stats) {
		for _, src := range []struct {
			name string
			v    float64
		}{{"local_compute", st.srcCompute}, {"local_cache_hit", st.srcLocal}, {"external_kv_transfer", st.srcExternal}} {
			e.sample("vllm:prompt_tokens_by_source_total", lbl(i, label{"source", src.name}), src.v)
		}
	})
	simple("generation_tokens_total", "counter", "Number of generation tokens processed.", func(st *stats) float64 { return st.vGen })
	each("request_success_total", "counter", "Count of successfully processed requests.", func(i int, st *stats) {
		for _, r := range []string{"stop", "length", "abort"} {
			e.sample("vllm:request_success_total", lbl(i, label{"finished_reason", r}), st.success[r])
		}
	})
	if c.Spec.Enabled() {
		simple("spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.", func(st *stats) float64 { return st.drafts })
		simple("spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.", func(st *stats) float64 { return st.draftTokens })
		simple("spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.", func(st *stats) float64 { return st.accepted })
		each("spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted tokens per draft position.", func(i int, st *stats) {
			for p, v := range st.perPos {
				e.sample("vllm:spec_decode_num_accepted_tokens_per_pos_total", lbl(i, label{"position", strconv.Itoa(p)}), v)
			}
		})
	}
	for _, h := range []struct {
		name, help string
		h          func(st *stats) *histogram
	}{
		{"time_to_first_token_seconds", "Histogram of time to first token in seconds.", func(st *stats) *histogram { return st.ttft }},
		{"inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", func(st *stats) *histogram { return st.itl }},
		{"request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", func(st *stats) *histogram { return st.tpot }},
		{"e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", func(st *stats) *histogram { return st.e2e }},
		{"request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", func(st *stats) *histogram { return st.queue }},
		{"request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", func(st *stats) *histogram { return st.inference }},
		{"request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", func(st *stats) *histogram { return st.prefill }},
		{"request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", func(st *stats) *histogram { return st.decode }},
		{"request_prompt_tokens", "Number of prefill tokens processed.", func(st *stats) *histogram { return st.promptHist }},
		{"request_generation_tokens", "Number of generation tokens processed.", func(st *stats) *histogram { return st.genHist }},
		{"iteration_tokens_total", "Histogram of number of tokens per engine_step.", func(st *stats) *histogram { return st.iterTok }},
		{"request_params_max_tokens", "Histogram of the max_tokens request parameter.", func(st *stats) *histogram { return st.maxToks }},
	} {
		each(h.name, "histogram", h.help, func(i int, st *stats) { e.hist("vllm:"+h.name, lbl(i), h.h(st)) })
	}
}

// malformedPage is the metrics text of the malformed-metrics fault (nil
// without it): on the wall clock's /metrics and as the virtual clock's
// sample log schema alike.
func (s *Server) malformedPage() []byte {
	if _, ok := s.cfg.HasFault(FaultMalformedMetrics); !ok {
		return nil
	}
	return fmt.Appendf(nil, "# TYPE %s:num_running_reqs gauge\n%s:num_running_reqs{model_name=\"%s\" 3\nthis is not a metric line\n", s.cfg.Engine, s.cfg.Engine, s.cfg.ServedModelName)
}
