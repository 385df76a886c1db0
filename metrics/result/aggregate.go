package result

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"sweep/configs"
	"sweep/internal/inputfile"
	"sweep/internal/pyjson"
	"sweep/metrics/aiperf"
)

// Inputs are the artifacts one aggregation reads. aiperf.Summary and
// ServerMetrics may be nil (aiperf skips them when nothing succeeded).
type Inputs struct {
	// Records are every line of profile_export.jsonl, warm-up and failed
	// ones included; Aggregate drops and counts them.
	Records []aiperf.Record
	// RecordsFile is the profile_export.jsonl Records came from.
	RecordsFile string
	Summary     *aiperf.Summary
	// SummaryErr is why profile_export_aiperf.json did not read, a
	// *configs.Error (at its line and column for one that is not JSON);
	// Summary is nil then, and CheckArtifacts names it.
	SummaryErr    error
	ServerMetrics *aiperf.ServerMetricsExport
	// ServerLogs are the engine logs to read the KV pool size from
	// (server.log, watchtower-*.out), as text.
	ServerLogs []string
	// Traces maps trace id to its turns' expected output lengths (the WEKA
	// dataset); nil when the dataset is not cached.
	Traces TraceLengths
}

// ErrNoRecords is returned by LoadInputs when profile_export.jsonl is
// missing: there is nothing to aggregate.
var ErrNoRecords = errors.New("nothing to aggregate: profile_export.jsonl not found")

