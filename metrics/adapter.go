package metrics

import (
	"fmt"
	"strings"
	"sweep/configs"
	"time"
)

// DetectEngine picks the engine from the metric prefixes on the page.
func DetectEngine(s *Snapshot) (configs.Engine, bool) {
	if s == nil {
		return "", false
	}
	for name := range s.Families {
		switch {
		case strings.HasPrefix(name, "sglang:"):
			return configs.SGLang, true
		case strings.HasPrefix(name, "vllm:"):
			return configs.VLLM, true
		}
	}
	return "", false
}

// Gauges are the live figures that matter during a run, read from one
// snapshot (and the previous one for rates). A nil field means the engine
// does not export it, or there is no previous snapshot for a rate.
//
// Across ranks: running and queued requests and throughput are summed
// (each DP rank serves its own requests); KV usage is the fullest rank;
// the cache hit rate is the mean over ranks (SGLang gauge) or the ratio
// of summed counter increases (vLLM).
type Gauges struct {
	Time          time.Time `json:"time"`
	Running       *float64  `json:"running,omitempty"`        // requests being decoded
	Queued        *float64  `json:"queued,omitempty"`         // requests waiting
	KVUsage       *float64  `json:"kv_usage,omitempty"`       // 0-1
	CacheHitRate  *float64  `json:"cache_hit_rate,omitempty"` // 0-1
	GenThroughput *float64  `json:"gen_throughput,omitempty"` // generated tokens/s
}

func optOK(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// GaugesOf reads engine e's live gauges of cur; prev (may be nil) is the previous
// snapshot of the same endpoint, used for counter rates.
func GaugesOf(e configs.Engine, prev, cur *Snapshot) Gauges {
	g := Gauges{Time: cur.Time}
	switch e {
	case configs.SGLang:
		g.Running = optOK(cur.Sum("sglang:num_running_reqs", nil))
		g.Queued = optOK(cur.Sum("sglang:num_queue_reqs", nil))
		g.KVUsage = optOK(cur.Max("sglang:token_usage", nil))
		g.CacheHitRate = optOK(cur.Mean("sglang:cache_hit_rate", nil))
		g.GenThroughput = optOK(cur.Sum("sglang:gen_throughput", nil))
	case configs.VLLM:
		g.Running = optOK(cur.Sum("vllm:num_requests_running", nil))
		g.Queued = optOK(cur.Sum("vllm:num_requests_waiting", nil))
		if v, ok := cur.Max("vllm:kv_cache_usage_perc", nil); ok {
			g.KVUsage = &v
		} else {
			g.KVUsage = optOK(cur.Max("vllm:gpu_cache_usage_perc", nil))
		}
		if prev != nil {
			hits, err1 := CounterDelta(prev, cur, "vllm:prefix_cache_hits", nil)
			queries, err2 := CounterDelta(prev, cur, "vllm:prefix_cache_queries", nil)
			if err1 == nil && err2 == nil && queries > 0 {
				r := hits / queries
				g.CacheHitRate = &r
			}
			if dt := cur.Time.Sub(prev.Time).Seconds(); dt > 0 {
				if gen, err := CounterDelta(prev, cur, "vllm:generation_tokens", nil); err == nil {
					r := gen / dt
					g.GenThroughput = &r
				}
			}
		}
	}
	return g
}

// ALCountersOf returns engine e's acceptance-length counter increases between two
// snapshots of one engine (take them idle, before and after the load:
// SGLang's counters advance only when requests finish). Counters are
// summed over label sets (tp/dp rank, engine, is_streaming) with reset
// handling. A missing counter is a *MissingSeriesError naming it.
func ALCountersOf(e configs.Engine, before, after *Snapshot) (ALCounters, error) {
	c := ALCounters{Engine: e}
	delta := func(name, hint string) (*float64, error) {
		d, err := CounterDelta(before, after, name, nil)
		if err != nil {
			if me, ok := err.(*MissingSeriesError); ok {
				me.Engine, me.Hint = e, hint
			}
			return nil, err
		}
		return &d, nil
	}
	var err error
	switch e {
	case configs.VLLM:
		const hint = "speculative decoding must be on; vLLM exports it per engine"
		if c.Accepted, err = delta("vllm:spec_decode_num_accepted_tokens_total", hint); err != nil {
			return c, err
		}
		if c.Drafts, err = delta("vllm:spec_decode_num_drafts_total", hint); err != nil {
			return c, err
		}
	case configs.SGLang:
		if c.GenerationTokens, err = delta("sglang:generation_tokens_total", "start SGLang with --enable-metrics"); err != nil {
			return c, err
		}
		if c.Requests, err = delta("sglang:num_requests_total", "start SGLang with --enable-metrics"); err != nil {
			return c, err
		}
		if c.VerifyCalls, err = delta("sglang:spec_verify_calls_total", "needs an SGLang build that exports it (2026+) and speculative decoding on"); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("acceptance length: unknown engine %q", e)
	}
	return c, nil
}

// Families lists every family e's adapter reads (live gauges, counter
// rates, acceptance-length counters), for KeepFamilies.
func Families(e configs.Engine) []string {
	switch e {
	case configs.SGLang:
		return []string{"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage",
			"sglang:cache_hit_rate", "sglang:gen_throughput", "sglang:generation_tokens",
			"sglang:num_requests", "sglang:spec_verify_calls", "sglang:prompt_tokens", "sglang:cached_tokens"}
	case configs.VLLM:
		return []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
			"vllm:gpu_cache_usage_perc", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries",
			"vllm:generation_tokens", "vllm:prompt_tokens", "vllm:spec_decode_num_accepted_tokens",
			"vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens"}
	}
	return nil
}

// RequiredSeries lists the series the adapter reads for the live view;
// Missing returns the ones absent from a snapshot.
func RequiredSeries(e configs.Engine) []string {
	switch e {
	case configs.SGLang:
		return []string{"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage"}
	case configs.VLLM:
		return []string{"vllm:num_requests_running", "vllm:num_requests_waiting"}
	}
	return nil
}

// Missing returns a *MissingSeriesError for each required series absent
// from s.
func Missing(e configs.Engine, s *Snapshot) []error {
	var errs []error
	for _, name := range RequiredSeries(e) {
		if !s.Has(name) {
			errs = append(errs, &MissingSeriesError{Engine: e, Series: name, Endpoint: s.Endpoint})
		}
	}
	return errs
}
