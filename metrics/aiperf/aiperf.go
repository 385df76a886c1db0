package aiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sweep/configs"
	"unicode"
	"unicode/utf8"

	"sweep/internal/inputfile"
	"sweep/internal/pyjson"
)

// aiperf 0.12 artifact names inside --output-artifact-dir.
const (
	RecordsFile       = "profile_export.jsonl"
	SummaryFile       = "profile_export_aiperf.json"
	ServerMetricsFile = "server_metrics_export.json"
	ServerMetricsCSV  = "server_metrics_export.csv"
	// The timeslice files, written with --slice-duration.
	TimeslicesJSON = "profile_export_aiperf_timeslices.json"
	TimeslicesCSV  = "profile_export_aiperf_timeslices.csv"
)

// Phase names as aiperf writes them in benchmark_phase and phase_name.
const (
	PhaseWarmup    = "warmup"
	PhaseProfiling = "profiling"
)

// IsArtifactJSON reports whether name is one of the JSON files aiperf
// writes into its artifact directory (the summary, the timeslices, the
// server-metrics export): never a result file, and up to GiBs (the
// export of a long point).
func IsArtifactJSON(name string) bool {
	switch name {
	case SummaryFile, TimeslicesJSON, ServerMetricsFile:
		return true
	}
	return false
}

// Problems with an artifact's fields are *configs.Error values: File, Line
// (1-based for JSONL files, 0 for whole-file JSON), Key (the field's dotted
// path, e.g. "metadata" or "request_count.avg") and Msg.

// Scalar is a leniently typed JSON scalar. aiperf writes numbers, but
// InferenceX reads every value through Python's float()/int()/str(), so a
// numeric string or a boolean is still a number there; Scalar keeps enough
// of the original to apply the same rules. The zero value is "absent".
type Scalar struct {
	kind scalarKind
	num  float64
	i    int64 // exact value of an integer literal
	str  string
	b    bool
}

type scalarKind uint8

const (
	scalarAbsent scalarKind = iota // missing or null
	scalarInt                      // integer literal
	scalarFloat                    // literal with a fraction or exponent
	scalarString
	scalarBool
	scalarOther // object or array
)

// UnmarshalJSON implements json.Unmarshaler.
func (s *Scalar) UnmarshalJSON(b []byte) error {
	*s = ParseScalar(b)
	return nil
}

// ParseScalar reads one JSON value as a Scalar (null and a missing value are
// absent; objects and arrays are neither numbers nor strings).
func ParseScalar(b []byte) Scalar {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return Scalar{}
	}
	switch b[0] {
	case 'n':
		return Scalar{}
	case 't':
		return Scalar{kind: scalarBool, b: true}
	case 'f':
		return Scalar{kind: scalarBool}
	case '"':
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return Scalar{kind: scalarOther}
		}
		return Scalar{kind: scalarString, str: str}
	case '{', '[':
		return Scalar{kind: scalarOther}
	}
	lit := string(b)
	if !strings.ContainsAny(lit, ".eE") {
		if v, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return Scalar{kind: scalarInt, i: v, num: float64(v)}
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return Scalar{kind: scalarOther}
	}
	return Scalar{kind: scalarFloat, num: f}
}

// Number returns the value when it is a JSON number literal (a numeric
// string is not one).
func (s Scalar) Number() (float64, bool) {
	return s.num, s.kind == scalarInt || s.kind == scalarFloat
}

// Text returns the value when it is a JSON string.
func (s Scalar) Text() (string, bool) { return s.str, s.kind == scalarString }

// Present reports whether the value is neither missing nor null.
func (s Scalar) Present() bool { return s.kind != scalarAbsent }

