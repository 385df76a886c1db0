package knee

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sweep/internal/inputfile"
	"sweep/internal/pyjson"
	"sweep/metrics"
	"sweep/metrics/result"
)

// IdentityKeys are the result fields that name an arm (one parallelism
// config of one config key), in the order they are printed. Files that
// agree on all of them are one arm; everything else (conc, measurements,
// image, runner node) may differ.
var IdentityKeys = []string{
	"infmax_model_prefix", "hw", "framework", "precision", "spec_decoding", "scenario_type",
	"disagg", "is_multinode", "tp", "ep", "dp_attention", "kv_offloading", "pp",
}

// groupKeyCount is how many leading IdentityKeys name the config key an
// arm belongs to (model prefix, hardware, framework, precision, spec
// decoding, scenario, disagg, multinode): the arms a Pareto frontier
// compares.
const groupKeyCount = 8

// Identity holds the IdentityKeys values of an arm as they appear in its
// first result file (raw JSON; null when a file lacks the key).
type Identity [identityLen]json.RawMessage

const identityLen = 13

// MarshalJSON writes the identity as an object in IdentityKeys order.
func (id Identity) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range IdentityKeys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if id[i] == nil {
			b.WriteString("null")
		} else {
			b.Write(id[i])
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object MarshalJSON writes; keys other than
// IdentityKeys are an error.
func (id *Identity) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	var out Identity
	for k, v := range m {
		i := slices.Index(IdentityKeys, k)
		if i < 0 {
			return fmt.Errorf("arm identity: unknown key %q (want %s)", k, strings.Join(IdentityKeys, ", "))
		}
		if string(v) != "null" {
			out[i] = v
		}
	}
	*id = out
	return nil
}

// Get returns the value of key as text: a JSON string unquoted, anything
// else as written; "" when absent or null.
func (id Identity) Get(key string) string {
	i := slices.Index(IdentityKeys, key)
	if i < 0 {
		return ""
	}
	return textOf(id[i])
}

func textOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// key is the grouping key over the first n identity fields: values are
// compared as text, so "false" and false (InferenceX writes dp_attention
// as a string) are the same arm.
func (id Identity) key(n int) string {
	parts := make([]string, n)
	for i := range n {
		parts[i] = textOf(id[i])
	}
	return strings.Join(parts, "\x00")
}

