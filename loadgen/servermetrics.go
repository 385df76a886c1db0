package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sweep/internal/stats"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"

	"sweep/metrics/aiperf"
)

// maxMetricsBody caps one /metrics response.
const maxMetricsBody = 32 << 20

// scraper polls Prometheus endpoints. scrapeAll is safe for concurrent
// use (the poller and Run's reference scrapes); export sorts the
// snapshots by time and is called after polling stopped.
type scraper struct {
	hc        *http.Client
	endpoints []string
	mu        sync.Mutex
	logs      map[string]*endpointLog
	clock     clock

	// On the virtual clock: the engines sample themselves on the
	// simulated timeline (sampled endpoints, read once at the end with
	// collect); other endpoints (a router) are fetched at main's time.
	vc      *vclock
	main    *vpart
	sampled map[string]bool
}

// record starts the engines' own sampling every interval of simulated
// time, from main's time on (virtual clock).
func (s *scraper) record(ctx context.Context, interval time.Duration) {
	s.sampled = map[string]bool{}
	var plain []string
	for _, e := range s.endpoints {
		ok, err := s.vc.record(ctx, e, s.main, interval)
		switch {
		case err != nil:
			s.mu.Lock()
			s.logs[e].lastErr = err
			s.mu.Unlock()
		case ok:
			s.sampled[e] = true
		default:
			plain = append(plain, e)
		}
	}
	s.fetchAll(ctx, plain)
}

// collect reads the sample log of every sampled endpoint (virtual clock).
func (s *scraper) collect(ctx context.Context) {
	for _, e := range s.endpoints {
		if !s.sampled[e] {
			continue
		}
		s.mu.Lock()
		l := s.logs[e]
		s.mu.Unlock()
		if err := s.vc.fetchLog(ctx, e, l); err != nil {
			l.lastErr = err
		}
	}
}

// metricsEndpoints returns the endpoints aiperf would scrape: the
// inference server's /metrics plus every --server-metrics URL, with
// http:// and /metrics added when missing, without duplicates.
func metricsEndpoints(o *Options) []string {
	if o.NoServerMetrics {
		return nil
	}
	norm := func(u string) string {
		u = strings.TrimSpace(u)
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		u = strings.TrimRight(u, "/")
		if !strings.HasSuffix(u, "/metrics") {
			u += "/metrics"
		}
		return u
	}
	out := []string{norm(o.URL)}
	for _, u := range o.ServerMetricsURLs {
		if strings.HasPrefix(u, "http") || strings.Contains(u, ":") {
			if n := norm(u); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

func newScraper(hc *http.Client, endpoints []string, c clock) *scraper {
	s := &scraper{hc: hc, endpoints: endpoints, logs: map[string]*endpointLog{}, clock: c}
	for _, e := range endpoints {
		s.logs[e] = &endpointLog{}
	}
	return s
}

// scrapeAll fetches every endpoint once. Failures are remembered, never
// fatal: an unreachable metrics endpoint does not fail a benchmark.
func (s *scraper) scrapeAll(ctx context.Context) {
	if s.vc == nil {
		s.fetchAll(ctx, s.endpoints)
		return
	}
	var plain []string
	for _, e := range s.endpoints {
		if !s.sampled[e] {
			plain = append(plain, e)
		} else if err := s.vc.sample(ctx, e, s.main); err != nil {
			s.mu.Lock()
			s.logs[e].lastErr = err
			s.mu.Unlock()
		}
	}
	s.fetchAll(ctx, plain)
}

// fetchAll fetches the endpoints once, stamped with the wall clock (or
// main's simulated time on the virtual clock).
func (s *scraper) fetchAll(ctx context.Context, endpoints []string) {
	for _, e := range endpoints {
		start := time.Now()
		body, err := s.fetch(ctx, e)
		lat := time.Since(start).Nanoseconds()
		var fams map[string]*promFamily
		if err == nil {
			fams, err = parseMetricsPage(bytes.NewReader(body), e)
			if err != nil {
				err = fmt.Errorf("scrape %w", err) // "scrape URL: text format parsing error in line N: ..."
			}
		}
		s.mu.Lock()
		l := s.logs[e]
		l.lastErr = err
		if err == nil {
			ns := s.clock.ns(start)
			if s.vc != nil {
				ns = s.vc.ns(s.main.now)
			}
			l.latencyNs += lat
			h := fnv.New64a()
			_, _ = h.Write(body) // hash.Hash.Write never fails
			if sum := h.Sum64(); len(l.updates) == 0 || sum != l.lastHash {
				l.updates = append(l.updates, ns)
				l.lastHash = sum
			}
			l.add(ns, fams)
		}
		s.mu.Unlock()
	}
}

func (s *scraper) fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: HTTP %d", url, resp.StatusCode)
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "application/json") {
		return nil, fmt.Errorf("scrape %s: JSON response, want Prometheus text", url)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBody+1))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	if len(body) > maxMetricsBody {
		return nil, fmt.Errorf("scrape %s: body larger than %d bytes", url, maxMetricsBody)
	}
	return body, nil
}

