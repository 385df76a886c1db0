package result

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sweep/configs"
	"sweep/internal/pyjson"
	"sweep/metrics"
	"sweep/metrics/aiperf"
	"sweep/metrics/power"
)

// Result is the aggregate result JSON of one agentic point, field for field
// what InferenceX's process_agentic_result writes (same keys, same order,
// numbers rounded to 5 decimals), plus two keys of our own at the end
// (acceptance_length, scrape_health) that InferenceX's readers ignore.
type Result struct {
	HW                    string             `json:"hw"`
	Conc                  int                `json:"conc"`
	Image                 string             `json:"image"`
	RecipeFingerprint     string             `json:"recipe_fingerprint"`
	Model                 string             `json:"model"`
	InfmaxModelPrefix     string             `json:"infmax_model_prefix"`
	Framework             configs.Engine     `json:"framework"`
	Precision             string             `json:"precision"`
	SpecDecoding          string             `json:"spec_decoding"`
	Disagg                bool               `json:"disagg"`
	ScenarioType          string             `json:"scenario_type"`
	IsMultinode           bool               `json:"is_multinode"`
	TP                    int                `json:"tp"`
	EP                    int                `json:"ep"`
	DPAttention           string             `json:"dp_attention"`
	KVOffloading          string             `json:"kv_offloading"`
	KVOffloadBackend      *configs.Component `json:"kv_offload_backend"`
	AllocatedCPUDRAMGB    int                `json:"allocated_cpu_dram_gb"`
	NumRequestsTotal      int                `json:"num_requests_total"`
	NumRequestsSuccessful int                `json:"num_requests_successful"`
	RequestAccounting     RequestAccounting  `json:"request_accounting"`
	*SingleNodeShape
	*MultiNodeShape
	Router            *configs.Component `json:"router,omitempty"`
	KVP2PTransfer     string             `json:"kv_p2p_transfer,omitempty"`
	Dataset           json.RawMessage    `json:"dataset,omitempty"`
	RequestMetrics    RequestMetrics     `json:"request_metrics"`
	ServerMetrics     ServerMetrics      `json:"server_metrics"`
	KVCachePoolTokens *pyjson.Rounded    `json:"kv_cache_pool_tokens"`
	Warnings          []string           `json:"warnings,omitempty"`
	// Fields are the power lane's keys (InferenceX's power_adapter puts
	// them after the aggregator's): nil when the lane did not run.
	*power.Fields

	// AcceptanceLength is our speculative-decoding check (nil when not
	// computed at all; see metrics.ALCheck.Verdict for "not measured").
	AcceptanceLength *metrics.ALCheck `json:"acceptance_length,omitempty"`
	// ScrapeHealth summarises our own Prometheus scraping during the run
	// (nil when the point was not scraped by sweep).
	ScrapeHealth *metrics.ScrapeHealth `json:"scrape_health,omitempty"`

	// Valid says whether the point counts: its load ran, its acceptance
	// length (when checked) passed and InferenceX's validation accepted
	// the artifacts. InvalidReasons says why not (empty when valid).
	// Readers of results (sweeps, knees, reports) skip invalid points. A
	// result file without "valid" comes from InferenceX itself.
	Valid          bool     `json:"valid"`
	InvalidReasons []string `json:"invalid_reasons"`
	// Simulated marks a point run against sweep's simulated engine;
	// Simulation says how. Simulated and real results are never mixed.
	Simulated  bool        `json:"simulated"`
	Simulation *Simulation `json:"simulation,omitempty"`
	// Client is the load client that made the artifacts (nil in results
	// not made by sweep run).
	Client *Client `json:"client,omitempty"`
	// Submission is the scenario's verdict on the run as the client
	// stamped it (nil when the artifacts carry none).
	Submission *Submission `json:"submission,omitempty"`
	// Probe marks a short bracketing point of an adaptive discovery
	// (sweep discover --adaptive): its throughput is noisier than a
	// full-length point's, and knee readers weigh it by its length
	// (request_metrics.throughput.duration_seconds).
	Probe bool `json:"probe,omitempty"`
}

