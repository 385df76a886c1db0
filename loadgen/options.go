package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ScenarioAgentX is the aiperf scenario InferenceX runs.
const ScenarioAgentX = "inferencex-agentx-mvp"

// Options is everything one load-generation run needs. The zero value is
// not valid: build it with OptionsFromFlags, or start from
// DefaultOptions and set the required fields (URL, Model, Concurrency,
// BenchmarkDuration or RequestCount, ArtifactDir).
type Options struct {
	URL       string // server base URL, e.g. http://localhost:8000
	Endpoint  string // request path, default /v1/chat/completions
	Model     string // model name sent in every request
	Tokenizer string // recorded in input_config only
	// TrustRemoteCode and ApplyChatTemplate are recorded in input_config
	// only (no tokenizer is loaded; the server applies the template).
	TrustRemoteCode, ApplyChatTemplate bool
	Streaming                          bool // SSE streaming (TTFT/ITL need it)
	APIKey                             string
	Headers                            map[string]string
	ExtraInputs                        map[string]any // merged into every request body
	ServerTokens                       bool           // --use-server-token-count: ISL/OSL from usage

	Concurrency       int           // lanes (session trees in flight)
	BenchmarkDuration time.Duration // profiling window; 0 = until RequestCount
	RequestCount      int           // stop issuing after this many profiling requests; 0 = no limit
	MaxSessions       int           // stop after this many recycled session plays (the initial trajectories not counted); 0 = no limit
	GracePeriod       time.Duration // wait for in-flight requests after the window, then cancel them
	RequestTimeout    time.Duration // per request

	WarmupPerLane int // warm-up requests per lane before profiling (max_tokens=1)
	// WarmupRequests is --warmup-request-count as given (aiperf 0.12.0
	// primes once per stream whatever it says; input_config echoes it).
	WarmupRequests int
	WarmupGrace    time.Duration // bound on the warm-up phase; 0 = no bound

	Seed           uint64 // random seed (trajectory starts, trace order, markers)
	StartMinRatio  float64
	StartMaxRatio  float64
	IdleGapCap     time.Duration // cap of every recorded idle gap; 0 = no cap
	SystemIdleCap  time.Duration // when every lane is idle, the next request starts within it; 0 = off
	CacheBust      bool          // first_turn_prefix marker per session play
	MaxContext     int           // skip turns whose recorded input exceeds it; 0 = no limit
	FailThreshold  float64       // live abort when the profiling error fraction exceeds it; <0 = off
	DatasetEntries int           // use the first N traces; 0 = all

	TraceFile     string // WEKA traces: JSONL file, JSON file or directory
	PublicDataset string // --public-dataset loader name (looked up in the HF cache)
	HFDataset     string // --hf-weka-dataset repo id

	ServerMetricsURLs []string      // Prometheus endpoints scraped besides URL/metrics
	NoServerMetrics   bool          // --no-server-metrics
	ScrapeInterval    time.Duration // default 333ms, as AIPERF_SERVER_METRICS_COLLECTION_INTERVAL
	ScrapeFlush       time.Duration // keep scraping after profiling, default 2s
	SliceDuration     time.Duration // server-metrics timeslices; 0 = none

	ArtifactDir    string
	StatsInterval  time.Duration // progress line interval; 0 = 10s
	Scenario       string
	UnsafeOverride bool
	// TimeScale divides every wait the generator itself makes (duration,
	// grace periods, recorded idle gaps, scrape interval), for engines
	// that run on a compressed clock. 1 = real time.
	TimeScale float64
	// VirtualClock runs on the simulated engine's virtual clock (see
	// vclock.go): every wait and every timestamp is simulated time the
	// engine advances by events, so the result does not depend on how
	// busy the machine is; TimeScale is then ignored.
	VirtualClock bool
	CLICommand   string // echoed in run_info.cli_command

	// Transport carries every HTTP request (inference and metrics); nil
	// means a pooled http.Transport sized for Concurrency.
	Transport http.RoundTripper
}

