package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"sweep/internal/simproto"
	"sweep/metrics/aiperf"
)

// maxErrorBody caps how much of an error response body is kept;
// maxResponseBody caps a non-streamed response.
const (
	maxErrorBody    = 64 << 10
	maxResponseBody = 64 << 20
)

// chatRequest is one request to send.
type chatRequest struct {
	url            string // full endpoint URL
	model          string
	messages       []message
	maxTokens      int // 0: omit
	streaming      bool
	extra          map[string]any // --extra-inputs, merged into the body
	apiKey         string
	headers        map[string]string
	xRequestID     string
	xCorrelationID string
	useServerCount bool
	clientISL      int // client-side token estimate of the prompt
	// sim, on the virtual clock, is the request's place on the simulated
	// timeline (nil on the wall clock).
	sim *simCall
}

// body builds the OpenAI chat-completions JSON body.
func (r *chatRequest) body() ([]byte, error) {
	m := map[string]any{
		"model":    r.model,
		"messages": r.messages,
	}
	if r.maxTokens > 0 {
		m["max_completion_tokens"] = r.maxTokens
	}
	if r.streaming {
		m["stream"] = true
		m["stream_options"] = map[string]any{"include_usage": true}
	}
	for k, v := range r.extra {
		m[k] = v
	}
	if r.sim != nil && r.sim.prompt != nil {
		// The engine reads the prompt from the block ids; one short
		// message keeps the body a valid chat request.
		m["messages"] = []message{{Role: "user", Content: "."}}
		m["sweep_sim_prompt"] = r.sim.prompt
	}
	return json.Marshal(m)
}

// streamChunk is the part of an OpenAI chat-completion chunk (or a whole
// non-streamed response) the client reads.
type streamChunk struct {
	Choices []struct {
		Delta *struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
		Message *struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// send performs one request and measures it. start is when the request
// was handed to the transport; every offset in the timing is relative to
// it. A nil *aiperf.RecordError means success. The response body is always
// closed before send returns.
func send(ctx context.Context, hc *http.Client, r *chatRequest) (start time.Time, t timing, rerr *aiperf.RecordError) {
	body, err := r.body()
	if err != nil {
		return time.Now(), t, &aiperf.RecordError{Type: "EncodeError", Message: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return time.Now(), t, &aiperf.RecordError{Type: "InvalidURL", Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sweep-loadgen")
	if r.streaming {
		req.Header.Set("Accept", "text/event-stream")
	}
	if r.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
	}
	req.Header.Set("X-Request-ID", r.xRequestID)
	req.Header.Set("X-Correlation-ID", r.xCorrelationID)
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	if c := r.sim; c != nil {
		t.sim, t.simT = c, c.at
		req.Header.Set(simproto.HeaderParticipant, c.part)
		req.Header.Set(simproto.HeaderTime, fmtSim(c.at))
		if d := c.deadline(); !math.IsInf(d, 1) {
			req.Header.Set(simproto.HeaderDeadline, fmtSim(d))
		}
		if c.then > 0 {
			v := "sleep=" + fmtSim(c.then) + "&cap=" + fmtSim(c.thenCap)
			if !math.IsInf(c.before, 1) {
				v += "&before=" + fmtSim(c.before)
			}
			req.Header.Set(simproto.HeaderThen, v)
		}
	}
	var ht httpTrace
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), ht.clientTrace()))
	start = time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return start, t, transportError(err)
	}
	defer resp.Body.Close()
	t.ackNs = max(1, t.since(start))
	rb := &countingBody{Reader: resp.Body}
	defer func() {
		if rerr == nil {
			t.http = ht.phases(start, &t, len(body), rb)
		}
	}()
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody)) // best effort: the status is the error
		if v := resp.Header.Get(simproto.HeaderWoke); t.sim != nil && resp.StatusCode == http.StatusConflict && v != "" {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				t.woke = f
			}
		}
		t.promptUnknown = t.sim != nil && resp.StatusCode == http.StatusConflict && resp.Header.Get(simproto.HeaderPrompt) == "unknown"
		t.endNs = t.since(start)
		return start, t, &aiperf.RecordError{Code: resp.StatusCode, Type: http.StatusText(resp.StatusCode), Message: strings.TrimSpace(string(b))}
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rerr = readStream(rb, start, &t)
		// Read to the end of the body (the chunked terminator after
		// [DONE]): a body closed before its end closes the connection
		// instead of returning it to the pool.
		_, _ = io.Copy(io.Discard, io.LimitReader(rb, maxErrorBody))
	} else {
		if v := resp.Header.Get(simproto.HeaderTime); t.sim != nil && v != "" {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				t.simT = f
			}
		}
		rerr = readWhole(rb, start, &t)
	}
	t.endNs = t.since(start)
	if rerr == nil && ctx.Err() != nil {
		rerr = transportError(ctx.Err())
	}
	if rerr == nil && t.sim != nil && t.finish == "abort" {
		// The engine ended the request at its deadline: the timeout or
		// the cancellation the wall clock would have applied there.
		if t.simT >= t.sim.timeoutAt-1e-6 {
			rerr = &aiperf.RecordError{Type: "TimeoutError", Message: fmt.Sprintf("request timed out after %gs (simulated)", t.sim.timeoutAt-t.sim.at), CauseChain: []string{"TimeoutError"}}
		} else {
			rerr = transportError(errCancelled)
		}
	}
	if rerr != nil {
		return start, t, rerr
	}
	t.inputToks = r.clientISL
	if r.useServerCount && t.usage != nil {
		t.inputToks = t.usage.PromptTokens
		t.outputToks = t.usage.CompletionTokens
	} else {
		for _, n := range t.chunkToks {
			t.outputToks += n
		}
	}
	if t.outputToks == 0 && len(t.chunkNs) == 0 {
		return start, t, &aiperf.RecordError{Type: "EmptyResponseError", Message: "the response carried no output content"}
	}
	return start, t, nil
}