// Float is Python's float(value): numbers, numeric strings and booleans
// convert; null, objects and arrays do not.
func (s Scalar) Float() (float64, bool) {
	switch s.kind {
	case scalarInt, scalarFloat:
		return s.num, true
	case scalarString:
		return pyjson.ParseFloat(s.str)
	case scalarBool:
		if s.b {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Int is Python's int(value): floats truncate toward zero, strings must be
// integer literals, NaN and infinities fail.
func (s Scalar) Int() (int64, bool) {
	switch s.kind {
	case scalarInt:
		return s.i, true
	case scalarFloat:
		if math.IsNaN(s.num) || math.IsInf(s.num, 0) || math.Abs(s.num) >= 9.2e18 {
			return 0, false
		}
		return int64(s.num), true
	case scalarString:
		return pyjson.ParseInt(s.str)
	case scalarBool:
		if s.b {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Truthy is Python's bool(value) for a scalar.
func (s Scalar) Truthy() bool {
	switch s.kind {
	case scalarInt, scalarFloat:
		return s.num != 0
	case scalarString:
		return s.str != ""
	case scalarBool:
		return s.b
	case scalarOther:
		return true // non-empty containers; empty ones are decoded separately
	}
	return false
}

// String is Python's str(value) for scalars.
func (s Scalar) String() string {
	switch s.kind {
	case scalarInt:
		return strconv.FormatInt(s.i, 10)
	case scalarFloat:
		return pyjson.FloatRepr(s.num)
	case scalarString:
		return s.str
	case scalarBool:
		if s.b {
			return "True"
		}
		return "False"
	case scalarAbsent:
		return "None"
	}
	return ""
}

// Truthy is Python's bool() of a decoded JSON value.
func Truthy(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return false
	}
	switch b[0] {
	case '{', '[':
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return true
		}
		switch t := v.(type) {
		case map[string]any:
			return len(t) > 0
		case []any:
			return len(t) > 0
		}
		return true
	}
	return ParseScalar(b).Truthy()
}

// errorCategory implements ErrorCategory on a raw error value.
func errorCategory(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	var message string
	var haveMessage bool
	if len(b) > 0 && b[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err == nil {
			for _, key := range []string{"type", "error_type", "code", "class", "status"} {
				v, ok := obj[key]
				if !ok {
					continue
				}
				s := ParseScalar(v)
				if !s.Present() || (s.kind == scalarString && s.str == "") {
					continue
				}
				return PyStr(v)
			}
			for _, key := range []string{"message", "error"} {
				if v, ok := obj[key]; ok && Truthy(v) {
					message, haveMessage = PyStr(v), true
					break
				}
			}
		}
	} else if Truthy(b) {
		message, haveMessage = PyStr(b), true
	}
	if !haveMessage || message == "" {
		return "unknown"
	}
	first := strings.TrimFunc(message, unicode.IsSpace)
	if lines := pyjson.SplitLines(first); len(lines) > 0 {
		first = lines[0]
	} else {
		first = ""
	}
	head, _, _ := strings.Cut(first, ":")
	if head == "" {
		head = "unknown"
	}
	if utf8.RuneCountInString(head) > 120 {
		head = string([]rune(head)[:120])
	}
	return head
}

// PyStr is Python's str() of a decoded JSON value (repr for containers).
func PyStr(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return string(b)
		}
		return pyRepr(v)
	}
	return ParseScalar(b).String()
}

// pyRepr renders a decoded JSON value like Python's repr of the same
// dict/list (keys in sorted order: Go maps lose the original order).
func pyRepr(v any) string {
	switch t := v.(type) {
	case nil:
		return "None"
	case bool:
		if t {
			return "True"
		}
		return "False"
	case json.Number:
		return ParseScalar([]byte(t)).String()
	case string:
		return "'" + strings.ReplaceAll(strings.ReplaceAll(t, `\`, `\\`), "'", `\'`) + "'"
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(t[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// SummaryMetric is one metric block of profile_export_aiperf.json: a unit
// and any of the statistics aiperf computed (absent ones are zero Scalars).
type SummaryMetric struct {
	Unit  Scalar `json:"unit"`
	Avg   Scalar `json:"avg"`
	Min   Scalar `json:"min"`
	Max   Scalar `json:"max"`
	Std   Scalar `json:"std"`
	Count Scalar `json:"count"`
	Sum   Scalar `json:"sum"`
	P50   Scalar `json:"p50"`
	P90   Scalar `json:"p90"`
	P99   Scalar `json:"p99"`
}

// Summary is profile_export_aiperf.json. Metrics are top-level keys named
// by metric tag; every other key is kept raw.
type Summary struct {
	File          string
	SchemaVersion string
	AIPerfVersion string
	BenchmarkID   string
	// Metadata is the raw "metadata" object (scenario stamp, dataset
	// provenance), nil when absent.
	Metadata json.RawMessage
	raw      map[string]json.RawMessage
}

// ReadSummary reads profile_export_aiperf.json. The file must hold a JSON
// object; name is used in errors.
func ReadSummary(r io.Reader, name string) (*Summary, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	s := &Summary{File: name}
	if err := json.Unmarshal(data, &s.raw); err != nil || s.raw == nil {
		if _, wrongType := errors.AsType[*json.UnmarshalTypeError](err); err == nil || wrongType {
			return nil, &configs.Error{File: name, Key: "(top level)", Msg: "must contain a JSON object"}
		}
		return nil, summarySyntaxError(name, data, err)
	}
	for key, dst := range map[string]*string{"schema_version": &s.SchemaVersion, "aiperf_version": &s.AIPerfVersion, "benchmark_id": &s.BenchmarkID} {
		if v, ok := s.raw[key]; ok {
			_ = json.Unmarshal(v, dst) // informational fields; a wrong type leaves them empty
		}
	}
	if md, ok := s.raw["metadata"]; ok && len(bytes.TrimSpace(md)) > 0 && bytes.TrimSpace(md)[0] == '{' {
		s.Metadata = md
	}
	return s, nil
}

// summarySyntaxError is the *configs.Error of a summary that is not
// valid JSON (err, from decoding data): where it stops being JSON, and,
// at a NaN or an Infinity, that aiperf 0.12.0 never writes one (its
// exporter writes null for a number that is not finite).
func summarySyntaxError(name string, data []byte, err error) error {
	off := int64(len(data)) // io.ErrUnexpectedEOF: the file ends early
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		off = se.Offset - 1
	}
	off = max(0, min(off, int64(len(data))))
	nonFinite := bytes.HasPrefix(data[off:], []byte("NaN")) || bytes.HasPrefix(data[off:], []byte("Infinity"))
	if nonFinite && off > 0 && data[off-1] == '-' {
		off-- // -Infinity: the decoder stops after its sign
	}
	line, col := 1+bytes.Count(data[:off], []byte("\n")), int(off)-bytes.LastIndexByte(data[:off], '\n')
	e := &configs.Error{File: name, Line: line, Col: col,
		Msg: "not valid JSON: " + err.Error() + ": want the JSON object aiperf writes"}
	if nonFinite {
		e.Msg = "a non-finite number (NaN or Infinity), which aiperf 0.12.0 never writes (its exporter writes null for one): " +
			"something else wrote or edited the file"
	}
	return e
}

// Has reports whether the top-level key exists.
func (s *Summary) Has(key string) bool {
	_, ok := s.raw[key]
	return ok
}

// Raw returns a top-level value as written.
func (s *Summary) Raw(key string) (json.RawMessage, bool) {
	v, ok := s.raw[key]
	return v, ok
}

// Metric returns the metric block under tag. ok is false when the key is
// missing or null; err is a *configs.Error when the value is not an object.
func (s *Summary) Metric(tag string) (m SummaryMetric, ok bool, err error) {
	raw, found := s.raw[tag]
	if !found || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return SummaryMetric{}, false, nil
	}
	if b := bytes.TrimSpace(raw); len(b) == 0 || b[0] != '{' {
		return SummaryMetric{}, false, &configs.Error{File: s.File, Key: tag, Msg: "must be an object"}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return SummaryMetric{}, false, &configs.Error{File: s.File, Key: tag, Msg: err.Error()}
	}
	return m, true, nil
}

// MetricTags lists the keys that hold metric blocks (objects with a
// "unit"), sorted.
func (s *Summary) MetricTags() []string {
	var tags []string
	for k, v := range s.raw {
		b := bytes.TrimSpace(v)
		if len(b) == 0 || b[0] != '{' {
			continue
		}
		var probe struct {
			Unit *json.RawMessage `json:"unit"`
		}
		if json.Unmarshal(b, &probe) == nil && probe.Unit != nil {
			tags = append(tags, k)
		}
	}
	sort.Strings(tags)
	return tags
}

// Dataset returns metadata.dataset raw when it is an object.
func (s *Summary) Dataset() json.RawMessage {
	if s == nil || s.Metadata == nil {
		return nil
	}
	var md map[string]json.RawMessage
	if json.Unmarshal(s.Metadata, &md) != nil {
		return nil
	}
	ds := bytes.TrimSpace(md["dataset"])
	if len(ds) == 0 || ds[0] != '{' {
		return nil
	}
	return ds
}

// ScenarioStamp is the scenario verdict aiperf writes into
// profile_export_aiperf.json's metadata: scenario, submission_valid and
// submission_invalid_reasons (e.g. "unsafe_override" for a run shorter
// than the scenario's minimum duration).
type ScenarioStamp struct {
	Scenario       string   `json:"scenario"`
	Valid          *bool    `json:"submission_valid"`
	InvalidReasons []string `json:"submission_invalid_reasons"`
}

// Scenario returns the scenario stamp of the metadata; ok is false when
// the summary has no submission_valid (a run without a scenario).
func (s *Summary) Scenario() (st ScenarioStamp, ok bool) {
	if s == nil || s.Metadata == nil || json.Unmarshal(s.Metadata, &st) != nil || st.Valid == nil {
		return ScenarioStamp{}, false
	}
	return st, true
}

// BenchmarkDuration is the benchmark duration the client was configured
// with (--benchmark-duration, in seconds), as its input_config records
// it: aiperf 0.12's profiling phase's "duration" (phases[].kind
// "profiling"), or the fork's loadgen.benchmark_duration. ok is false
// when the summary records none (a run stopped by request count, or no
// input_config).
func (s *Summary) BenchmarkDuration() (seconds float64, ok bool) {
	p, fork := s.profilingPhase()
	switch {
	case p.Duration != nil && *p.Duration > 0:
		return *p.Duration, true
	case fork.BenchmarkDuration != nil && *fork.BenchmarkDuration > 0:
		return *fork.BenchmarkDuration, true
	}
	return 0, false
}

// Concurrency is the concurrency the client was configured with
// (--concurrency), as its input_config records it: aiperf 0.12's
// profiling phase's "concurrency", or the fork's loadgen.concurrency. ok
// is false when the summary records none.
func (s *Summary) Concurrency() (n int, ok bool) {
	p, fork := s.profilingPhase()
	switch {
	case p.Concurrency != nil && *p.Concurrency > 0:
		return *p.Concurrency, true
	case fork.Concurrency != nil && *fork.Concurrency > 0:
		return *fork.Concurrency, true
	}
	return 0, false
}

// profilingSettings are the settings of a run's profiling phase that
// input_config records.
type profilingSettings struct {
	Kind              string   `json:"kind"`
	Duration          *float64 `json:"duration"`
	Concurrency       *int     `json:"concurrency"`
	BenchmarkDuration *float64 `json:"benchmark_duration"`
}

// profilingPhase is input_config's profiling phase (aiperf 0.12's
// phases[] with kind "profiling") and its loadgen section (the fork's);
// zero values where the summary has none.
func (s *Summary) profilingPhase() (phase, loadgen profilingSettings) {
	var ic struct {
		Phases  []profilingSettings `json:"phases"`
		Loadgen profilingSettings   `json:"loadgen"`
	}
	if s == nil {
		return phase, loadgen
	}
	if raw, found := s.raw["input_config"]; !found || json.Unmarshal(raw, &ic) != nil {
		return phase, loadgen
	}
	for _, p := range ic.Phases {
		if p.Kind == PhaseProfiling {
			return p, ic.Loadgen
		}
	}
	return phase, ic.Loadgen
}

// WasCancelled reports whether the summary's was_cancelled is true: the
// run was stopped before its end (aiperf's cancel, an interrupt or its
// failed-request abort).
func (s *Summary) WasCancelled() bool {
	if s == nil {
		return false
	}
	var v bool
	return json.Unmarshal(s.raw["was_cancelled"], &v) == nil && v
}

// BuiltinCLICommand starts the run_info.cli_command of the artifacts
// sweep's built-in load generator writes ("sweep loadgen -- profile
// ..."); aiperf's own start with its program ("aiperf profile ...").
const BuiltinCLICommand = "sweep loadgen -- "

// CLICommand is run_info.cli_command, the command line that wrote the
// artifacts ("aiperf profile ...", or BuiltinCLICommand's); "" when the
// summary has none.
func (s *Summary) CLICommand() string {
	var ri struct {
		CLICommand string `json:"cli_command"`
	}
	if s == nil || json.Unmarshal(s.raw["run_info"], &ri) != nil {
		return ""
	}
	return ri.CLICommand
}

// ExportedSeries is one label set of a server metric in
// server_metrics_export.json, with aiperf's statistics over the profiling
// window (gauges: avg/min/max/std/pNN; counters: total/rate...; histograms:
// count/sum/avg/...).
type ExportedSeries struct {
	EndpointURL string
	Labels      map[string]string // values as Python's str(); null labels dropped
	Stats       map[string]Scalar // nil when "stats" is missing or not an object
}

// Stat returns the first of keys that converts to a number (InferenceX's
// series_stat).
func (s *ExportedSeries) Stat(keys ...string) (float64, bool) {
	for _, k := range keys {
		if v, ok := s.Stats[k].Float(); ok {
			return v, true
		}
	}
	return 0, false
}

// ExportedMetric is one metric family of server_metrics_export.json.
type ExportedMetric struct {
	Type        string // gauge, counter, histogram or unknown
	Description string
	Unit        string
	Series      []ExportedSeries
}

// ServerMetricsExport is aiperf's server_metrics_export.json. aiperf names
// counter families without the _total suffix ("sglang:generation_tokens").
type ServerMetricsExport struct {
	File          string
	SchemaVersion string
	AIPerfVersion string
	MetricsPhase  string
	// Metrics maps family name to its series; entries that are not objects
	// with a series list are kept with no series (InferenceX skips them).
	Metrics map[string]*ExportedMetric
	// Endpoints lists summary.endpoints_successful.
	Endpoints []string
}

// ReadServerMetrics reads server_metrics_export.json. A top level that is
// not an object is an error; a missing "metrics" object gives an empty
// export (InferenceX then warns that server metrics are missing).
//
// A well-formed export is decoded in one typed pass after a quicker pass
// has set its per-series timeslices (the bulk of a long point's file,
// read by nobody here) aside; an export with odd shapes anywhere is read
// again field by field, tolerating what InferenceX tolerates.
// ReadServerMetrics holds all of r in memory; ReadServerMetricsFile reads
// a file as a stream.
func ReadServerMetrics(r io.Reader, name string) (*ServerMetricsExport, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return serverMetrics(data, name)
}

// serverMetrics decodes a whole export: the one-pass path, or the
// tolerant one for odd shapes.
func serverMetrics(data []byte, name string) (*ServerMetricsExport, error) {
	if kept, ok := newSkim(data, nil).export(); ok {
		return skimmedServerMetrics(kept, name), nil
	}
	return wholeServerMetrics(data, name)
}

// skimmedServerMetrics decodes the text the skimmer kept of an export it
// recognised. The skimmer checked all of the document and replaced only
// values of members that neither path decodes ("timeslices" of a series
// object, whose fields are matched case-insensitively but none of which
// folds to it; "warmup_metrics" at the top level, where keys are matched
// exactly), so both paths read the kept text as they would read the
// whole: when the one-pass path refuses it, it would refuse the whole
// document too, and the tolerant path reads the same from either.
func skimmedServerMetrics(kept []byte, name string) *ServerMetricsExport {
	if out, ok := decodeServerMetrics(kept, name); ok {
		return out
	}
	out, _ := readServerMetricsTolerant(kept, name) // a valid object: no error
	return out
}

// wholeServerMetrics decodes an export the skimmer did not recognise.
func wholeServerMetrics(data []byte, name string) (*ServerMetricsExport, error) {
	if out, ok := decodeServerMetrics(data, name); ok {
		return out, nil
	}
	return readServerMetricsTolerant(data, name)
}

// readServerMetricsTolerant reads an export member by member, keeping what
// has the expected shape.
func readServerMetricsTolerant(data []byte, name string) (*ServerMetricsExport, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &configs.Error{File: name, Key: "(top level)", Msg: "must contain a JSON object: " + err.Error()}
	}
	out := &ServerMetricsExport{File: name, Metrics: map[string]*ExportedMetric{}}
	_ = json.Unmarshal(top["schema_version"], &out.SchemaVersion)
	_ = json.Unmarshal(top["aiperf_version"], &out.AIPerfVersion)
	_ = json.Unmarshal(top["metrics_phase"], &out.MetricsPhase)
	out.Endpoints = exportEndpoints(top["summary"])
	var fams map[string]json.RawMessage
	if json.Unmarshal(top["metrics"], &fams) != nil {
		return out, nil
	}
	for fam, raw := range fams {
		m := &ExportedMetric{}
		out.Metrics[fam] = m
		var entry struct {
			Type        json.RawMessage   `json:"type"`
			Description json.RawMessage   `json:"description"`
			Unit        json.RawMessage   `json:"unit"`
			Series      []json.RawMessage `json:"series"`
		}
		if json.Unmarshal(raw, &entry) != nil {
			continue
		}
		m.setText(entry.Type, entry.Description, entry.Unit)
		for _, sraw := range entry.Series {
			var s exportedSeriesJSON
			if b := bytes.TrimSpace(sraw); len(b) == 0 || b[0] != '{' {
				continue
			}
			if json.Unmarshal(sraw, &s) != nil {
				// A series with odd labels or stats is still a series.
				var minimal struct {
					Stats map[string]Scalar `json:"stats"`
				}
				_ = json.Unmarshal(sraw, &minimal)
				s = exportedSeriesJSON{Stats: minimal.Stats}
			}
			m.Series = append(m.Series, s.series())
		}
	}
	return out, nil
}

// exportedSeriesJSON is one element of a family's "series" list, without
// its timeslices or buckets.
type exportedSeriesJSON struct {
	EndpointURL json.RawMessage            `json:"endpoint_url"`
	Labels      map[string]json.RawMessage `json:"labels"`
	Stats       map[string]Scalar          `json:"stats"`
}

func (s *exportedSeriesJSON) series() ExportedSeries {
	es := ExportedSeries{Stats: s.Stats, Labels: map[string]string{}}
	if Truthy(s.EndpointURL) {
		es.EndpointURL = PyStr(s.EndpointURL)
	}
	for k, v := range s.Labels {
		if ParseScalar(v).Present() {
			es.Labels[k] = PyStr(v)
		}
	}
	return es
}

func (m *ExportedMetric) setText(typ, desc, unit json.RawMessage) {
	_ = json.Unmarshal(typ, &m.Type)
	_ = json.Unmarshal(desc, &m.Description)
	_ = json.Unmarshal(unit, &m.Unit)
}

// exportEndpoints reads summary.endpoints_successful (nil when the summary
// or the list has another shape).
func exportEndpoints(summary json.RawMessage) []string {
	var s struct {
		Endpoints []string `json:"endpoints_successful"`
	}
	if json.Unmarshal(summary, &s) != nil {
		return nil
	}
	return s.Endpoints
}

// decodeServerMetrics is ReadServerMetrics' one-pass path. Top-level keys
// are matched exactly, as InferenceX's dict lookups match them. It reports
// false for anything the tolerant path treats specially: a shape error
// anywhere, trailing data, or a series that is not an object.
func decodeServerMetrics(data []byte, name string) (*ServerMetricsExport, bool) {
	type family struct {
		Type        json.RawMessage       `json:"type"`
		Description json.RawMessage       `json:"description"`
		Unit        json.RawMessage       `json:"unit"`
		Series      []*exportedSeriesJSON `json:"series"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var top struct {
		schema, version, phase, summary json.RawMessage
		metrics                         map[string]*family
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, false
		}
		var dst any
		switch key {
		case "schema_version":
			dst = &top.schema
		case "aiperf_version":
			dst = &top.version
		case "metrics_phase":
			dst = &top.phase
		case "summary":
			dst = &top.summary
		case "metrics":
			// Family by family, so the decoder buffers one family at a
			// time rather than the whole (tens of MB) object.
			if top.metrics, ok = decodeFamilies[family](dec); !ok {
				return nil, false
			}
			continue
		default:
			dst = new(json.RawMessage)
		}
		if dec.Decode(dst) != nil {
			return nil, false
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF || top.metrics == nil {
		return nil, false
	}
	out := &ServerMetricsExport{File: name, Metrics: make(map[string]*ExportedMetric, len(top.metrics))}
	_ = json.Unmarshal(top.schema, &out.SchemaVersion)
	_ = json.Unmarshal(top.version, &out.AIPerfVersion)
	_ = json.Unmarshal(top.phase, &out.MetricsPhase)
	out.Endpoints = exportEndpoints(top.summary)
	for fam, entry := range top.metrics {
		m := &ExportedMetric{}
		out.Metrics[fam] = m
		if entry == nil {
			continue
		}
		m.setText(entry.Type, entry.Description, entry.Unit)
		for _, s := range entry.Series {
			if s == nil {
				return nil, false // a null series: the tolerant path skips it
			}
			m.Series = append(m.Series, s.series())
		}
	}
	return out, true
}

// decodeFamilies decodes the object at dec's position into a map, one
// member at a time, as json.Unmarshal into a map would (exact keys, the
// last of a repeated key wins). It reports false for anything but an
// object of well-formed members.
func decodeFamilies[F any](dec *json.Decoder) (map[string]*F, bool) {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	out := map[string]*F{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, false
		}
		var f *F
		if dec.Decode(&f) != nil {
			return nil, false
		}
		out[key] = f
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	return out, true
}

// Names returns the metric family names, sorted.
func (e *ServerMetricsExport) Names() []string {
	names := make([]string, 0, len(e.Metrics))
	for n := range e.Metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ArtifactDirName is the directory of a point's RESULT_DIR its client
// writes into (--output-artifact-dir), as InferenceX names it.
const ArtifactDirName = "aiperf_artifacts"

// ArtifactDir is RESULT_DIR/aiperf_artifacts as a planned client's
// --output-artifact-dir names it (resultDir as given, one "/" before the
// name): where the client writes and every reader of the point reads
// (ResolveArtifactDir).
func ArtifactDir(resultDir string) string {
	return strings.TrimSuffix(resultDir, "/") + "/" + ArtifactDirName
}

// ResolveArtifactDir finds the directory holding aiperf's files under
// RESULT_DIR/aiperf_artifacts: the directory itself when it has
// profile_export.jsonl, else its first subdirectory (by name) that has one,
// else the directory itself (InferenceX's _resolve_artifact_dir).
func ResolveArtifactDir(resultDir string) string {
	base := filepath.Join(resultDir, ArtifactDirName)
	if isFile(filepath.Join(base, RecordsFile)) {
		return base
	}
	entries, err := os.ReadDir(base) // sorted by name
	if err != nil {
		return base
	}
	for _, e := range entries {
		child := filepath.Join(base, e.Name())
		if isDir(child) && isFile(filepath.Join(child, RecordsFile)) {
			return child
		}
	}
	return base
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// readJSONFile opens path (a regular file within limit) and applies read.
func readJSONFile[T any](path string, limit inputfile.Limit, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := inputfile.Open(path, limit)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f, path)
}

// ReadSummaryFile reads profile_export_aiperf.json from path.
// It must be a regular file within inputfile.AiperfSummary.
func ReadSummaryFile(path string) (*Summary, error) {
	return readJSONFile(path, inputfile.AiperfSummary, ReadSummary)
}

// ReadServerMetricsFile reads server_metrics_export.json from path, a
// regular file within inputfile.AiperfServerMetrics, as ReadServerMetrics
// reads one. The file is read as a stream: memory is bounded by the
// export without its series' timeslices and its warm-up's families (a
// few MB), not by the file's size. A file
// the streaming reader does not recognise (not valid JSON, not an object,
// nested deeper than it follows) is read again whole, when it is within
// MaxWholeServerMetrics; a larger one is an error naming where the reader
// stopped.
func ReadServerMetricsFile(path string) (*ServerMetricsExport, error) {
	f, err := inputfile.Open(path, inputfile.AiperfServerMetrics)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	kept, ok, stop, err := skimStream(f, skimWindow)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if ok {
		return skimmedServerMetrics(kept, path), nil
	}
	refuse := func() error {
		why := stop.Why
		if why == "" {
			why = "it is not valid JSON"
		}
		line, col := lineCol(f, stop.Offset)
		return &configs.Error{File: path, Line: line, Col: col, Key: "(top level)", Msg: fmt.Sprintf(
			"must contain a JSON object of aiperf's export shape: %s (byte %d); a file over %d MiB is read only as a stream, which follows nothing else",
			why, stop.Offset, MaxWholeServerMetrics>>20)}
	}
	st, err := f.Stat()
	if err != nil || st.Size() > MaxWholeServerMetrics {
		return nil, refuse()
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxWholeServerMetrics+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if buf.Len() > MaxWholeServerMetrics { // it grew
		return nil, refuse()
	}
	return wholeServerMetrics(buf.Bytes(), path)
}

// lineCol returns the 1-based line and column (in bytes) of offset in
// the file; 0, 0 when it cannot be read.
func lineCol(f io.ReadSeeker, offset int64) (line, col int) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0
	}
	buf := make([]byte, 64<<10)
	line, lineAt, at := 1, int64(0), int64(0)
	for at < offset {
		n, err := f.Read(buf[:min(int64(len(buf)), offset-at)])
		for j, c := range buf[:n] {
			if c == '\n' {
				line++
				lineAt = at + int64(j) + 1
			}
		}
		at += int64(n)
		if err != nil {
			break
		}
	}
	return line, int(offset-lineAt) + 1
}

// MaxWholeServerMetrics is the largest server_metrics_export.json that
// ReadServerMetricsFile reads whole, when its streaming reader does not
// recognise the file (which then costs about twice its size in memory).
const MaxWholeServerMetrics = 256 << 20
