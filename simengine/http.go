package simengine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sweep/configs"
	"sweep/internal/simproto"
	"time"
)

// maxBody caps a request body (agentic prompts reach a few MB).
const maxBody = 256 << 20

// Handler returns the HTTP API of the configured engine: SGLang or vLLM
// endpoints, OpenAI chat completions, health and metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("POST /v1/completions", s.completions)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /metrics", s.metrics)
	switch s.cfg.Engine {
	case configs.SGLang:
		mux.HandleFunc("GET /health_generate", s.health)
		mux.HandleFunc("GET /get_model_info", s.modelInfo)
		mux.HandleFunc("GET /model_info", s.modelInfo)
		mux.HandleFunc("GET /get_server_info", s.serverInfo)
		mux.HandleFunc("GET /server_info", s.serverInfo)
		mux.HandleFunc("GET /flush_cache", s.flushCache)
		mux.HandleFunc("POST /flush_cache", s.flushCache)
	case configs.VLLM:
		mux.HandleFunc("GET /ping", s.health)
		mux.HandleFunc("POST /ping", s.health)
		mux.HandleFunc("GET /version", s.version)
		mux.HandleFunc("POST /reset_prefix_cache", s.resetPrefixCache)
	}
	if s.vc != nil {
		s.simHandlers(mux)
	} else {
		mux.HandleFunc("GET /sim/power", s.simPower) // the GPU tools' telemetry, on the wall clock too
		mux.HandleFunc("GET "+LagPath, s.simLag)     // how far the scheduler fell behind its schedule
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hangs(r) {
			return
		}
		w.Header().Set(simproto.HeaderTimeScale, strconv.FormatFloat(s.cfg.TimeScale, 'g', -1, 64))
		mux.ServeHTTP(w, r)
	})
}

// hangs blocks while the hang fault is active, until the client gives up
// or the server stops; it reports whether the request must not be served.
// The GPU tools' telemetry (GET /sim/power) stands for the GPU driver, which
// a hung engine does not hang: it is served.
func (s *Server) hangs(r *http.Request) bool {
	select {
	case <-s.hung:
	default:
		return false
	}
	if r.URL.Path == "/sim/power" {
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
		"disaggregation_mode": cmp.Or(c.Disagg, "null"), "disaggregation_transfer_backend": nilIfEmpty(c.KVTransferBackend),
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
		rk.restartStream()
		rk.st.setLive(rk)
		rk.mu.Unlock()
	}
	if s.cfg.Engine == configs.SGLang {
		s.logf("Cache flushed successfully!") // as SGLang's scheduler logs it
	} else {
		s.logf("Resetting prefix cache") // as vLLM's engine logs it
	}
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Engine == configs.SGLang && !s.cfg.EnableMetrics {
		http.NotFound(w, r)
		return
	}
	if f, ok := s.cfg.HasFault(FaultSlowMetrics); ok {
		if err := sleepCtx(r.Context(), f.Delay); err != nil {
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if page := s.malformedPage(); page != nil {
		_, _ = w.Write(page)
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
	SimPrompt           *SimPrompt      `json:"sweep_sim_prompt"`
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

type textChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

type textChunk struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []textChoice `json:"choices"`
	Usage   *Usage       `json:"usage,omitempty"`
}

type chatChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			apiError(w, http.StatusRequestEntityTooLarge, "BadRequestError", "request body too large")
			return false
		}
		apiError(w, http.StatusBadRequest, "BadRequestError", "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if len(req.Messages) == 0 {
		apiError(w, http.StatusBadRequest, "BadRequestError", "messages must be a non-empty list")
		return
	}
	s.generate(w, r, genParams{
		chat: true, model: req.Model, text: renderChat(req.Tools, req.Messages),
		stream: req.Stream, includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		ignoreEOS: req.IgnoreEOS, minTokens: req.MinTokens, user: req.User,
		maxTokens: []*int{req.MaxCompletionTokens, req.MaxTokens}, simPrompt: req.SimPrompt,
	})
}

// completionRequest is the part of an OpenAI (text) completion request
// the simulator reads.
type completionRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	MaxTokens     *int            `json:"max_tokens"`
	IgnoreEOS     bool            `json:"ignore_eos"`
	MinTokens     int             `json:"min_tokens"`
	User          string          `json:"user"`
}

