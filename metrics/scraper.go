package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"sweep/configs"
	"sweep/internal/pyjson"
)

// ScraperOptions configure a Scraper. Zero fields take the defaults noted.
type ScraperOptions struct {
	Endpoints []string      // /metrics URLs, at least one
	Interval  time.Duration // between samples, default 1s
	// Duration stops Run after this long (0 = until Stop or ctx is done).
	Duration time.Duration
	// Engine fixes the adapter; "" detects it per endpoint from the first
	// good snapshot.
	Engine configs.Engine
	// Client reads the pages; default: one attempt per tick (the next tick
	// is the retry) with a timeout of Interval, at least 1s.
	Client *Client
	// MaxPoints bounds the gauge time series kept per endpoint (oldest
	// points are dropped), default 3600. MaxFailures bounds the failures
	// kept (all are counted), default 100.
	MaxPoints, MaxFailures int
	// OnSample, if set, is called on Run's goroutine after every sample of
	// every endpoint (Err set on failure). It must return quickly.
	OnSample func(Sample)
}

// Sample is one scrape of one endpoint as reported to OnSample.
type Sample struct {
	Endpoint string
	Engine   configs.Engine
	Gauges   Gauges // zero when Err is set
	Err      error
}

// ScrapeFailure is one failed scrape.
type ScrapeFailure struct {
	Time time.Time `json:"time"`
	Err  string    `json:"error"`
}

// EndpointReport is what a Scraper kept for one endpoint: the first and
// last good snapshot (nil when every scrape failed), a bounded series of
// gauges, and the failures.
type EndpointReport struct {
	URL                 string
	Engine              configs.Engine // "" until a good snapshot showed it
	First, Last         *Snapshot
	Series              []Gauges // oldest first
	DroppedPoints       int      // points dropped from the start of Series
	Attempts, Successes int
	Failures            []ScrapeFailure // the most recent MaxFailures
	FailureCount        int
	Missing             []string // required series absent from the first good snapshot

	prev *Snapshot
}

// ScrapeResult is the outcome of Scraper.Run, one report per endpoint in
// the order given.
type ScrapeResult struct {
	Started, Stopped time.Time
	Interval         time.Duration
	Endpoints        []*EndpointReport
}

// Scraper samples engine /metrics endpoints at an interval during a run.
//
// Goroutines: Run is synchronous. Each tick it starts one goroutine per
// endpoint and waits for all of them before it continues, so no goroutine
// outlives Run. Stop may be called from any goroutine.
type Scraper struct {
	opts     ScraperOptions
	stop     chan struct{}
	stopOnce sync.Once
}

// ErrNoEndpoints is returned by NewScraper without endpoints.
var ErrNoEndpoints = errors.New("scraper: no endpoints")

// NewScraper validates opts and fills in defaults.
func NewScraper(opts ScraperOptions) (*Scraper, error) {
	if len(opts.Endpoints) == 0 {
		return nil, ErrNoEndpoints
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Client == nil {
		opts.Client = NewClient(ClientOptions{Timeout: max(opts.Interval, time.Second)})
	}
	if opts.MaxPoints <= 0 {
		opts.MaxPoints = 3600
	}
	if opts.MaxFailures <= 0 {
		opts.MaxFailures = 100
	}
	return &Scraper{opts: opts, stop: make(chan struct{})}, nil
}

// Stop asks Run to take one last sample of every endpoint (the "after"
// snapshot, once the load has drained) and return. It is idempotent and
// does not wait for Run.
func (s *Scraper) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// Run samples every endpoint immediately and then every Interval until
// Stop (one final sample, nil error), Duration (nil error) or ctx is done
// (no final sample; ctx's error). The result is complete in every case.
// Duration is a wall-clock bound: scrapes still running when it passes
// are cut short (a slow or never-ending page cannot stretch it), and they
// are not counted as failures.
func (s *Scraper) Run(ctx context.Context) (*ScrapeResult, error) {
	res := &ScrapeResult{Started: time.Now(), Interval: s.opts.Interval}
	for _, u := range s.opts.Endpoints {
		res.Endpoints = append(res.Endpoints, &EndpointReport{URL: u, Engine: s.opts.Engine})
	}
	ticker := time.NewTicker(s.opts.Interval)
	defer ticker.Stop()
	runCtx := ctx // ctx, bounded by Duration
	if s.opts.Duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, s.opts.Duration)
		defer cancel()
	}
	done := func() (*ScrapeResult, error) {
		res.Stopped = time.Now()
		return res, ctx.Err()
	}
	s.sampleAll(runCtx, res)
	for {
		// The bound first: select picks at random among ready cases, and a
		// tick is always ready after a scrape that took the interval.
		if runCtx.Err() != nil {
			return done()
		}
		select {
		case <-runCtx.Done():
			return done()
		case <-s.stop:
			s.sampleAll(runCtx, res)
			return done()
		case <-ticker.C:
			s.sampleAll(runCtx, res)
		}
	}
}

// sampleAll scrapes every endpoint concurrently and records the results.
func (s *Scraper) sampleAll(ctx context.Context, res *ScrapeResult) {
	type outcome struct {
		snap *Snapshot
		err  error
	}
	outs := make([]outcome, len(res.Endpoints))
	var wg sync.WaitGroup
	for i, ep := range res.Endpoints {
		wg.Go(func() {
			var opts []ParseOption
			if ep.Engine != "" {
				opts = append(opts, KeepFamilies(Families(ep.Engine)...))
			}
			snap, err := s.opts.Client.Scrape(ctx, ep.URL, opts...)
			outs[i] = outcome{snap, err}
		})
	}
	wg.Wait()
	for i, ep := range res.Endpoints {
		if outs[i].err != nil && ctx.Err() != nil {
			continue // cut short by the caller, not a scrape failure
		}
		sample := s.record(ep, outs[i].snap, outs[i].err)
		if s.opts.OnSample != nil {
			s.opts.OnSample(sample)
		}
	}
}

