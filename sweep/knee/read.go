package knee

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
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
	// OtherLength is true for a result whose client ran for another
	// benchmark duration than the arm's reading at its concurrency
	// (OneLength marks it; Excluded then starts with ExcludedOtherLength).
	OtherLength bool

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

// ErrMixedSimulation is returned (wrapped) when one arm has both
// simulated and real results: their throughputs are not comparable.
var ErrMixedSimulation = errors.New("simulated and real results in one arm")

// Read reads every aggregate result under dir (result.ReadDir: every
// *.json whose top-level value is an object with "conc" and
// "request_metrics", recursively; other JSON, temp files and logs are
// ignored), groups the files into arms by result.IdentityKeys and returns
// the arms sorted by their identity. Failed points stay in the arm with
// Excluded set, and so do the probes a full-length result of their arm
// and concurrency supersedes (Sample.Superseded) and the results of
// another benchmark duration than the arm's reading at their
// concurrency (Sample.OtherLength; OneLength). A result file whose
// fields have the wrong types, or an arm that mixes simulated and real
// results, is an error (all such problems are joined).
func Read(ctx context.Context, dir string) ([]*Arm, error) {
	return read(ctx, dir, true)
}

// ReadMixed is Read without the refusal of arms that mix simulated and
// real results: each Sample says whether it was simulated and Arm.Simulated
// is true when any was. sweep compare reads with it and names such a mix as
// a problem instead of failing.
func ReadMixed(ctx context.Context, dir string) ([]*Arm, error) {
	return read(ctx, dir, false)
}

func read(ctx context.Context, dir string, refuseMix bool) ([]*Arm, error) {
	files, problems, err := result.ReadDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	arms := map[string]*Arm{}
	for _, f := range files {
		k := f.Identity.ArmKey()
		a := arms[k]
		if a == nil {
			a = &Arm{Identity: f.Identity}
			arms[k] = a
		}
		a.Samples = append(a.Samples, SampleOf(f))
	}
	out := make([]*Arm, 0, len(arms))
	for _, a := range arms {
		sort.Slice(a.Samples, func(i, j int) bool {
			if a.Samples[i].Conc != a.Samples[j].Conc {
				return a.Samples[i].Conc < a.Samples[j].Conc
			}
			return a.Samples[i].File < a.Samples[j].File
		})
		a.Samples = OneLength(a.Samples)
		a.Simulated = a.Samples[0].Simulated
		for _, s := range a.Samples[1:] {
			if !refuseMix {
				a.Simulated = a.Simulated || s.Simulated
				continue
			}
			if s.Simulated != a.Simulated {
				sim, real := a.Samples[0].File, s.File
				if s.Simulated {
					sim, real = real, sim
				}
				problems = append(problems, fmt.Errorf("arm %s: %w: %s is simulated, %s is real; read them as separate directories",
					a.Identity.Label(), ErrMixedSimulation, sim, real))
				break
			}
		}
		out = append(out, a)
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	sortArms(out)
	return out, nil
}

// sortArms orders arms by config key, then numerically by tp, ep, pp and
// the remaining fields as text.
func sortArms(arms []*Arm) {
	num := func(a *Arm, k string) int {
		n, _ := strconv.Atoi(a.Identity.Get(k))
		return n
	}
	sort.SliceStable(arms, func(i, j int) bool {
		a, b := arms[i], arms[j]
		if ka, kb := a.Identity.GroupKey(), b.Identity.GroupKey(); ka != kb {
			return ka < kb
		}
		for _, k := range []string{"tp", "ep", "pp"} {
			if x, y := num(a, k), num(b, k); x != y {
				return x < y
			}
		}
		return a.Identity.ArmKey() < b.Identity.ArmKey()
	})
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

// SampleOf is the measurement a result file holds.
func SampleOf(f *result.File) Sample {
	r := &f.Result
	s := Sample{File: f.Path, Conc: r.Conc, Simulated: r.Simulated, AL: r.AcceptanceLength, Probe: r.Probe,
		Excluded: f.Excluded(), ErrorRate: f.ErrorRate(), Errors: r.RequestAccounting.RecordsErrorDropped,
		Image: r.Image, Fingerprint: r.RecipeFingerprint, BenchmarkSeconds: f.BenchmarkSeconds}
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

// ReadFile reads one aggregate result file as a Sample; ok is false when
// the file is not a result (result.ErrNotResult).
func ReadFile(path string) (s Sample, ok bool, err error) {
	f, err := result.ReadFile(path)
	switch {
	case errors.Is(err, result.ErrNotResult):
		return Sample{}, false, nil
	case err != nil:
		return Sample{}, false, err
	}
	return SampleOf(f), true, nil
}