// completionPrompt turns a prompt (a string, token ids, or a one-element
// batch of either) into text; token ids become one word each, so the
// prompt token count equals the number of ids.
func completionPrompt(raw json.RawMessage) (string, error) {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(" t")
			b.WriteString(strconv.FormatInt(id%10000000, 10))
		}
		return b.String(), nil
	}
	var batch []json.RawMessage
	if json.Unmarshal(raw, &batch) == nil {
		if len(batch) != 1 {
			return "", fmt.Errorf("batched prompts (%d) are not supported by the simulator; send one prompt per request", len(batch))
		}
		return completionPrompt(batch[0])
	}
	return "", errors.New("prompt must be a string, a list of token ids, or a one-element list of either")
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if !decodeBody(w, r, &req) {
		return
	}
	text, err := completionPrompt(req.Prompt)
	if err == nil && CountTokens(text) == 0 {
		err = errors.New("prompt must not be empty")
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	s.generate(w, r, genParams{
		model: req.Model, text: text, stream: req.Stream,
		includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		ignoreEOS:    req.IgnoreEOS, minTokens: req.MinTokens, user: req.User, maxTokens: []*int{req.MaxTokens},
	})
}

// genParams is one generation request, from either endpoint.
type genParams struct {
	chat                            bool // chat completion (else text completion)
	model, text, user               string
	stream, includeUsage, ignoreEOS bool
	minTokens                       int
	maxTokens                       []*int     // the first one set wins
	simPrompt                       *SimPrompt // the prompt by block ids, instead of text
}

