package simengine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sweep/internal/simproto"
)

// RouterConfig is what the simulated router takes from a real router's
// argv (sglang_router.launch_router or vllm-router): the workers it fronts,
// where it listens, and its Prometheus listener.
type RouterConfig struct {
	Name           string // "sglang_router" or "vllm-router", for metric names
	Workers        []*url.URL
	Host           string
	Port           int
	PrometheusHost string
	PrometheusPort int // 0: no separate listener
	// RoutingHeaders pick a worker by hash (--request-id-headers); the
	// correlation headers aiperf sends are always considered.
	RoutingHeaders []string
	// PD is sglang_router's --pd-disaggregation: Prefill (--prefill URL
	// [BOOTSTRAP_PORT], repeated) and Decode (--decode URL) workers
	// instead of Workers. A generation request goes to a prefill worker,
	// which computes the prompt and hands its KV to the decode worker, and
	// then to a decode worker, whose answer is the client's; Workers is
	// then the decode workers.
	PD      bool
	Prefill []*url.URL
}

// ParseRouterArgv reads the flags a router recipe passes. Program words
// before the first flag are skipped; flags the simulation does not need
// are accepted and ignored.
func ParseRouterArgv(argv []string) (RouterConfig, error) {
	c := RouterConfig{Name: "router", Host: "0.0.0.0"}
	i := 0
	for i < len(argv) && !strings.HasPrefix(argv[i], "--") {
		if strings.Contains(argv[i], "sglang_router") {
			c.Name = "sglang_router"
		} else if strings.Contains(argv[i], "vllm-router") {
			c.Name = "vllm_router"
		}
		i++
	}
	var errs []error
	for i < len(argv) {
		name, inline, hasInline := strings.Cut(strings.TrimPrefix(argv[i], "--"), "=")
		i++
		var vals []string
		if hasInline {
			vals = []string{inline}
		}
		for !hasInline && i < len(argv) && !strings.HasPrefix(argv[i], "--") {
			vals = append(vals, argv[i])
			i++
		}
		one := func() string {
			if len(vals) != 1 {
				errs = append(errs, fmt.Errorf("--%s: want one value, got %d", name, len(vals)))
				return ""
			}
			return vals[0]
		}
		port := func() int {
			p, err := strconv.Atoi(one())
			if err != nil || p < 0 || p > 65535 {
				errs = append(errs, fmt.Errorf("--%s %q: want a port number", name, strings.Join(vals, " ")))
			}
			return p
		}
		switch name {
		case "pd-disaggregation":
			c.PD = true
		case "prefill", "decode":
			if len(vals) == 0 || len(vals) > 2 {
				errs = append(errs, fmt.Errorf("--%s: want URL [BOOTSTRAP_PORT], got %d values", name, len(vals)))
				continue
			}
			u, err := url.Parse(vals[0])
			if err != nil || u.Host == "" || u.Scheme != "http" {
				errs = append(errs, fmt.Errorf("--%s %q: want http://host:port", name, vals[0]))
				continue
			}
			if name == "prefill" {
				c.Prefill = append(c.Prefill, u)
			} else {
				c.Workers = append(c.Workers, u)
			}
		case "worker-urls":
			for _, v := range vals {
				u, err := url.Parse(v)
				if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "grpc") {
					errs = append(errs, fmt.Errorf("--worker-urls %q: want http://host:port or grpc://host:port", v))
					continue
				}
				// A gRPC worker (SMG in front of vLLM's gRPC server) is, in
				// simulation, a simulated engine answering HTTP.
				u.Scheme = "http"
				c.Workers = append(c.Workers, u)
			}
		case "host":
			c.Host = one()
		case "port":
			c.Port = port()
		case "prometheus-host":
			c.PrometheusHost = one()
		case "prometheus-port":
			c.PrometheusPort = port()
		case "request-id-headers":
			c.RoutingHeaders = append(c.RoutingHeaders, vals...)
		}
	}
	switch {
	case c.PD && (len(c.Prefill) == 0 || len(c.Workers) == 0):
		errs = append(errs, fmt.Errorf("--pd-disaggregation: want at least one --prefill and one --decode worker, got %d and %d", len(c.Prefill), len(c.Workers)))
	case !c.PD && (len(c.Prefill) > 0):
		errs = append(errs, errors.New("--prefill and --decode need --pd-disaggregation"))
	case len(c.Workers) == 0:
		errs = append(errs, errors.New("--worker-urls: the router needs at least one worker"))
	}
	if c.Port == 0 {
		errs = append(errs, errors.New("--port: required"))
	}
	return c, errors.Join(errs...)
}