// Simulation records how a simulated point ran.
type Simulation struct {
	// TimeScale is how many simulated seconds passed per wall second (0
	// when the simulator ran on its virtual clock).
	TimeScale float64 `json:"time_scale"`
	// Seed is the simulator's random seed.
	Seed uint64 `json:"seed"`
	// GPU is the simulated accelerator profile.
	GPU string `json:"gpu,omitempty"`
	// Clock is "virtual" (simulated time advanced by events: the numbers
	// do not depend on the machine) or "wall" (a compressed wall clock).
	Clock string `json:"clock,omitempty"`
	// Calibration is the calibration file the simulated engines ran with
	// (--sim-calibration) and what it set for each; nil without one.
	Calibration *SimCalibration `json:"calibration,omitempty"`
	// Faults are the faults injected into the simulated engines
	// (--sim-fault or SWEEP_SIM_FAULT, as given: "slow-steps:10"); ""
	// for none. A point run with one measured the fault too.
	Faults string `json:"faults,omitempty"`
	// ScheduleLag is how far the simulated engines on the wall clock fell
	// behind their schedule during the load (nil on the virtual clock,
	// which keeps none, or when not read).
	ScheduleLag *ScheduleLag `json:"schedule_lag,omitempty"`
}

// ScheduleLag is how far a wall-clock simulation fell behind its
// schedule: the share of the engines' busy simulated time spent in
// steps that ended more than ToleranceSeconds behind it, the worst
// step's lateness (simulated seconds), and the steps counted.
type ScheduleLag struct {
	Share            float64 `json:"share"`
	WorstSeconds     float64 `json:"worst_s"`
	Steps            int64   `json:"steps"`
	LateSteps        int64   `json:"late_steps"`
	ToleranceSeconds float64 `json:"tolerance_s"`
	// InvalidShare is the Share past which the point is invalid (0.10,
	// or SWEEP_SIM_MAX_LAG as the point read it; 1: never).
	InvalidShare float64 `json:"invalid_share"`
}

// SimCalibration is a calibration file (sweep sim calibrate) a simulated
// point ran with, and what it set for each of the point's engines.
type SimCalibration struct {
	File string `json:"file"`
	// Engines are the point's simulated engines in launch order: one on
	// a single-node point, every worker on a multi-node one.
	Engines []CalibratedEngine `json:"engines"`
}

// CalibratedEngine is what a calibration file set for one simulated
// engine: its arm's step-cost scale and KV pool (0: the model's), or,
// with Calibrated false, nothing (the file has no arm for the engine's
// model, GPU and layout, so the model's step costs and pool stand).
type CalibratedEngine struct {
	Name       string  `json:"name"`
	Calibrated bool    `json:"calibrated"`
	StepScale  float64 `json:"step_scale,omitempty"`
	PoolTokens int     `json:"pool_tokens,omitempty"`
}

// Setting is what the calibration set, without the file's name: each
// calibrated engine's step-cost scale and pool ("step costs x0.956, pool
// 6172736 tokens per rank", named per engine when there are several), ""
// when it set nothing (no calibration, or no arm for any engine: the
// model's values). Two points whose settings are equal ran the same
// simulated engine, whatever their files were called.
func (c *SimCalibration) Setting() string {
	if c == nil || !slices.ContainsFunc(c.Engines, func(e CalibratedEngine) bool { return e.Calibrated }) {
		return ""
	}
	return c.perEngine()
}

// String says what the calibration set, for a point's header:
// "calibrated by cal.json (step costs x0.956, pool 6172736 tokens per
// rank)", "calibration cal.json has no arm for this engine (the model's
// step costs and pool)", or per engine when there are several.
func (c *SimCalibration) String() string {
	if len(c.Engines) != 1 {
		return fmt.Sprintf("calibration %s: %s", c.File, c.perEngine())
	}
	if c.Engines[0].Calibrated {
		return fmt.Sprintf("calibrated by %s (%s)", c.File, c.perEngine())
	}
	return fmt.Sprintf("calibration %s has no arm for this engine (the model's step costs and pool)", c.File)
}