// Label is a short human name of the arm: "qwen3.5 mi325x sglang fp8 mtp
// tp8 ep8 dpa kv:none" (defaults such as pp1 left out).
func (id Identity) Label() string {
	var parts []string
	for _, k := range []string{"infmax_model_prefix", "hw", "framework", "precision", "spec_decoding"} {
		if v := id.Get(k); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(append(parts, id.Parallelism()), " ")
}

// Parallelism names the arm inside its config key: "tp8 ep8 dpa kv:dram".
func (id Identity) Parallelism() string {
	parts := []string{"tp" + id.Get("tp")}
	if ep := id.Get("ep"); ep != "" && ep != "1" {
		parts = append(parts, "ep"+ep)
	}
	if id.Get("dp_attention") == "true" {
		parts = append(parts, "dpa")
	}
	if pp := id.Get("pp"); pp != "" && pp != "1" {
		parts = append(parts, "pp"+pp)
	}
	if kv := id.Get("kv_offloading"); kv != "" && kv != "none" {
		parts = append(parts, "kv:"+kv)
	}
	if id.Get("disagg") == "true" {
		parts = append(parts, "disagg")
	}
	return strings.Join(parts, " ")
}

// GroupLabel names the config key side of the arm (no parallelism).
func (id Identity) GroupLabel() string {
	var parts []string
	for _, k := range IdentityKeys[:6] {
		if v := id.Get(k); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " ")
}

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
	// Excluded says why the point is not used (no successful request,
	// error rate, marked invalid, no throughput); empty when usable.
	Excluded string

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

// Arm is the result files of one parallelism config of one config key.
type Arm struct {
	Identity Identity
	Samples  []Sample // sorted by Conc, then File
	// Simulated is true when the arm's results came from the simulated
	// engine (all of them: Read refuses a mix).
	Simulated bool
}

// ReadError is a result file that has the result keys but cannot be read
// as a result.
type ReadError struct {
	File string
	Key  string // the offending key; empty for the whole file
	Msg  string // what was expected
}

func (e *ReadError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
}

// ErrMixedSimulation is returned (wrapped) when one arm has both
// simulated and real results: their throughputs are not comparable.
var ErrMixedSimulation = errors.New("simulated and real results in one arm")

// Read finds every aggregate result under dir (recursively: every *.json
// whose top-level value is an object with "conc" and "request_metrics";
// other JSON, temp files and logs are ignored), groups the files into arms
// by IdentityKeys and returns the arms sorted by their identity. Failed
// points stay in the arm with Excluded set. A result file whose fields
// have the wrong types, or an arm that mixes simulated and real results,
// is an error (all such problems are joined).
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
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (give the directory holding the result files)", dir)
	}
	arms := map[string]*Arm{}
	var problems []error
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".json") {
			return nil
		}
		id, s, ok, err := readResult(path)
		if err != nil {
			problems = append(problems, err)
			return nil
		}
		if !ok {
			return nil
		}
		k := id.key(identityLen)
		a := arms[k]
		if a == nil {
			a = &Arm{Identity: id}
			arms[k] = a
		}
		a.Samples = append(a.Samples, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Arm, 0, len(arms))
	for _, a := range arms {
		sort.Slice(a.Samples, func(i, j int) bool {
			if a.Samples[i].Conc != a.Samples[j].Conc {
				return a.Samples[i].Conc < a.Samples[j].Conc
			}
			return a.Samples[i].File < a.Samples[j].File
		})
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
		if ka, kb := a.Identity.key(groupKeyCount), b.Identity.key(groupKeyCount); ka != kb {
			return ka < kb
		}
		for _, k := range []string{"tp", "ep", "pp"} {
			if x, y := num(a, k), num(b, k); x != y {
				return x < y
			}
		}
		return a.Identity.key(identityLen) < b.Identity.key(identityLen)
	})
}

// resultFields is what Read takes from a result file.
type resultFields struct {
	Conc                  *int                  `json:"conc"`
	NumRequestsSuccessful *int                  `json:"num_requests_successful"`
	RequestAccounting     *accounting           `json:"request_accounting"`
	RequestMetrics        result.RequestMetrics `json:"request_metrics"`
	ServerMetrics         *serverFields         `json:"server_metrics"`
	Valid                 *bool                 `json:"valid"`
	InvalidReasons        []string              `json:"invalid_reasons"`
	Simulated             *bool                 `json:"simulated"`
	AcceptanceLength      *metrics.ALCheck      `json:"acceptance_length"`
	Probe                 *bool                 `json:"probe"`
	Image                 json.RawMessage       `json:"image"`
	RecipeFingerprint     json.RawMessage       `json:"recipe_fingerprint"`
	// The power lane's keys (InferenceX's power_adapter).
	PowerSchema          *int     `json:"power_metric_schema_version"`
	PowerValid           *int     `json:"power_valid"`
	JoulesPerOutputToken *float64 `json:"joules_per_output_token"`
}

type accounting struct {
	RecordsProfiled     int `json:"records_profiled"`
	RecordsErrorDropped int `json:"records_error_dropped"`
}

type serverFields struct {
	Cache struct {
		GPU     *float64 `json:"gpu_cache_hit_rate"`
		Overall *float64 `json:"overall_cache_hit_rate"`
	} `json:"cache"`
	KVCache struct {
		GPUUsagePct *float64 `json:"gpu_usage_pct"`
	} `json:"kv_cache"`
}