// LoadInputs reads a RESULT_DIR the way InferenceX does: the artifact
// directory under aiperf_artifacts/ (or its first run subdirectory),
// server.log plus watchtower-*.out logs in RESULT_DIR and up to three parent
// directories, and the trace dataset under hfHubCache (may be empty).
func LoadInputs(resultDir, hfHubCache string) (*Inputs, error) {
	dir := aiperf.ResolveArtifactDir(resultDir)
	jsonl := filepath.Join(dir, aiperf.RecordsFile)
	if !exists(jsonl) {
		return nil, fmt.Errorf("%w at %s", ErrNoRecords, jsonl)
	}
	in := &Inputs{RecordsFile: jsonl}
	// The two large files (a 3,600 s point's are tens of MB each) are
	// decoded side by side.
	var metricsErr error
	var wg sync.WaitGroup
	if p := filepath.Join(dir, aiperf.ServerMetricsFile); exists(p) {
		wg.Go(func() { in.ServerMetrics, metricsErr = aiperf.ReadServerMetricsFile(p) })
	}
	err := readRecordsFile(jsonl, in)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if p := filepath.Join(dir, aiperf.SummaryFile); exists(p) {
		// A summary that is not aiperf's JSON loses the point's summary
		// only, never its records: the result is still written, invalid.
		// One refused unread (not a regular file, over its size limit)
		// stops the aggregation as any such input does.
		in.Summary, err = aiperf.ReadSummaryFile(p)
		if _, bad := errors.AsType[*configs.Error](err); bad {
			in.SummaryErr = err
		} else if err != nil {
			return nil, err
		}
	}
	if metricsErr != nil {
		return nil, metricsErr
	}
	for _, p := range ServerLogPaths(resultDir) {
		text, err := readLogHead(p)
		if err != nil {
			return nil, err
		}
		in.ServerLogs = append(in.ServerLogs, text)
	}
	if hfHubCache != "" {
		if in.Traces, err = LoadTraceLengths(hfHubCache); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func readRecordsFile(path string, in *Inputs) error {
	f, err := inputfile.Open(path, inputfile.AiperfRecords)
	if err != nil {
		return err
	}
	defer f.Close()
	in.Records, err = aiperf.ReadRecords(f, path)
	return err
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// Aggregate computes the aggregate result from the inputs and the run's
// facts with InferenceX's maths. It fails only where InferenceX's
// aggregator fails: invalid facts, or server metrics from an engine no
// adapter knows.
func Aggregate(in *Inputs, facts RunFacts) (*Result, error) {
	if err := facts.Check(); err != nil {
		return nil, err
	}
	profiled, acct := splitRecords(in.Records)
	res, numGPUs := newResult(facts)
	res.NumRequestsTotal, res.NumRequestsSuccessful, res.RequestAccounting = acct.RecordsTotal, len(profiled), acct
	if in.Summary != nil {
		if ds := in.Summary.Dataset(); ds != nil {
			rounded, err := roundRawJSON(ds)
			if err != nil {
				return nil, fmt.Errorf("%s: metadata.dataset: %w", in.Summary.File, err)
			}
			res.Dataset = rounded
		}
		if st, ok := in.Summary.Scenario(); ok {
			res.Submission = &Submission{Scenario: st.Scenario, Valid: *st.Valid, InvalidReasons: append([]string{}, st.InvalidReasons...)}
		}
	}
	var err error
	if res.RequestMetrics, err = requestMetrics(profiled, in.Summary, in.Traces); err != nil {
		return nil, err
	}
	sm, warnings, err := serverMetrics(in.ServerMetrics, facts.Framework, profiled, in.ServerLogs)
	if err != nil {
		return nil, err
	}
	if tp := res.RequestMetrics.Throughput; tp.Total != nil && numGPUs > 0 {
		n := float64(numGPUs)
		tp.PerGPU = &PerGPU{
			TotalTputTPS:  pyjson.RoundedPtr(float64(tp.Total.TokensPerSecond) / n),
			OutputTputTPS: pyjson.RoundedPtr(float64(tp.Output.TokensPerSecond) / n),
			InputTputTPS:  pyjson.RoundedPtr(float64(tp.Input.TokensPerSecond) / n),
		}
		res.RequestMetrics.Throughput = tp
	}
	res.ServerMetrics = sm
	res.KVCachePoolTokens = sm.KVCache.GPUTotalTokens
	res.Warnings = warnings
	return res, nil
}

// splitRecords keeps the successful profiling records and counts the rest.
func splitRecords(all []aiperf.Record) ([]*aiperf.Record, RequestAccounting) {
	var acct RequestAccounting
	profiled := make([]*aiperf.Record, 0, len(all))
	for i := range all {
		r := &all[i]
		acct.RecordsTotal++
		warm := r.Warmup()
		failed := r.Failed()
		if warm {
			acct.RecordsWarmupDropped++
		}
		if failed {
			acct.RecordsErrorDropped++
			acct.ErrorCategories.Inc(r.ErrorCategory())
		}
		if warm || failed {
			continue
		}
		profiled = append(profiled, r)
	}
	acct.RecordsProfiled = len(profiled)
	acct.RecordsDroppedTotal = acct.RecordsTotal - len(profiled)
	return profiled, acct
}

// floatsOf collects a metric's values that convert to float.
func floatsOf(recs []*aiperf.Record, pick func(*aiperf.RecordMetrics) *aiperf.MetricValue) []float64 {
	out := make([]float64, 0, len(recs))
	for _, r := range recs {
		if m := pick(&r.Metrics); m != nil {
			if v, ok := m.Value.Float(); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// intsOf collects a metric's values that convert to int.
func intsOf(recs []*aiperf.Record, pick func(*aiperf.RecordMetrics) *aiperf.MetricValue) []int64 {
	out := make([]int64, 0, len(recs))
	for _, r := range recs {
		if m := pick(&r.Metrics); m != nil {
			if v, ok := m.Value.Int(); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// msToSeconds keeps finite positive values and converts ms to s.
func msToSeconds(ms []float64) []float64 {
	out := ms[:0]
	for _, v := range ms {
		if !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0 {
			out = append(out, v/1000.0)
		}
	}
	return out
}

func requestMetrics(recs []*aiperf.Record, summary *aiperf.Summary, traces TraceLengths) (RequestMetrics, error) {
	var rm RequestMetrics
	var err error
	if rm.QPS, err = qpsStats(recs); err != nil {
		return rm, err
	}
	rm.Latency = latencyStats(recs)
	rm.Tokens = Tokens{
		Input:          intStats(intsOf(recs, pickISL)),
		OutputActual:   intStats(intsOf(recs, pickOSL)),
		OutputExpected: intStats(traces.expected(recs)),
	}
	rm.Throughput = throughputStats(recs)
	rm.Cache.TheoreticalCacheHitRate = pyjson.OptRounded(theoreticalCacheHitRate(summary))
	return rm, nil
}

func latencyStats(recs []*aiperf.Record) Latency {
	ttft := msToSeconds(floatsOf(recs, pickTTFT))
	e2el := msToSeconds(floatsOf(recs, pickE2EL))
	itl := msToSeconds(floatsOf(recs, pickITL))
	frITL := msToSeconds(floatsOf(recs, pickFRITL))

	var l Latency
	l.TTFT = statsOf(ttft)
	l.E2EL = statsOf(e2el)
	l.ITL = statsOf(slices.Clone(itl))
	l.TPOT = l.ITL
	l.Intvty = interactivity(l.ITL, itl)
	l.FullResponseITL = statsOf(slices.Clone(frITL))
	l.FullResponseIntvty = interactivity(l.FullResponseITL, frITL)

	// E2E-normalised interactivity: 1 / percentile(E2EL_i / OSL_i).
	var ratios []float64
	for _, r := range recs {
		e, ok1 := scalarOf(r.Metrics.Get("request_latency")).Float()
		o, ok2 := scalarOf(r.Metrics.Get("output_sequence_length")).Float()
		if !ok1 || !ok2 || !finite(e) || !finite(o) || e <= 0 || o <= 0 {
			continue
		}
		ratios = append(ratios, e/1000.0/o)
	}
	l.E2ENormIntvty = interactivity(statsOf(slices.Clone(ratios)), ratios)
	return l
}

func scalarOf(m *aiperf.MetricValue) aiperf.Scalar {
	if m == nil {
		return aiperf.Scalar{}
	}
	return m.Value
}

// interactivity turns latency statistics into rates: each of mean and the
// percentiles becomes 1/value when positive (so the slow tail stays the
// slow tail), and std is the spread of the per-request 1/value.
func interactivity(lat Stats, perRequest []float64) Stats {
	inv := func(f *pyjson.Rounded) *pyjson.Rounded {
		if f == nil || *f <= 0 {
			return nil
		}
		return pyjson.RoundedPtr(1.0 / float64(*f))
	}
	out := Stats{Mean: inv(lat.Mean), P50: inv(lat.P50), P75: inv(lat.P75), P90: inv(lat.P90), P95: inv(lat.P95)}
	var m moments
	for _, v := range perRequest {
		if v > 0 {
			m.add(1.0 / v)
		}
	}
	if m.n > 0 {
		out.Std = pyjson.RoundedPtr(m.pstdev())
	}
	return out
}

func intStats(vals []int64) Stats {
	f := make([]float64, len(vals))
	for i, v := range vals {
		f[i] = float64(v)
	}
	return statsOf(f)
}

// maxQPSWindows bounds the 1-second QPS windows (about 48 days). A longer
// span means a bogus request_end_ns (InferenceX loops for hours on one).
const maxQPSWindows = 1 << 22

// ImplausibleSpanError reports completion timestamps too far apart for one
// benchmark run.
type ImplausibleSpanError struct {
	Seconds float64
}

func (e *ImplausibleSpanError) Error() string {
	return fmt.Sprintf("request_end_ns values span %.0f s, more than a benchmark run can; a record carries a bogus timestamp", e.Seconds)
}

// qpsStats counts completions in consecutive 1-second windows starting at
// the first completion, while a whole window fits before the last one.
func qpsStats(recs []*aiperf.Record) (QPS, error) {
	var ends []float64
	for _, r := range recs {
		if r.Metadata.RequestEndNs.Truthy() {
			if ns, ok := r.Metadata.RequestEndNs.Int(); ok {
				ends = append(ends, float64(ns)/1e9)
			}
		}
	}
	if len(ends) < 2 {
		return QPS{}, nil
	}
	slices.Sort(ends)
	first, last := ends[0], ends[len(ends)-1]
	if last-first <= 0 {
		return QPS{}, nil
	}
	if last-first > maxQPSWindows {
		return QPS{}, &ImplausibleSpanError{Seconds: last - first}
	}
	const window = 1.0
	var values []float64
	lo := 0
	for cur := first; cur+window <= last; cur += window {
		// ends is sorted: count ends in [cur, cur+window).
		for lo < len(ends) && ends[lo] < cur {
			lo++
		}
		hi := lo
		for hi < len(ends) && ends[hi] < cur+window {
			hi++
		}
		values = append(values, float64(hi-lo)/window)
	}
	n := len(values)
	q := QPS{WindowSeconds: pyjson.RoundedPtr(window), Samples: &n}
	if n == 0 {
		q.Mean = pyjson.RoundedPtr(float64(len(ends)) / (last - first))
		return q, nil
	}
	q.Stats = statsOf(values)
	return q, nil
}

func throughputStats(recs []*aiperf.Record) Throughput {
	var minStart, maxEnd int64
	haveStart, haveEnd := false, false
	for _, r := range recs {
		if r.Metadata.RequestStartNs.Truthy() {
			if v, ok := r.Metadata.RequestStartNs.Int(); ok && (!haveStart || v < minStart) {
				minStart, haveStart = v, true
			}
		}
		if r.Metadata.RequestEndNs.Truthy() {
			if v, ok := r.Metadata.RequestEndNs.Int(); ok && (!haveEnd || v > maxEnd) {
				maxEnd, haveEnd = v, true
			}
		}
	}
	if !haveStart || !haveEnd {
		return Throughput{}
	}
	duration := float64(maxEnd-minStart) / 1e9
	if duration <= 0 {
		return Throughput{}
	}
	var in, out int64
	for _, v := range intsOf(recs, pickISL) {
		in += v
	}
	for _, v := range intsOf(recs, pickOSL) {
		out += v
	}
	return Throughput{
		Input:           &TokensPerSecond{pyjson.Rounded(float64(in) / duration)},
		Output:          &TokensPerSecond{pyjson.Rounded(float64(out) / duration)},
		Total:           &TokensPerSecond{pyjson.Rounded(float64(in+out) / duration)},
		DurationSeconds: pyjson.RoundedPtr(duration),
		PerGPU:          &PerGPU{},
	}
}

// theoreticalCacheHitRate reads aiperf's theoretical_prefix_cache_hit:
// sum/count when both are there, else avg (a "%" unit is divided by 100).
func theoreticalCacheHitRate(s *aiperf.Summary) *float64 {
	if s == nil {
		return nil
	}
	m, ok, err := s.Metric("theoretical_prefix_cache_hit")
	if !ok || err != nil {
		return nil
	}
	hit, ok1 := m.Sum.Float()
	total, ok2 := m.Count.Float()
	if ok1 && ok2 && total > 0 {
		v := hit / total
		return &v
	}
	avg, ok := m.Avg.Float()
	if !ok {
		return nil
	}
	if u := m.Unit; u.Present() && trimPy(u.String()) == "%" {
		avg /= 100.0
	}
	return &avg
}
