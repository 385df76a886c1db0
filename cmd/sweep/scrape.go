package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
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
					u, err := metricsURL(a)
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

// metricsURL accepts host:port, a base URL or a full /metrics URL.
func metricsURL(s string) (string, error) {
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

func scrapeRun(ctx context.Context, o *scrapeOptions) error {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = max(o.Interval, time.Second)
	}
	// Fixed-width columns: each row is printed as soon as it is known, so
	// widths cannot be computed over the whole table.
	multi := len(o.URLs) > 1
	epWidth := 0
	for _, u := range o.URLs {
		epWidth = max(epWidth, len(shortEndpoint(u)))
	}
	fmt.Fprintln(o.IO.Out, rowPrefix("TIME", "ENDPOINT", multi, epWidth)+
		fmt.Sprintf(rowFormat, "RUNNING", "QUEUED", "KV %", "HIT %", "GEN TOK/S"))
	s, err := metrics.NewScraper(metrics.ScraperOptions{
		Endpoints: o.URLs,
		Interval:  o.Interval,
		Duration:  o.Duration,
		Engine:    o.Engine,
		Client:    metrics.NewClient(metrics.ClientOptions{HTTP: o.HTTP, Timeout: timeout}),
		OnSample:  func(smp metrics.Sample) { writeScrapeRow(o.IO.Out, smp, multi, epWidth) },
	})
	if err != nil {
		return err
	}
	res, err := s.Run(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	ok := printScrapeSummary(o.IO.ErrOut, res)
	if !ok {
		return &exitCodeError{Code: exitError, Err: errors.New("scrape: no successful scrape")}
	}
	return nil
}

// rowFormat lays out the gauge columns, right-aligned.
const rowFormat = "%8s %7s %6s %6s %10s"

func rowPrefix(ts, endpoint string, multi bool, epWidth int) string {
	p := fmt.Sprintf("%-8s ", ts)
	if multi {
		p += fmt.Sprintf("%-*s ", epWidth, endpoint)
	}
	return p
}

func writeScrapeRow(w io.Writer, s metrics.Sample, multi bool, epWidth int) {
	row := rowPrefix(time.Now().Format("15:04:05"), shortEndpoint(s.Endpoint), multi, epWidth)
	if s.Err != nil {
		fmt.Fprintf(w, "%sscrape failed: %v\n", row, s.Err)
		return
	}
	g := s.Gauges
	fmt.Fprintf(w, row+rowFormat+"\n",
		cell(g.Running, 1, "%.0f"), cell(g.Queued, 1, "%.0f"),
		cell(g.KVUsage, 100, "%.1f"), cell(g.CacheHitRate, 100, "%.1f"), cell(g.GenThroughput, 1, "%.0f"))
}

func cell(v *float64, scale float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v*scale)
}

func shortEndpoint(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return u
}

// printScrapeSummary reports scrape health and the window's AL; it returns
// whether any scrape succeeded.
func printScrapeSummary(w io.Writer, res *metrics.ScrapeResult) bool {
	any := false
	for _, ep := range res.Endpoints {
		fmt.Fprintf(w, "%s: %d scrapes, %d failed", ep.URL, ep.Attempts, ep.FailureCount)
		if ep.Engine != "" {
			fmt.Fprintf(w, ", engine %s", ep.Engine)
		}
		fmt.Fprintln(w)
		if ep.Successes > 0 {
			any = true
		}
		if n := len(ep.Failures); n > 0 {
			fmt.Fprintf(w, "  last error: %s\n", ep.Failures[n-1].Err)
		}
		for _, m := range ep.Missing {
			fmt.Fprintf(w, "  missing series: %s\n", m)
		}
		if ep.Successes < 2 || ep.Engine == "" {
			continue
		}
		counters, err := ep.ALCounters()
		if err != nil {
			continue // spec decoding off or counters not exported: nothing to say
		}
		if al, err := counters.AcceptanceLength(); err == nil {
			fmt.Fprintf(w, "  acceptance length over the window: %.3f (%s)\n", al, counters.Formula())
		}
	}
	return any
}