// poll scrapes every interval until ctx is done. It returns when ctx is
// done (after at most one scrape in progress finishes or times out).
func (s *scraper) poll(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.scrapeAll(ctx)
		}
	}
}

// noAnswer says why no endpoint gave a good scrape: an endpoint that
// answered with a page that does not parse is named as such, with the
// parser's error; the others did not answer (their last errors).
func (s *scraper) noAnswer() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out, silent []string
	for _, e := range s.endpoints {
		err := s.logs[e].lastErr
		switch _, parse := errors.AsType[expfmt.ParseError](err); {
		case parse:
			out = append(out, fmt.Sprintf("%s answered, but with metrics that do not parse as Prometheus text (%v)", e, err))
		case err != nil:
			silent = append(silent, fmt.Sprintf("%s: %v", e, err))
		default:
			silent = append(silent, e)
		}
	}
	if len(silent) > 0 {
		other := ""
		if len(out) > 0 {
			other = "other "
		}
		out = append(out, fmt.Sprintf("no %sserver metrics endpoint answered (%s)", other, strings.Join(silent, "; ")))
	}
	return strings.Join(out, "; ")
}

// seriesRef identifies one series across snapshots.
type seriesRef struct {
	endpoint, family, key string
}

// export builds server_metrics_export.json for the window
// [startNs, endNs]. ok is false when no endpoint answered at all (aiperf
// then writes no file).
func (s *scraper) export(benchmarkID string, startNs, endNs int64, slice time.Duration, o exportOptions) (object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.logs {
		for _, f := range l.fams {
			for _, sl := range f.series {
				if !sl.sorted {
					slices.SortStableFunc(sl.pts, func(a, b point) int { return cmp.Compare(a.ns, b.ns) })
					sl.sorted = true
				}
			}
		}
		slices.Sort(l.updates)
	}
	var successful []string
	info := object{}
	for _, e := range s.endpoints {
		l := s.logs[e]
		if l.fetches == 0 {
			continue
		}
		successful = append(successful, e)
		first, last := l.first, l.last
		var gaps []float64
		for i := 1; i < len(l.updates); i++ {
			gaps = append(gaps, float64(l.updates[i]-l.updates[i-1])/1e6)
		}
		avgGap := stats.Mean(gaps)
		slices.Sort(gaps)
		info = append(info, field{e, object{
			{"total_fetches", l.fetches},
			{"first_fetch_ns", first},
			{"last_fetch_ns", last},
			{"avg_fetch_latency_ms", rawFloat(float64(l.latencyNs) / float64(l.fetches) / 1e6)},
			{"unique_updates", len(l.updates)},
			{"first_update_ns", l.updates[0]},
			{"last_update_ns", l.updates[len(l.updates)-1]},
			{"duration_seconds", rawFloat(float64(last-first) / 1e9)},
			{"avg_update_interval_ms", rawFloat(avgGap)},
			{"median_update_interval_ms", rawFloat(stats.Percentile(gaps, 50))},
		}})
	}
	if len(successful) == 0 {
		return nil, false
	}

	// Collect families across endpoints.
	type famInfo struct {
		typ, help string
		series    []seriesRef
	}
	fams := map[string]*famInfo{}
	var famOrder []string
	for _, e := range successful {
		l := s.logs[e]
		for _, n := range l.famOrder {
			f := l.fams[n]
			fi := fams[n]
			if fi == nil {
				fi = &famInfo{typ: f.typ, help: f.help}
				fams[n] = fi
				famOrder = append(famOrder, n)
			}
			for _, k := range f.order {
				fi.series = append(fi.series, seriesRef{e, n, k})
			}
		}
	}
	slices.Sort(famOrder)

	metricsOver := func(startNs, endNs int64) object {
		window := float64(endNs-startNs) / 1e9
		metrics := object{}
		for _, n := range famOrder {
			fi := fams[n]
			typ := fi.typ
			switch typ {
			case "gauge", "counter", "histogram":
			default:
				typ = "unknown"
			}
			var series []object
			for _, ref := range fi.series {
				pts := s.points(ref)
				var so object
				switch typ {
				case "counter":
					so = counterSeries(pts, startNs, endNs, window, slice)
				case "histogram":
					so = histogramSeries(pts, startNs, endNs, window)
				default:
					so = gaugeSeries(pts, startNs, endNs, slice)
				}
				if so == nil {
					continue
				}
				labels := s.logs[ref.endpoint].fams[ref.family].series[ref.key].labels
				if labels == nil {
					labels = map[string]string{}
				}
				series = append(series, append(object{{"endpoint_url", ref.endpoint}, {"labels", labels}}, so...))
			}
			if len(series) == 0 {
				continue
			}
			m := object{{"type", typ}}
			if fi.help != "" {
				m = append(m, field{"description", fi.help})
			}
			if u := inferUnit(n); u != "" {
				m = append(m, field{"unit", u})
			}
			m = append(m, field{"series", series})
			metrics = append(metrics, field{n, m})
		}
		return metrics
	}
	ranges := object{{aiperf.PhaseProfiling, object{{"start_ns", startNs}, {"end_ns", endNs}}}}
	w := o.warmup
	if w[1] > w[0] { // aiperf exports the warm-up phase too
		ranges = append(ranges, field{aiperf.PhaseWarmup, object{{"start_ns", w[0]}, {"end_ns", w[1]}}})
	}
	out := object{
		{"schema_version", "1.1"},
		{"aiperf_version", aiperfVersion},
		{"benchmark_id", benchmarkID},
		{"summary", object{
			{"endpoints_configured", s.endpoints},
			{"endpoints_successful", successful},
			{"start_time", isoLocal(startNs)},
			{"end_time", isoLocal(endNs)},
			{"endpoint_info", info},
			{"phase_time_ranges", ranges},
		}},
		{"metrics_phase", aiperf.PhaseProfiling},
		{"metrics", metricsOver(startNs, endNs)},
	}
	if w[1] > w[0] {
		out = append(out, field{"warmup_metrics", metricsOver(w[0], w[1])})
	}
	ic := o.inputConfig
	if ic == nil {
		ic = object{{"server_metrics", object{{"formats", []string{"json", "csv"}}}}}
	}
	return append(out, field{"input_config", ic}), true
}

