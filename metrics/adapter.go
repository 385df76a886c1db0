package metrics

import (
	"fmt"
	"slices"
	"strings"
	"sweep/configs"
	"time"
)

// DetectEngine picks the engine from the metric prefixes on the page (the
// engine table's DetectServing).
func DetectEngine(s *Snapshot) (configs.Engine, bool) {
	if s == nil {
		return "", false
	}
	return configs.DetectServing(func(prefixes ...string) bool {
		for name := range s.Families {
			for _, p := range prefixes {
				if strings.HasPrefix(name, p) {
					return true
				}
			}
		}
		return false
	})
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
	// NaN names the gauges read from series of which some rank reported
	// NaN ("kv_usage", ...): those ranks are left out of the figure (nil
	// when every rank did).
	NaN []string `json:"nan,omitempty"`
}

// Partial reports whether gauge (its JSON name) left out a rank that
// reported NaN.
func (g Gauges) Partial(gauge string) bool { return slices.Contains(g.NaN, gauge) }

func optOK(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// GaugesOf reads engine e's live gauges of cur; prev (may be nil) is the previous
// snapshot of the same endpoint, used for counter rates. The series are the
// engine table's (configs.LiveSeries).
func GaugesOf(e configs.Engine, prev, cur *Snapshot) Gauges {
	g := Gauges{Time: cur.Time}
	l := e.Facts().Live
	if l.Running == "" {
		return g
	}
	nan := func(gauge, series string) {
		if cur.NaNs(series, nil) > 0 {
			g.NaN = append(g.NaN, gauge)
		}
	}
	g.Running = optOK(cur.Sum(l.Running, nil))
	nan("running", l.Running)
	g.Queued = optOK(cur.Sum(l.Queued, nil))
	nan("queued", l.Queued)
	for i, name := range l.KVUsage {
		if v, ok := cur.Max(name, nil); ok || i == len(l.KVUsage)-1 || cur.NaNs(name, nil) > 0 {
			g.KVUsage = optOK(v, ok)
			nan("kv_usage", name)
			break
		}
	}
	if l.CacheHitRate != "" {
		g.CacheHitRate = optOK(cur.Mean(l.CacheHitRate, nil))
		nan("cache_hit_rate", l.CacheHitRate)
	}
	if l.GenThroughput != "" {
		g.GenThroughput = optOK(cur.Sum(l.GenThroughput, nil))
		nan("gen_throughput", l.GenThroughput)
	}
	if prev == nil {
		return g
	}
	if l.PrefixCacheHits != "" {
		hits, err1 := CounterDelta(prev, cur, l.PrefixCacheHits, nil)
		queries, err2 := CounterDelta(prev, cur, l.PrefixCacheQueries, nil)
		if err1 == nil && err2 == nil && queries > 0 {
			r := hits / queries
			g.CacheHitRate = &r
			g.NaN = slices.DeleteFunc(g.NaN, func(n string) bool { return n == "cache_hit_rate" })
		}
	}
	if dt := cur.Time.Sub(prev.Time).Seconds(); l.GenerationTokens != "" && dt > 0 {
		if gen, err := CounterDelta(prev, cur, l.GenerationTokens, nil); err == nil {
			r := gen / dt
			g.GenThroughput = &r
			g.NaN = slices.DeleteFunc(g.NaN, func(n string) bool { return n == "gen_throughput" })
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
	al := e.Facts().AL
	var err error
	for _, f := range c.Fields() {
		if f.Counter.Name == "" {
			continue
		}
		d, derr := CounterDelta(before, after, f.Counter.Name+"_total", nil)
		if derr != nil {
			if me, ok := derr.(*MissingSeriesError); ok {
				me.Engine, me.Hint = e, f.Counter.Hint
			}
			return c, derr
		}
		*f.Dst = &d
	}
	if !al.PerDraft() && !al.PerVerify() {
		err = fmt.Errorf("acceptance length: unknown engine %q", e)
	}
	return c, err
}

// Families lists every family e's adapter reads (live gauges, counter
// rates, acceptance-length counters), for KeepFamilies.
func Families(e configs.Engine) []string { return e.Facts().Live.Families }

// RequiredSeries lists the series the adapter reads for the live view;
// Missing returns the ones absent from a snapshot.
func RequiredSeries(e configs.Engine) []string { return e.Facts().Live.Required }

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