// generate validates a generation request, runs it through a scheduler and
// answers it, streaming or not.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, p genParams) {
	c := &s.cfg
	if c.Engine == configs.VLLM && p.model != "" && p.model != c.ServedModelName && p.model != c.ModelPath {
		apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", p.model))
		return
	}
	var prompt int
	var blocks []uint64
	if p.simPrompt != nil {
		if !s.sims.resolve(p.simPrompt) {
			w.Header().Set(simproto.HeaderPrompt, "unknown")
			apiError(w, http.StatusConflict, "ConflictError", fmt.Sprintf("sweep_sim_prompt: reuses %d ids of %q, which the engine does not have: send the prompt whole", p.simPrompt.Reuse, p.simPrompt.Key))
			return
		}
		var err error
		if prompt, blocks, err = p.simPrompt.hashes(s.seed, s.ranks[0].cache.blockTokens); err != nil {
			apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
			return
		}
	} else {
		prompt, blocks = blockHashes(s.seed, p.text, s.ranks[0].cache.blockTokens)
	}
	if prompt >= c.ContextLength {
		apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", c.ContextLength, prompt))
		return
	}
	limit := c.ContextLength - prompt
	for _, mt := range p.maxTokens {
		if mt == nil {
			continue
		}
		if *mt <= 0 {
			apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("max_tokens must be at least 1, got %d", *mt))
			return
		}
		if *mt > limit {
			apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("max_tokens %d plus %d prompt tokens exceeds the context length %d", *mt, prompt, c.ContextLength))
			return
		}
		limit = *mt
		break
	}
	if need := prompt + 1; need > s.capa.poolTokens {
		apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("the prompt needs %d tokens but the KV cache holds %d", need, s.capa.poolTokens))
		return
	}
	id := s.ids.Add(1)
	stream := id
	if part := r.Header.Get(simproto.HeaderParticipant); s.vc != nil && part != "" {
		// Request ids follow the wall order of arrival; on the virtual
		// clock the draws follow the request's place on the timeline.
		h := fnv.New64a()
		fmt.Fprintf(h, "%s@%s", part, r.Header.Get(simproto.HeaderTime))
		stream = h.Sum64()
	}
	rng := s.newRequestRNG(stream)
	target, reason := limit, "length"
	if !p.ignoreEOS {
		if n := max(naturalLength(rng), p.minTokens); n < limit {
			target, reason = n, "stop"
		}
	}
	interval := 1 << 30
	if p.stream {
		interval = c.StreamInterval
	}
	if c.Disagg == DisaggPrefill {
		// A prefill worker computes the prompt and its first token; the
		// decode worker generates the rest.
		target, reason = 1, "length"
	}
	q := &simRequest{id: id, prompt: prompt, blocks: blocks, target: target, reason: reason,
		maxTokens: limit, logged: true, external: true, sink: newSink(interval)}
	if c.Disagg == DisaggDecode {
		// The prompt's KV arrives from the prefill worker first.
		if !s.receiveKV(r.Context(), prompt) {
			return
		}
		q.transferred = true
	}
	key := r.Header.Get("X-Correlation-Id")
	if key == "" {
		key = r.Header.Get("X-Session-Id")
	}
	if key == "" {
		key = p.user
	}
	if s.vc != nil {
		err := s.vsubmit(r.Header, q, key)
		if err == nil && q.verdict != nil {
			err = s.vawait(r, q)
		}
		if we, ok := errors.AsType[*wokeError](err); ok {
			w.Header().Set(simproto.HeaderWoke, strconv.FormatFloat(we.at, 'g', -1, 64))
			apiError(w, http.StatusConflict, "ConflictError", err.Error())
			return
		}
		if err != nil {
			apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
			return
		}
	} else {
		s.submit(q, key)
	}

	out := response{model: cmp.Or(p.model, c.ServedModelName), created: time.Now().Unix(), chat: p.chat}
	out.id = fmt.Sprintf("cmpl-%016x", id)
	if p.chat {
		out.id = "chat" + out.id
	}
	if p.stream {
		s.stream(w, r, q, rng, out, p.includeUsage)
		return
	}
	n, reasonGot, cached, ok := s.wait(r, q)
	if !ok {
		if r.Context().Err() == nil {
			apiError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "the engine is shutting down")
		}
		return
	}
	if q.sink.timed {
		w.Header().Set(simproto.HeaderTime, strconv.FormatFloat(q.sink.lastT, 'g', -1, 64))
	}
	text := outputText(rng, n)
	choice := map[string]any{"index": 0, "logprobs": nil, "finish_reason": reasonGot}
	object := "text_completion"
	if p.chat {
		choice["message"] = map[string]any{"role": "assistant", "content": text}
		object = "chat.completion"
	} else {
		choice["text"] = text
	}
	writeJSON(w, map[string]any{
		"id": out.id, "object": object, "created": out.created, "model": out.model,
		"choices": []map[string]any{choice}, "usage": s.usage(prompt, n, cached),
	})
}

