package simengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// maxBody caps a request body (agentic prompts reach a few MB).
const maxBody = 256 << 20

// Handler returns the HTTP API of the configured engine: SGLang or vLLM
// endpoints, OpenAI chat completions, health and metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /metrics", s.metrics)
	switch s.cfg.Engine {
	case SGLang:
		mux.HandleFunc("GET /health_generate", s.health)
		mux.HandleFunc("GET /get_model_info", s.modelInfo)
		mux.HandleFunc("GET /model_info", s.modelInfo)
		mux.HandleFunc("GET /get_server_info", s.serverInfo)
		mux.HandleFunc("GET /server_info", s.serverInfo)
		mux.HandleFunc("GET /flush_cache", s.flushCache)
		mux.HandleFunc("POST /flush_cache", s.flushCache)
	case VLLM:
		mux.HandleFunc("GET /ping", s.health)
		mux.HandleFunc("POST /ping", s.health)
		mux.HandleFunc("GET /version", s.version)
		mux.HandleFunc("POST /reset_prefix_cache", s.resetPrefixCache)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hangs(r) {
			return
		}
		w.Header().Set("X-Sim-Time-Scale", strconv.FormatFloat(s.cfg.TimeScale, 'g', -1, 64))
		mux.ServeHTTP(w, r)
	})
}

// hangs blocks while the hang fault is active, until the client gives up
// or the server stops; it reports whether the request must not be served.
func (s *Server) hangs(r *http.Request) bool {
	select {
	case <-s.hung:
	default:
		return false
	}
	select {
	case <-r.Context().Done():
	case <-s.stopping:
	}
	return true
}

// apiError writes an OpenAI-style error object.
func apiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "error",
		"error":  map[string]any{"message": msg, "type": typ, "code": code},
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.Phase() != PhaseReady {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	owner := string(s.cfg.Engine)
	writeJSON(w, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": s.cfg.ServedModelName, "object": "model", "created": s.base.Unix(),
			"owned_by": owner, "root": s.cfg.ModelPath, "max_model_len": s.cfg.ContextLength,
		}},
	})
}

func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{
		"model_path": s.cfg.ModelPath, "tokenizer_path": s.cfg.ModelPath, "is_generation": true,
		"preferred_sampling_params": nil, "weight_version": "default",
	})
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]string{"version": "0.0.0+sweep.sim"})
}

// serverInfo is SGLang's /get_server_info: the resolved arguments and one
// internal state per DP rank with the lifetime acceptance length.
func (s *Server) serverInfo(w http.ResponseWriter, r *http.Request) {
	c := &s.cfg
	var states []map[string]any
	for _, rk := range s.ranks {
		st := rk.snapshot()
		al := 0.0
		if st.lifeBatch > 0 {
			al = (st.lifeBatch + st.lifeAccepted) / st.lifeBatch
		}
		states = append(states, map[string]any{"avg_spec_accept_length": al, "last_gen_throughput": st.genTP})
	}
	writeJSON(w, map[string]any{
		"model_path": c.ModelPath, "served_model_name": c.ServedModelName, "host": c.Host, "port": c.Port,
		"tp_size": c.TP, "dp_size": c.DP, "ep_size": c.EP, "pp_size": c.PP, "enable_dp_attention": c.DPAttention,
		"max_running_requests": s.capa.maxRunning, "max_total_num_tokens": s.capa.poolTokens,
		"mem_fraction_static": c.MemFraction, "page_size": c.PageSize, "chunked_prefill_size": c.ChunkSize,
		"context_length": c.ContextLength, "disable_radix_cache": c.NoPrefixCache,
		"speculative_algorithm": nilIfEmpty(c.Spec.Algorithm), "speculative_num_steps": c.Spec.NumSteps,
		"speculative_eagle_topk": c.Spec.TopK, "speculative_num_draft_tokens": c.Spec.NumDraftTokens,
		"internal_states": states, "version": "0.0.0+sweep.sim", "sim_time_scale": c.TimeScale, "sim_gpu": c.GPU,
	})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// flushCache is SGLang's /flush_cache: 400 while requests are pending.
func (s *Server) flushCache(w http.ResponseWriter, r *http.Request) {
	for _, rk := range s.ranks {
		rk.mu.Lock()
		busy := !rk.idle()
		rk.mu.Unlock()
		if busy {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "Cache not flushed. Please check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n")
			return
		}
	}
	s.flush()
	fmt.Fprint(w, "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n")
}

// resetPrefixCache is vLLM's /reset_prefix_cache: drops every cached
// block not in use.
func (s *Server) resetPrefixCache(w http.ResponseWriter, r *http.Request) {
	s.flush()
	w.WriteHeader(http.StatusOK)
}

