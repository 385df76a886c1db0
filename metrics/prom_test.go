package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sweep/configs"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const promDir = "../testdata/metrics"

func readSnap(t testing.TB, name string) *Snapshot {
	t.Helper()
	s, err := ReadSnapshotFile(filepath.Join(promDir, name))
	require.NoError(t, err)
	return s
}

func TestKeepFamiliesParsesOnlyThose(t *testing.T) {
	page := synthPage(20 << 10)
	all, err := ParseText(strings.NewReader(page), "page")
	require.NoError(t, err)
	some, err := ParseText(strings.NewReader(page), "page", KeepFamilies(Families(configs.SGLang)...))
	require.NoError(t, err)
	assert.True(t, all.Has("sglang:queue_time_seconds"))
	assert.False(t, some.Has("sglang:queue_time_seconds"))
	for _, fam := range Families(configs.SGLang) {
		assert.Equal(t, all.Has(fam), some.Has(fam), fam)
		assert.Equal(t, all.Values(fam, nil), some.Values(fam, nil), fam)
	}
	// Histogram suffixes are matched too.
	h, err := ParseText(strings.NewReader(page), "page", KeepFamilies("sglang:time_to_first_token_seconds"))
	require.NoError(t, err)
	require.True(t, h.Has("sglang:time_to_first_token_seconds"))
	assert.Equal(t, uint64(4), h.Families["sglang:time_to_first_token_seconds"].Metric[0].Histogram.GetSampleCount())
}

func TestParseTextErrorHasLine(t *testing.T) {
	_, err := ReadSnapshotFile(filepath.Join(promDir, "malformed.prom"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "malformed.prom: text format parsing error in line 2:")
	pe, ok := errors.AsType[expfmt.ParseError](err)
	require.True(t, ok, "the expfmt error is wrapped, not flattened: %v", err)
	assert.Equal(t, 2, pe.Line)
}

func TestSnapshotSumsAcrossRanksAndLabels(t *testing.T) {
	s := readSnap(t, "sglang_after.prom")
	tests := []struct {
		name string
		fn   func() (float64, bool)
		want float64
	}{
		{"running summed over dp ranks", func() (float64, bool) { return s.Sum("sglang:num_running_reqs", nil) }, 8},
		{"counter by base name sums is_streaming", func() (float64, bool) { return s.Sum("sglang:generation_tokens", nil) }, 41024},
		{"counter by exposed name", func() (float64, bool) { return s.Sum("sglang:generation_tokens_total", nil) }, 41024},
		{"filtered by label", func() (float64, bool) {
			return s.Sum("sglang:num_requests", func(l map[string]string) bool { return l["is_streaming"] == "true" })
		}, 70},
		{"max over ranks", func() (float64, bool) { return s.Max("sglang:token_usage", nil) }, 0.62},
		{"mean over ranks", func() (float64, bool) { return s.Mean("sglang:cache_hit_rate", nil) }, 0.93},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.fn()
			require.True(t, ok)
			assert.InDelta(t, tc.want, got, 1e-9)
		})
	}
	_, ok := s.Sum("sglang:does_not_exist", nil)
	assert.False(t, ok)
}

func TestCounterDeltaHandlesResetsAndNewSeries(t *testing.T) {
	before, after := readSnap(t, "vllm_before.prom"), readSnap(t, "vllm_after.prom")
	// engine 0 grew by 10000; engine 1 restarted (5000 -> 3000) and counts from 0.
	d, err := CounterDelta(before, after, "vllm:prefix_cache_queries", nil)
	require.NoError(t, err)
	assert.Equal(t, 13000.0, d)

	// A series absent before started at zero.
	empty := &Snapshot{Families: nil}
	d, err = CounterDelta(empty, after, "vllm:generation_tokens", nil)
	require.NoError(t, err)
	assert.Equal(t, 41100.0, d)

	_, err = CounterDelta(before, after, "vllm:nope", nil)
	var me *MissingSeriesError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, "vllm:nope", me.Series)
}