// exportOptions are what the server-metrics export says beyond the
// profiling window: the warm-up window (start and end ns; none when
// equal) and the run's input_config.
type exportOptions struct {
	warmup      [2]int64
	inputConfig object
}

func (s *scraper) points(ref seriesRef) []point {
	return s.logs[ref.endpoint].fams[ref.family].series[ref.key].pts
}

// valueAt returns the series value at ns: the last point at or before
// ns, or the first point after it when none is earlier. pts are sorted.
func valueAt(pts []point, ns int64) (promSample, bool) {
	if len(pts) == 0 {
		return promSample{}, false
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].ns > ns })
	if i == 0 {
		return pts[0].s, true
	}
	return pts[i-1].s, true
}

// within returns the points in [startNs, endNs] (pts sorted).
func within(pts []point, startNs, endNs int64) []point {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].ns >= startNs })
	j := sort.Search(len(pts), func(i int) bool { return pts[i].ns > endNs })
	if j < i {
		return nil
	}
	return pts[i:j]
}

func inWindow(pts []point, startNs, endNs int64) []float64 {
	var xs []float64
	for _, p := range within(pts, startNs, endNs) {
		if !math.IsNaN(p.s.Value) {
			xs = append(xs, p.s.Value)
		}
	}
	return xs
}

