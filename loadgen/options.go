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
	// WarmupGrace is --warmup-grace-period (or --agentic-warmup-grace-period)
	// as given; warmupBound says whether it bounds the warm-up.
	WarmupGrace time.Duration

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
	// RequireTraces makes a named trace set missing from the local hub
	// cache an error (*TraceSetError) before any request, never a replay
	// of the built-in synthetic set: a real engine's point (sweep run
	// sets it unless the engine is simulated).
	RequireTraces bool

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
	// ClockOrigin is the instant the compressed clock stretches from
	// (artifact stamps are ClockOrigin + (t-ClockOrigin)*TimeScale); zero
	// means the start of Run. A simulated point's GPU tools share it, so
	// their samples fall on the artifacts' clock.
	ClockOrigin time.Time
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
// scenario's fills and locks. Problems are reported together, in the
// order of the steps below.
func OptionsFromFlags(f Flags) (Options, error) {
	o := DefaultOptions()
	r := &flagReader{f: f}
	agentx := r.scenario(&o)
	r.target(&o, agentx)
	r.load(&o, agentx)
	r.trajectories(&o, agentx)
	r.warmup(&o)
	r.traffic(&o, agentx)
	r.inputs(&o)
	return o, errors.Join(r.errs...)
}

// flagReader reads flags for OptionsFromFlags and collects its problems.
// Every accessor returns the zero value for a flag not given, so a Flags
// implementation that reports schema defaults changes nothing: the
// defaults applied are DefaultOptions' and the scenario's.
type flagReader struct {
	f    Flags
	errs []error
}

