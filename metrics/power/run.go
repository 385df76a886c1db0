package power

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"sweep/internal/atomicfile"
	"sweep/internal/pyjson"
	"sweep/metrics/aiperf"
)

// The files of the power lane in a result directory.
const (
	TelemetryFile  = "gpu_metrics.csv"
	WindowFile     = "agentic_power_window.json"
	ValidationFile = "power_validation.json"
)

// SchemaVersion is power_metric_schema_version: the unprefixed joules_per_*
// fields describe the whole deployment.
const SchemaVersion = 2

// Metrics are the whole-deployment energy figures of a valid measurement,
// unrounded.
type Metrics struct {
	AvgPowerW                float64 // mean power per GPU
	AvgTotalGPUPowerW        float64 // mean power of all GPUs together
	TotalGPUEnergyJ          float64
	JoulesPerSuccessfulQuery float64
	JoulesPerInputToken      float64
	JoulesPerOutputToken     float64
	JoulesPerTotalToken      float64
}

// named lists the metrics in the order InferenceX writes them.
func (m *Metrics) named() []namedMetric {
	return []namedMetric{
		{"avg_power_w", m.AvgPowerW},
		{"avg_total_gpu_power_w", m.AvgTotalGPUPowerW},
		{"total_gpu_energy_j", m.TotalGPUEnergyJ},
		{"joules_per_successful_query", m.JoulesPerSuccessfulQuery},
		{"joules_per_input_token", m.JoulesPerInputToken},
		{"joules_per_output_token", m.JoulesPerOutputToken},
		{"joules_per_total_token", m.JoulesPerTotalToken},
	}
}

type namedMetric struct {
	key string
	v   float64
}

// RoleMetrics are the per-role figures of a valid multi-node measurement,
// unrounded; a role's are set only when it has GPUs.
type RoleMetrics struct {
	PrefillGPUEnergyJ, PrefillAvgPowerW, PrefillJoulesPerInputToken *float64
	DecodeGPUEnergyJ, DecodeAvgPowerW, DecodeJoulesPerOutputToken   *float64
}

// named lists the set metrics in the order InferenceX writes them.
func (r *RoleMetrics) named() []namedMetric {
	var out []namedMetric
	for _, nm := range []struct {
		key string
		v   *float64
	}{
		{"prefill_gpu_energy_j", r.PrefillGPUEnergyJ}, {"prefill_avg_power_w", r.PrefillAvgPowerW},
		{"prefill_joules_per_input_token", r.PrefillJoulesPerInputToken},
		{"decode_gpu_energy_j", r.DecodeGPUEnergyJ}, {"decode_avg_power_w", r.DecodeAvgPowerW},
		{"decode_joules_per_output_token", r.DecodeJoulesPerOutputToken},
	} {
		if nm.v != nil {
			out = append(out, namedMetric{nm.key, *nm.v})
		}
	}
	return out
}

// metricKeys are the aggregate keys a patch replaces.
var metricKeys = []string{
	"avg_power_w", "avg_total_gpu_power_w", "total_gpu_energy_j",
	"joules_per_successful_query", "joules_per_input_token",
	"joules_per_output_token", "joules_per_total_token",
}

// Patcher puts the power verdict into an aggregate result: a JSON file
// (FilePatcher) or a result being built (the point runner's).
type Patcher interface {
	// Patch records valid and, when valid, the metrics. It returns
	// ErrAggregateMissing when there is no aggregate to patch.
	Patch(valid bool, m *Metrics) error
}

// ErrAggregateMissing says the aggregate result file does not exist.
var ErrAggregateMissing = errors.New("no such file")

