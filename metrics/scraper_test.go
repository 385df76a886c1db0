package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sweep/configs"
	"sweep/internal/pyjson"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handlerTransport serves requests in-process through an http.Handler: a
// socket-free server, so a synctest bubble's fake clock drives the scraper.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// fakeEngine serves a sequence of pages, one per request, then repeats the
// last; a page "" answers 503.
type fakeEngine struct {
	mu    sync.Mutex
	pages []string
	n     int
}

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	page := f.pages[min(f.n, len(f.pages)-1)]
	f.n++
	f.mu.Unlock()
	if page == "" {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = io.WriteString(w, page)
}

func page(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(promDir, name))
	require.NoError(t, err)
	return string(b)
}

func TestScraperSamplesAtIntervalAndKeepsFirstAndLast(t *testing.T) {
	before, after := page(t, "vllm_before.prom"), page(t, "vllm_after.prom")
	synctest.Test(t, func(t *testing.T) {
		eng := &fakeEngine{pages: []string{before, "", after}}
		client := NewClient(ClientOptions{HTTP: &http.Client{Transport: handlerTransport{eng}}})
		var samples []Sample
		s, err := NewScraper(ScraperOptions{
			Endpoints: []string{"http://engine/metrics"},
			Interval:  time.Second,
			Duration:  5500 * time.Millisecond,
			Client:    client,
			MaxPoints: 3,
			OnSample:  func(smp Sample) { samples = append(samples, smp) },
		})
		require.NoError(t, err)
		start := time.Now()
		res, err := s.Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 5500*time.Millisecond, time.Since(start), "stops at Duration on the fake clock")

		ep := res.Endpoints[0]
		assert.Equal(t, 6, ep.Attempts, "t=0,1,2,3,4,5")
		assert.Equal(t, 5, ep.Successes)
		assert.Equal(t, 1, ep.FailureCount)
		require.Len(t, ep.Failures, 1)
		assert.Contains(t, ep.Failures[0].Err, "HTTP 503")
		assert.Equal(t, configs.VLLM, ep.Engine)
		require.NotNil(t, ep.First)
		assert.Equal(t, start, ep.First.Time)
		assert.Equal(t, start.Add(5*time.Second), ep.Last.Time)
		assert.Len(t, ep.Series, 3, "bounded")
		assert.Equal(t, 2, ep.DroppedPoints)
		require.Len(t, samples, 6)
		assert.Error(t, samples[1].Err)

		// The third sample (t=2s) saw counters move since t=0s.
		g := samples[2].Gauges
		require.NotNil(t, g.GenThroughput)
		assert.InDelta(t, 41000.0/2, *g.GenThroughput, 1e-9)

		c, err := ep.ALCounters()
		require.NoError(t, err)
		al, err := c.AcceptanceLength()
		require.NoError(t, err)
		assert.InDelta(t, 3.39, al, 1e-12)

		h := res.Health()
		assert.Equal(t, pyjson.Rounded(1), h.IntervalSeconds)
		assert.Equal(t, 1, h.Endpoints[0].Failures)
		assert.Contains(t, h.Endpoints[0].LastError, "503")
		assert.Empty(t, h.Warning(), "one failed scrape in six is no warning")
	})
}

// TestScrapeHealthWarning: an ok point whose scrapes mostly failed
// (slow-metrics: 0 of 6) said nothing of it but in the result's
// scrape_health.
func TestScrapeHealthWarning(t *testing.T) {
	const timeout = `scrape http://e/metrics: Get "http://e/metrics": context deadline exceeded`
	for _, tc := range []struct {
		name                string
		attempts, successes int
		want                string
	}{
		{name: "none good", attempts: 6, successes: 0,
			want: "poor metrics scraping: 0 of 6 scrapes of http://e/metrics succeeded (last error: " + timeout + "): the scraped gauges (scrape_health in the result) miss the failed scrapes; check that the engine's /metrics answers promptly with Prometheus text"},
		{name: "fewer than 80% good", attempts: 10, successes: 7, want: "poor metrics scraping: 7 of 10 scrapes"},
		{name: "80% good", attempts: 10, successes: 8},
		{name: "one good of two: no window for counters", attempts: 2, successes: 1, want: "poor metrics scraping: 1 of 2 scrapes"},
		{name: "all good", attempts: 6, successes: 6},
		{name: "never scraped", attempts: 0, successes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := EndpointHealth{URL: "http://e/metrics", Attempts: tc.attempts, Successes: tc.successes, Failures: tc.attempts - tc.successes}
			if ep.Failures > 0 {
				ep.LastError = timeout
			}
			h := &ScrapeHealth{Endpoints: []EndpointHealth{{URL: "http://good/metrics", Attempts: 6, Successes: 6}, ep}}
			if tc.want == "" {
				assert.Empty(t, h.Warning())
				return
			}
			assert.True(t, strings.HasPrefix(h.Warning(), tc.want), "got %q, want it to start with %q", h.Warning(), tc.want)
			assert.NotContains(t, h.Warning(), "good/metrics")
		})
	}
	assert.Empty(t, (*ScrapeHealth)(nil).Warning(), "a result without scrape_health")
}