// readResult reads one JSON file; ok is false when it is not a result.
func readResult(path string) (Identity, Sample, bool, error) {
	var id Identity
	data, err := inputfile.Read(path, inputfile.Result)
	if _, tooLarge := errors.AsType[*inputfile.TooLargeError](err); tooLarge {
		return id, Sample{}, false, nil // not an aggregate result
	}
	if err != nil {
		return id, Sample{}, false, err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return id, Sample{}, false, nil // not an object (or not JSON): not a result
	}
	if _, ok := top["conc"]; !ok {
		return id, Sample{}, false, nil
	}
	if _, ok := top["request_metrics"]; !ok {
		return id, Sample{}, false, nil
	}
	var r resultFields
	for _, k := range []string{"conc", "num_requests_successful", "request_accounting", "request_metrics",
		"server_metrics", "valid", "invalid_reasons", "simulated", "acceptance_length", "probe", "image", "recipe_fingerprint",
		"power_metric_schema_version", "power_valid", "joules_per_output_token"} {
		raw, ok := top[k]
		if !ok || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal([]byte(`{"`+k+`":`+string(raw)+`}`), &r); err != nil {
			return id, Sample{}, false, &ReadError{File: path, Key: k, Msg: fmt.Sprintf("not an InferenceX aggregate result value (%v)", err)}
		}
	}
	if r.Conc == nil || *r.Conc < 1 {
		return id, Sample{}, false, &ReadError{File: path, Key: "conc", Msg: "want a positive integer concurrency"}
	}
	for i, k := range IdentityKeys {
		if raw, ok := top[k]; ok {
			id[i] = raw
		}
	}
	s := Sample{File: path, Conc: *r.Conc, Simulated: r.Simulated != nil && *r.Simulated, AL: r.AcceptanceLength,
		Probe: r.Probe != nil && *r.Probe, Image: textOf(r.Image), Fingerprint: textOf(r.RecipeFingerprint)}
	if d := r.RequestMetrics.Throughput.DurationSeconds; d != nil {
		s.Seconds = float64(*d)
	}
	lat := r.RequestMetrics.Latency
	s.Intvty, s.E2ENormIntvty, s.TTFT, s.ITL = lat.Intvty, lat.E2ENormIntvty, lat.TTFT, lat.ITL
	if pg := r.RequestMetrics.Throughput.PerGPU; pg != nil {
		s.TotalTPS, s.OutputTPS = floatOf(pg.TotalTputTPS), floatOf(pg.OutputTputTPS)
	}
	if a := r.RequestAccounting; a != nil {
		s.Errors = a.RecordsErrorDropped
		if d := a.RecordsProfiled + a.RecordsErrorDropped; d > 0 {
			s.ErrorRate = float64(a.RecordsErrorDropped) / float64(d)
		}
	}
	// Energy counts only from a valid measurement of the versioned
	// (whole-deployment) schema, as InferenceX asks consumers to.
	if r.PowerSchema != nil && *r.PowerSchema == 2 && r.PowerValid != nil && *r.PowerValid == 1 && r.JoulesPerOutputToken != nil {
		s.JoulesPerOutputToken = r.JoulesPerOutputToken
	}
	if sm := r.ServerMetrics; sm != nil {
		s.KVUsage = sm.KVCache.GPUUsagePct
		s.CacheHit = sm.Cache.Overall
		if s.CacheHit == nil {
			s.CacheHit = sm.Cache.GPU
		}
	}
	switch {
	case r.Valid != nil && !*r.Valid:
		s.Excluded = "marked invalid"
		if len(r.InvalidReasons) > 0 {
			s.Excluded += ": " + strings.Join(r.InvalidReasons, "; ")
		}
	case r.NumRequestsSuccessful != nil && *r.NumRequestsSuccessful == 0:
		s.Excluded = "no successful request"
	case s.ErrorRate > result.DefaultFailedRequestThreshold:
		s.Excluded = fmt.Sprintf("error rate %.1f%% > %.0f%% (%d of %d requests failed)", 100*s.ErrorRate,
			100*result.DefaultFailedRequestThreshold, s.Errors, r.RequestAccounting.RecordsProfiled+s.Errors)
	case s.TotalTPS == nil:
		s.Excluded = "no per-GPU throughput (request_metrics.throughput.per_gpu is empty)"
	}
	return id, s, true, nil
}

func floatOf(f *pyjson.Rounded) *float64 {
	if f == nil {
		return nil
	}
	v := float64(*f)
	return &v
}

// ReadFile reads one aggregate result file as a Sample; ok is false when
// the file is JSON but not a result.
func ReadFile(path string) (s Sample, ok bool, err error) {
	_, s, ok, err = readResult(path)
	return s, ok, err
}