func TestALCountersFromSnapshots(t *testing.T) {
	tests := []struct {
		name          string
		engine        configs.Engine
		before, after string
		want          float64
	}{
		// (Δgen − Δreq) / Δverify = (40000 − 100) / 11800
		{"sglang counters summed over is_streaming", configs.SGLang, "sglang_before.prom", "sglang_after.prom", 39900.0 / 11800},
		// engine 1 reset between snapshots; 1 + 286800/120000
		{"vllm with a reset engine", configs.VLLM, "vllm_before.prom", "vllm_after.prom", 3.39},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ALCountersOf(tc.engine, readSnap(t, tc.before), readSnap(t, tc.after))
			require.NoError(t, err)
			al, err := c.AcceptanceLength()
			require.NoError(t, err)
			assert.InDelta(t, tc.want, al, 1e-12)
			check := CheckAL("scrape", c, ptr(3.39), 0)
			assert.Equal(t, ALPass, check.Verdict, "AL %v vs 3.39 ± 0.05", al)
		})
	}
	// The gauge (14.1, the last window only) is not what we report.
	c, err := ALCountersOf(configs.SGLang, readSnap(t, "sglang_before.prom"), readSnap(t, "sglang_after.prom"))
	require.NoError(t, err)
	al, _ := c.AcceptanceLength()
	assert.NotEqual(t, 14.1, al)
}

func TestALCountersMissingSeriesIsNamed(t *testing.T) {
	after := readSnap(t, "sglang_after.prom")
	delete(after.Families, "sglang:spec_verify_calls_total")
	_, err := ALCountersOf(configs.SGLang, readSnap(t, "sglang_before.prom"), after)
	me, ok := errors.AsType[*MissingSeriesError](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, configs.SGLang, me.Engine)
	assert.Equal(t, "sglang:spec_verify_calls_total", me.Series)
	assert.Contains(t, err.Error(), "sglang: required series sglang:spec_verify_calls_total is absent")
}

func TestCheckALVerdicts(t *testing.T) {
	vllm := func(acc, drafts float64) ALCounters {
		return ALCounters{Engine: configs.VLLM, Accepted: &acc, Drafts: &drafts}
	}
	tests := []struct {
		name      string
		c         ALCounters
		golden    *float64
		tol       float64
		verdict   string
		measured  bool
		wantDelta float64
	}{
		{"pass inside default band", vllm(2.44, 1), ptr(3.39), 0, ALPass, true, 0.05},
		{"fail outside band", vllm(2.45, 1), ptr(3.39), 0, ALFail, true, 0.06},
		{"wider band passes", vllm(2.45, 1), ptr(3.39), 0.1, ALPass, true, 0.06},
		{"no golden", vllm(2, 1), nil, 0, ALNoGolden, true, 0},
		{"no spec steps", vllm(0, 0), ptr(3.39), 0, ALNotMeasured, false, 0},
		{"counters missing", ALCounters{Engine: configs.SGLang}, ptr(3.39), 0, ALNotMeasured, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CheckAL("test", tc.c, tc.golden, tc.tol)
			assert.Equal(t, tc.verdict, c.Verdict, "reason %q", c.Reason)
			assert.Equal(t, tc.measured, c.Measured != nil)
			if tc.wantDelta != 0 {
				require.NotNil(t, c.Delta)
				assert.InDelta(t, tc.wantDelta, float64(*c.Delta), 1e-9)
			}
		})
	}
}