type timeslice struct {
	start, end int64
	complete   bool
}

func timeslices(startNs, endNs int64, d time.Duration) []timeslice {
	if d <= 0 || endNs <= startNs {
		return nil
	}
	var out []timeslice
	for t := startNs; t < endNs; t += d.Nanoseconds() {
		e := t + d.Nanoseconds()
		out = append(out, timeslice{t, min(e, endNs), e <= endNs})
	}
	return out
}

func gaugeSeries(pts []point, startNs, endNs int64, slice time.Duration) object {
	xs := inWindow(pts, startNs, endNs)
	if len(xs) == 0 {
		if v, ok := valueAt(pts, startNs); ok {
			xs = []float64{v.Value}
		} else {
			return nil
		}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	mean := stats.Mean(sorted)
	st := object{{"avg", rawFloat(mean)}, {"min", rawFloat(sorted[0])}, {"max", rawFloat(sorted[len(sorted)-1])}, {"std", rawFloat(stats.SampleStd(sorted))}}
	for _, p := range percentiles {
		st = append(st, field{p.key, rawFloat(stats.Percentile(sorted, p.p))})
	}
	o := object{{"stats", st}}
	var ts []object
	for _, sl := range timeslices(startNs, endNs, slice) {
		ys := inWindow(pts, sl.start, sl.end-1)
		if len(ys) == 0 {
			continue
		}
		m := stats.Mean(ys)
		t := object{{"start_ns", sl.start}, {"end_ns", sl.end}}
		if !sl.complete {
			t = append(t, field{"is_complete", false})
		}
		ts = append(ts, append(t, field{"avg", rawFloat(m)}, field{"min", rawFloat(slices.Min(ys))}, field{"max", rawFloat(slices.Max(ys))}))
	}
	if len(ts) > 0 {
		o = append(o, field{"timeslices", ts})
	}
	return o
}

func counterSeries(pts []point, startNs, endNs int64, window float64, slice time.Duration) object {
	a, ok1 := valueAt(pts, startNs)
	b, ok2 := valueAt(pts, endNs)
	if !ok1 || !ok2 {
		return nil
	}
	total := max(b.Value-a.Value, 0)
	st := object{{"total", rawFloat(total)}, {"rate", rawFloat(safeDiv(total, window))}}
	var ts []object
	var rates []float64
	for _, sl := range timeslices(startNs, endNs, slice) {
		x, _ := valueAt(pts, sl.start)
		y, _ := valueAt(pts, sl.end)
		d := max(y.Value-x.Value, 0)
		r := safeDiv(d, float64(sl.end-sl.start)/1e9)
		t := object{{"start_ns", sl.start}, {"end_ns", sl.end}}
		if !sl.complete {
			t = append(t, field{"is_complete", false})
		} else {
			rates = append(rates, r)
		}
		ts = append(ts, append(t, field{"total", rawFloat(d)}, field{"rate", rawFloat(r)}))
	}
	if len(rates) > 0 {
		m := stats.Mean(rates)
		st = append(st, field{"rate_avg", rawFloat(m)}, field{"rate_min", rawFloat(slices.Min(rates))},
			field{"rate_max", rawFloat(slices.Max(rates))}, field{"rate_std", rawFloat(stats.SampleStd(rates))})
	}
	o := object{{"stats", st}}
	if len(ts) > 0 {
		o = append(o, field{"timeslices", ts})
	}
	return o
}

func histogramSeries(pts []point, startNs, endNs int64, window float64) object {
	a, ok1 := valueAt(pts, startNs)
	b, ok2 := valueAt(pts, endNs)
	if !ok1 || !ok2 || b.Buckets == nil {
		return nil
	}
	type bucket struct {
		le    string
		bound float64
		count float64
	}
	var bs []bucket
	for le, c := range b.Buckets {
		bound, err := strconv.ParseFloat(le, 64) // "+Inf" too
		if err != nil {
			continue
		}
		bs = append(bs, bucket{le, bound, max(c-a.Buckets[le], 0)})
	}
	slices.SortFunc(bs, func(x, y bucket) int { return cmpFloat(x.bound, y.bound) })
	count := max(b.Count-a.Count, 0)
	sum := max(b.Sum-a.Sum, 0)
	st := object{{"count", int64(count)}, {"sum", rawFloat(sum)}}
	if count > 0 {
		st = append(st, field{"avg", rawFloat(sum / count)})
	}
	st = append(st, field{"count_rate", rawFloat(safeDiv(count, window))}, field{"sum_rate", rawFloat(safeDiv(sum, window))})
	if count > 0 {
		for _, p := range percentiles {
			st = append(st, field{p.key + "_estimate", rawFloat(bucketQuantile(p.p/100, bs, func(x bucket) (float64, float64) { return x.bound, x.count }, count, sum))})
		}
	}
	buckets := object{}
	for _, x := range bs {
		buckets = append(buckets, field{x.le, int64(x.count)})
	}
	return object{{"stats", st}, {"buckets", buckets}}
}

// bucketQuantile estimates a quantile from cumulative buckets with
// linear interpolation inside the bucket (Prometheus'
// histogram_quantile). A single observation is returned exactly (its
// value is the mean).
func bucketQuantile[B any](q float64, bs []B, get func(B) (bound, cum float64), count, sum float64) float64 {
	if count == 1 {
		return sum
	}
	rank := q * count
	prevBound, prevCum := 0.0, 0.0
	for _, b := range bs {
		bound, cum := get(b)
		if cum >= rank {
			if math.IsInf(bound, 1) {
				return prevBound
			}
			if cum == prevCum {
				return bound
			}
			return prevBound + (bound-prevBound)*(rank-prevCum)/(cum-prevCum)
		}
		prevBound, prevCum = bound, cum
	}
	return prevBound
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func safeDiv(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// inferUnit derives a metric's unit from its family name, with aiperf's
// suffix rules (server_metrics/units.py) for the suffixes vLLM and
// SGLang use.
func inferUnit(name string) string {
	suffixes := []struct{ suf, unit string }{
		{"_seconds", "seconds"}, {"_milliseconds", "ms"}, {"_ms", "ms"}, {"_bytes", "bytes"},
		{"_tokens", "tokens"}, {"_requests", "requests"}, {"request_success", "requests"},
		{"_errors", "errors"}, {"_blocks", "blocks"}, {"_ratio", "ratio"}, {"_percent", "percent"},
		{"_perc", "percent"}, {"_count", "count"},
		// aiperf 0.12.0 also reads SGLang's gauges so: num_running_reqs,
		// gen_throughput.
		{"_reqs", "requests"}, {"_throughput", "tokens/s"},
	}
	for _, s := range suffixes {
		if strings.HasSuffix(name, s.suf) {
			return s.unit
		}
	}
	if strings.Contains(name, "num_requests_") {
		return "requests"
	}
	return ""
}
