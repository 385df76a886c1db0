package metrics

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// rowFormat lays out the gauge columns, right-aligned.
const rowFormat = "%8s %7s %6s %6s %10s"

// ScrapeTable prints samples as a table, one row as soon as each sample
// is taken (OnSample): time, the endpoint when there are several, and
// the gauges. Its columns have fixed widths, since the rows to come are
// not known.
type ScrapeTable struct {
	w       io.Writer
	multi   bool
	epWidth int
	noted   bool // the NaN mark explained
}

// NewScrapeTable prints the header of a table of the endpoints' samples.
func NewScrapeTable(w io.Writer, endpoints []string) *ScrapeTable {
	t := &ScrapeTable{w: w, multi: len(endpoints) > 1}
	for _, u := range endpoints {
		t.epWidth = max(t.epWidth, len(shortEndpoint(u)))
	}
	fmt.Fprintln(w, t.prefix("TIME", "ENDPOINT")+fmt.Sprintf(rowFormat, "RUNNING", "QUEUED", "KV %", "HIT %", "GEN TOK/S"))
	return t
}

func (t *ScrapeTable) prefix(ts, endpoint string) string {
	p := fmt.Sprintf("%-8s ", ts)
	if t.multi {
		p += fmt.Sprintf("%-*s ", t.epWidth, endpoint)
	}
	return p
}

// Row prints the sample's row, stamped with the wall time.
func (t *ScrapeTable) Row(s Sample) {
	w := t.w
	row := t.prefix(time.Now().Format("15:04:05"), shortEndpoint(s.Endpoint))
	if s.Err != nil {
		fmt.Fprintf(w, "%sscrape failed: %v\n", row, s.Err)
		return
	}
	g := s.Gauges
	fmt.Fprintf(w, row+rowFormat+"\n",
		cell(g.Running, g.Partial("running"), 1, "%.0f"), cell(g.Queued, g.Partial("queued"), 1, "%.0f"),
		cell(g.KVUsage, g.Partial("kv_usage"), 100, "%.1f"), cell(g.CacheHitRate, g.Partial("cache_hit_rate"), 100, "%.1f"),
		cell(g.GenThroughput, g.Partial("gen_throughput"), 1, "%.0f"))
	if len(g.NaN) > 0 && !t.noted {
		t.noted = true
		fmt.Fprintf(w, "%s* a rank reported NaN: the figure is of the other ranks (NaN: every rank did)\n", strings.Repeat(" ", len(t.prefix("", ""))))
	}
}

// cell is a gauge scaled and formatted, "-" when not exported; nan marks
// a figure some rank reported NaN for: "20.0*", or "NaN" when no rank
// gave a number.
func cell(v *float64, nan bool, scale float64, format string) string {
	switch {
	case v == nil && nan:
		return "NaN"
	case v == nil:
		return "-"
	case nan:
		return fmt.Sprintf(format, *v*scale) + "*"
	}
	return fmt.Sprintf(format, *v*scale)
}

// shortEndpoint is the URL's host:port.
func shortEndpoint(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return u
}

// WriteSummary reports each endpoint's scrape health and the window's
// acceptance length; it returns whether any scrape succeeded.
func (res *ScrapeResult) WriteSummary(w io.Writer) bool {
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
