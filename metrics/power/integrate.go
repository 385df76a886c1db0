package power

import (
	"errors"
	"math"
	"math/big"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"sweep/internal/pyjson"
)

// MaxSampleGap is the longest gap between two samples of one GPU around
// the window that InferenceX accepts, in seconds.
const MaxSampleGap = 3.0

// IntegrationMethod names how energy is computed, as the sidecar says it.
const IntegrationMethod = "per_device_trapezoidal_with_linear_boundary_interpolation"

// ReasonGPUCountMismatch is InferenceX's reason code for telemetry that
// holds another number of GPUs than expected (TP×PP×PCP): with every GPU
// of the node integrated, as InferenceX does, that of a point using
// fewer GPUs than the node has.
const ReasonGPUCountMismatch = "expected_gpu_count_mismatch"

// Integration is the result of integrating one telemetry stream over a
// window (InferenceX's PowerIntegration). The per-GPU maps are keyed by
// GPU id in ObservedGPUs order; the averages are nil unless every GPU was
// integrated.
type Integration struct {
	Valid            bool
	Reasons          []string
	ExpectedGPUs     *int
	ObservedGPUs     []string
	SampleCounts     map[string]int
	MaxSampleGaps    map[string]float64
	EnergyJ          map[string]float64
	DeviceIssues     map[string][]string
	AvgPowerW        *float64
	AvgTotalPowerW   *float64
	TotalGPUEnergyJ  *float64
	gapOrder, eOrder []string // key order of MaxSampleGaps and EnergyJ
	issueOrder       []string
}

func emptyIntegration(expected *int, reasons []string) *Integration {
	return &Integration{
		Reasons: reasons, ExpectedGPUs: expected,
		SampleCounts: map[string]int{}, MaxSampleGaps: map[string]float64{},
		EnergyJ: map[string]float64{}, DeviceIssues: map[string][]string{},
	}
}

// appendReason adds reason once, keeping discovery order.
func appendReason(reasons []string, reason string) []string {
	if slices.Contains(reasons, reason) {
		return reasons
	}
	return append(reasons, reason)
}

// gpuLess orders numeric GPU ids by value before any other id, which sort
// as strings.
func gpuLess(a, b string) bool {
	na, aNum := digitsValue(a)
	nb, bNum := digitsValue(b)
	switch {
	case aNum && bNum:
		return na.Cmp(nb) < 0
	case aNum != bNum:
		return aNum
	}
	return a < b
}

func digitsValue(s string) (*big.Int, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return nil, false
	}
	n, ok := new(big.Int).SetString(s, 10)
	return n, ok
}

func sortGPUs(ids []string) {
	sort.SliceStable(ids, func(i, j int) bool { return gpuLess(ids[i], ids[j]) })
}

// sample is one (timestamp, watts) point of one GPU.
type sample struct{ t, w float64 }

func sortSamples(s []sample) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].t != s[j].t {
			return s[i].t < s[j].t
		}
		return s[i].w < s[j].w
	})
}

// readTelemetry reads the stream as text; the error distinguishes a file
// that is not there from one that cannot be read.
func readTelemetry(path string) (*csvTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return readCSV(strings.ToValidUTF8(string(data), "\uFFFD"))
}

// Integrate is integrate_power: it validates the telemetry in csvPath and
// integrates each GPU's power over [start, end] with the trapezoidal rule
// and linearly interpolated ends. loc is the zone zone-less timestamps are
// read in (InferenceX: its process's local zone).
func Integrate(csvPath string, start, end float64, expected *int, maxGap float64, loc *time.Location) *Integration {
	return integrate(csvPath, start, end, expected, maxGap, loc, nil)
}

// keep reports whether GPU gpu passes the filter (nil keeps every GPU).
func keep(filter []string, gpu string) bool {
	return filter == nil || slices.Contains(filter, gpu)
}