func TestEngineGauges(t *testing.T) {
	t.Run("sglang", func(t *testing.T) {
		g := GaugesOf(configs.SGLang, nil, readSnap(t, "sglang_after.prom"))
		assert.Equal(t, 8.0, *g.Running)
		assert.Equal(t, 1.0, *g.Queued)
		assert.Equal(t, 0.62, *g.KVUsage)
		assert.InDelta(t, 0.93, *g.CacheHitRate, 1e-12)
		assert.Equal(t, 4211.75, *g.GenThroughput)
		assert.Empty(t, g.NaN)
	})
	// A rank reporting NaN was left out with no sign: KV % showed the
	// other rank's 20% as the fullest rank's.
	t.Run("a rank's NaN is marked", func(t *testing.T) {
		page := `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{tp_rank="0"} 3
sglang:num_running_reqs{tp_rank="1"} 5
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{tp_rank="0"} 1
# TYPE sglang:token_usage gauge
sglang:token_usage{tp_rank="0"} 0.2
sglang:token_usage{tp_rank="1"} NaN
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{tp_rank="0"} NaN
sglang:cache_hit_rate{tp_rank="1"} NaN
`
		s, err := ParseText(strings.NewReader(page), "page")
		require.NoError(t, err)
		g := GaugesOf(configs.SGLang, nil, s)
		assert.Equal(t, 0.2, *g.KVUsage)
		assert.Nil(t, g.CacheHitRate)
		assert.Equal(t, []string{"kv_usage", "cache_hit_rate"}, g.NaN)
		assert.True(t, g.Partial("kv_usage"))
		assert.False(t, g.Partial("running"))
	})
	t.Run("vllm rates need a previous snapshot", func(t *testing.T) {
		before, after := readSnap(t, "vllm_before.prom"), readSnap(t, "vllm_after.prom")
		g := GaugesOf(configs.VLLM, nil, after)
		assert.Equal(t, 16.0, *g.Running)
		assert.Equal(t, 3.0, *g.Queued)
		assert.Equal(t, 0.718, *g.KVUsage)
		assert.Nil(t, g.CacheHitRate)
		assert.Nil(t, g.GenThroughput)
		after.Time = before.Time.Add(10 * time.Second)
		g = GaugesOf(configs.VLLM, before, after)
		assert.InDelta(t, 11400.0/13000, *g.CacheHitRate, 1e-12)
		assert.InDelta(t, (34000.0+7000)/10, *g.GenThroughput, 1e-9)
	})
	t.Run("missing required series", func(t *testing.T) {
		s := readSnap(t, "vllm_after.prom")
		delete(s.Families, "vllm:num_requests_waiting")
		errs := Missing(configs.VLLM, s)
		require.Len(t, errs, 1)
		assert.Contains(t, errs[0].Error(), "vllm:num_requests_waiting")
	})
	e, ok := DetectEngine(readSnap(t, "vllm_after.prom"))
	assert.True(t, ok)
	assert.Equal(t, configs.VLLM, e)
}

func ptr(f float64) *float64 { return &f }

func servePage(t *testing.T, page string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/metrics", r.URL.Path)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClientScrape(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(promDir, "sglang_after.prom"))
	require.NoError(t, err)

	t.Run("ok", func(t *testing.T) {
		srv := servePage(t, string(page))
		s, err := NewClient(ClientOptions{}).Scrape(t.Context(), srv.URL+"/metrics")
		require.NoError(t, err)
		assert.True(t, s.Has("sglang:num_running_reqs"))
		assert.False(t, s.Time.IsZero())
	})

	t.Run("a failed scrape is tried once", func(t *testing.T) {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			http.NotFound(w, r)
		}))
		t.Cleanup(srv.Close)
		_, err := NewClient(ClientOptions{}).Scrape(t.Context(), srv.URL+"/metrics")
		se, ok := errors.AsType[*HTTPStatusError](err)
		require.True(t, ok, "got %v", err)
		assert.Equal(t, http.StatusNotFound, se.StatusCode)
		assert.Equal(t, int32(1), calls.Load())
	})

	t.Run("body size cap", func(t *testing.T) {
		srv := servePage(t, string(page))
		_, err := NewClient(ClientOptions{MaxBodyBytes: 100}).Scrape(t.Context(), srv.URL+"/metrics")
		assert.ErrorIs(t, err, ErrBodyTooLarge)
		// Exactly at the limit is fine.
		_, err = NewClient(ClientOptions{MaxBodyBytes: int64(len(page))}).Scrape(t.Context(), srv.URL+"/metrics")
		assert.NoError(t, err)
	})

	t.Run("json endpoint is rejected", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
		}))
		t.Cleanup(srv.Close)
		_, err := NewClient(ClientOptions{}).Scrape(t.Context(), srv.URL+"/metrics")
		assert.ErrorContains(t, err, "want Prometheus text")
	})

	t.Run("context cancellation stops a blocked scrape", func(t *testing.T) {
		release := make(chan struct{})
		arrived := make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) }) // runs before srv.Close
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := NewClient(ClientOptions{Timeout: time.Minute}).Scrape(ctx, srv.URL+"/metrics")
			errc <- err
		}()
		<-arrived
		cancel()
		err := <-errc
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// synthPage builds an engine page of about size bytes: the real families
// plus per-rank histograms, as a TP8 DP-attention SGLang shows.
func synthPage(size int) string {
	var b strings.Builder
	base, _ := os.ReadFile(filepath.Join(promDir, "sglang_after.prom"))
	b.Write(base)
	b.WriteString("# HELP sglang:queue_time_seconds Histogram of queueing time in seconds.\n# TYPE sglang:queue_time_seconds histogram\n")
	les := []string{"0.005", "0.01", "0.05", "0.1", "0.5", "1.0", "5.0", "10.0", "+Inf"}
	for rank := 0; b.Len() < size; rank++ {
		lab := fmt.Sprintf(`dp_rank="%d",engine_type="unified",model_name="deepseek-ai/DeepSeek-V4-Pro",moe_ep_rank="%d",pp_rank="0",tp_rank="0"`, rank, rank)
		for i, le := range les {
			fmt.Fprintf(&b, "sglang:queue_time_seconds_bucket{%s,le=\"%s\"} %d.0\n", lab, le, i*7+rank)
		}
		fmt.Fprintf(&b, "sglang:queue_time_seconds_sum{%s} %g\n", lab, 12.5+float64(rank))
		fmt.Fprintf(&b, "sglang:queue_time_seconds_count{%s} %d.0\n", lab, 56+rank)
	}
	return b.String()
}

