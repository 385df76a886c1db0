package knee

import (
	"slices"
	"strconv"

	"sweep/internal/pyjson"
	"sweep/metrics"
	"sweep/metrics/power"
	"sweep/metrics/result"
)

// Sample is one result file: one measurement of one arm at one
// concurrency. Figures a file does not carry are nil.
type Sample struct {
	File      string // path as found under the directory read
	Conc      int
	Simulated bool
	// Probe is true for a short bracketing point of an adaptive search
	// (its throughput is noisier than a full-length point's).
	Probe bool
	// Seconds is the measured span of the successful requests
	// (request_metrics.throughput.duration_seconds), 0 when unknown; a
	// probe weighs its Seconds over a full point's in the fits.
	Seconds float64
	// BenchmarkSeconds is the benchmark duration its client was configured
	// with (result.File.BenchmarkSeconds), 0 when unknown: with Probe, the
	// result's Length.
	BenchmarkSeconds float64
	// DurationUnknown says why BenchmarkSeconds is unknown where the
	// reader was told (ReadMixed's configured: "DIR/run.json records
	// result X, not Y"); "" when it is known or nothing says why.
	DurationUnknown string
	// Excluded says why the point is not used (result.File.Excluded: no
	// successful request, error rate, marked invalid, no throughput; or
	// ExcludedSuperseded); empty when usable.
	Excluded string
	// Superseded is true for a probe at a concurrency where its arm also
	// has a full-length result (Read and Analyze mark it; Excluded then
	// starts with ExcludedSuperseded): an adaptive discovery keeps the
	// probe it measured again at the full length (campaign.ClearPointDir),
	// and the full-length run's result is the reading there.
	Superseded bool
	// OtherMeasurement is true for a result that is not the same
	// measurement as the arm's reading (OneMeasurement marks it): made with
	// another client, trace set, aiperf version or image than most of the
	// arm's results (Excluded then starts with ExcludedOtherSetup), or
	// whose client ran for another benchmark duration than the arm's
	// reading at its concurrency (ExcludedOtherLength).
	OtherMeasurement bool

	TotalTPS, OutputTPS *float64 // per GPU
	// ErrorRate is records_error_dropped / (records_profiled +
	// records_error_dropped); 0 without request_accounting.
	ErrorRate float64
	Errors    int

	Intvty        result.Stats // request_metrics.latency.intvty (1/ITL)
	E2ENormIntvty result.Stats // request_metrics.latency.e2e_norm_intvty
	TTFT, ITL     result.Stats // seconds

	KVUsage  *float64 // server_metrics.kv_cache.gpu_usage_pct (0-1)
	CacheHit *float64 // server_metrics.cache.overall_cache_hit_rate, else gpu
	// Image and Fingerprint are the container image and recipe_fingerprint
	// the point ran with ("" when the file has none): what a change
	// changes, so never part of the arm's identity.
	Image, Fingerprint string
	// Client, AiperfVersion and Dataset are the load client that made the
	// result (result.Client.Name), the aiperf version its artifacts
	// record and its trace set (result.Result.DatasetName); "" where the
	// file does not say. With Image, they are the result's Setup.
	Client, AiperfVersion, Dataset string
	// SimCalibration is what a simulated point's calibration file set
	// (result.SimCalibration.Setting: "" for none, or the model's values).
	SimCalibration string
	// SimSeed and SimFaults are a simulated point's seed and injected
	// faults (result.Simulation; "" for a real point, or no fault).
	SimSeed, SimFaults string
	// AL is the acceptance_length block of a sweep result (nil for
	// InferenceX's own results, which carry none).
	AL *metrics.ALCheck
	// JoulesPerOutputToken is the power lane's whole-deployment energy
	// per output token; nil unless power_valid is 1 (schema version 2).
	JoulesPerOutputToken *float64
}

// Throughput returns the sample's throughput per GPU for metric.
func (s *Sample) Throughput(m Metric) *float64 {
	if m == MetricOutput {
		return s.OutputTPS
	}
	return s.TotalTPS
}

// scaleThroughput multiplies the sample's throughputs by f (new values:
// a cloned sample's pointers are not shared).
func (s *Sample) scaleThroughput(f float64) {
	for _, p := range []**float64{&s.TotalTPS, &s.OutputTPS} {
		if *p != nil {
			v := **p * f
			*p = &v
		}
	}
}