// readStream reads an SSE stream of chat-completion chunks until [DONE]
// or EOF, timestamping each event that carries content.
func readStream(body io.Reader, start time.Time, t *timing) *aiperf.RecordError {
	br := streamReaders.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() { br.Reset(nil); streamReaders.Put(br) }() // nothing read is kept
	done := false
	var head []byte // the last content event's head simContent accepted
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// An event longer than the buffer: collect the rest.
			rest, err2 := br.ReadBytes('\n')
			line = append(append([]byte(nil), line...), rest...)
			err = err2
		}
		if t.sim != nil {
			if v, ok := bytes.CutPrefix(line, []byte(simproto.SSEClockPrefix)); ok {
				if f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64); err == nil {
					t.simT = f
				}
				continue
			}
		}
		now := t.since(start)
		if text, ok := simContent(line, &head); ok && t.sim != nil && err == nil {
			t.chunkNs = append(t.chunkNs, now)
			t.chunkToks = append(t.chunkToks, max(1, countFields(text)))
			continue
		}
		if len(line) > 0 {
			if rerr := handleEvent(bytes.TrimSpace(line), now, t, &done); rerr != nil {
				return rerr
			}
		}
		if done {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if len(t.chunkNs) > 0 || t.usage != nil {
					return nil // servers may close without [DONE]
				}
				return &aiperf.RecordError{Type: "ServerDisconnectedError", Message: "server disconnected before sending any output", CauseChain: []string{"ServerDisconnectedError"}}
			}
			return transportError(err)
		}
	}
}