func TestScraperStopTakesFinalSample(t *testing.T) {
	before, after := page(t, "sglang_before.prom"), page(t, "sglang_after.prom")
	synctest.Test(t, func(t *testing.T) {
		eng := &fakeEngine{pages: []string{before, before, after}}
		client := NewClient(ClientOptions{HTTP: &http.Client{Transport: handlerTransport{eng}}})
		s, err := NewScraper(ScraperOptions{Endpoints: []string{"http://a/metrics"}, Interval: time.Minute, Client: client})
		require.NoError(t, err)
		done := make(chan *ScrapeResult)
		go func() {
			res, err := s.Run(t.Context())
			assert.NoError(t, err)
			done <- res
		}()
		time.Sleep(90 * time.Second) // fake clock: samples at 0 and 60s
		synctest.Wait()
		s.Stop()
		s.Stop() // idempotent
		res := <-done
		ep := res.Endpoints[0]
		assert.Equal(t, 3, ep.Attempts, "two ticks and the final sample")
		c, err := ep.ALCounters()
		require.NoError(t, err)
		al, err := c.AcceptanceLength()
		require.NoError(t, err)
		assert.InDelta(t, 39900.0/11800, al, 1e-12)
		assert.Empty(t, ep.Missing)
	})
}

func TestScraperContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng := &fakeEngine{pages: []string{""}}
		client := NewClient(ClientOptions{HTTP: &http.Client{Transport: handlerTransport{eng}}})
		s, err := NewScraper(ScraperOptions{Endpoints: []string{"http://a/metrics", "http://b/metrics"}, Client: client})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
		defer cancel()
		res, err := s.Run(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		require.Len(t, res.Endpoints, 2)
		for _, ep := range res.Endpoints {
			assert.Equal(t, 3, ep.Attempts)
			assert.Zero(t, ep.Successes)
			assert.Nil(t, ep.First)
			_, err := ep.ALCounters()
			assert.Error(t, err)
		}
	})
	_, err := NewScraper(ScraperOptions{})
	assert.ErrorIs(t, err, ErrNoEndpoints)
}

func TestScraperAgainstHTTPTestServer(t *testing.T) {
	body := page(t, "vllm_after.prom")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/metrics", r.URL.Path)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	n := 0
	s, err := NewScraper(ScraperOptions{Endpoints: []string{srv.URL + "/metrics"}, Interval: time.Hour,
		OnSample: func(Sample) {
			mu.Lock()
			n++
			mu.Unlock()
		}})
	require.NoError(t, err)
	s.Stop() // Run samples once at start, then once more for Stop
	res, err := s.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, res.Endpoints[0].Successes)
	assert.Equal(t, 2, n)
	assert.True(t, strings.HasPrefix(res.Endpoints[0].URL, "http://127.0.0.1"))
}

// TestScraperDurationIsAWallBound: `sweep scrape --duration 6s` ran 28-44 s
// against a never-ending or slow page (scrapes in flight were waited for,
// and select could pick the next tick over the deadline).
func TestScraperDurationIsAWallBound(t *testing.T) {
	handlers := map[string]http.HandlerFunc{
		"never answers": func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
		"answers after 1.5 intervals": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(1500 * time.Millisecond):
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
				_, _ = io.WriteString(w, "vllm:num_requests_running 1\n")
			case <-r.Context().Done():
			}
		},
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client := NewClient(ClientOptions{HTTP: &http.Client{Transport: handlerTransport{h}}, Timeout: 30 * time.Second})
				s, err := NewScraper(ScraperOptions{Endpoints: []string{"http://a/metrics"}, Interval: time.Second, Duration: 6 * time.Second, Client: client})
				require.NoError(t, err)
				start := time.Now()
				res, err := s.Run(t.Context())
				require.NoError(t, err)
				assert.Equal(t, 6*time.Second, time.Since(start), "fake clock: Run ends at Duration")
				assert.Zero(t, res.Endpoints[0].FailureCount, "a scrape cut short by the bound is not a failure")
			})
		})
	}
}

func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:8000":                  "http://localhost:8000/metrics",
		"http://10.0.0.1:30000/":          "http://10.0.0.1:30000/metrics",
		"https://host/engine/metrics?x=1": "https://host/engine/metrics?x=1",
		"http://host:8000/custom_path":    "http://host:8000/custom_path",
	} {
		got, err := EndpointURL(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"ftp://host/x", "http://", "::"} {
		_, err := EndpointURL(bad)
		assert.ErrorContains(t, err, "is not an http(s) URL", bad)
	}
}
