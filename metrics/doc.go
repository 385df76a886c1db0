// Package metrics is everything a benchmark point produces after its load
// has run: scraping the engine's Prometheus endpoint, reading aiperf's
// artifacts, measuring speculative acceptance length, validating the run and
// writing the aggregate result JSON InferenceX's dashboard ingests.
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
//
// After the run, the artifacts are aggregated with InferenceX's maths and
// validated with its rules:
//
//	facts := metrics.RunFacts{...}         // from the plan; or metrics.FromEnv(env)
//	in, err := metrics.LoadInputs(resultDir, facts.HFHubCache)
//	res, err := metrics.Aggregate(in, facts)
//	ep := scraped.Endpoints[0]
//	counters, err := ep.ALCounters()      // Δ between first and last snapshot
//	res.AcceptanceLength = metrics.CheckAL("scrape", counters, facts.GoldenAL, facts.ALTolerance)
//	res.ScrapeHealth = scraped.Health()
//	err = metrics.WriteResult(filepath.Join(outDir, facts.ResultFilename+".json"), res)
//	verdict, err := metrics.Validate(metrics.ResolveArtifactDir(resultDir),
//		metrics.ValidateOptions{FailedRequestThreshold: metrics.DefaultFailedRequestThreshold})
//
// Fidelity: Aggregate reproduces InferenceX's process_agentic_result
// (utils/agentic/aggregation at commit 843c6254) key for key, including
// Python's exact statistics.mean/pstdev, the linear percentile, round(x, 5)
// and the backend adapters' preferences; Validate reproduces
// validate_agentic_result and the required-metric-prefix check, in order
// and with the same messages. The conformance cases in
// testdata/aggregation are InferenceX's own outputs.
//
// Parsing uses prometheus/common/expfmt; KeepFamilies skips the families an
// adapter never reads, which keeps a scrape of a large page cheap.
package metrics