// perEngine is what the calibration set for each engine, named when
// there are several.
func (c *SimCalibration) perEngine() string {
	parts := make([]string, len(c.Engines))
	for i, e := range c.Engines {
		parts[i] = e.setting()
		if len(c.Engines) > 1 {
			parts[i] = e.Name + ": " + parts[i]
		}
	}
	return strings.Join(parts, "; ")
}

// setting is what the calibration set for e.
func (e CalibratedEngine) setting() string {
	if !e.Calibrated {
		return "no arm (the model's step costs and pool)"
	}
	scale, pool := "the model's step costs", "the model's pool"
	if e.StepScale > 0 {
		scale = "step costs x" + ScaleText(e.StepScale)
	}
	if e.PoolTokens > 0 {
		pool = fmt.Sprintf("pool %d tokens per rank", e.PoolTokens)
	}
	return scale + ", " + pool
}

// ScaleText formats a step-cost scale as sweep sim calibrate prints it
// and a simulated point's header and report say it: 3 decimals (1.00576
// is "1.006", 1.5 "1.5"), or as many more as show that it is not 1 (a
// fit's 0.99996: "0.99996", never "1"), so a calibration that changed the
// step costs never reads as one that left them, and the header never
// reads another scale (it said "x1.01") than the fit printed.
func ScaleText(v float64) string {
	for p := 3; ; p++ {
		s := strconv.FormatFloat(v, 'f', p, 64)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		if v == 1 || (s != "1" && s != "0") || p == 17 {
			return s
		}
	}
}

// Client says which load client made a result's artifacts.
type Client struct {
	// Name is "aiperf 0.12.0", "aiperf fork" or "built-in (aiperf 0.12.0
	// artifacts)" (ClientName): the client planned, or, when the
	// artifacts say another ran (Stamped), that one.
	Name string `json:"name"`
	// Program is the aiperf program that ran (empty for the built-in).
	Program string `json:"program,omitempty"`
	// Schema is the aiperf flag schema the command was built for
	// ("aiperf@0.12.0").
	Schema string `json:"schema,omitempty"`
	// AiperfVersion is the version the artifacts say wrote them
	// (profile_export_aiperf.json's aiperf_version), empty without them.
	AiperfVersion string `json:"aiperf_version,omitempty"`
	// Why says how the client was chosen.
	Why string `json:"why,omitempty"`
}

// DatasetName names the trace set the result's client replayed, from its
// dataset block (aiperf's metadata.dataset): its loader, the Hugging
// Face dataset it read ("hf NAME") and the number of entries it took
// ("N entries"), as far as the block says; "" without one.
func (r *Result) DatasetName() string {
	var ds struct {
		Loader  string `json:"loader"`
		HF      string `json:"hf_dataset_name"`
		Entries *int   `json:"num_dataset_entries"`
	}
	if len(r.Dataset) == 0 || json.Unmarshal(r.Dataset, &ds) != nil {
		return ""
	}
	parts := []string{}
	if ds.Loader != "" {
		parts = append(parts, ds.Loader)
	}
	if ds.HF != "" {
		parts = append(parts, "hf "+ds.HF)
	}
	if ds.Entries != nil {
		parts = append(parts, fmt.Sprintf("%d entries", *ds.Entries))
	}
	return strings.Join(parts, ", ")
}

// ClientName names a load client: "aiperf VERSION", or for the built-in
// load generator "built-in (aiperf VERSION artifacts)"; without a
// version, "aiperf" and "built-in".
func ClientName(builtin bool, version string) string {
	switch {
	case builtin && version != "":
		return builtinName + " (aiperf " + version + " artifacts)"
	case builtin:
		return builtinName
	case version != "":
		return "aiperf " + version
	}
	return "aiperf"
}

// builtinName starts the Name of the built-in load generator.
const builtinName = "built-in"

// Builtin reports whether the client that made the result is sweep's
// built-in load generator (Name, as ClientName and Stamped give it), not
// aiperf; false for nil.
func (c *Client) Builtin() bool { return c != nil && strings.HasPrefix(c.Name, builtinName) }

