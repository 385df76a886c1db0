package simengine

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRouterArgv(t *testing.T) {
	c, err := ParseRouterArgv([]string{"python3", "-m", "sglang_router.launch_router", "--worker-urls", "http://localhost:8889",
		"--policy", "consistent_hashing", "--request-id-headers", "x-correlation-id", "--dp-aware", "--host", "0.0.0.0",
		"--port", "8888", "--prometheus-host", "127.0.0.1", "--prometheus-port", "18888", "--disable-retries"})
	require.NoError(t, err)
	assert.Equal(t, "sglang_router", c.Name)
	require.Len(t, c.Workers, 1)
	assert.Equal(t, "localhost:8889", c.Workers[0].Host)
	assert.Equal(t, 8888, c.Port)
	assert.Equal(t, 18888, c.PrometheusPort)
	assert.Equal(t, []string{"x-correlation-id"}, c.RoutingHeaders)

	// SMG in front of vLLM's gRPC worker: the simulated worker answers HTTP.
	c, err = ParseRouterArgv([]string{"python3", "-m", "smg.launch_router", "--worker-urls", "grpc://127.0.0.1:9001", "--port", "9000"})
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:9001", c.Workers[0].String())
	_, err = ParseRouterArgv([]string{"python3", "-m", "smg.launch_router", "--worker-urls", "ftp://127.0.0.1:9001", "--port", "9000"})
	assert.ErrorContains(t, err, "want http://host:port or grpc://host:port")

	_, err = ParseRouterArgv([]string{"vllm-router", "--port", "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--worker-urls")
	assert.Contains(t, err.Error(), `--port "x"`)
}

func TestRouterForwardsStickyAndCountsItsOwnMetrics(t *testing.T) {
	var hits [2][]string
	var workers []*url.URL
	for i := range 2 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i] = append(hits[i], r.Header.Get("X-Correlation-Id"))
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: [DONE]\n\n")
		}))
		t.Cleanup(srv.Close)
		u, err := url.Parse(srv.URL)
		require.NoError(t, err)
		workers = append(workers, u)
	}
	r := NewRouter(RouterConfig{Name: "vllm_router", Workers: workers})
	front := httptest.NewServer(r.Handler())
	t.Cleanup(front.Close)
	for range 3 {
		for _, session := range []string{"a", "b", "c", "d"} {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, front.URL+"/v1/chat/completions", strings.NewReader("{}"))
			require.NoError(t, err)
			req.Header.Set("X-Correlation-Id", session)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, "data: [DONE]\n\n", string(body))
		}
	}
	assert.Equal(t, 12, len(hits[0])+len(hits[1]))
	for i := range 2 {
		for _, s := range hits[i] {
			assert.NotContains(t, hits[1-i], s, "session %s went to both workers", s)
		}
	}
	resp, err := http.Get(front.URL + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), "vllm_router_requests_total{worker=")
	assert.NotContains(t, string(body), "vllm:", "the router never re-exports engine metrics")
}

// flushCounter is a ResponseWriter that counts the flushes that reach it.
type flushCounter struct {
	http.ResponseWriter
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++ }

// A virtual-clock answer is passed on at most every virtualFlushEvery:
// the bytes written within the interval wait for the next flush past it
// or the end of the answer (finish), and go in one write.
func TestBatchedFlusher(t *testing.T) {
	rec := httptest.NewRecorder()
	under := &flushCounter{ResponseWriter: rec}
	f := newBatchedFlusher(under)
	f.every = time.Hour
	write := func(s string) {
		_, err := io.WriteString(f, s)
		require.NoError(t, err)
	}
	write("a")
	for range 4 {
		require.NoError(t, http.NewResponseController(f).Flush())
	}
	write("b")
	assert.Equal(t, 0, under.flushes, "nothing within the first hour")
	assert.Empty(t, rec.Body.String(), "the bytes wait for the next flush")
	require.NoError(t, f.finish())
	assert.Equal(t, 1, under.flushes, "the end of the answer goes at once")
	assert.Equal(t, "ab", rec.Body.String())
	f.every = 0
	write("c")
	f.Flush()
	assert.Equal(t, 2, under.flushes, "a flush past the interval goes")
	assert.Equal(t, "abc", rec.Body.String())
	f.Flush()
	assert.Equal(t, 2, under.flushes, "nothing kept, nothing flushed")
}

// TestRouterKeepsWorkerConnections: answers to a round of concurrent
// streams leave their connections to the worker idle for the next round,
// as a real router's pool does, instead of closing all but two of them.
func TestRouterKeepsWorkerConnections(t *testing.T) {
	const streams, rounds = 16, 3
	var mu sync.Mutex
	dialled := 0
	release := make(chan struct{})
	var arrived sync.WaitGroup
	worker := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release // all streams of a round are in flight at once
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	worker.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			dialled++
			mu.Unlock()
		}
	}
	worker.Start()
	t.Cleanup(worker.Close)
	u, err := url.Parse(worker.URL)
	require.NoError(t, err)
	front := httptest.NewServer(NewRouter(RouterConfig{Name: "vllm_router", Workers: []*url.URL{u}}).Handler())
	t.Cleanup(front.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams}}
	for range rounds {
		arrived.Add(streams)
		release = make(chan struct{})
		var done sync.WaitGroup
		for i := range streams {
			done.Go(func() {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, front.URL+"/v1/chat/completions", strings.NewReader("{}"))
				if !assert.NoError(t, err) {
					return
				}
				req.Header.Set("X-Correlation-Id", fmt.Sprint("s", i))
				resp, err := client.Do(req)
				if !assert.NoError(t, err) {
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		arrived.Wait()
		close(release)
		done.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, dialled, streams, "connections the router dialled to the worker over %d rounds of %d streams", rounds, streams)
}