// streamReaders are readStream's 64 kB readers, reused: a point's
// thousands of answers each had a new one, the largest part of what the
// load generator allocated while it ran.
var streamReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// simContent reads the text of an SSE content event in the simulated
// engine's own encoding (virtual clock: the engine is sweep's), a chat
// chunk with nothing but non-empty plain content, without decoding its
// JSON; ok is false for any other event, which handleEvent then reads.
// An answer's content events share their head (id, object, created,
// model): accepted is the last head it accepted, checked again only
// when a head differs from it.
func simContent(line []byte, accepted *[]byte) (text []byte, ok bool) {
	const pre, post = `,"choices":[{"index":0,"delta":{"content":"`, `"},"logprobs":null,"finish_reason":null}]}`
	line, ok = bytes.CutPrefix(line, []byte(`data: {"id":"`))
	if !ok {
		return nil, false
	}
	line, ok = bytes.CutSuffix(bytes.TrimRight(line, "\r\n"), []byte(post))
	if !ok {
		return nil, false
	}
	i := bytes.Index(line, []byte(pre))
	if i < 0 || bytes.ContainsAny(line, `\`) {
		return nil, false
	}
	head, text := line[:i], line[i+len(pre):]
	for _, c := range text {
		if c >= 0x80 { // strings.Fields splits at some non-ASCII spaces
			return nil, false
		}
	}
	if len(text) == 0 || bytes.IndexByte(text, '"') >= 0 {
		return nil, false
	}
	if !bytes.Equal(head, *accepted) {
		if bytes.Contains(head, []byte(`"usage"`)) || bytes.Contains(head, []byte(`"error"`)) || bytes.Contains(head, []byte(`"choices"`)) {
			return nil, false
		}
		*accepted = append((*accepted)[:0], head...)
	}
	return text, true
}

// countFields is len(strings.Fields(string(b))) for ASCII text.
func countFields(b []byte) int {
	n, in := 0, false
	for _, c := range b {
		sp := c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return n
}

func handleEvent(line []byte, now int64, t *timing, done *bool) *aiperf.RecordError {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return nil // comments, event:, id:, blank separators
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		*done = true
		return nil
	}
	var c streamChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &aiperf.RecordError{Type: "ResponseParseError", Message: fmt.Sprintf("invalid SSE data %.200q: %v", data, err)}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return apiError(c.Error)
	}
	if c.Usage != nil {
		t.usage = c.Usage
	}
	var text string
	for _, ch := range c.Choices {
		if ch.FinishReason != "" {
			t.finish = ch.FinishReason
		}
		if ch.Delta != nil {
			text += ch.Delta.ReasoningContent + ch.Delta.Content
		}
	}
	if text != "" {
		t.chunkNs = append(t.chunkNs, now)
		t.chunkToks = append(t.chunkToks, max(1, len(strings.Fields(text))))
	}
	return nil
}

// readWhole reads a non-streamed JSON response.
func readWhole(body io.Reader, start time.Time, t *timing) *aiperf.RecordError {
	b, err := io.ReadAll(io.LimitReader(body, maxResponseBody+1))
	if err != nil {
		return transportError(err)
	}
	if len(b) > maxResponseBody {
		return &aiperf.RecordError{Type: "ResponseTooLargeError", Message: fmt.Sprintf("response body larger than %d bytes", maxResponseBody)}
	}
	now := t.since(start)
	var c streamChunk
	if err := json.Unmarshal(b, &c); err != nil {
		return &aiperf.RecordError{Type: "ResponseParseError", Message: fmt.Sprintf("invalid JSON response: %v", err)}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return apiError(c.Error)
	}
	t.usage = c.Usage
	var text string
	for _, ch := range c.Choices {
		if ch.FinishReason != "" {
			t.finish = ch.FinishReason
		}
		if ch.Message != nil {
			text += ch.Message.ReasoningContent + ch.Message.Content
		}
	}
	if text != "" {
		t.chunkNs = append(t.chunkNs, now)
		t.chunkToks = append(t.chunkToks, len(strings.Fields(text)))
	}
	return nil
}

// apiError converts an in-band {"error": ...} object.
func apiError(raw json.RawMessage) *aiperf.RecordError {
	var e struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return &aiperf.RecordError{Type: "ServerError", Message: string(raw)}
	}
	re := &aiperf.RecordError{Type: e.Type, Message: e.Message}
	if c, ok := e.Code.(float64); ok {
		re.Code = int(c)
	}
	if re.Type == "" {
		re.Type = "ServerError"
	}
	return re
}

// errCancelled marks requests cancelled by the load generator itself
// (end of the grace period, run abort, SIGINT).
var errCancelled = errors.New("request cancelled by external signal")

// The code and type of aiperf's error for a request its client
// cancelled (transportError writes it).
const (
	cancelledCode = 499
	cancelledType = "RequestCancellationError"
)

// selfCancelled reports whether rerr is the load generator's own
// cancellation of a request (end of a grace period, run abort, SIGINT),
// as opposed to an error of the server or the transport.
func selfCancelled(rerr *aiperf.RecordError) bool {
	return rerr.Code == cancelledCode && rerr.Type == cancelledType
}

// transportError maps a transport failure to aiperf's error vocabulary.
func transportError(err error) *aiperf.RecordError {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, errCancelled):
		return &aiperf.RecordError{Code: cancelledCode, Type: cancelledType, Message: "Request cancelled by external signal"}
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return &aiperf.RecordError{Type: "TimeoutError", Message: err.Error(), CauseChain: []string{"TimeoutError"}}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &aiperf.RecordError{Type: "ClientConnectorError", Message: err.Error(), CauseChain: []string{"ClientConnectorError", "ConnectionRefusedError"}}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &aiperf.RecordError{Type: "ServerDisconnectedError", Message: err.Error(), CauseChain: []string{"ServerDisconnectedError"}}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return &aiperf.RecordError{Type: "ClientConnectorError", Message: err.Error(), CauseChain: []string{"ClientConnectorError", "DNSError"}}
	}
	return &aiperf.RecordError{Type: "ClientError", Message: err.Error()}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
