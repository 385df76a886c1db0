package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sweep/configs"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScrapeFlags(t *testing.T) {
	got, err := parseOptions(t, newScrapeCmd, "localhost:8000", "http://h:1/custom", "--interval", "250ms", "--duration", "0", "--engine", "vllm")
	require.NoError(t, err)
	assert.Equal(t, []string{"http://localhost:8000/metrics", "http://h:1/custom"}, got.URLs)
	assert.Equal(t, 250*time.Millisecond, got.Interval)
	assert.Zero(t, got.Duration)
	assert.Equal(t, configs.VLLM, got.Engine)

	_, err = parseOptions(t, newScrapeCmd, "--engine", "trt")
	assert.ErrorContains(t, err, "trt")
}

// handlerTransport serves requests in-process (no socket), so scrapeRun
// runs on synctest's fake clock.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func TestScrapeRunTable(t *testing.T) {
	before, err := os.ReadFile("../../testdata/metrics/vllm_before.prom")
	require.NoError(t, err)
	after, err := os.ReadFile("../../testdata/metrics/vllm_after.prom")
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				_, _ = w.Write(before)
				return
			}
			_, _ = w.Write(after)
		})
		var out, errOut bytes.Buffer
		err := scrapeRun(t.Context(), &scrapeOptions{
			IO:       &IOStreams{Out: &out, ErrOut: &errOut},
			URLs:     []string{"http://engine:8000/metrics"},
			Interval: time.Second, Duration: 2500 * time.Millisecond,
			HTTP: &http.Client{Transport: handlerTransport{h}},
		})
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		require.Len(t, lines, 4, out.String())
		assert.Regexp(t, `TIME\s+RUNNING\s+QUEUED\s+KV %\s+HIT %\s+GEN TOK/S`, lines[0])
		assert.Regexp(t, `\s0\s+0\s+0\.0\s+-\s+-\s*$`, lines[1], "first sample: idle, no rates yet")
		// 41000 tokens in 1 s; hit rate from counter deltas (one engine reset).
		assert.Regexp(t, `\s16\s+3\s+71\.8\s+87\.7\s+41000\s*$`, lines[2])
		assert.Contains(t, errOut.String(), "3 scrapes, 0 failed, engine vllm")
		assert.Contains(t, errOut.String(), "acceptance length over the window: 3.390")
	})
}

func TestScrapeCLIAgainstServer(t *testing.T) {
	page, err := os.ReadFile("../../testdata/metrics/sglang_after.prom")
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/metrics", r.URL.Path)
		_, _ = w.Write(page)
	}))
	t.Cleanup(srv.Close)
	code, stdout, stderr := runCLI(t, "scrape", srv.URL, "--interval", "10ms", "--duration", "500ms")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.GreaterOrEqual(t, len(lines), 2, stdout)
	assert.Regexp(t, `\s8\s+1\s+62\.0\s+93\.0\s+4212\s*$`, lines[1])
	assert.Contains(t, stderr, "engine sglang")
}

func TestScrapeCLIAllFail(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(srv.Close)
	code, stdout, stderr := runCLI(t, "scrape", srv.URL+"/metrics", "--interval", "100ms", "--duration", "500ms") // several attempts even on a loaded machine
	assert.Equal(t, exitError, code)
	assert.Contains(t, stdout, "scrape failed")
	assert.Contains(t, stderr, "no successful scrape")
}