func (s *Scraper) record(ep *EndpointReport, snap *Snapshot, err error) Sample {
	ep.Attempts++
	if err != nil {
		ep.FailureCount++
		ep.Failures = append(ep.Failures, ScrapeFailure{Time: time.Now(), Err: err.Error()})
		if len(ep.Failures) > s.opts.MaxFailures {
			ep.Failures = ep.Failures[len(ep.Failures)-s.opts.MaxFailures:]
		}
		return Sample{Endpoint: ep.URL, Engine: ep.Engine, Err: err}
	}
	ep.Successes++
	if ep.Engine == "" {
		ep.Engine, _ = DetectEngine(snap)
	}
	if ep.First == nil {
		ep.First = snap
		for _, e := range Missing(ep.Engine, snap) {
			if me, ok := errors.AsType[*MissingSeriesError](e); ok {
				ep.Missing = append(ep.Missing, me.Series)
			}
		}
	}
	ep.Last = snap
	g := GaugesOf(ep.Engine, ep.prev, snap)
	ep.prev = snap
	ep.Series = append(ep.Series, g)
	if len(ep.Series) > s.opts.MaxPoints {
		drop := len(ep.Series) - s.opts.MaxPoints
		ep.Series = append(ep.Series[:0], ep.Series[drop:]...)
		ep.DroppedPoints += drop
	}
	return Sample{Endpoint: ep.URL, Engine: ep.Engine, Gauges: g}
}

// ScrapeHealth is the scrape_health block of our result: how well sweep's
// own scraping of the engine went during the point.
type ScrapeHealth struct {
	IntervalSeconds pyjson.Rounded   `json:"interval_seconds"`
	Endpoints       []EndpointHealth `json:"endpoints"`
}

// EndpointHealth summarises one endpoint's scraping.
type EndpointHealth struct {
	URL           string   `json:"url"`
	Engine        string   `json:"engine"`
	Attempts      int      `json:"attempts"`
	Successes     int      `json:"successes"`
	Failures      int      `json:"failures"`
	FirstGood     string   `json:"first_good,omitempty"` // RFC 3339
	LastGood      string   `json:"last_good,omitempty"`
	LastError     string   `json:"last_error,omitempty"`
	MissingSeries []string `json:"missing_series,omitempty"`
	Points        int      `json:"points"` // gauge points kept
}

// Health summarises the result for the aggregate JSON.
func (r *ScrapeResult) Health() *ScrapeHealth {
	h := &ScrapeHealth{IntervalSeconds: pyjson.Rounded(r.Interval.Seconds()), Endpoints: []EndpointHealth{}}
	for _, ep := range r.Endpoints {
		eh := EndpointHealth{URL: ep.URL, Engine: string(ep.Engine), Attempts: ep.Attempts,
			Successes: ep.Successes, Failures: ep.FailureCount, MissingSeries: ep.Missing, Points: len(ep.Series)}
		if ep.First != nil {
			eh.FirstGood = ep.First.Time.UTC().Format(time.RFC3339Nano)
			eh.LastGood = ep.Last.Time.UTC().Format(time.RFC3339Nano)
		}
		if n := len(ep.Failures); n > 0 {
			eh.LastError = ep.Failures[n-1].Err
		}
		h.Endpoints = append(h.Endpoints, eh)
	}
	return h
}

// poorShare is the share of good scrapes below which an endpoint's
// scraping is poor (EndpointHealth.Poor).
const poorShare = 0.8

// Poor reports whether the endpoint's scraping went badly: fewer than
// poorShare of the attempts succeeded, or fewer than two of two or more
// (no window for counters).
func (h EndpointHealth) Poor() bool {
	return float64(h.Successes) < poorShare*float64(h.Attempts) || h.Attempts >= 2 && h.Successes < 2
}

// String is "0 of 6 scrapes of URL succeeded (last error: ...)".
func (h EndpointHealth) String() string {
	s := fmt.Sprintf("%d of %d scrapes of %s succeeded", h.Successes, h.Attempts, h.URL)
	if h.LastError != "" {
		s += " (last error: " + h.LastError + ")"
	}
	return s
}

// Warning says which endpoints' scraping was Poor, and what to check;
// "" when none was.
func (h *ScrapeHealth) Warning() string {
	if h == nil {
		return ""
	}
	var poor []string
	for _, ep := range h.Endpoints {
		if ep.Poor() {
			poor = append(poor, ep.String())
		}
	}
	if len(poor) == 0 {
		return ""
	}
	return "poor metrics scraping: " + strings.Join(poor, "; ") +
		": the scraped gauges (scrape_health in the result) miss the failed scrapes; check that the engine's /metrics answers promptly with Prometheus text"
}

// ALCounters returns the acceptance-length counters between the first and
// last good snapshot of the endpoint.
func (ep *EndpointReport) ALCounters() (ALCounters, error) {
	if ep.First == nil || ep.Last == nil || ep.First == ep.Last {
		return ALCounters{Engine: ep.Engine}, errors.New("need two good snapshots of " + ep.URL)
	}
	return ALCountersOf(ep.Engine, ep.First, ep.Last)
}

// EndpointURL is the /metrics URL of s: host:port (http), a base URL,
// or a full URL with its own path.
func EndpointURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%q is not an http(s) URL", s)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return u.String(), nil
}