// Stamped returns a copy of c with AiperfVersion taken from the summary
// the client wrote, and named for what the summary says wrote it when
// that is not the client planned: the built-in load generator (its
// run_info.cli_command, aiperf.BuiltinCLICommand) where aiperf was
// planned or the other way round, or an aiperf version other than the
// release its flag schema names ("aiperf 0.14.2" for a command planned
// for aiperf@0.12.0). nil c stays nil; without a summary c is as
// planned.
func (c *Client) Stamped(s *aiperf.Summary) *Client {
	if c == nil {
		return nil
	}
	cp := *c
	if s == nil {
		return &cp
	}
	cp.AiperfVersion = s.AIPerfVersion
	plannedBuiltin := c.Program == ""
	ranBuiltin := plannedBuiltin
	if cmd := s.CLICommand(); cmd != "" {
		ranBuiltin = strings.HasPrefix(cmd, aiperf.BuiltinCLICommand)
	}
	release := schemaRelease(c.Schema)
	if ranBuiltin != plannedBuiltin || (release != "" && s.AIPerfVersion != "" && s.AIPerfVersion != release) {
		cp.Name = ClientName(ranBuiltin, s.AIPerfVersion)
		cp.Why = strings.TrimPrefix(c.Why+"; ", "; ") + "planned as " + c.Name + ", but " + s.File + " says " + cp.Name + " wrote it"
	}
	return &cp
}

// Submission is the scenario's verdict on a run, as aiperf stamps it in
// profile_export_aiperf.json's metadata: a run outside the scenario's
// invariants (e.g. shorter than its minimum duration, with
// --unsafe-override) is not a valid submission for it.
type Submission struct {
	Scenario       string   `json:"scenario,omitempty"`
	Valid          bool     `json:"valid"`
	InvalidReasons []string `json:"invalid_reasons"`
}

// SetValidity records the verdict: valid when reasons is empty.
func (r *Result) SetValidity(reasons []string) {
	r.Valid = len(reasons) == 0
	r.InvalidReasons = append([]string{}, reasons...)
}

// SingleNodeShape holds the single-node parallelism fields.
type SingleNodeShape struct {
	PP      int `json:"pp"`
	DCPSize int `json:"dcp_size"`
	PCPSize int `json:"pcp_size"`
}

// MultiNodeShape holds the disaggregated (prefill/decode) fields.
type MultiNodeShape struct {
	PrefillNumWorkers  int    `json:"prefill_num_workers"`
	PrefillTP          int    `json:"prefill_tp"`
	PrefillPP          int    `json:"prefill_pp"`
	PrefillDCPSize     int    `json:"prefill_dcp_size"`
	PrefillPCPSize     int    `json:"prefill_pcp_size"`
	PrefillEP          int    `json:"prefill_ep"`
	PrefillDPAttention string `json:"prefill_dp_attention"`
	NumPrefillGPU      int    `json:"num_prefill_gpu"`
	DecodeNumWorkers   int    `json:"decode_num_workers"`
	DecodeTP           int    `json:"decode_tp"`
	DecodePP           int    `json:"decode_pp"`
	DecodeDCPSize      int    `json:"decode_dcp_size"`
	DecodePCPSize      int    `json:"decode_pcp_size"`
	DecodeEP           int    `json:"decode_ep"`
	DecodeDPAttention  string `json:"decode_dp_attention"`
	NumDecodeGPU       int    `json:"num_decode_gpu"`
	PrefillHW          string `json:"prefill_hw,omitempty"`
	DecodeHW           string `json:"decode_hw,omitempty"`
}

// RequestAccounting counts the records of profile_export.jsonl. A warm-up
// record with an error counts in both dropped categories.
type RequestAccounting struct {
	RecordsTotal         int    `json:"records_total"`
	RecordsProfiled      int    `json:"records_profiled"`
	RecordsDroppedTotal  int    `json:"records_dropped_total"`
	RecordsWarmupDropped int    `json:"records_warmup_dropped"`
	RecordsErrorDropped  int    `json:"records_error_dropped"`
	ErrorCategories      IntMap `json:"error_categories"`
}

