package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"sweep/configs"
	"sweep/internal/inputfile"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is one parsed Prometheus text exposition of an engine's
// /metrics page. Families are keyed by the name as exposed: a Python
// engine's counters appear with their _total suffix
// ("vllm:prompt_tokens_total"); lookups accept either form.
type Snapshot struct {
	Endpoint string    // URL or file it came from
	Time     time.Time // when the page was read
	Families map[string]*dto.MetricFamily
}

// ParseOption tunes ParseText.
type ParseOption func(*parseConfig)

type parseConfig struct {
	keep       map[string]bool // family base names; nil keeps everything
	maxSamples int
}

// DefaultMaxSamples is the sample limit of one page (ParseText, Client):
// a real engine's page has a few thousand samples, while parsing costs
// about 1 KB per sample, so a page of 500,000 series took 0.6-1 GB.
const DefaultMaxSamples = 50_000

// ErrTooManySamples is returned (wrapped, with the limit) for a page with
// more samples than its limit.
var ErrTooManySamples = errors.New("metrics page has too many samples")

// MaxSamples sets the sample limit of ParseText (default
// DefaultMaxSamples); with KeepFamilies only the kept samples count.
func MaxSamples(n int) ParseOption {
	return func(c *parseConfig) { c.maxSamples = n }
}

// KeepFamilies makes ParseText skip every family but these (names with or
// without the _total suffix; histogram and counter sample suffixes are
// matched). Skipping lines before expfmt sees them is what keeps a scrape
// of a large page cheap; Families lists what the adapters read.
func KeepFamilies(names ...string) ParseOption {
	return func(c *parseConfig) {
		c.keep = make(map[string]bool, len(names))
		for _, n := range names {
			c.keep[strings.TrimSuffix(n, "_total")] = true
		}
	}
}