func integrate(csvPath string, start, end float64, expected *int, maxGap float64, loc *time.Location, filter []string) *Integration {
	var reasons []string
	if isNonFinite(start) || isNonFinite(end) || end <= start {
		return emptyIntegration(expected, []string{"invalid_benchmark_window"})
	}
	if expected != nil && *expected <= 0 {
		reasons = appendReason(reasons, "invalid_expected_gpu_count")
	}
	if isNonFinite(maxGap) || maxGap <= 0 {
		return emptyIntegration(expected, []string{"invalid_max_sample_gap"})
	}
	st, err := os.Stat(csvPath)
	if err != nil || !st.Mode().IsRegular() {
		return emptyIntegration(expected, appendReason(reasons, "telemetry_file_missing"))
	}
	if st.Size() == 0 {
		return emptyIntegration(expected, appendReason(reasons, "telemetry_file_empty"))
	}
	table, err := readTelemetry(csvPath)
	if err != nil {
		return emptyIntegration(expected, appendReason(reasons, "telemetry_file_unreadable"))
	}
	cols := detectColumns(table.header)
	if cols.timestamp == "" {
		reasons = appendReason(reasons, "timestamp_column_missing")
	}
	if cols.power == "" {
		reasons = appendReason(reasons, "power_column_missing")
	}
	if cols.gpu == "" {
		reasons = appendReason(reasons, "gpu_identity_column_missing")
	}
	if cols.timestamp == "" || cols.power == "" || cols.gpu == "" {
		return emptyIntegration(expected, reasons)
	}

	raw, missingIdentity, reasons := groupReadings(table, cols, start, end, maxGap, loc, filter, reasons)
	if missingIdentity {
		reasons = appendReason(reasons, "gpu_identity_missing")
	}
	if len(raw) == 0 {
		return emptyIntegration(expected, appendReason(reasons, "no_usable_power_samples"))
	}
	in := emptyIntegration(expected, nil)
	for gpu := range raw {
		in.ObservedGPUs = append(in.ObservedGPUs, gpu)
	}
	sortGPUs(in.ObservedGPUs)
	if expected != nil && *expected > 0 && len(in.ObservedGPUs) != *expected {
		reasons = appendReason(reasons, ReasonGPUCountMismatch)
	}
	for _, gpu := range in.ObservedGPUs {
		var samples []sample
		for ts, ws := range raw[gpu] {
			samples = append(samples, sample{ts, exactMean(ws)})
		}
		sortSamples(samples)
		in.SampleCounts[gpu] = len(samples)
		var issues []string
		switch {
		case len(samples) < 2:
			issues = append(issues, "insufficient_power_samples")
			reasons = appendReason(reasons, "insufficient_power_samples")
		case samples[0].t > start || samples[len(samples)-1].t < end:
			issues = append(issues, "benchmark_window_not_bracketed")
			reasons = appendReason(reasons, "benchmark_window_not_bracketed")
		default:
			left := sort.Search(len(samples), func(i int) bool { return samples[i].t > start }) - 1
			right := sort.Search(len(samples), func(i int) bool { return samples[i].t >= end })
			relevant := samples[left : right+1]
			maxSeen := 0.0
			for i := 1; i < len(relevant); i++ {
				if gap := relevant[i].t - relevant[i-1].t; i == 1 || gap > maxSeen {
					maxSeen = gap
				}
			}
			in.MaxSampleGaps[gpu] = maxSeen
			in.gapOrder = append(in.gapOrder, gpu)
			if maxSeen > maxGap {
				issues = append(issues, "sampling_gap_exceeded")
				reasons = appendReason(reasons, "sampling_gap_exceeded")
			}
			in.EnergyJ[gpu] = integrateDevice(samples, start, end)
			in.eOrder = append(in.eOrder, gpu)
		}
		if len(issues) > 0 {
			in.DeviceIssues[gpu] = issues
			in.issueOrder = append(in.issueOrder, gpu)
		}
	}
	if len(in.EnergyJ) == len(in.ObservedGPUs) {
		total := 0.0
		for _, gpu := range in.eOrder {
			total += in.EnergyJ[gpu]
		}
		avgTotal := total / (end - start)
		avg := avgTotal / float64(len(in.ObservedGPUs))
		in.TotalGPUEnergyJ, in.AvgTotalPowerW, in.AvgPowerW = &total, &avgTotal, &avg
	}
	in.Reasons = reasons
	in.Valid = len(reasons) == 0
	return in
}