// DefaultOptions returns aiperf 0.12's defaults for the options the load
// generator implements.
func DefaultOptions() Options {
	return Options{
		URL:            "http://localhost:8000",
		Endpoint:       "/v1/chat/completions",
		GracePeriod:    30 * time.Second,
		RequestTimeout: 21600 * time.Second,
		StartMinRatio:  0.25,
		StartMaxRatio:  0.75,
		FailThreshold:  -1,
		ScrapeInterval: 333 * time.Millisecond,
		ScrapeFlush:    2 * time.Second,
		ArtifactDir:    "artifacts",
		TimeScale:      1,
	}
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// OptionsFromFlags maps a parsed `aiperf profile` command line to
// Options, applying aiperf's defaults and the inferencex-agentx-mvp
// scenario's fills and locks. Problems are reported together.
func OptionsFromFlags(f Flags) (Options, error) {
	o := DefaultOptions()
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// Every accessor returns the zero value for a flag not given, so a
	// Flags implementation that reports schema defaults changes nothing:
	// the defaults applied are DefaultOptions' and the scenario's.
	str := func(name string) string {
		if !f.Changed(name) {
			return ""
		}
		v, err := f.String(name)
		check(err)
		return v
	}
	integer := func(name string) int {
		if !f.Changed(name) {
			return 0
		}
		v, err := f.Int(name)
		check(err)
		return v
	}
	float := func(name string) float64 {
		if !f.Changed(name) {
			return 0
		}
		v, err := f.Float(name)
		check(err)
		return v
	}
	boolean := func(name string) bool {
		if !f.Changed(name) {
			return false
		}
		v, err := f.Bool(name)
		check(err)
		return v
	}
	list := func(name string) []string {
		if !f.Changed(name) {
			return nil
		}
		v, err := f.Strings(name)
		check(err)
		return v
	}
	bad := func(format string, a ...any) { errs = append(errs, &ArgError{Msg: fmt.Sprintf(format, a...)}) }

	o.Scenario = str("scenario")
	o.UnsafeOverride = boolean("unsafe-override")
	if o.Scenario != "" && o.Scenario != ScenarioAgentX {
		bad("UnknownScenarioError: Unknown scenario '%s'. Valid scenarios: %s", o.Scenario, ScenarioAgentX)
	}
	agentx := o.Scenario == ScenarioAgentX

	if urls := list("url"); len(urls) > 0 {
		if len(urls) > 1 {
			bad("--url: the load generator drives one server, got %d URLs", len(urls))
		}
		o.URL = urls[0]
	}
	if !strings.Contains(o.URL, "://") {
		o.URL = "http://" + o.URL
	}
	if u, err := url.Parse(o.URL); err != nil || u.Host == "" {
		bad("--url %q: want http://host:port", o.URL)
	}
	o.URL = strings.TrimRight(o.URL, "/")
	if f.Changed("custom-endpoint") {
		o.Endpoint = str("custom-endpoint")
		if !strings.HasPrefix(o.Endpoint, "/") {
			o.Endpoint = "/" + o.Endpoint
		}
	}
	if t := str("endpoint-type"); t != "" && !strings.EqualFold(t, "chat") {
		bad("--endpoint-type %s: the load generator implements chat only", t)
	}
	o.Streaming = boolean("streaming")
	if agentx {
		if f.Changed("streaming") && !o.Streaming {
			bad("Scenario invariants violated: %s requires --streaming", ScenarioAgentX)
		}
		o.Streaming = true
	}
	models := list("model-names")
	switch {
	case len(models) == 0:
		bad("1 validation error for AIPerfConfig: benchmark.models.items List should have at least 1 item (pass --model)")
	case len(models) > 1:
		bad("--model: the load generator sends one model, got %d", len(models))
	default:
		o.Model = models[0]
	}
	o.Tokenizer = str("tokenizer")
	o.TrustRemoteCode, o.ApplyChatTemplate = boolean("tokenizer-trust-remote-code"), boolean("apply-chat-template")
	o.APIKey = str("api-key")
	o.ServerTokens = boolean("use-server-token-count")

	extra, err := parseKeyValues("extra-inputs", list("extra-inputs"))
	check(err)
	o.ExtraInputs = extra
	if agentx {
		if v, ok := o.ExtraInputs["ignore_eos"]; ok && v != true {
			bad("Scenario invariants violated: %s requires extra input ignore_eos:true", ScenarioAgentX)
		}
		if o.ExtraInputs == nil {
			o.ExtraInputs = map[string]any{}
		}
		o.ExtraInputs["ignore_eos"] = true
	}
	hdrs, err := parseKeyValues("header", list("header"))
	check(err)
	if len(hdrs) > 0 {
		o.Headers = map[string]string{}
		for k, v := range hdrs {
			o.Headers[k] = fmt.Sprint(v)
		}
	}

	o.Concurrency = integer("concurrency")
	if o.Concurrency < 1 {
		bad("--concurrency: want an integer >= 1 (the load generator runs a fixed number of lanes)")
	}
	if f.Changed("benchmark-duration") {
		d := float("benchmark-duration")
		if d <= 0 {
			bad("--benchmark-duration %g: want > 0", d)
		}
		o.BenchmarkDuration = seconds(d)
	} else if agentx {
		o.BenchmarkDuration = 1800 * time.Second
	}
	o.RequestCount = integer("request-count")
	o.MaxSessions = integer("conversation-num")
	if o.BenchmarkDuration == 0 && o.RequestCount == 0 && o.MaxSessions == 0 {
		bad("give --benchmark-duration, --request-count or --conversation-num: the load generator needs a stop condition")
	}
	if agentx && o.BenchmarkDuration < 900*time.Second && !o.UnsafeOverride {
		bad("Scenario invariants violated (1 conflicts): benchmark_duration %gs is below the %s minimum of 900s (pass --unsafe-override)", o.BenchmarkDuration.Seconds(), ScenarioAgentX)
	}
	if f.Changed("benchmark-grace-period") {
		o.GracePeriod = seconds(float("benchmark-grace-period"))
	}
	if f.Changed("request-timeout-seconds") {
		o.RequestTimeout = seconds(float("request-timeout-seconds"))
	}
	o.StatsInterval = seconds(float("stats-interval"))
	if f.Changed("random-seed") {
		s := integer("random-seed")
		if s < 0 {
			bad("--random-seed %d: want >= 0", s)
		}
		o.Seed = uint64(s)
	}
	if f.Changed("failed-request-threshold") {
		o.FailThreshold = float("failed-request-threshold")
		if o.FailThreshold < 0 || o.FailThreshold > 1 {
			bad("--failed-request-threshold %g: want 0 <= x <= 1", o.FailThreshold)
		}
	}
	if agentx {
		o.StartMinRatio, o.StartMaxRatio = 0, 1
	}
	if f.Changed("trajectory-start-min-ratio") {
		o.StartMinRatio = float("trajectory-start-min-ratio")
	}
	if f.Changed("trajectory-start-max-ratio") {
		o.StartMaxRatio = float("trajectory-start-max-ratio")
	}
	for _, r := range []float64{o.StartMinRatio, o.StartMaxRatio} {
		if r < 0 || r > 1 {
			bad("--trajectory-start-*-ratio %g: want 0 <= x <= 1", r)
		}
	}
	if o.StartMinRatio > o.StartMaxRatio {
		bad("--trajectory-start-min-ratio (%g) must be <= --trajectory-start-max-ratio (%g)", o.StartMinRatio, o.StartMaxRatio)
	}
	o.WarmupPerLane = integer("warmup-requests-per-lane")
	if o.WarmupPerLane < 0 {
		bad("--warmup-requests-per-lane %d: want >= 0", o.WarmupPerLane)
	}
	if f.Changed("warmup-request-count") {
		// Upstream aiperf 0.12.0's agentic replay primes each active
		// stream once (max_tokens=1 at its trajectory start), whatever the
		// count says: 4 warm-up records at c4. The fork's
		// --warmup-requests-per-lane is per lane.
		n := integer("warmup-request-count")
		switch {
		case n < 0:
			bad("--warmup-request-count %d: want >= 0", n)
		case f.Changed("warmup-requests-per-lane"):
			bad("--warmup-request-count and --warmup-requests-per-lane: give one of them")
		case n > 0:
			o.WarmupPerLane, o.WarmupRequests = 1, n
		default:
			o.WarmupPerLane = 0
		}
	}
	for _, name := range []string{"agentic-warmup-grace-period", "warmup-grace-period"} {
		if f.Changed(name) {
			o.WarmupGrace = seconds(float(name))
			break
		}
	}
	o.IdleGapCap = seconds(float("trace-idle-gap-cap-seconds"))
	if agentx {
		o.SystemIdleCap = 10 * time.Second // the scenario's system_idle_gap_cap_seconds
	}
	if f.Changed("system-idle-gap-cap-seconds") {
		o.SystemIdleCap = seconds(float("system-idle-gap-cap-seconds"))
	}
	switch cb := str("cache-bust"); {
	case cb == "" && agentx, strings.EqualFold(strings.ReplaceAll(cb, "-", "_"), "first_turn_prefix"):
		o.CacheBust = true
	case cb == "" || strings.EqualFold(cb, "none"):
	default:
		bad("--cache-bust %s: the load generator implements none and first_turn_prefix", cb)
	}
	o.MaxContext = integer("max-context-length")
	o.DatasetEntries = integer("num-dataset-entries")
	o.SliceDuration = seconds(float("slice-duration"))

	o.TraceFile = str("input-file")
	o.PublicDataset = str("public-dataset")
	o.HFDataset = str("hf-weka-dataset")
	if t := str("custom-dataset-type"); t != "" && !strings.EqualFold(t, "weka_trace") {
		bad("--custom-dataset-type %s: the load generator reads weka_trace only", t)
	}
	if o.TraceFile != "" && o.PublicDataset != "" {
		bad("--input-file and --public-dataset are mutually exclusive")
	}

	o.ServerMetricsURLs = list("server-metrics")
	o.NoServerMetrics = boolean("no-server-metrics")
	if o.NoServerMetrics && len(o.ServerMetricsURLs) > 0 {
		bad("--no-server-metrics cannot be combined with --server-metrics")
	}
	if d := str("output-artifact-dir"); d != "" {
		o.ArtifactDir = d
	}
	return o, errors.Join(errs...)
}

// parseKeyValues reads aiperf's key:value tokens (the value parsed as a
// JSON scalar when it is one: ignore_eos:true is a bool) or one JSON
// object string.
func parseKeyValues(flag string, tokens []string) (map[string]any, error) {
	if len(tokens) == 0 {
		return nil, nil
	}
	out := map[string]any{}
	for _, tok := range tokens {
		if strings.HasPrefix(strings.TrimSpace(tok), "{") {
			var m map[string]any
			if err := json.Unmarshal([]byte(tok), &m); err != nil {
				return nil, &ArgError{Msg: fmt.Sprintf("--%s %q: invalid JSON object: %v", flag, tok, err)}
			}
			for k, v := range m {
				out[k] = v
			}
			continue
		}
		k, v, ok := strings.Cut(tok, ":")
		if !ok || k == "" {
			return nil, &ArgError{Msg: fmt.Sprintf("--%s %q: want key:value", flag, tok)}
		}
		var parsed any
		if err := json.Unmarshal([]byte(v), &parsed); err != nil {
			parsed = v
		}
		if _, isMap := parsed.(map[string]any); isMap {
			parsed = v
		}
		out[k] = parsed
	}
	return out, nil
}

// validate checks the invariants Run relies on.
func (o *Options) validate() error {
	var errs []error
	if o.URL == "" {
		errs = append(errs, errors.New("no server URL"))
	}
	if o.Model == "" {
		errs = append(errs, errors.New("no model"))
	}
	if o.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency %d: want >= 1", o.Concurrency))
	}
	if o.BenchmarkDuration <= 0 && o.RequestCount <= 0 && o.MaxSessions <= 0 {
		errs = append(errs, errors.New("no stop condition: set BenchmarkDuration, RequestCount or MaxSessions"))
	}
	if o.ArtifactDir == "" {
		errs = append(errs, errors.New("no artifact directory"))
	}
	if o.TimeScale <= 0 || math.IsInf(o.TimeScale, 0) || math.IsNaN(o.TimeScale) {
		errs = append(errs, fmt.Errorf("time scale %g: want a positive number", o.TimeScale))
	}
	if o.StartMinRatio > o.StartMaxRatio {
		errs = append(errs, fmt.Errorf("trajectory start ratios [%g, %g]: min above max", o.StartMinRatio, o.StartMaxRatio))
	}
	return errors.Join(errs...)
}

// scaled divides a wait by the time scale.
func (o *Options) scaled(d time.Duration) time.Duration {
	if o.TimeScale == 1 || d <= 0 {
		return d
	}
	return time.Duration(float64(d) / o.TimeScale)
}
