package simengine

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/simproto"
)

func TestParseRouterArgvPD(t *testing.T) {
	c, err := ParseRouterArgv([]string{"python", "-m", "sglang_router.launch_router", "--pd-disaggregation", "--port", "30000",
		"--policy", "consistent_hashing", "--dp-aware", "--disable-circuit-breaker",
		"--prefill", "http://127.0.0.1:8000", "--prefill", "http://127.0.0.1:8001", "8998", "--decode", "http://127.0.0.1:8002"})
	require.NoError(t, err)
	assert.True(t, c.PD)
	require.Len(t, c.Prefill, 2)
	assert.Equal(t, "127.0.0.1:8001", c.Prefill[1].Host)
	require.Len(t, c.Workers, 1, "the decode workers")
	assert.Equal(t, "127.0.0.1:8002", c.Workers[0].Host)

	_, err = ParseRouterArgv([]string{"python", "-m", "sglang_router.launch_router", "--pd-disaggregation", "--port", "1", "--prefill", "http://h:1"})
	assert.ErrorContains(t, err, "want at least one --prefill and one --decode worker, got 1 and 0")
	_, err = ParseRouterArgv([]string{"python", "-m", "sglang_router.launch_router", "--port", "1", "--prefill", "http://h:1", "--decode", "http://h:2"})
	assert.ErrorContains(t, err, "--prefill and --decode need --pd-disaggregation")
}

func TestKVLinkQueuesTransfers(t *testing.T) {
	var l kvLink
	one := kvTransferSetup + 1e9/(kvLinkBytesPerSec*8)
	assert.InDelta(t, 10+one, l.reserve(10, 1e9, 8), 1e-12)
	// A second transfer asked for at the same time waits for the first.
	assert.InDelta(t, 10+2*one, l.reserve(10, 1e9, 8), 1e-12)
	// One after the link is free starts at once.
	assert.InDelta(t, 20+one, l.reserve(20, 1e9, 8), 1e-12)
}

// TestDisaggregatedWorkersBehindPDRouter serves chat completions through
// a PD router over a prefill and a decode worker: the prefill worker
// computes every prompt and one token, the decode worker computes no
// prompt (its KV arrives by transfer, no radix cache) and generates the
// answer the client gets.
func TestDisaggregatedWorkersBehindPDRouter(t *testing.T) {
	pcfg, dcfg := testConfig(configs.SGLang), testConfig(configs.SGLang)
	pcfg.Disagg, dcfg.Disagg = DisaggPrefill, DisaggDecode
	dcfg.NoPrefixCache = true // as ConfigFromArgs sets it for a decode worker
	_, pre := startServer(t, pcfg)
	_, dec := startServer(t, dcfg)
	pu, err := url.Parse(pre)
	require.NoError(t, err)
	du, err := url.Parse(dec)
	require.NoError(t, err)
	front := httptest.NewServer(NewRouter(RouterConfig{Name: "sglang_router", PD: true, Prefill: []*url.URL{pu}, Workers: []*url.URL{du}}).Handler())
	t.Cleanup(front.Close)

	realtime := func(base, mode string) float64 {
		f := scrape(t, base)["sglang:realtime_tokens_total"]
		require.NotNil(t, f)
		total := 0.0
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "mode" && l.GetValue() == mode {
					total += m.GetCounter().GetValue()
				}
			}
		}
		return total
	}
	// Counted from here on: each worker's own warm-up request ran already.
	modes := []string{"prefill_compute", "prefill_cache", "decode"}
	before := map[string]float64{}
	for _, b := range []string{pre, dec} {
		for _, m := range modes {
			before[b+m] = realtime(b, m)
		}
	}
	delta := func(base, mode string) float64 { return realtime(base, mode) - before[base+mode] }

	prompt := strings.Repeat("refactor the parser and keep the tests green ", 40)
	for range 2 { // the same prompt twice: the prefill worker's cache hits
		resp := post(t, front.URL+"/v1/chat/completions", chatBody{Messages: userMsg(prompt), Stream: true, MaxTokens: intp(50), IgnoreEOS: true,
			StreamOptions: map[string]any{"include_usage": true}})
		require.Equal(t, 200, resp.StatusCode)
		s := readSSE(t, resp.Body)
		require.True(t, s.done)
		require.NotNil(t, s.usage)
		assert.Equal(t, 50, s.usage.CompletionTokens, "the decode worker's answer")
	}
	assert.Greater(t, delta(pre, "prefill_compute"), 0.0)
	assert.Greater(t, delta(pre, "prefill_cache"), 0.0, "the second turn hits the prefill worker's radix cache")
	assert.Zero(t, delta(pre, "decode"), "a prefill worker generates one token per request, in its prefill forward")
	assert.Zero(t, delta(dec, "prefill_compute"), "the decode worker's prompts arrive as KV")
	assert.Zero(t, delta(dec, "prefill_cache"))
	assert.Greater(t, delta(dec, "decode"), 90.0)

	// The virtual clock's participants are refused: their clock is one
	// engine's.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, front.URL+"/v1/chat/completions", strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set(simproto.HeaderParticipant, "1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotImplemented, resp.StatusCode)

	_, body := get(t, dec+"/get_server_info")
	var info map[string]any
	require.NoError(t, json.Unmarshal(body, &info))
	assert.Equal(t, "decode", info["disaggregation_mode"])
	assert.Equal(t, true, info["disable_radix_cache"])
}

func TestDisaggregationNeedsTheWallClock(t *testing.T) {
	c := testConfig(configs.SGLang)
	c.Disagg, c.Virtual = DisaggDecode, true
	_, err := c.Normalize()
	assert.ErrorContains(t, err, "runs on the wall clock")
	c.Disagg, c.Virtual = "both", false
	_, err = c.Normalize()
	assert.ErrorContains(t, err, `disaggregation mode "both"`)
}

func TestConfigFromArgsDisaggregation(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mode    string
		noCache bool
	}{
		{[]string{"--disaggregation-mode", "prefill"}, DisaggPrefill, false},
		{[]string{"--disaggregation-mode", "decode"}, DisaggDecode, true},
		{[]string{"--disaggregation-mode", "decode", "--disaggregation-decode-enable-radix-cache"}, DisaggDecode, false},
		{[]string{"--disaggregation-mode", "null"}, "", false},
	} {
		argv := append([]string{"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-397B-A17B-FP8", "--disaggregation-transfer-backend", "mori"}, tc.args...)
		cmd, err := ParseCommand(argv, ParseOptions{})
		require.NoError(t, err)
		cfg, err := ConfigFromArgs(cmd.Engine, cmd.Flags, nil)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.mode, cfg.Disagg, "%v", tc.args)
		assert.Equal(t, tc.noCache, cfg.NoPrefixCache, "%v", tc.args)
		assert.Equal(t, "mori", cfg.KVTransferBackend)
	}
}
