package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// fakeServer is a tiny OpenAI-compatible streaming server for tests. It
// streams one word per SSE event, sends usage, and exposes SGLang-style
// /metrics whose counters move at request end.
type fakeServer struct {
	t         testing.TB
	tokenGap  time.Duration // between content events
	maxTokens int           // cap on tokens per response, 0 = max_completion_tokens
	// dropAfter, when > 0, cuts the connection of every profiling-sized
	// response (max tokens > 1) after that many tokens, like an engine
	// that dies mid-stream.
	dropAfter int
	ttft      time.Duration
	// status, when non-zero, is returned for every request whose index
	// (0-based, arrival order) satisfies failIf.
	status int
	failIf func(i int) bool
	// stallIf, when set, holds every request whose index satisfies it
	// until the client gives up (an engine that never schedules it).
	stallIf func(i int) bool
	// metricsPage, when set, is /metrics' answer instead of the counters
	// (a page that does not parse); metricsStatus, when non-zero, the
	// status /metrics answers with instead.
	metricsPage   string
	metricsStatus int

	mu        sync.Mutex
	bodies    []map[string]any
	inFlight  atomic.Int64
	maxFlight atomic.Int64
	requests  atomic.Int64
	genTokens atomic.Int64
	prompt    atomic.Int64
}

func (f *fakeServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", f.chat)
	mux.HandleFunc("GET /metrics", f.metrics)
	return mux
}

func (f *fakeServer) start(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeServer) chat(w http.ResponseWriter, r *http.Request) {
	// inFlight counts a request until just before its last byte is
	// written: after that the client may already send its next request.
	n := f.inFlight.Add(1)
	var once sync.Once
	done := func() { once.Do(func() { f.inFlight.Add(-1) }) }
	defer done()
	for {
		m := f.maxFlight.Load()
		if n <= m || f.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	idx := int(f.requests.Add(1) - 1)
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		assert.NoError(f.t, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	if f.status != 0 && (f.failIf == nil || f.failIf(idx)) {
		done()
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"object":"error","message":"fake failure","type":"X","param":null,"code":%d}`, f.status)
		return
	}
	prompt := 0
	for _, m := range body["messages"].([]any) {
		prompt += len(strings.Fields(m.(map[string]any)["content"].(string)))
	}
	maxTok := 16
	if v, ok := body["max_completion_tokens"].(float64); ok {
		maxTok = int(v)
	}
	if f.maxTokens > 0 {
		maxTok = min(maxTok, f.maxTokens)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	if f.stallIf != nil && f.stallIf(idx) {
		<-r.Context().Done()
		return
	}
	if !pause(r, f.ttft) {
		return
	}
	for i := range maxTok {
		if i > 0 && !pause(r, f.tokenGap) {
			return
		}
		if f.dropAfter > 0 && maxTok > 1 && i == f.dropAfter {
			if p, ok := w.(*pipeResponse); ok {
				p.pw.CloseWithError(io.ErrUnexpectedEOF)
				return
			}
			panic(http.ErrAbortHandler) // real server: abort the connection
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"}}]}\n\n", i)
		fl.Flush()
	}
	f.genTokens.Add(int64(maxTok))
	f.prompt.Add(int64(prompt))
	done()
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":%d}}}\n\n", prompt, maxTok, prompt+maxTok, prompt/2)
	io.WriteString(w, "data: [DONE]\n\n")
	fl.Flush()
}

func pause(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (f *fakeServer) metrics(w http.ResponseWriter, r *http.Request) {
	if f.metricsStatus != 0 {
		http.Error(w, "no metrics here", f.metricsStatus)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	if f.metricsPage != "" {
		fmt.Fprint(w, f.metricsPage)
		return
	}
	fmt.Fprintf(w, `# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="m"} %d
sglang:generation_tokens_created{model_name="m"} 1.7e9
# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{model_name="m"} %d
# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m",tp_rank="0"} %d
# HELP sglang:e2e_request_latency_seconds Histogram of End-to-end request latency in seconds
# TYPE sglang:e2e_request_latency_seconds histogram
sglang:e2e_request_latency_seconds_bucket{le="0.1",model_name="m"} %d
sglang:e2e_request_latency_seconds_bucket{le="1.0",model_name="m"} %d
sglang:e2e_request_latency_seconds_bucket{le="+Inf",model_name="m"} %d
sglang:e2e_request_latency_seconds_sum{model_name="m"} %g
sglang:e2e_request_latency_seconds_count{model_name="m"} %d
`, f.genTokens.Load(), f.prompt.Load(), f.inFlight.Load(),
		f.requests.Load(), f.requests.Load(), f.requests.Load(), 0.01*float64(f.requests.Load()), f.requests.Load())
}

// handlerTransport serves requests in-process by calling a handler, with
// an io.Pipe as the response body: no sockets, so it works inside a
// testing/synctest bubble (fake clock). Cancelling the request's context
// closes the body with the context's error, as a real transport does.
type handlerTransport struct{ h http.Handler }

type pipeResponse struct {
	header http.Header
	pw     *io.PipeWriter
	once   sync.Once
	status int
	ready  chan struct{}
}

func (p *pipeResponse) Header() http.Header { return p.header }
func (p *pipeResponse) WriteHeader(code int) {
	p.once.Do(func() { p.status = code; close(p.ready) })
}
func (p *pipeResponse) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.pw.Write(b)
}
func (p *pipeResponse) Flush() {}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	pr, pw := io.Pipe()
	rw := &pipeResponse{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() { // exits when the handler returns (it watches ctx)
		defer pw.Close()
		t.h.ServeHTTP(rw, req)
		rw.WriteHeader(http.StatusOK)
	}()
	select {
	case <-rw.ready:
	case <-ctx.Done():
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	return &http.Response{
		StatusCode: rw.status, Status: http.StatusText(rw.status), Header: rw.header,
		Body: &closeBody{ReadCloser: pr, stop: stop}, Request: req, ProtoMajor: 1, ProtoMinor: 1,
	}, nil
}

type closeBody struct {
	io.ReadCloser
	stop func() bool
}

func (c *closeBody) Close() error { c.stop(); return c.ReadCloser.Close() }