// Options are the adapter's inputs.
type Options struct {
	// ResultDir holds aiperf_artifacts/, gpu_metrics.csv and the offset
	// file; the sidecars are written into it.
	ResultDir string
	// Aggregate is patched with the verdict; Name is how messages and
	// errors name it (--agg-result).
	Aggregate     Patcher
	AggregateName string
	// ExpectedGPUs is --expected-num-gpus (nil: not checked).
	ExpectedGPUs *int
	// RequirePower makes an invalid measurement exit 1.
	RequirePower bool
	// Zone is the zone zone-less telemetry timestamps are read in; nil is
	// time.Local, as InferenceX reads them in its process's zone.
	Zone *time.Location
	// Stdout and Stderr receive the adapter's messages (nil: discarded).
	Stdout, Stderr io.Writer
	// GPUs, when not nil, are the only GPU ids of the telemetry used (our
	// option --power-gpus; InferenceX uses every GPU the monitor recorded).
	// The sidecar then names them under "gpu_filter".
	GPUs []string
	// Records, when not nil, are profile_export.jsonl's records as the
	// caller already read them (BuildWindow then does not decode the file
	// again).
	Records []aiperf.Record
}

// ReasonFilteredGPUsAbsent is our reason code (not InferenceX's) for a
// GPU of the filter (--power-gpus) the telemetry holds no samples of in
// the window: its energy would be missing from the total.
const ReasonFilteredGPUsAbsent = "power_gpus_absent"

// Outcome is what the adapter decided.
type Outcome struct {
	Valid   bool
	Reasons []string
	Metrics *Metrics // nil unless Valid
	// Roles are a disaggregated point's per-role figures (AdaptMultiNode);
	// nil unless Valid.
	Roles *RoleMetrics
	// Window is nil when aiperf's artifacts gave none.
	Window *Window
	// ExitCode is the adapter's exit status: 1 when RequirePower and the
	// measurement is invalid or its sidecar could not be written, else 0.
	ExitCode int
	// GPUs compares the GPUs the telemetry held in the window with those
	// expected; nil when they were not counted (no window, no telemetry).
	GPUs *GPUCount
}

// GPUCount is what power_validation.json says of the GPUs: how many were
// expected and which the telemetry held in the window.
type GPUCount struct {
	Expected int
	// Observed are the GPU ids with samples in the window. Missing are
	// the expected ids without any, Extra the observed ids not expected:
	// the expected ids are the GPU filter's, else 0..Expected-1 (then
	// only when every observed id is a number). A disaggregated point's
	// ids are "<worker>/<id>".
	Observed, Missing, Extra []string
}

// newGPUCount counts the GPUs of in against expected GPUs: the ids of
// filter, else 0..expected-1 when the telemetry's ids are such indexes;
// label prefixes the ids (a node's "prefill0/").
func newGPUCount(in *Integration, expected int, filter []string, label string) *GPUCount {
	c := &GPUCount{Expected: expected}
	want := filter
	if want == nil && !slices.ContainsFunc(in.ObservedGPUs, func(id string) bool {
		n, err := strconv.Atoi(id)
		return err != nil || strconv.Itoa(n) != id
	}) {
		for i := range expected {
			want = append(want, strconv.Itoa(i))
		}
	}
	for _, id := range in.ObservedGPUs {
		c.Observed = append(c.Observed, label+id)
		if want != nil && !slices.Contains(want, id) {
			c.Extra = append(c.Extra, label+id)
		}
	}
	for _, id := range want {
		if !slices.Contains(in.ObservedGPUs, id) {
			c.Missing = append(c.Missing, label+id)
		}
	}
	return c
}