// BenchmarkParseAndAdapt measures one scrape's CPU work: parse a 50 KB
// exposition page and update the adapters (gauges and AL counters), as the
// Scraper does (only the adapter's families) and with every family.
func BenchmarkParseAndAdapt(b *testing.B) {
	b.Run("adapter-families", func(b *testing.B) {
		benchParseAndAdapt(b, KeepFamilies(Families(configs.SGLang)...))
	})
	b.Run("all-families", func(b *testing.B) { benchParseAndAdapt(b) })
}

func benchParseAndAdapt(b *testing.B, opts ...ParseOption) {
	page := synthPage(50 << 10)
	before := readSnap(b, "sglang_before.prom")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := ParseText(strings.NewReader(page), "bench", opts...)
		if err != nil {
			b.Fatal(err)
		}
		_ = GaugesOf(configs.SGLang, before, s)
		if _, err := ALCountersOf(configs.SGLang, before, s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParseTextSampleLimit: a page of 500,000 series took 0.6-1 GB to
// scrape; pages over the sample limit are refused, naming it.
func TestParseTextSampleLimit(t *testing.T) {
	gen := func(n int) string {
		var b strings.Builder
		b.WriteString("# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\n\n")
		for i := range n {
			fmt.Fprintf(&b, "vllm:num_requests_running{engine=\"%d\"} 1\n", i)
		}
		b.WriteString("# TYPE other gauge\nother 1\n")
		return b.String()
	}
	_, err := ParseText(strings.NewReader(gen(DefaultMaxSamples-1)), "p")
	require.NoError(t, err, "comments and blank lines are not samples")
	_, err = ParseText(strings.NewReader(gen(DefaultMaxSamples)), "p")
	require.ErrorIs(t, err, ErrTooManySamples)
	assert.EqualError(t, err, "p: metrics page has too many samples: more than 50000, sweep's sample limit per page")

	_, err = ParseText(strings.NewReader(gen(10)), "p", MaxSamples(10))
	assert.ErrorIs(t, err, ErrTooManySamples)
	_, err = ParseText(strings.NewReader(gen(10)), "p", MaxSamples(11))
	assert.NoError(t, err)
	// With KeepFamilies only the kept samples count.
	snap, err := ParseText(strings.NewReader(gen(10)), "p", MaxSamples(1), KeepFamilies("other"))
	require.NoError(t, err)
	assert.Contains(t, snap.Families, "other")
}