func (r *flagReader) check(err error) {
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

func (r *flagReader) bad(format string, a ...any) {
	r.errs = append(r.errs, &ArgError{Msg: fmt.Sprintf(format, a...)})
}

func (r *flagReader) changed(name string) bool { return r.f.Changed(name) }

func (r *flagReader) str(name string) string {
	if !r.f.Changed(name) {
		return ""
	}
	v, err := r.f.String(name)
	r.check(err)
	return v
}

func (r *flagReader) integer(name string) int {
	if !r.f.Changed(name) {
		return 0
	}
	v, err := r.f.Int(name)
	r.check(err)
	return v
}

func (r *flagReader) float(name string) float64 {
	if !r.f.Changed(name) {
		return 0
	}
	v, err := r.f.Float(name)
	r.check(err)
	return v
}

func (r *flagReader) boolean(name string) bool {
	if !r.f.Changed(name) {
		return false
	}
	v, err := r.f.Bool(name)
	r.check(err)
	return v
}

func (r *flagReader) list(name string) []string {
	if !r.f.Changed(name) {
		return nil
	}
	v, err := r.f.Strings(name)
	r.check(err)
	return v
}

// seconds reads a flag in seconds when it is given, keeping *d otherwise.
func (r *flagReader) seconds(name string, d *time.Duration) {
	if r.changed(name) {
		*d = seconds(r.float(name))
	}
}

// scenario reads --scenario and --unsafe-override and reports whether the
// agentx scenario's fills and locks apply.
func (r *flagReader) scenario(o *Options) bool {
	o.Scenario = r.str("scenario")
	o.UnsafeOverride = r.boolean("unsafe-override")
	if o.Scenario != "" && o.Scenario != ScenarioAgentX {
		r.bad("UnknownScenarioError: Unknown scenario '%s'. Valid scenarios: %s", o.Scenario, ScenarioAgentX)
	}
	return o.Scenario == ScenarioAgentX
}

// target reads where requests go and what they carry: URL, endpoint,
// streaming, model, credentials, extra inputs and headers.
func (r *flagReader) target(o *Options, agentx bool) {
	if urls := r.list("url"); len(urls) > 0 {
		if len(urls) > 1 {
			r.bad("--url: the load generator drives one server, got %d URLs", len(urls))
		}
		o.URL = urls[0]
	}
	if !strings.Contains(o.URL, "://") {
		o.URL = "http://" + o.URL
	}
	if u, err := url.Parse(o.URL); err != nil || u.Host == "" {
		r.bad("--url %q: want http://host:port", o.URL)
	}
	o.URL = strings.TrimRight(o.URL, "/")
	if r.changed("custom-endpoint") {
		o.Endpoint = r.str("custom-endpoint")
		if !strings.HasPrefix(o.Endpoint, "/") {
			o.Endpoint = "/" + o.Endpoint
		}
	}
	if t := r.str("endpoint-type"); t != "" && !strings.EqualFold(t, "chat") {
		r.bad("--endpoint-type %s: the load generator implements chat only", t)
	}
	o.Streaming = r.boolean("streaming")
	if agentx {
		if r.changed("streaming") && !o.Streaming {
			r.bad("Scenario invariants violated: %s requires --streaming", ScenarioAgentX)
		}
		o.Streaming = true
	}
	models := r.list("model-names")
	switch {
	case len(models) == 0:
		r.bad("1 validation error for AIPerfConfig: benchmark.models.items List should have at least 1 item (pass --model)")
	case len(models) > 1:
		r.bad("--model: the load generator sends one model, got %d", len(models))
	default:
		o.Model = models[0]
	}
	o.Tokenizer = r.str("tokenizer")
	o.TrustRemoteCode, o.ApplyChatTemplate = r.boolean("tokenizer-trust-remote-code"), r.boolean("apply-chat-template")
	o.APIKey = r.str("api-key")
	o.ServerTokens = r.boolean("use-server-token-count")

	extra, err := parseKeyValues("extra-inputs", r.list("extra-inputs"))
	r.check(err)
	o.ExtraInputs = extra
	if agentx {
		if v, ok := o.ExtraInputs["ignore_eos"]; ok && v != true {
			r.bad("Scenario invariants violated: %s requires extra input ignore_eos:true", ScenarioAgentX)
		}
		if o.ExtraInputs == nil {
			o.ExtraInputs = map[string]any{}
		}
		o.ExtraInputs["ignore_eos"] = true
	}
	hdrs, err := parseKeyValues("header", r.list("header"))
	r.check(err)
	if len(hdrs) > 0 {
		o.Headers = map[string]string{}
		for k, v := range hdrs {
			o.Headers[k] = fmt.Sprint(v)
		}
	}
}

// load reads how much load and for how long: concurrency, the stop
// conditions, grace periods, timeouts, seed and failure threshold.
func (r *flagReader) load(o *Options, agentx bool) {
	o.Concurrency = r.integer("concurrency")
	if o.Concurrency < 1 {
		r.bad("--concurrency: want an integer >= 1 (the load generator runs a fixed number of lanes)")
	}
	if r.changed("benchmark-duration") {
		d := r.float("benchmark-duration")
		if d <= 0 {
			r.bad("--benchmark-duration %g: want > 0", d)
		}
		o.BenchmarkDuration = seconds(d)
	} else if agentx {
		o.BenchmarkDuration = 1800 * time.Second
	}
	o.RequestCount = r.integer("request-count")
	o.MaxSessions = r.integer("conversation-num")
	if o.BenchmarkDuration == 0 && o.RequestCount == 0 && o.MaxSessions == 0 {
		r.bad("give --benchmark-duration, --request-count or --conversation-num: the load generator needs a stop condition")
	}
	if agentx && o.BenchmarkDuration < 900*time.Second && !o.UnsafeOverride {
		r.bad("Scenario invariants violated (1 conflicts): benchmark_duration %gs is below the %s minimum of 900s (pass --unsafe-override)", o.BenchmarkDuration.Seconds(), ScenarioAgentX)
	}
	r.seconds("benchmark-grace-period", &o.GracePeriod)
	r.seconds("request-timeout-seconds", &o.RequestTimeout)
	o.StatsInterval = seconds(r.float("stats-interval"))
	if r.changed("random-seed") {
		s := r.integer("random-seed")
		if s < 0 {
			r.bad("--random-seed %d: want >= 0", s)
		}
		o.Seed = uint64(s)
	}
	if r.changed("failed-request-threshold") {
		o.FailThreshold = r.float("failed-request-threshold")
		if o.FailThreshold < 0 || o.FailThreshold > 1 {
			r.bad("--failed-request-threshold %g: want 0 <= x <= 1", o.FailThreshold)
		}
	}
}

// trajectories reads where in its trace each session starts.
func (r *flagReader) trajectories(o *Options, agentx bool) {
	if agentx {
		o.StartMinRatio, o.StartMaxRatio = 0, 1
	}
	if r.changed("trajectory-start-min-ratio") {
		o.StartMinRatio = r.float("trajectory-start-min-ratio")
	}
	if r.changed("trajectory-start-max-ratio") {
		o.StartMaxRatio = r.float("trajectory-start-max-ratio")
	}
	for _, x := range []float64{o.StartMinRatio, o.StartMaxRatio} {
		if x < 0 || x > 1 {
			r.bad("--trajectory-start-*-ratio %g: want 0 <= x <= 1", x)
		}
	}
	if o.StartMinRatio > o.StartMaxRatio {
		r.bad("--trajectory-start-min-ratio (%g) must be <= --trajectory-start-max-ratio (%g)", o.StartMinRatio, o.StartMaxRatio)
	}
}

// warmupBound is how long the warm-up may last before the requests
// still in flight are cancelled (without a record) and profiling starts;
// 0 = no bound. The SemiAnalysis fork's --warmup-grace-period bounds it
// (InferenceX's harness says so: at the grace period the primers still
// open are cancelled and profiling starts). Upstream aiperf 0.12.0 (a --warmup-request-count command
// line) routes the flag to the agentic warm-up's grace_period_sec, but
// that phase has no expected duration (timing/config.py,
// _build_agentic_warmup_config), so PhaseLifecycle.time_left_in_seconds
// is None and the runner waits for every primer without a timeout
// (timing/phase/runner.py, _wait_for_returning_complete); the grace
// bounds only an accelerated cache warm-up, which the load generator does
// not run. Each primer is still bounded by --request-timeout-seconds,
// and one that fails aborts the run.
func (o *Options) warmupBound() time.Duration {
	if o.WarmupRequests > 0 {
		return 0
	}
	return o.WarmupGrace
}

// warmup reads the warm-up requests and their grace period.
func (r *flagReader) warmup(o *Options) {
	o.WarmupPerLane = r.integer("warmup-requests-per-lane")
	if o.WarmupPerLane < 0 {
		r.bad("--warmup-requests-per-lane %d: want >= 0", o.WarmupPerLane)
	}
	if r.changed("warmup-request-count") {
		// Upstream aiperf 0.12.0's agentic replay primes each active
		// stream once (max_tokens=1 at its trajectory start), whatever the
		// count says: 4 warm-up records at c4. The fork's
		// --warmup-requests-per-lane is per lane.
		n := r.integer("warmup-request-count")
		switch {
		case n < 0:
			r.bad("--warmup-request-count %d: want >= 0", n)
		case r.changed("warmup-requests-per-lane"):
			r.bad("--warmup-request-count and --warmup-requests-per-lane: give one of them")
		case n > 0:
			o.WarmupPerLane, o.WarmupRequests = 1, n
		default:
			o.WarmupPerLane = 0
		}
	}
	for _, name := range []string{"agentic-warmup-grace-period", "warmup-grace-period"} {
		if r.changed(name) {
			o.WarmupGrace = seconds(r.float(name))
			break
		}
	}
}

// traffic reads how the trace is replayed: idle-gap caps, cache busting,
// context and dataset limits, timeslices.
func (r *flagReader) traffic(o *Options, agentx bool) {
	o.IdleGapCap = seconds(r.float("trace-idle-gap-cap-seconds"))
	if agentx {
		o.SystemIdleCap = 10 * time.Second // the scenario's system_idle_gap_cap_seconds
	}
	r.seconds("system-idle-gap-cap-seconds", &o.SystemIdleCap)
	switch cb := r.str("cache-bust"); {
	case cb == "" && agentx, strings.EqualFold(strings.ReplaceAll(cb, "-", "_"), "first_turn_prefix"):
		o.CacheBust = true
	case cb == "" || strings.EqualFold(cb, "none"):
	default:
		r.bad("--cache-bust %s: the load generator implements none and first_turn_prefix", cb)
	}
	o.MaxContext = r.integer("max-context-length")
	o.DatasetEntries = r.integer("num-dataset-entries")
	o.SliceDuration = seconds(r.float("slice-duration"))
}

// inputs reads the trace source, the server-metrics endpoints and the
// artifact directory.
func (r *flagReader) inputs(o *Options) {
	o.TraceFile = r.str("input-file")
	o.PublicDataset = r.str("public-dataset")
	o.HFDataset = r.str("hf-weka-dataset")
	if t := r.str("custom-dataset-type"); t != "" && !strings.EqualFold(t, "weka_trace") {
		r.bad("--custom-dataset-type %s: the load generator reads weka_trace only", t)
	}
	if o.TraceFile != "" && o.PublicDataset != "" {
		r.bad("--input-file and --public-dataset are mutually exclusive")
	}
	o.ServerMetricsURLs = r.list("server-metrics")
	o.NoServerMetrics = r.boolean("no-server-metrics")
	if o.NoServerMetrics && len(o.ServerMetricsURLs) > 0 {
		r.bad("--no-server-metrics cannot be combined with --server-metrics")
	}
	if d := r.str("output-artifact-dir"); d != "" {
		o.ArtifactDir = d
	}
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
