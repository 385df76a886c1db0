// Package metrics reads an engine's Prometheus endpoint: parsing through
// expfmt (Snapshot), the HTTP client, the engine adapters that turn
// SGLang/vLLM series into gauges and speculative-decoding counters, the
// acceptance-length check, and the Scraper that samples an engine during a
// load. What a point produces after its load (aiperf artifacts, the
// aggregate result) lives in metrics/aiperf and metrics/result.
//
// During a run, a Scraper samples the engine and keeps the first and last
// good snapshot plus a bounded series of live gauges:
//
//	s, err := metrics.NewScraper(metrics.ScraperOptions{
//		Endpoints: []string{"http://localhost:8000/metrics"},
//		Interval:  time.Second,
//	})
//	go func() { scraped, scrapeErr = s.Run(ctx) }() // returns after Stop
//	... run the load, wait for the engine to drain ...
//	s.Stop() // one last sample, then Run returns
//	counters, err := scraped.Endpoints[0].ALCounters() // Δ between first and last snapshot
//	check := metrics.CheckAL("scrape", counters, golden, metrics.DefaultALTolerance)
//
// Parsing uses prometheus/common/expfmt; KeepFamilies skips the families an
// adapter never reads, which keeps a scrape of a large page cheap.
package metrics