// RequestMetrics is request_metrics: client-side figures from the records.
type RequestMetrics struct {
	QPS        QPS        `json:"qps"`
	Latency    Latency    `json:"latency"`
	Tokens     Tokens     `json:"tokens"`
	Throughput Throughput `json:"throughput"`
	Cache      struct {
		TheoreticalCacheHitRate *pyjson.Rounded `json:"theoretical_cache_hit_rate"`
	} `json:"cache"`
}

// QPS counts completions in 1-second windows from the first completion.
// It is empty ({}) with fewer than two completions.
type QPS struct {
	WindowSeconds *pyjson.Rounded `json:"window_seconds,omitempty"`
	Samples       *int            `json:"samples,omitempty"`
	Stats
}

// Latency holds the latency distributions in seconds and the
// interactivity derived from them (tokens/s per user).
type Latency struct {
	TTFT               Stats `json:"ttft"`
	E2EL               Stats `json:"e2el"`
	ITL                Stats `json:"itl"`
	TPOT               Stats `json:"tpot"` // same per-request values as ITL
	Intvty             Stats `json:"intvty"`
	E2ENormIntvty      Stats `json:"e2e_norm_intvty"`
	FullResponseITL    Stats `json:"full_response_itl"`
	FullResponseIntvty Stats `json:"full_response_intvty"`
}

// Tokens holds per-request token distributions. OutputExpected comes from
// the WEKA trace dataset when it is in the HF cache.
type Tokens struct {
	Input          Stats `json:"input"`
	OutputActual   Stats `json:"output_actual"`
	OutputExpected Stats `json:"output_expected"`
}

// Throughput is tokens per second over the span from the first start to
// the last end of the successful profiled requests; empty ({}) without a
// positive span.
type Throughput struct {
	Input           *TokensPerSecond `json:"input,omitempty"`
	Output          *TokensPerSecond `json:"output,omitempty"`
	Total           *TokensPerSecond `json:"total,omitempty"`
	DurationSeconds *pyjson.Rounded  `json:"duration_seconds,omitempty"`
	PerGPU          *PerGPU          `json:"per_gpu,omitempty"`
}

// TokensPerSecond wraps one throughput figure.
type TokensPerSecond struct {
	TokensPerSecond pyjson.Rounded `json:"tokens_per_second"`
}

// PerGPU divides the throughput by the GPU count (RunFacts.NumGPUs); it is
// {} when there is no GPU count.
type PerGPU struct {
	TotalTputTPS  *pyjson.Rounded `json:"total_tput_tps,omitempty"`
	OutputTputTPS *pyjson.Rounded `json:"output_tput_tps,omitempty"`
	InputTputTPS  *pyjson.Rounded `json:"input_tput_tps,omitempty"`
}

// ServerMetrics is server_metrics: the engine's Prometheus view over the
// profiling window as aiperf exported it, normalised by a backend adapter.
// Every figure is nil (null) when the engine does not export it.
type ServerMetrics struct {
	Present     bool          `json:"present"`
	Adapter     string        `json:"adapter"` // sglang, vllm, dynamo-vllm, atom or none
	MetricCount int           `json:"metric_count"`
	Cache       ServerCache   `json:"cache"`
	KVCache     ServerKVCache `json:"kv_cache"`
	KVOffload   KVOffload     `json:"kv_offload"`
	Tokens      ServerTokens  `json:"tokens"`
	Sources     []Source      `json:"sources"`
}