func (s *Server) flush() {
	for _, rk := range s.ranks {
		rk.mu.Lock()
		rk.cache.flush()
		rk.st.setLive(rk)
		rk.mu.Unlock()
	}
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Engine == SGLang && !s.cfg.EnableMetrics {
		http.NotFound(w, r)
		return
	}
	if f, ok := s.cfg.HasFault(FaultSlowMetrics); ok {
		if err := sleepCtx(r.Context(), f.Delay); err != nil {
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if _, ok := s.cfg.HasFault(FaultMalformedMetrics); ok {
		fmt.Fprintf(w, "# TYPE %s:num_running_reqs gauge\n%s:num_running_reqs{model_name=\"%s\" 3\nthis is not a metric line\n", s.cfg.Engine, s.cfg.Engine, s.cfg.ServedModelName)
		return
	}
	_, _ = w.Write(s.renderMetrics())
}

// chatRequest is the part of an OpenAI chat completion request the
// simulator reads; other fields are accepted and ignored.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	MinTokens           int             `json:"min_tokens"`
	User                string          `json:"user"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Usage is the OpenAI usage object.
type Usage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails carries the cached prompt tokens (SGLang with
// --enable-cache-report).
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type chunkDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	Logprobs     any        `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
}

type chatChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(&req); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			apiError(w, http.StatusRequestEntityTooLarge, "BadRequestError", "request body too large")
			return
		}
		apiError(w, http.StatusBadRequest, "BadRequestError", "invalid JSON body: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		apiError(w, http.StatusBadRequest, "BadRequestError", "messages must be a non-empty list")
		return
	}
	c := &s.cfg
	if c.Engine == VLLM && req.Model != "" && req.Model != c.ServedModelName && req.Model != c.ModelPath {
		apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	text := renderChat(req.Tools, req.Messages)
	prompt, blocks := blockHashes(s.seed, text, s.ranks[0].cache.blockTokens)
	if prompt >= c.ContextLength {
		apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", c.ContextLength, prompt))
		return
	}
	limit := c.ContextLength - prompt
	for _, p := range []*int{req.MaxCompletionTokens, req.MaxTokens} {
		if p != nil {
			if *p <= 0 {
				apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("max_tokens must be at least 1, got %d", *p))
				return
			}
			if *p > limit {
				apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("max_tokens %d plus %d prompt tokens exceeds the context length %d", *p, prompt, c.ContextLength))
				return
			}
			limit = *p
			break
		}
	}
	if need := prompt + 1; need > s.capa.poolTokens {
		apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("the prompt needs %d tokens but the KV cache holds %d", need, s.capa.poolTokens))
		return
	}
	id := s.ids.Add(1)
	rng := s.newRequestRNG(id)
	target, reason := limit, "length"
	if !req.IgnoreEOS {
		if n := max(naturalLength(rng), req.MinTokens); n < limit {
			target, reason = n, "stop"
		}
	}
	interval := 1 << 30
	if req.Stream {
		interval = c.StreamInterval
	}
	q := &simRequest{id: id, prompt: prompt, blocks: blocks, target: target, reason: reason,
		maxTokens: limit, logged: true, external: true, sink: newSink(interval)}
	key := r.Header.Get("X-Correlation-Id")
	if key == "" {
		key = r.Header.Get("X-Session-Id")
	}
	if key == "" {
		key = req.User
	}
	s.submit(q, key)

	model := req.Model
	if model == "" {
		model = c.ServedModelName
	}
	chatID := fmt.Sprintf("chatcmpl-%016x", id)
	created := time.Now().Unix()
	if req.Stream {
		s.stream(w, r, q, rng, chatID, model, created, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	n, reasonGot, cached, ok := s.wait(r, q)
	if !ok {
		if r.Context().Err() == nil {
			apiError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "the engine is shutting down")
		}
		return
	}
	content := outputText(rng, n)
	writeJSON(w, map[string]any{
		"id": chatID, "object": "chat.completion", "created": created, "model": model,
		"choices": []map[string]any{{
			"index": 0, "message": map[string]any{"role": "assistant", "content": content},
			"logprobs": nil, "finish_reason": reasonGot,
		}},
		"usage": s.usage(prompt, n, cached),
	})
}

func (s *Server) usage(prompt, completion, cached int) *Usage {
	u := &Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	if s.cfg.EnableCacheReport {
		u.PromptTokensDetails = &PromptTokensDetails{CachedTokens: cached}
	}
	return u
}

// wait blocks until q is complete; it reports false (and aborts q) when
// the client went away or the server stops.
func (s *Server) wait(r *http.Request, q *simRequest) (n int, reason string, cached int, ok bool) {
	for {
		select {
		case <-q.sink.notify:
		case <-r.Context().Done():
			q.aborted.Store(true)
			return 0, "", 0, false
		case <-s.stopping:
			q.aborted.Store(true)
			return 0, "", 0, false
		}
		got, done, reason, cached := q.sink.take()
		n += got
		if done {
			return n, reason, cached, true
		}
	}
}

// stream writes q's tokens as OpenAI server-sent events as they are
// released: a role chunk, content chunks, a finish chunk, the usage chunk
// when asked for, then [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, q *simRequest, rng *rand.Rand, id, model string, created int64, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(ch chatChunk) bool {
		ch.ID, ch.Object, ch.Created, ch.Model = id, "chat.completion.chunk", created, model
		b, err := json.Marshal(ch)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	empty := ""
	if !send(chatChunk{Choices: []chunkChoice{{Delta: chunkDelta{Role: "assistant", Content: &empty}}}}) {
		q.aborted.Store(true)
		return
	}
	total := 0
	for {
		select {
		case <-q.sink.notify:
		case <-r.Context().Done():
			q.aborted.Store(true)
			return
		case <-s.stopping:
			q.aborted.Store(true)
			return
		}
		n, done, reason, cached := q.sink.take()
		if n > 0 {
			text := outputText(rng, n)
			total += n
			if !send(chatChunk{Choices: []chunkChoice{{Delta: chunkDelta{Content: &text}}}}) {
				q.aborted.Store(true)
				return
			}
		}
		if !done {
			continue
		}
		send(chatChunk{Choices: []chunkChoice{{Delta: chunkDelta{}, FinishReason: &reason}}})
		if includeUsage {
			send(chatChunk{Choices: []chunkChoice{}, Usage: s.usage(q.prompt, total, cached)})
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		if flusher != nil {
			flusher.Flush()
		}
		return
	}
}