// ParseText parses Prometheus text exposition (format 0.0.4) with
// expfmt. name (URL or file) is used in errors, which carry the line:
// "NAME: line N: MSG" (with KeepFamilies, the line among those kept).
//
// A page with more samples than the limit (MaxSamples) is refused with
// ErrTooManySamples before the samples past the limit are parsed.
func ParseText(r io.Reader, name string, opts ...ParseOption) (*Snapshot, error) {
	cfg := parseConfig{maxSamples: DefaultMaxSamples}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.keep != nil {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r = bytes.NewReader(filterFamilies(data, cfg.keep))
	}
	lim := &sampleLimiter{r: r, max: cfg.maxSamples, bol: true}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(lim)
	if lim.err != nil {
		return nil, fmt.Errorf("%s: %w", name, lim.err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Snapshot{Endpoint: name, Families: fams}, nil
}

// sampleLimiter passes r through and fails once it has seen more than max
// sample lines (lines whose first non-blank byte is not '#').
type sampleLimiter struct {
	r   io.Reader
	max int
	n   int
	bol bool // at the start of a line, before any non-blank byte
	err error
}

func (l *sampleLimiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		switch {
		case c == '\n':
			l.bol = true
		case !l.bol || c == ' ' || c == '\t':
		case c == '#':
			l.bol = false
		default:
			l.bol = false
			if l.n++; l.max > 0 && l.n > l.max {
				l.err = fmt.Errorf("%w: more than %d, sweep's sample limit per page", ErrTooManySamples, l.max)
				return 0, l.err
			}
		}
	}
	return n, err
}

// sampleSuffixes are the suffixes a family's sample and TYPE names carry.
var sampleSuffixes = []string{"_total", "_bucket", "_sum", "_count", "_created"}

// filterFamilies keeps the HELP, TYPE and sample lines of the wanted
// families. Lines it cannot classify (quoted UTF-8 names) are kept.
func filterFamilies(data []byte, keep map[string]bool) []byte {
	out := make([]byte, 0, len(data)/4)
	wanted := func(n []byte) bool {
		if keep[string(n)] {
			return true
		}
		for _, suf := range sampleSuffixes {
			if bytes.HasSuffix(n, []byte(suf)) && keep[string(n[:len(n)-len(suf)])] {
				return true
			}
		}
		return false
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		t := bytes.TrimLeft(line, " \t")
		var metric []byte
		switch {
		case len(t) == 0 || t[0] == '\n' || t[0] == '{':
			out = append(out, line...)
			continue
		case t[0] == '#':
			f := bytes.Fields(t[1:])
			if len(f) < 2 || (string(f[0]) != "HELP" && string(f[0]) != "TYPE") {
				continue // other comments
			}
			metric = f[1]
		default:
			end := bytes.IndexAny(t, "{ \t")
			if end < 0 {
				end = len(t)
			}
			metric = t[:end]
		}
		if wanted(metric) {
			out = append(out, line...)
		}
	}
	return out
}

// ReadSnapshotFile parses a saved /metrics page, a regular file within
// inputfile.MetricsPage; the file's modification time becomes the
// snapshot time.
func ReadSnapshotFile(path string) (*Snapshot, error) {
	f, err := inputfile.Open(path, inputfile.MetricsPage)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := ParseText(f, path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil {
		s.Time = st.ModTime()
	}
	return s, nil
}

// family returns the family for name, trying name+"_total" first for
// counters (text exposition) and then name itself.
func (s *Snapshot) family(name string) *dto.MetricFamily {
	if s == nil {
		return nil
	}
	if !strings.HasSuffix(name, "_total") {
		if f := s.Families[name+"_total"]; f != nil {
			return f
		}
	}
	if f := s.Families[name]; f != nil {
		return f
	}
	return s.Families[strings.TrimSuffix(name, "_total")]
}

// Has reports whether the snapshot has a family of that name (with or
// without the _total suffix).
func (s *Snapshot) Has(name string) bool { return s.family(name) != nil }

// LabelFilter selects series by their labels; nil selects all.
type LabelFilter func(labels map[string]string) bool

// sampleValue is the value of a counter, gauge or untyped sample.
func sampleValue(m *dto.Metric) (float64, bool) {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// LabelMap returns the labels of one series of a family.
func LabelMap(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.Label))
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// SeriesKey is a stable identity of a series' label set within its
// family: the same labels in any order give the same key.
func SeriesKey(m *dto.Metric) string {
	pairs := make([]string, len(m.Label))
	for i, l := range m.Label {
		pairs[i] = l.GetName() + "\xff" + l.GetValue()
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "\xfe")
}

// Values returns the value of every series of name that passes filter.
func (s *Snapshot) Values(name string, filter LabelFilter) []float64 {
	f := s.family(name)
	if f == nil {
		return nil
	}
	var out []float64
	for _, m := range f.Metric {
		if filter != nil && !filter(LabelMap(m)) {
			continue
		}
		if v, ok := sampleValue(m); ok && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// NaNs counts the series of name that passed the filter with a NaN
// value, which Values leaves out: a rank that reported no figure.
func (s *Snapshot) NaNs(name string, filter LabelFilter) int {
	f := s.family(name)
	if f == nil {
		return 0
	}
	n := 0
	for _, m := range f.Metric {
		if filter != nil && !filter(LabelMap(m)) {
			continue
		}
		if v, ok := sampleValue(m); ok && math.IsNaN(v) {
			n++
		}
	}
	return n
}

// Sum adds every series of name (across ranks and label sets such as
// tp_rank, dp_rank, engine, is_streaming). ok is false when the family
// is absent or no series passes the filter.
func (s *Snapshot) Sum(name string, filter LabelFilter) (sum float64, ok bool) {
	for _, v := range s.Values(name, filter) {
		sum += v
		ok = true
	}
	return sum, ok
}

// Max is the largest value over the series of name.
func (s *Snapshot) Max(name string, filter LabelFilter) (float64, bool) {
	vals := s.Values(name, filter)
	if len(vals) == 0 {
		return 0, false
	}
	m := vals[0]
	for _, v := range vals[1:] {
		m = max(m, v)
	}
	return m, true
}

// Mean is the mean over the series of name.
func (s *Snapshot) Mean(name string, filter LabelFilter) (float64, bool) {
	vals := s.Values(name, filter)
	if len(vals) == 0 {
		return 0, false
	}
	var sum float64
	for _, v := range vals {
		sum += v
	}
	return sum / float64(len(vals)), true
}

// CounterDelta is the increase of a counter between two snapshots, summed
// over its label sets. A series whose value went down was reset (engine
// restart) and contributes its new value; a series new in after started
// at zero; a series gone from after contributes nothing. The counter must
// be present in after (a *MissingSeriesError otherwise).
func CounterDelta(before, after *Snapshot, name string, filter LabelFilter) (float64, error) {
	fa := after.family(name)
	if fa == nil {
		return 0, &MissingSeriesError{Series: name, Endpoint: after.Endpoint}
	}
	prev := map[string]float64{}
	if fb := before.family(name); fb != nil {
		for _, m := range fb.Metric {
			if v, ok := sampleValue(m); ok {
				prev[SeriesKey(m)] = v
			}
		}
	}
	var delta float64
	for _, m := range fa.Metric {
		if filter != nil && !filter(LabelMap(m)) {
			continue
		}
		v, ok := sampleValue(m)
		if !ok || math.IsNaN(v) {
			continue
		}
		p, seen := prev[SeriesKey(m)]
		switch {
		case !seen:
			delta += v
		case v < p: // reset
			delta += v
		default:
			delta += v - p
		}
	}
	return delta, nil
}

// MissingSeriesError names a series an adapter needs that the engine does
// not export.
type MissingSeriesError struct {
	Engine   configs.Engine
	Series   string
	Endpoint string
	Hint     string
}

func (e *MissingSeriesError) Error() string {
	var b strings.Builder
	if e.Engine != "" {
		b.WriteString(string(e.Engine) + ": ")
	}
	fmt.Fprintf(&b, "required series %s is absent", e.Series)
	if e.Endpoint != "" {
		fmt.Fprintf(&b, " from %s", e.Endpoint)
	}
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// ClientOptions configure a Client. Zero fields take the defaults noted.
type ClientOptions struct {
	HTTP         *http.Client  // default: a client without its own timeout
	Timeout      time.Duration // per scrape, default 5s
	MaxBodyBytes int64         // largest accepted page, default 32 MiB
}

// Client reads /metrics pages over HTTP. A failed scrape is not retried:
// callers sample periodically and count failures (Scraper).
type Client struct {
	opts ClientOptions
}

// ErrBodyTooLarge is returned when a page exceeds MaxBodyBytes.
var ErrBodyTooLarge = errors.New("metrics page exceeds the body size limit")

// HTTPStatusError is a non-200 answer.
type HTTPStatusError struct {
	URL        string
	StatusCode int
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
}

// NewClient returns a Client with defaults filled in.
func NewClient(opts ClientOptions) *Client {
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 32 << 20
	}
	return &Client{opts: opts}
}

// Scrape fetches and parses url once, within the client's timeout. A page
// over MaxBodyBytes is ErrBodyTooLarge; a malformed one wraps
// expfmt.ParseError (with the line).
func (c *Client) Scrape(ctx context.Context, url string, opts ...ParseOption) (*Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := c.opts.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // let the connection be reused
		return nil, fmt.Errorf("scrape %s: %w", url, &HTTPStatusError{URL: url, StatusCode: resp.StatusCode})
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		return nil, fmt.Errorf("scrape %s: got %s, want Prometheus text", url, ct)
	}
	start := time.Now()
	// One byte past the limit tells "at the limit" from "over it".
	body := io.LimitReader(resp.Body, c.opts.MaxBodyBytes+1)
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	if int64(len(data)) > c.opts.MaxBodyBytes {
		return nil, fmt.Errorf("scrape %s: %w (%d bytes)", url, ErrBodyTooLarge, c.opts.MaxBodyBytes)
	}
	snap, err := ParseText(bytes.NewReader(data), url, opts...)
	if err != nil {
		return nil, fmt.Errorf("scrape %w", err) // ParseText's error starts with url
	}
	snap.Time = start
	return snap, nil
}