// routingHeaders are the session headers aiperf sets per conversation
// (AIPERF_HTTP_X_*_FROM_CORRELATION_ID).
var routingHeaders = []string{"X-Correlation-Id", "X-Session-Id", "X-Smg-Routing-Key", "X-Dynamo-Session-Id"}

// Router is a simulated request router: it forwards every request to one
// of its workers (sticky per session header, round robin without one),
// streams responses through unbuffered, answers /health itself and
// exports its own request counters (not the engines'), so a scrape of the
// router does not double the engine's token counters.
type Router struct {
	cfg     RouterConfig
	proxies []*httputil.ReverseProxy
	next    atomic.Uint64

	// prefill is the PD router's client to its prefill workers.
	prefill *http.Client

	mu       sync.Mutex
	requests []int64 // per worker
	prefills []int64 // per prefill worker (PD)
	failures int64
}

// routerIdleConns is how many idle connections the router keeps to each
// worker.
const routerIdleConns = 4096

// NewRouter builds a router over cfg.Workers.
func NewRouter(cfg RouterConfig) *Router {
	r := &Router{cfg: cfg, requests: make([]int64, len(cfg.Workers)), prefills: make([]int64, len(cfg.Prefill))}
	// Keep a connection per stream in flight, as a real router's pool
	// does: net/http's default keeps 2 idle ones per worker, so at conc
	// 256 most answers ended by closing their connection and the next
	// request dialled a new one (a tenth of the router's CPU).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 0, routerIdleConns
	for i, w := range cfg.Workers {
		p := httputil.NewSingleHostReverseProxy(w)
		p.Transport = tr
		p.FlushInterval = -1 // SSE: flush every write
		p.ModifyResponse = func(resp *http.Response) error {
			if resp.Header.Get(simproto.HeaderWoke) != "" || resp.Header.Get(simproto.HeaderPrompt) != "" { // to be sent again: one request, not two
				r.mu.Lock()
				r.requests[i]--
				r.mu.Unlock()
			}
			return nil
		}
		p.ErrorHandler = func(rw http.ResponseWriter, _ *http.Request, err error) {
			r.mu.Lock()
			r.failures++
			r.mu.Unlock()
			http.Error(rw, "router: worker unavailable: "+err.Error(), http.StatusBadGateway)
		}
		r.proxies = append(r.proxies, p)
	}
	if cfg.PD {
		r.prefill = &http.Client{Transport: tr}
	}
	return r
}

// pick chooses the worker for a request.
func (r *Router) pick(req *http.Request) int { return r.pickOf(req, len(r.proxies)) }

// pickOf chooses one of n workers for a request: by its session header's
// hash, else round robin.
func (r *Router) pickOf(req *http.Request, n int) int {
	if n == 1 {
		return 0
	}
	for _, h := range append(r.cfg.RoutingHeaders, routingHeaders...) {
		if v := req.Header.Get(h); v != "" {
			f := fnv.New32a()
			_, _ = f.Write([]byte(v))
			return int(f.Sum32() % uint32(n))
		}
	}
	return int(r.next.Add(1) % uint64(n))
}

// Handler serves the routed API, /health and /metrics.
func (r *Router) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/metrics", r.serveMetrics)
	// The virtual clock's participant calls reach the one engine behind
	// the router; its metric sampling belongs to the engine's own metrics
	// endpoint, not to the router's.
	for _, path := range []string{"/sim/record", "/sim/sample", "/sim/log"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "the router keeps no virtual-clock sample log: its metrics are read at the load generator's time", http.StatusNotFound)
		})
	}
	mux.HandleFunc("/sim/", func(w http.ResponseWriter, req *http.Request) {
		if len(r.proxies) != 1 {
			http.Error(w, fmt.Sprintf("the virtual clock needs one engine behind the router, not %d", len(r.proxies)), http.StatusNotImplemented)
			return
		}
		if bufferBody(w, req) {
			r.proxies[0].ServeHTTP(w, req)
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		if r.cfg.PD && req.Header.Get(simproto.HeaderParticipant) != "" {
			http.Error(w, "the virtual clock needs one engine behind the router, not prefill and decode workers", http.StatusNotImplemented)
			return
		}
		if r.cfg.PD && req.Method == http.MethodPost {
			r.servePD(w, req)
			return
		}
		i := r.pick(req)
		r.mu.Lock()
		r.requests[i]++
		r.mu.Unlock()
		if !bufferBody(w, req) {
			return
		}
		if req.Header.Get(simproto.HeaderParticipant) != "" {
			bf := newBatchedFlusher(w)
			defer func() { _ = bf.close() }() // the end of the answer, at once
			w = bf
		}
		r.proxies[i].ServeHTTP(w, req)
	})
	return mux
}