// plainJSON reports whether s is encoded by json.Marshal as itself
// between quotes: printable ASCII without quote, backslash or the HTML
// characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// response identifies one answer across its chunks.
type response struct {
	id, model string
	created   int64
	chat      bool
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
			s.abandon(q)
			return 0, "", 0, false
		case <-s.stopping:
			s.abandon(q)
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
// released: (chat) a role chunk, content chunks, a finish chunk, the usage
// chunk when asked for, then [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, q *simRequest, rng *rand.Rand, out response, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if q.sink.timed {
		// Stamped events mean the same whenever they leave.
		bf := newBatchedFlusher(w)
		defer func() { _ = bf.close() }() // the end of the answer, at once
		w = bf
	}
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	// write writes one event; send writes and flushes it.
	write := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		_, err = fmt.Fprintf(w, "data: %s\n\n", b)
		return err == nil
	}
	send := func(v any) bool {
		ok := write(v)
		flush()
		return ok
	}
	// chunk builds one event: text (nil for none), role, finish reason.
	chunk := func(text *string, role string, finish *string) any {
		if out.chat {
			return chatChunk{ID: out.id, Object: "chat.completion.chunk", Created: out.created, Model: out.model,
				Choices: []chunkChoice{{Delta: chunkDelta{Role: role, Content: text}, FinishReason: finish}}}
		}
		t := ""
		if text != nil {
			t = *text
		}
		return textChunk{ID: out.id, Object: "text_completion", Created: out.created, Model: out.model,
			Choices: []textChoice{{Text: t, FinishReason: finish}}}
	}
	// content writes one content event: json.Marshal's bytes, built from
	// the chunk's fixed head and tail around the text (plain text needs
	// no escaping).
	var head, tail []byte
	if b, err := json.Marshal(chunk(new(string), "", nil)); err == nil {
		if i := bytes.Index(b, []byte(`"content":""`)); out.chat && i >= 0 {
			head, tail = b[:i+len(`"content":`)], b[i+len(`"content":""`):]
		} else if i := bytes.Index(b, []byte(`"text":""`)); !out.chat && i >= 0 {
			head, tail = b[:i+len(`"text":`)], b[i+len(`"text":""`):]
		}
	}
	var line, stamp []byte
	content := func(text string) bool {
		if head == nil || !plainJSON(text) {
			return write(chunk(&text, "", nil))
		}
		line = append(append(append(append(append(append(line[:0], "data: "...), head...), '"'), text...), '"'), tail...)
		line = append(line, "\n\n"...)
		_, err := w.Write(line)
		return err == nil
	}
	usageChunk := func(u *Usage) any {
		if out.chat {
			return chatChunk{ID: out.id, Object: "chat.completion.chunk", Created: out.created, Model: out.model, Choices: []chunkChoice{}, Usage: u}
		}
		return textChunk{ID: out.id, Object: "text_completion", Created: out.created, Model: out.model, Choices: []textChoice{}, Usage: u}
	}
	if out.chat {
		empty := ""
		if !send(chunk(&empty, "assistant", nil)) {
			s.abandon(q)
			return
		}
	}
	total := 0
	for {
		select {
		case <-q.sink.notify:
		case <-r.Context().Done():
			s.abandon(q)
			return
		case <-s.stopping:
			s.abandon(q)
			return
		}
		var n, cached int
		var done bool
		var reason string
		if q.sink.timed {
			// One event per release, each stamped with its simulated time;
			// the releases taken together go out in one flush.
			var rel []chunkRelease
			rel, done, reason, cached = q.sink.takeTimed()
			for _, c := range rel {
				stamp = append(stamp[:0], simproto.SSEClockPrefix...)
				stamp = strconv.AppendFloat(stamp, c.t, 'g', -1, 64) // exact: the client resumes at it
				if _, err := w.Write(append(stamp, '\n')); err != nil {
					s.abandon(q)
					return
				}
				if c.n == 0 {
					continue
				}
				text := outputText(rng, c.n)
				total += c.n
				if !content(text) {
					s.abandon(q)
					return
				}
			}
			flush()
		} else {
			n, done, reason, cached = q.sink.take()
		}
		if n > 0 {
			text := outputText(rng, n)
			total += n
			if !send(chunk(&text, "", nil)) {
				s.abandon(q)
				return
			}
		}
		if !done {
			continue
		}
		send(chunk(nil, "", &reason))
		if includeUsage {
			send(usageChunk(s.usage(q.prompt, total, cached)))
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		if flusher != nil {
			flusher.Flush()
		}
		return
	}
}

// simLag answers GET /sim/lag on the wall clock.
func (s *Server) simLag(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.lag.read())
}
