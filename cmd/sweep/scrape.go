package main

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"sweep/configs"
	"sweep/metrics"
)

type scrapeOptions struct {
	IO       *IOStreams
	URLs     []string
	Interval time.Duration
	Duration time.Duration // 0 = until interrupted
	Engine   configs.Engine
	Timeout  time.Duration
	HTTP     *http.Client // nil = default; tests inject one
}

func newScrapeCmd(ios *IOStreams, runF func(context.Context, *scrapeOptions) error) *Command {
	if runF == nil {
		runF = scrapeRun
	}
	return &Command{
		Name:  "scrape",
		Args:  "URL...",
		Short: "Watch an engine's Prometheus metrics: a live table of the key gauges",
		Long:  helpText("scrape"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			o := &scrapeOptions{IO: ios}
			fs := pflag.NewFlagSet("scrape", pflag.ContinueOnError)
			fs.DurationVar(&o.Interval, "interval", time.Second, "time between samples")
			fs.DurationVar(&o.Duration, "duration", 30*time.Second, "how long to watch (0 = until interrupted)")
			fs.Var(&o.Engine, "engine", "metrics adapter: sglang or vllm (default: detect from the metric prefix)")
			fs.DurationVar(&o.Timeout, "timeout", 0, "per-scrape timeout (default: the interval, at least 1s)")
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("scrape: want at least one URL, e.g. sweep scrape http://localhost:8000/metrics")
				}
				if o.Interval <= 0 {
					return flagErrorf("scrape: --interval %s: want a positive duration", o.Interval)
				}
				if o.Duration < 0 {
					return flagErrorf("scrape: --duration %s: want 0 or a positive duration", o.Duration)
				}
				for _, a := range args {
					u, err := metrics.EndpointURL(a)
					if err != nil {
						return flagErrorf("scrape: %v", err)
					}
					o.URLs = append(o.URLs, u)
				}
				return runF(ctx, o)
			}
		},
	}
}

func scrapeRun(ctx context.Context, o *scrapeOptions) error {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = max(o.Interval, time.Second)
	}
	table := metrics.NewScrapeTable(o.IO.Out, o.URLs)
	s, err := metrics.NewScraper(metrics.ScraperOptions{
		Endpoints: o.URLs,
		Interval:  o.Interval,
		Duration:  o.Duration,
		Engine:    o.Engine,
		Client:    metrics.NewClient(metrics.ClientOptions{HTTP: o.HTTP, Timeout: timeout}),
		OnSample:  table.Row,
	})
	if err != nil {
		return err
	}
	res, err := s.Run(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	ok := res.WriteSummary(o.IO.ErrOut)
	if !ok {
		return &exitCodeError{Code: exitError, Err: errors.New("scrape: no successful scrape")}
	}
	return nil
}