// String is "expected 8 GPUs, observed 7: GPU 3 absent".
func (c *GPUCount) String() string {
	s := fmt.Sprintf("expected %d GPUs, observed %d", c.Expected, len(c.Observed))
	var parts []string
	if len(c.Missing) > 0 {
		parts = append(parts, gpuList(c.Missing)+" absent")
	}
	if len(c.Extra) > 0 {
		parts = append(parts, gpuList(c.Extra)+" not expected")
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// gpuList is "GPU 3" or "GPUs 3, 5".
func gpuList(ids []string) string {
	if len(ids) == 1 {
		return "GPU " + ids[0]
	}
	return "GPUs " + strings.Join(ids, ", ")
}

// Explained is Reasons with the GPU counts after the first of
// expected_gpu_count_mismatch and power_gpus_absent:
// "expected_gpu_count_mismatch (expected 8 GPUs, observed 7: GPU 3
// absent)", which power_validation.json alone held.
func (o Outcome) Explained() []string {
	out := slices.Clone(o.Reasons)
	if o.GPUs == nil {
		return out
	}
	for i, r := range out {
		if r == ReasonGPUCountMismatch || r == ReasonFilteredGPUsAbsent {
			out[i] += " (" + o.GPUs.String() + ")"
			break // the count once, after the first reason about it
		}
	}
	return out
}

// Adapt is InferenceX's power_adapter: it builds the benchmark window from
// aiperf's artifacts, writes agentic_power_window.json, integrates
// gpu_metrics.csv over it, patches the aggregate and writes
// power_validation.json.
func Adapt(o Options) Outcome {
	o.defaults()
	window, reasons := BuildWindow(o.ResultDir, o.Records)
	windowPath := filepath.Join(o.ResultDir, WindowFile)
	if window == nil {
		return o.adapterFailure(reasons)
	}
	if err := atomicfile.Write(windowPath, dumps(window.value()), 0o644); err != nil {
		return o.adapterFailure([]string{"power_window_unwritable"})
	}
	out := o.run(filepath.Join(o.ResultDir, TelemetryFile), windowPath, filepath.Join(o.ResultDir, ValidationFile))
	out.Window = window
	return out
}

func (o *Options) defaults() { ioDefaults(&o.Zone, &o.Stdout, &o.Stderr) }

// ioDefaults fills a nil zone (time.Local) and nil writers (discarded).
func ioDefaults(zone **time.Location, stdout, stderr *io.Writer) {
	if *zone == nil {
		*zone = time.Local
	}
	if *stdout == nil {
		*stdout = io.Discard
	}
	if *stderr == nil {
		*stderr = io.Discard
	}
}

func (o *Options) exit(valid bool) int {
	if !valid && o.RequirePower {
		return 1
	}
	return 0
}

// adapterFailure is _record_adapter_failure: the aggregate is marked
// invalid and the sidecar written without a window; a failure to patch
// leaves the sidecar unwritten, as in InferenceX.
func (o *Options) adapterFailure(reasons []string) Outcome {
	csvPath := filepath.Join(o.ResultDir, TelemetryFile)
	err := o.Aggregate.Patch(false, nil)
	if err == nil {
		payload := validationPayload(csvPath, filepath.Join(o.ResultDir, WindowFile), nil,
			emptyIntegration(o.ExpectedGPUs, reasons), false, reasons, nil, nil)
		payload.set("window_source", str("aiperf_profile_lifecycle"))
		if o.GPUs != nil {
			payload.set("gpu_filter", strList(o.GPUs))
		}
		err = atomicfile.Write(filepath.Join(o.ResultDir, ValidationFile), dumps(payload), 0o644)
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "[agentx_power] Failed to record adapter failure: %v\n", err)
	}
	fmt.Fprintf(o.Stderr, "[agentx_power] Power-window adaptation failed: %s\n", strings.Join(reasons, ", "))
	return Outcome{Reasons: reasons, ExitCode: o.exit(false)}
}

// run is aggregate_power.run over a window file.
func (o *Options) run(csvPath, benchPath, validationPath string) Outcome {
	bench, reasons := LoadBenchmark(benchPath)
	var in *Integration
	if bench == nil {
		in = emptyIntegration(o.ExpectedGPUs, append([]string(nil), reasons...))
	} else {
		in = integrate(csvPath, bench.Start, bench.End, o.ExpectedGPUs, MaxSampleGap, o.Zone, o.GPUs)
	}
	for _, r := range in.Reasons {
		reasons = appendReason(reasons, r)
	}
	if bench != nil && slices.ContainsFunc(o.GPUs, func(id string) bool { return !slices.Contains(in.ObservedGPUs, id) }) {
		reasons = appendReason(reasons, ReasonFilteredGPUsAbsent)
	}
	valid := len(reasons) == 0
	var m *Metrics
	if valid && bench != nil {
		m = derive(in, bench)
	}
	if err := o.Aggregate.Patch(valid, m); err != nil {
		if errors.Is(err, ErrAggregateMissing) {
			reasons = appendReason(reasons, "aggregate_result_missing")
		} else {
			reasons = appendReason(reasons, "aggregate_result_unwritable")
			fmt.Fprintf(o.Stderr, "[aggregate_power] Failed to patch %s: %v\n", o.AggregateName, err)
		}
		valid, m = false, nil
	}
	acc := crossCheck(csvPath, o.Zone, o.GPUs)
	payload := validationPayload(csvPath, benchPath, bench, in, valid, reasons, m, acc)
	if o.GPUs != nil {
		payload.set("gpu_filter", strList(o.GPUs))
	}
	out := Outcome{Valid: valid, Reasons: reasons, Metrics: m}
	switch {
	case bench != nil && in.ExpectedGPUs != nil && len(in.ObservedGPUs) > 0:
		out.GPUs = newGPUCount(in, *in.ExpectedGPUs, o.GPUs, "")
	case bench != nil && o.GPUs != nil:
		out.GPUs = newGPUCount(in, len(o.GPUs), o.GPUs, "")
	}
	if err := atomicfile.Write(validationPath, dumps(payload), 0o644); err != nil {
		fmt.Fprintf(o.Stderr, "[aggregate_power] Failed to write validation artifact %s: %v\n", validationPath, err)
		out.ExitCode = o.exit(false)
		return out
	}
	if !valid {
		said := reasons
		if o.GPUs != nil { // ours: which GPUs of the filter are absent
			said = out.Explained()
		}
		fmt.Fprintf(o.Stderr, "[aggregate_power] Power validation failed: %s (details: %s)\n", strings.Join(said, ", "), validationPath)
		out.ExitCode = o.exit(false)
		return out
	}
	fmt.Fprintf(o.Stdout, "[aggregate_power] avg_power_w=%.2f avg_total_gpu_power_w=%.2f total_gpu_energy_j=%.2f (n=%d) -> %s\n",
		m.AvgPowerW, m.AvgTotalGPUPowerW, m.TotalGPUEnergyJ, len(in.ObservedGPUs), o.AggregateName)
	return out
}

func derive(in *Integration, b *Benchmark) *Metrics {
	e := *in.TotalGPUEnergyJ
	return &Metrics{
		AvgPowerW:                *in.AvgPowerW,
		AvgTotalGPUPowerW:        *in.AvgTotalPowerW,
		TotalGPUEnergyJ:          e,
		JoulesPerSuccessfulQuery: e / float64(b.Completed),
		JoulesPerInputToken:      e / float64(b.TotalInputTokens),
		JoulesPerOutputToken:     e / float64(b.TotalOutputTokens),
		JoulesPerTotalToken:      e / float64(b.TotalInputTokens+b.TotalOutputTokens),
	}
}

func validationPayload(csvPath, benchPath string, b *Benchmark, in *Integration, valid bool,
	reasons []string, m *Metrics, acc *value) *value {
	window := null()
	if b != nil {
		window = object().
			set("start_time_unix", float(b.Start)).
			set("end_time_unix", float(b.End)).
			set("reported_duration_s", float(b.ReportedDuration)).
			set("integration_duration_s", float(b.End-b.Start)).
			set("completed", integer(b.Completed)).
			set("total_input_tokens", integer(b.TotalInputTokens)).
			set("total_output_tokens", integer(b.TotalOutputTokens))
	}
	expected := null()
	if in.ExpectedGPUs != nil {
		expected = integer(int64(*in.ExpectedGPUs))
	}
	counts, gaps, energy, issues := object(), object(), object(), object()
	for _, gpu := range in.ObservedGPUs {
		counts.set(gpu, integer(int64(in.SampleCounts[gpu])))
	}
	for _, gpu := range in.gapOrder {
		gaps.set(gpu, float(in.MaxSampleGaps[gpu]))
	}
	for _, gpu := range in.eOrder {
		energy.set(gpu, float(in.EnergyJ[gpu]))
	}
	for _, gpu := range in.issueOrder {
		issues.set(gpu, strList(in.DeviceIssues[gpu]))
	}
	metrics := object()
	if m != nil {
		for _, nm := range m.named() {
			if !isNonFinite(nm.v) {
				metrics.set(nm.key, float(round(nm.v, 6)))
			}
		}
	}
	if acc == nil {
		acc = null()
	}
	return object().
		set("schema_version", integer(1)).
		set("power_valid", boolean(valid)).
		set("reasons", strList(reasons)).
		set("telemetry_source", str(csvPath)).
		set("benchmark_result", str(benchPath)).
		set("benchmark_window", window).
		set("integration_method", str(IntegrationMethod)).
		set("expected_gpu_count", expected).
		set("observed_gpu_count", integer(int64(len(in.ObservedGPUs)))).
		set("observed_gpu_ids", strList(in.ObservedGPUs)).
		set("per_gpu_sample_counts", counts).
		set("per_gpu_max_sample_gap_s", gaps).
		set("per_gpu_energy_j", energy).
		set("device_issues", issues).
		set("accumulator_check", acc).
		set("metrics", metrics)
}

// FilePatcher patches an aggregate JSON file in place, atomically, as
// _patch_power_result does: the metric keys and power_invalid_reasons
// are dropped, power_metric_schema_version and power_valid set (an
// existing key keeps its place), and a valid measurement's metrics
// appended, rounded to 3 decimals (keys ending _w or _j) or 6. The file is
// re-written as json.dumps(indent=2) writes it.
type FilePatcher string

// Patch implements Patcher.
func (p FilePatcher) Patch(valid bool, m *Metrics) error {
	path := string(p)
	if !isRegular(path) {
		return ErrAggregateMissing
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := parseValue(data)
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if doc.kind != kindObject {
		return errors.New("the aggregate is not a JSON object")
	}
	f, err := NewFields(valid, m)
	if err != nil {
		return err
	}
	for _, k := range metricKeys {
		doc.pop(k)
	}
	doc.set("power_metric_schema_version", integer(SchemaVersion))
	doc.set("power_valid", integer(int64(f.Valid)))
	doc.pop("power_invalid_reasons")
	for _, nm := range f.named() {
		doc.set(nm.key, float(nm.v))
	}
	st, err := os.Stat(path)
	perm := fs.FileMode(0o644)
	if err == nil {
		perm = st.Mode().Perm()
	}
	return atomicfile.Write(path, dumps(doc), perm)
}

// Fields are the aggregate's power keys as InferenceX writes them, for a
// result built in memory: Metrics are already rounded.
type Fields struct {
	SchemaVersion int `json:"power_metric_schema_version"`
	Valid         int `json:"power_valid"`
	// The rounded metrics; all nil unless Valid is 1.
	AvgPowerW                *pyjson.Float `json:"avg_power_w,omitempty"`
	AvgTotalGPUPowerW        *pyjson.Float `json:"avg_total_gpu_power_w,omitempty"`
	TotalGPUEnergyJ          *pyjson.Float `json:"total_gpu_energy_j,omitempty"`
	JoulesPerSuccessfulQuery *pyjson.Float `json:"joules_per_successful_query,omitempty"`
	JoulesPerInputToken      *pyjson.Float `json:"joules_per_input_token,omitempty"`
	JoulesPerOutputToken     *pyjson.Float `json:"joules_per_output_token,omitempty"`
	JoulesPerTotalToken      *pyjson.Float `json:"joules_per_total_token,omitempty"`
	// A disaggregated point's per-role keys (AdaptMultiNode), as
	// InferenceX's multi-node power path writes them; nil otherwise.
	PrefillGPUEnergyJ          *pyjson.Float `json:"prefill_gpu_energy_j,omitempty"`
	PrefillAvgPowerW           *pyjson.Float `json:"prefill_avg_power_w,omitempty"`
	PrefillJoulesPerInputToken *pyjson.Float `json:"prefill_joules_per_input_token,omitempty"`
	DecodeGPUEnergyJ           *pyjson.Float `json:"decode_gpu_energy_j,omitempty"`
	DecodeAvgPowerW            *pyjson.Float `json:"decode_avg_power_w,omitempty"`
	DecodeJoulesPerOutputToken *pyjson.Float `json:"decode_joules_per_output_token,omitempty"`
}

// precisionOf is the patch's rounding: 3 decimals for watts and joules
// (keys ending _w or _j), else 6.
func precisionOf(key string) int {
	if strings.HasSuffix(key, "_w") || strings.HasSuffix(key, "_j") {
		return 3
	}
	return 6
}

// NewFields rounds the metrics as the patch does; a non-finite metric is
// an error (InferenceX's ValueError).
func NewFields(valid bool, m *Metrics) (*Fields, error) {
	f := &Fields{SchemaVersion: SchemaVersion}
	if !valid {
		return f, nil
	}
	f.Valid = 1
	if m == nil {
		return f, nil
	}
	dst := []**pyjson.Float{&f.AvgPowerW, &f.AvgTotalGPUPowerW, &f.TotalGPUEnergyJ, &f.JoulesPerSuccessfulQuery,
		&f.JoulesPerInputToken, &f.JoulesPerOutputToken, &f.JoulesPerTotalToken}
	for i, nm := range m.named() {
		if isNonFinite(nm.v) {
			return nil, fmt.Errorf("non-finite power metric: %s", nm.key)
		}
		v := pyjson.Float(round(nm.v, precisionOf(nm.key)))
		*dst[i] = &v
	}
	return f, nil
}

func (f *Fields) named() []namedMetric {
	var out []namedMetric
	for i, p := range []*pyjson.Float{f.AvgPowerW, f.AvgTotalGPUPowerW, f.TotalGPUEnergyJ, f.JoulesPerSuccessfulQuery,
		f.JoulesPerInputToken, f.JoulesPerOutputToken, f.JoulesPerTotalToken} {
		if p != nil {
			out = append(out, namedMetric{metricKeys[i], float64(*p)})
		}
	}
	return out
}

// FieldsPatcher fills a Fields value (a result built in memory).
type FieldsPatcher struct{ Fields *Fields }

// Patch implements Patcher.
func (p *FieldsPatcher) Patch(valid bool, m *Metrics) error {
	f, err := NewFields(valid, m)
	if err != nil {
		return err
	}
	p.Fields = f
	return nil
}

// AdaptResult is Adapt for an aggregate built in memory (o.Aggregate is
// ignored): it returns the power keys to put into it and the outcome.
func AdaptResult(o Options) (*Fields, Outcome) {
	p := &FieldsPatcher{}
	o.Aggregate = p
	out := Adapt(o)
	return p.Fields, out
}

// LaneRan reports whether a result directory comes from a run with the
// power lane on: benchmark_lib.sh writes the offset file exactly then,
// before it starts the monitor.
func LaneRan(resultDir string) bool {
	return isRegular(filepath.Join(resultDir, OffsetFile))
}

// JoulesPerOutputTokenOf is a result's energy per output token for its
// readers: only from a valid measurement (power_valid 1) of schema version
// 2, whose joules_per_* describe the whole deployment; InferenceX asks
// consumers to fail closed on anything else. nil otherwise (f may be nil).
func JoulesPerOutputTokenOf(f *Fields) *float64 {
	if f == nil || f.SchemaVersion != SchemaVersion || f.Valid != 1 || f.JoulesPerOutputToken == nil {
		return nil
	}
	v := float64(*f.JoulesPerOutputToken)
	return &v
}