func (r *Router) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	p := r.cfg.Name
	fmt.Fprintf(w, "# HELP %s_requests_total Requests forwarded to each worker.\n# TYPE %s_requests_total counter\n", p, p)
	for i, wk := range r.cfg.Workers {
		fmt.Fprintf(w, "%s_requests_total{worker=%q} %d\n", p, wk.String(), r.requests[i])
	}
	for i, wk := range r.cfg.Prefill {
		fmt.Fprintf(w, "%s_requests_total{worker=%q} %d\n", p, wk.String(), r.prefills[i])
	}
	fmt.Fprintf(w, "# HELP %s_request_errors_total Requests no worker answered.\n# TYPE %s_request_errors_total counter\n%s_request_errors_total %d\n", p, p, p, r.failures)
}

// Run listens on the router port (and the Prometheus port when set) until
// ctx is done, then shuts down gracefully. Both servers' goroutines end
// before Run returns.
func (r *Router) Run(ctx context.Context) error {
	h := r.Handler()
	var unused unusedConns
	servers := []*http.Server{{Addr: net.JoinHostPort(r.cfg.Host, strconv.Itoa(r.cfg.Port)), Handler: h, ConnState: unused.track}}
	if r.cfg.PrometheusPort > 0 {
		mux := http.NewServeMux()
		mux.HandleFunc("/metrics", r.serveMetrics)
		servers = append(servers, &http.Server{Addr: net.JoinHostPort(r.cfg.PrometheusHost, strconv.Itoa(r.cfg.PrometheusPort)), Handler: mux, ConnState: unused.track})
	}
	errc := make(chan error, len(servers))
	for _, s := range servers {
		ln, err := net.Listen("tcp", s.Addr)
		if err != nil {
			for _, started := range servers {
				_ = started.Close()
			}
			return fmt.Errorf("router: listen %s: %w", s.Addr, err)
		}
		go func() { errc <- s.Serve(ln) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	unused.closeAll()
	for _, s := range servers {
		_ = s.Shutdown(shutdown)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// maxRoutedBody caps a request body the router forwards.
const maxRoutedBody = 64 << 20

// bufferBody reads the request body into memory before it is forwarded.
// The proxy otherwise copies it to the worker while the worker's answer
// already streams back, and once the router has written the answer's
// headers the server may cut the unread inbound body short: the copy
// fails and the worker connection is closed mid-answer (a client saw an
// unexpected EOF about once in a thousand requests).
func bufferBody(w http.ResponseWriter, req *http.Request) bool {
	if req.Body == nil || req.Body == http.NoBody {
		return true
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxRoutedBody))
	if err != nil {
		http.Error(w, "router: reading the request body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return true
}

// servePD serves a generation request as sglang_router's PD mode does: a
// prefill worker computes the prompt (its answer is read and dropped once
// it is complete), then a decode worker, which has received the prompt's
// KV from it, generates and its answer streams to the client. A prefill
// worker's refusal (an error status) is the client's answer.
func (r *Router) servePD(w http.ResponseWriter, req *http.Request) {
	if !bufferBody(w, req) {
		return
	}
	body, _ := io.ReadAll(req.Body) // bufferBody left it in memory
	pi := r.pickOf(req, len(r.cfg.Prefill))
	r.mu.Lock()
	r.prefills[pi]++
	r.mu.Unlock()
	target := *r.cfg.Prefill[pi]
	target.Path, target.RawQuery = req.URL.Path, req.URL.RawQuery
	preq, err := http.NewRequestWithContext(req.Context(), http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, "router: "+err.Error(), http.StatusInternalServerError)
		return
	}
	preq.Header = req.Header.Clone()
	resp, err := r.prefill.Do(preq)
	if err != nil {
		r.mu.Lock()
		r.failures++
		r.mu.Unlock()
		http.Error(w, "router: prefill worker unavailable: "+err.Error(), http.StatusBadGateway)
		return
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxRoutedBody))
	resp.Body.Close()
	if err != nil {
		http.Error(w, "router: prefill worker: "+err.Error(), http.StatusBadGateway)
		return
	}
	if resp.StatusCode != http.StatusOK {
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
		return
	}
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	i := r.pick(req)
	r.mu.Lock()
	r.requests[i]++
	r.mu.Unlock()
	r.proxies[i].ServeHTTP(w, req)
}