// ServerCache holds cache hit rates (0-1) and the counters behind them.
type ServerCache struct {
	GPUCacheHitRate            *pyjson.Rounded `json:"gpu_cache_hit_rate"`
	CPUCacheHitRate            *pyjson.Rounded `json:"cpu_cache_hit_rate"`
	ExternalCacheHitRate       *pyjson.Rounded `json:"external_cache_hit_rate"`
	OverallCacheHitRate        *pyjson.Rounded `json:"overall_cache_hit_rate"`
	PrefixCacheHits            *pyjson.Rounded `json:"prefix_cache_hits"`
	PrefixCacheQueries         *pyjson.Rounded `json:"prefix_cache_queries"`
	ExternalPrefixCacheHits    *pyjson.Rounded `json:"external_prefix_cache_hits"`
	ExternalPrefixCacheQueries *pyjson.Rounded `json:"external_prefix_cache_queries"`
	CachedTokensBySource       FloatMap        `json:"cached_tokens_by_source"`
	FrontendCacheHitRate       *pyjson.Rounded `json:"frontend_cache_hit_rate"`
	RouterKVHitRate            *pyjson.Rounded `json:"router_kv_hit_rate"`
	RouterSharedCacheHitRate   *pyjson.Rounded `json:"router_shared_cache_hit_rate"`
	FrontendCachedTokens       *pyjson.Rounded `json:"frontend_cached_tokens"`
	FrontendInputTokens        *pyjson.Rounded `json:"frontend_input_tokens"`
}

// ServerKVCache holds KV pool usage and capacity in tokens.
//
// GPUUsagePct and CPUUsagePct are fractions in [0, 1] despite the "_pct"
// in their names: that is what InferenceX's aggregator writes there (from
// vllm:kv_cache_usage_perc and sglang:token_usage, both 0-1; the
// conformance goldens hold e.g. 0.7177) and what its readers expect, and
// its summary line prints the value times 100 as "GPU KV cache usage:
// 71.8%". Writing a percent would break byte compatibility.
type ServerKVCache struct {
	GPUUsagePct    *pyjson.Rounded `json:"gpu_usage_pct"`
	GPUTotalTokens *pyjson.Rounded `json:"gpu_total_tokens"`
	CPUUsagePct    *pyjson.Rounded `json:"cpu_usage_pct"`
	CPUUsedTokens  *pyjson.Rounded `json:"cpu_used_tokens"`
	CPUTotalTokens *pyjson.Rounded `json:"cpu_total_tokens"`
}

// KVOffload holds KV offload traffic (vLLM offload connector metrics).
type KVOffload struct {
	BytesGPUToCPU                   *pyjson.Rounded `json:"bytes_gpu_to_cpu"`
	BytesCPUToGPU                   *pyjson.Rounded `json:"bytes_cpu_to_gpu"`
	TimeGPUToCPU                    *pyjson.Rounded `json:"time_gpu_to_cpu"`
	TimeCPUToGPU                    *pyjson.Rounded `json:"time_cpu_to_gpu"`
	BandwidthGPUToCPUBytesPerSecond *pyjson.Rounded `json:"bandwidth_gpu_to_cpu_bytes_per_second"`
	BandwidthCPUToGPUBytesPerSecond *pyjson.Rounded `json:"bandwidth_cpu_to_gpu_bytes_per_second"`
}

// ServerTokens holds token totals over the window.
type ServerTokens struct {
	PromptTotal       *pyjson.Rounded `json:"prompt_total"`
	GenerationTotal   *pyjson.Rounded `json:"generation_total"`
	RequestsCompleted *pyjson.Rounded `json:"requests_completed"`
	PromptBySource    PromptBySource  `json:"prompt_by_source"`
}

// PromptBySource splits prompt tokens by where their KV came from.
type PromptBySource struct {
	GPUCacheHit           *pyjson.Rounded `json:"gpu_cache_hit"`
	CPUOrExternalCacheHit *pyjson.Rounded `json:"cpu_or_external_cache_hit"`
	Computed              *pyjson.Rounded `json:"computed"`
	Raw                   FloatMap        `json:"raw"`
}

// Source is one vLLM engine (or Dynamo component) seen in the export.
type Source struct {
	ID                 string          `json:"id"`
	Role               string          `json:"role"`
	PromptTokens       *pyjson.Rounded `json:"prompt_tokens"`
	GenerationTokens   *pyjson.Rounded `json:"generation_tokens"`
	PrefixCacheHitRate *pyjson.Rounded `json:"prefix_cache_hit_rate"`
	GPUKVCacheUsagePct *pyjson.Rounded `json:"gpu_kv_cache_usage_pct"`
}