// SampleOf is the measurement a result file holds.
func SampleOf(f *result.File) Sample {
	r := &f.Result
	s := Sample{File: f.Path, Conc: r.Conc, Simulated: r.Simulated, AL: r.AcceptanceLength, Probe: r.Probe,
		Excluded: f.Excluded(), ErrorRate: f.ErrorRate(), Errors: r.RequestAccounting.RecordsErrorDropped,
		Image: r.Image, Fingerprint: r.RecipeFingerprint, BenchmarkSeconds: f.BenchmarkSeconds}
	if r.Client != nil {
		s.Client, s.AiperfVersion = r.Client.Name, r.Client.AiperfVersion
	}
	s.Dataset = r.DatasetName()
	if r.Simulation != nil {
		s.SimCalibration = r.Simulation.Calibration.Setting()
		s.SimSeed, s.SimFaults = strconv.FormatUint(r.Simulation.Seed, 10), r.Simulation.Faults
	}
	if d := r.RequestMetrics.Throughput.DurationSeconds; d != nil {
		s.Seconds = float64(*d)
	}
	lat := r.RequestMetrics.Latency
	s.Intvty, s.E2ENormIntvty, s.TTFT, s.ITL = lat.Intvty, lat.E2ENormIntvty, lat.TTFT, lat.ITL
	if pg := r.RequestMetrics.Throughput.PerGPU; pg != nil {
		s.TotalTPS, s.OutputTPS = floatOf(pg.TotalTputTPS), floatOf(pg.OutputTputTPS)
	}
	sm := r.ServerMetrics
	s.KVUsage = floatOf(sm.KVCache.GPUUsagePct)
	s.CacheHit = floatOf(sm.Cache.OverallCacheHitRate)
	if s.CacheHit == nil {
		s.CacheHit = floatOf(sm.Cache.GPUCacheHitRate)
	}
	s.JoulesPerOutputToken = power.JoulesPerOutputTokenOf(r.Fields)
	return s
}

func floatOf(f *pyjson.Rounded) *float64 {
	if f == nil {
		return nil
	}
	v := float64(*f)
	return &v
}

// Arm is the result files of one parallelism config of one config key.
type Arm struct {
	Identity result.Identity
	Samples  []Sample // sorted by Conc, then File
	// Simulated is true when the arm's results came from the simulated
	// engine (all of them: Read refuses a mix).
	Simulated bool
	// Unfinished are the concurrencies of the arm its sweep has not
	// finished, ascending: interrupted, or not run yet (the sweep's
	// journal says so: campaign.ReadKnees sets them; Read leaves them
	// nil). Analyze names them in its verdict, which they leave
	// provisional.
	Unfinished []int
	// NotPlanned are the concurrencies of the arm's grid in the config
	// that its sweep did not plan, ascending: a discovery narrowed with
	// --conc-list (campaign.ReadKnees sets them from its journal; Read
	// leaves them nil). An unsaturated verdict says the grid goes on above
	// rather than to extend it.
	NotPlanned []int
}

// Values returns the distinct non-empty values get reads from the arm's
// samples, sorted: the images, recipe fingerprints or calibrations its
// points ran with.
func (a *Arm) Values(get func(*Sample) string) []string {
	var out []string
	for i := range a.Samples {
		if v := get(&a.Samples[i]); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// kvNearFull is the KV pool usage (Sample.KVUsage: the highest the window
// saw, 0-1) from which a probe is not trusted: within a fifth of the
// pool.
const kvNearFull = 0.8

// Unsteady reports whether s is a usable probe whose KV pool came near
// full (kvNearFull). Such a probe has not shown the steady state of a
// full-length point: agentic sessions' contexts grow for minutes, so the
// pool fills late in a short window or after it, and only then do cached
// prefixes get evicted and re-prefilled, the regime a 1200 s point
// settles in. A probe ends in the warm-cache phase and overstates the
// throughput (the simulated GLM-5.2 MI325X TP8 arm's c4 probe reads 1.9
// times its 1200 s point, its cache hit rate 0.77 against 0.43), or past
// a KV cliff, before the collapse is complete, misstates it either way.
// The window's usage says nothing of when the pool filled, so the
// signal is the usage itself, with a margin: a probe's highest usage
// understates the full point's where sessions are still growing at its
// end (GLM c3: 0.85 against 0.95).
func (s *Sample) Unsteady() bool { return s.Probe && s.poolNearFull() }

// poolNearFull reports whether s is usable and its KV pool came near
// full (kvNearFull), at any length.
func (s *Sample) poolNearFull() bool {
	return s.Excluded == "" && s.KVUsage != nil && *s.KVUsage >= kvNearFull
}