// groupReadings groups the telemetry's readings inside [start-maxGap,
// end+maxGap] by GPU and exact timestamp (duplicates are averaged later),
// appending a reason for each unusable sample to reasons; missingIdentity
// reports a reading without a GPU.
func groupReadings(table *csvTable, cols columns, start, end, maxGap float64, loc *time.Location, filter []string, reasons []string) (raw map[string]map[float64][]float64, missingIdentity bool, _ []string) {
	raw = map[string]map[float64][]float64{}
	for _, row := range table.rows {
		ts, ok := parseSampleTime(row[cols.timestamp], loc)
		if !ok || isNonFinite(ts) {
			reasons = appendReason(reasons, "invalid_timestamp_sample")
			continue
		}
		if ts < start-maxGap || ts > end+maxGap {
			continue
		}
		w, ok := parsePower(row[cols.power])
		if !ok || isNonFinite(w) || w < 0 {
			reasons = appendReason(reasons, "invalid_power_sample")
			continue
		}
		gpu := strings.TrimSpace(row[cols.gpu])
		if gpu == "" {
			missingIdentity = true
			continue
		}
		if !keep(filter, gpu) {
			continue
		}
		if raw[gpu] == nil {
			raw[gpu] = map[float64][]float64{}
		}
		raw[gpu][ts] = append(raw[gpu][ts], w)
	}
	return raw, missingIdentity, reasons
}

func isNonFinite(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// exactMean is statistics.mean: the exact mean, rounded once.
func exactMean(xs []float64) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	sum := new(big.Rat)
	for _, x := range xs {
		sum.Add(sum, new(big.Rat).SetFloat64(x))
	}
	sum.Quo(sum, new(big.Rat).SetInt64(int64(len(xs))))
	f, _ := sum.Float64()
	return f
}

// interpolate is _interpolate_power at t, which the samples bracket.
func interpolate(samples []sample, t float64) float64 {
	right := sort.Search(len(samples), func(i int) bool { return samples[i].t >= t })
	if right < len(samples) && math.Abs(samples[right].t-t) <= 1e-9 {
		return samples[right].w
	}
	l, r := samples[right-1], samples[right]
	frac := (t - l.t) / (r.t - l.t)
	return l.w + frac*(r.w-l.w)
}

// integrateDevice is _integrate_device: the trapezoidal integral over
// [start, end] with interpolated end points.
func integrateDevice(samples []sample, start, end float64) float64 {
	clipped := []sample{{start, interpolate(samples, start)}}
	for _, s := range samples {
		if start < s.t && s.t < end {
			clipped = append(clipped, s)
		}
	}
	clipped = append(clipped, sample{end, interpolate(samples, end)})
	return trapezoid(clipped)
}

func trapezoid(s []sample) float64 {
	e := 0.0
	for i := 1; i < len(s); i++ {
		e += (s[i].t - s[i-1].t) * (s[i-1].w + s[i].w) / 2.0
	}
	return e
}

// errSnapshot marks an energy snapshot without the needed columns or rows.
var errSnapshot = errors.New("unparseable snapshot")

// readEnergySnapshot is _read_energy_snapshot: GPU id to accumulator
// joules from an `amd-smi metric -E --csv` snapshot.
func readEnergySnapshot(path string, filter []string) (map[string]float64, error) {
	table, err := readTelemetry(path)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(table.header, "gpu") || !slices.Contains(table.header, "total_energy_consumption") {
		return nil, errSnapshot
	}
	energy := map[string]float64{}
	for _, row := range table.rows {
		gpu := strings.TrimSpace(row["gpu"])
		if gpu == "" || !keep(filter, gpu) {
			continue
		}
		j, ok := pyjson.ParseFloat(row["total_energy_consumption"])
		if !ok || isNonFinite(j) {
			continue
		}
		energy[gpu] = j
	}
	if len(energy) == 0 {
		return nil, errSnapshot
	}
	return energy, nil
}

// streamSamples is _stream_samples_by_gpu: every parseable sample per GPU,
// sorted, whatever the window.
func streamSamples(csvPath string, loc *time.Location, filter []string) (map[string][]sample, error) {
	table, err := readTelemetry(csvPath)
	if err != nil {
		return nil, err
	}
	cols := detectColumns(table.header)
	out := map[string][]sample{}
	if cols.timestamp == "" || cols.power == "" || cols.gpu == "" {
		return out, nil
	}
	for _, row := range table.rows {
		ts, ok1 := parseSampleTime(row[cols.timestamp], loc)
		w, ok2 := parsePower(row[cols.power])
		gpu := strings.TrimSpace(row[cols.gpu])
		if !ok1 || !ok2 || gpu == "" || isNonFinite(ts) || isNonFinite(w) || !keep(filter, gpu) {
			continue
		}
		out[gpu] = append(out[gpu], sample{ts, w})
	}
	for _, s := range out {
		sortSamples(s)
	}
	return out, nil
}
