package simengine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"sweep/configs"
	"sweep/internal/inputfile"
	"sweep/metrics/aiperf"
	"sweep/metrics/result"
	"sweep/recipes/schema"
)

// CalibrationVersion is the version of the calibration file format.
const CalibrationVersion = 1

// Calibration fits the simulated engine to measured results, per arm:
// `sweep sim calibrate RESULTS_DIR` writes it, `--sim-calibration FILE`
// hands it to every simulated engine of a run or discovery.
type Calibration struct {
	Version int    `json:"version"`
	Source  string `json:"source,omitempty"` // the results it was fitted to
	// Simulated is true when some arm was fitted on results of sweep's
	// simulated engine: such a fit reproduces the simulator (and the
	// calibration it ran under), not a measured engine. A file without
	// the key (older) says nothing of it.
	Simulated bool             `json:"simulated"`
	Arms      []ArmCalibration `json:"arms"`
}

// The configurations a step scale is fitted against (ArmCalibration.Basis).
const (
	// BasisCommand: the engine command recorded beside the results, read
	// as the simulated engine reads it.
	BasisCommand = "the engine command beside the results"
	// BasisPlanned: the engine command the shipped recipe plans for the
	// arm, the results having none beside them (InferenceX's own).
	BasisPlanned = "the engine command the shipped recipe plans for the arm (none beside the results)"
	// BasisWorkerCommand: a disaggregated worker's command recorded
	// beside the results (prefill0_command.txt, decode0_command.txt),
	// read as the simulated worker reads it.
	BasisWorkerCommand = "the worker's command beside the results"
	// BasisIdentity: rebuilt from the results' identity (engine, model,
	// GPU, layout; speculative decoding as 3 drafts at the measured
	// acceptance length), the engine's other flags unknown.
	BasisIdentity = "rebuilt from the results' identity"
)

// ArmCalibration is one arm's fit: the model's step costs (decode and
// prefill) times StepScale, and a KV pool of PoolTokens per DP rank. A zero
// StepScale or PoolTokens keeps the model's.
type ArmCalibration struct {
	Engine      configs.Engine `json:"engine"`
	Model       string         `json:"model"` // --model-path, its last element compared without case (modelName)
	GPU         string         `json:"gpu"`
	TP          int            `json:"tp"`
	EP          int            `json:"ep"`
	DPAttention bool           `json:"dp_attention"`
	// HostKV: the arm offloads KV to a host-memory tier (SGLang HiCache,
	// a vLLM offload connector; its results' kv_offloading is not none).
	HostKV bool `json:"host_kv,omitempty"`
	// Role is the worker role of a disaggregated arm the fit is for
	// (Config.Disagg: DisaggPrefill, DisaggDecode), "" for an engine that
	// serves both phases. An arm with a role calibrates only the workers
	// of that role; one without calibrates every engine of its layout, a
	// disaggregated worker too when the file has no arm of its role.
	Role string `json:"role,omitempty"`

	// KVCacheDType is the engine's --kv-cache-dtype the results ran with
	// ("auto" where the engine set none: the model's 16-bit activation
	// dtype); the fit's per-context cost uses it, and the arm calibrates
	// only engines whose KV cache has its width (kvBits: 16, 8 or 4 bits,
	// which set the pool's tokens and a step's KV reads). "" (a
	// hand-written arm, a file from before it was matched, a fit rebuilt
	// from the results' identity) calibrates any.
	KVCacheDType string `json:"kv_cache_dtype,omitempty"`
	// DraftSteps is the speculative decoding's draft steps per verify step
	// the results ran with (0: none), which set the step costs and the
	// draft's share of the pool: the arm calibrates only engines that
	// draft as many. Absent (nil) calibrates any, as KVCacheDType "".
	DraftSteps *int `json:"draft_steps,omitempty"`

	StepScale  float64 `json:"step_scale"`
	PoolTokens int     `json:"pool_tokens"`
	// PoolFrom says which point's pool PoolTokens is where the arm's
	// points report different pools, and their spread, and, for an arm
	// of several DP ranks, that PoolTokens is the results' pool (every
	// rank's, summed) divided by them ("" when the points agree on one
	// rank's pool, or the pool is the model's).
	PoolFrom string `json:"pool_from,omitempty"`

	// Basis is the configuration the scale was fitted against:
	// BasisCommand, BasisPlanned or BasisIdentity (with why, when a
	// command could not be read).
	Basis string `json:"basis,omitempty"`
	// ALFrom says where a speculative arm's acceptance length came from
	// when its results carry none ("" when they do).
	ALFrom string `json:"al_from,omitempty"`

	// Points are the measurements the scale was fitted to, with the
	// fitted step and its error; RMSErrorPct is their root mean square,
	// 0 by construction on a fit of one point (FittedPoints), whose scale
	// is that point's ratio: no error is measured then.
	Points      []FitPoint `json:"points,omitempty"`
	RMSErrorPct float64    `json:"rms_error_pct"`
	// LeftOut names the arm's measured points the fit did not use, each
	// with why ("c80: KV usage 99.8 %, ...").
	LeftOut []string `json:"left_out,omitempty"`
}

// FitPoint is one measured point of an arm: the concurrency, the median
// inter-token latency and the mean gap between tokens, the acceptance
// length, the requests in flight (request rate × mean latency) and
// decoding, and the context tokens the KV pool held; after the fit, the
// time between two of a request's decode steps the point measured (gap ×
// AL, else ITL × AL), the model's there times the scale, and the error.
type FitPoint struct {
	Conc int `json:"conc"`
	// ProbeSeconds is the length of the point's window when it was a short
	// probe of an adaptive discovery (0: a full-length point).
	ProbeSeconds float64 `json:"probe_seconds,omitempty"`
	ITL          float64 `json:"itl_s"`
	// Gap is the mean time between two of a request's tokens, weighted by
	// tokens ((mean latency - mean TTFT) / (mean output tokens - 1)), and
	// Decoding the requests past their first token (request rate × (mean
	// latency - mean TTFT)); 0 when the result has no means to read them
	// from (the fit then takes the median ITL, and the requests in flight).
	Gap      float64 `json:"gap_s,omitempty"`
	Decoding float64 `json:"decoding,omitempty"`
	// EngineStep and EngineBatch are a disaggregated decode worker's mean
	// decode step and the requests in it (a rank's), as the worker's own
	// counters time and count its steps; the fit reads them before the
	// client's gap and the requests decoding. 0 when the point has none.
	// A simulated disaggregated point runs on the wall clock, where the
	// client's gap also holds the time the engines fell behind their
	// schedule on a loaded host (a planted decode scale of 1.4 read 1.44
	// idle and 1.50 under a CPU hog); the engines' step times do not.
	EngineStep  float64 `json:"engine_step_s,omitempty"`
	EngineBatch float64 `json:"engine_batch,omitempty"`
	AL          float64 `json:"al"`
	Running     float64 `json:"running"`
	// CtxTokens is the context the requests in flight decode over (their
	// prompts and half their outputs; the pool's usage when the result
	// has no token counts).
	CtxTokens float64 `json:"ctx_tokens"`
	// PrefillPerSecond is the uncached prompt tokens computed per second,
	// PrefillTokens those of one request on average and PrefillContext the
	// cached tokens they follow: the time prefills take from the decode
	// steps between a request's tokens.
	PrefillPerSecond float64 `json:"prefill_tokens_per_s"`
	PrefillTokens    float64 `json:"prefill_tokens"`
	PrefillContext   float64 `json:"prefill_context"`
	// PrefillMidContext is the context a computed prompt token attends to,
	// averaged over the computed tokens of the point's requests (each
	// request's cached prefix plus half the tokens it computes), from the
	// per-request records; 0 when the point has none, and the fit takes
	// PrefillContext + PrefillTokens/2 instead. The means overstate the
	// prefill's attention where the requests that compute the most tokens
	// (a session's first turn, a prefix evicted) follow the least cached
	// context: on the simulated MI325X Qwen3.5 SGLang arm by 15-17 %,
	// which put its scale 4.5 % low.
	PrefillMidContext float64 `json:"prefill_mid_context,omitempty"`
	// PrefillSeconds is a disaggregated prefill worker's forward time per
	// request it computed (its sglang:forward_execution_seconds_total of
	// category prefill over its sglang:num_requests_total), which
	// FitPrefillScale fits; 0 for an engine's or a decode worker's point.
	PrefillSeconds float64 `json:"prefill_s,omitempty"`

	MeasuredStep float64 `json:"measured_step_s"`
	FittedStep   float64 `json:"fitted_step_s"`
	ErrorPct     float64 `json:"error_pct"`
}

// The bounds LoadCalibration holds a calibration's values to. A scale is
// a factor on the model's step costs: the fits seen run 0.6-1.5 (0.06
// where the acceptance length was missing), and a hundredfold either way
// is no fit of real results (at 1e9 a step never ends and the engine never
// gets ready; at 1e-300 every token is free). A pool below a few thousand
// tokens holds no agentic request; the engine rounds a pool down to its
// KV page.
const (
	minStepScale  = 0.01
	maxStepScale  = 100
	minPoolTokens = 4096
	maxPoolTokens = 1 << 40
)

// utf8BOM is the byte-order mark some editors write at a UTF-8 file's
// start, which JSON does not allow.
var utf8BOM = []byte("\xef\xbb\xbf")

// LoadCalibration reads a calibration file and checks every arm: a
// simulated engine, a model, a GPU the model knows, a layout, a step scale
// and pool in bounds (0: the model's), and no two arms for the same
// engine configuration. An error names the arm's line and column.
func LoadCalibration(path string) (*Calibration, error) {
	data, err := inputfile.Read(path, inputfile.SmallJSON)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, utf8BOM) // an editor's byte-order mark
	var cal Calibration
	const want = "the JSON sweep sim calibrate writes"
	if err := configs.DecodeJSON(path, data, &cal, want); err != nil {
		return nil, err
	}
	if cal.Version != CalibrationVersion {
		return nil, fmt.Errorf("%s: calibration version %d, want %d (fit it again with sweep sim calibrate)", path, cal.Version, CalibrationVersion)
	}
	if len(cal.Arms) == 0 {
		return nil, &configs.Error{File: path, Key: "arms", Msg: "no arm: want at least one (sweep sim calibrate RESULTS_DIR writes one per arm it fits)"}
	}
	for i := range cal.Arms {
		a := &cal.Arms[i]
		bad := func(key, format string, args ...any) error {
			return configs.JSONElementErrorf(path, data, "arms", i, strings.TrimSuffix(fmt.Sprintf("arms[%d].%s", i, key), "."), format, args...)
		}
		switch {
		case a.Engine != configs.SGLang && a.Engine != configs.VLLM:
			return nil, bad("engine", "%q: want %q or %q, the engines the simulator serves", a.Engine, configs.SGLang, configs.VLLM)
		case a.Model == "":
			return nil, bad("model", "empty: want the engine's --model-path (vllm serve MODEL)")
		case !slices.Contains(gpuNames(), strings.ToLower(a.GPU)):
			return nil, bad("gpu", "%q: want one of %s", a.GPU, strings.Join(gpuNames(), ", "))
		case a.TP < 1 || a.EP < 0:
			return nil, bad("tp", "tp %d, ep %d: want tp >= 1 and ep >= 0 (0 or 1: no expert parallelism)", a.TP, a.EP)
		case a.StepScale != 0 && !(a.StepScale >= minStepScale && a.StepScale <= maxStepScale):
			return nil, bad("step_scale", "%g: want 0 (the model's step costs) or %g to %g; fit it again with sweep sim calibrate", a.StepScale, float64(minStepScale), float64(maxStepScale))
		case a.PoolTokens != 0 && (a.PoolTokens < minPoolTokens || a.PoolTokens > maxPoolTokens):
			return nil, bad("pool_tokens", "%d: want 0 (the model's pool) or %d to %d tokens per rank", a.PoolTokens, minPoolTokens, int64(maxPoolTokens))
		case a.Role != "" && a.Role != DisaggPrefill && a.Role != DisaggDecode:
			return nil, bad("role", "%q: want %q or %q (a disaggregated arm's workers), or none for an engine serving both phases", a.Role, DisaggPrefill, DisaggDecode)
		case a.DraftSteps != nil && *a.DraftSteps < 0:
			return nil, bad("draft_steps", "%d: want the engine's draft steps per verify step (0: no speculative decoding), or no key for any", *a.DraftSteps)
		}
		if dtypes, known := kvCacheDTypes(a.Engine); a.KVCacheDType != "" && !slices.Contains(dtypes, strings.ToLower(a.KVCacheDType)) {
			return nil, bad("kv_cache_dtype", "%q: want one of %s's --kv-cache-dtype values (%s), or no key for an arm of any KV cache dtype%s", a.KVCacheDType, a.Engine, strings.Join(dtypes, ", "), known)
		}
		for j := range i {
			if cal.Arms[j].sameArm(a) {
				return nil, bad("", "the same arm as arms[%d] (%s): want one fit per arm; keep one of them", j, a.Label())
			}
		}
	}
	return &cal, nil
}

// IsCalibrationFile reports whether data has a calibration file's shape
// (a version and a list of arms), whatever its values: what sweep sim
// calibrate may write over.
func IsCalibrationFile(data []byte) bool {
	var shape struct {
		Version *int            `json:"version"`
		Arms    json.RawMessage `json:"arms"`
	}
	return json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &shape) == nil && shape.Version != nil && shape.Arms != nil
}

// Sets is what the calibration sets, arm by arm: its label, step scale
// and pool. A sweep's journal records it, so a sweep resumed with the
// same file fitted again to other values is refused, not run on two
// calibrations.
func (c *Calibration) Sets() string {
	parts := make([]string, len(c.Arms))
	for i := range c.Arms {
		a := &c.Arms[i]
		parts[i] = fmt.Sprintf("%s: step costs x%g, pool %d", a.Label(), a.StepScale, a.PoolTokens)
	}
	return strings.Join(parts, "; ")
}

// sameArm reports whether a and b calibrate some engine both: the same
// layout and role, and KV cache widths and draft steps that some engine
// has both of (sameSteps).
func (a *ArmCalibration) sameArm(b *ArmCalibration) bool {
	return a.sameLayout(b) && a.Role == b.Role && a.sameSteps(b)
}

// sameSteps reports whether a and b name the same KV cache width (kvBits)
// and draft steps, what sets an engine's pool and step costs beside its
// layout; one that names none (KVCacheDType "", DraftSteps nil) is the
// same as any.
func (a *ArmCalibration) sameSteps(b *ArmCalibration) bool {
	return (a.KVCacheDType == "" || b.KVCacheDType == "" || kvBits(a.KVCacheDType) == kvBits(b.KVCacheDType)) &&
		(a.DraftSteps == nil || b.DraftSteps == nil || *a.DraftSteps == *b.DraftSteps)
}

// kvCacheDTypes is the values engine's --kv-cache-dtype takes in its
// default flag schema (lower case), and, when the schema cannot say, why
// (then any value is refused with it).
func kvCacheDTypes(engine configs.Engine) (dtypes []string, why string) {
	cat, err := schema.Embedded()
	if err != nil {
		return nil, fmt.Sprintf(" (the flag schemas do not read: %v)", err)
	}
	s, err := cat.Get(string(engine), "")
	if err != nil {
		return nil, fmt.Sprintf(" (%v)", err)
	}
	f, ok := s.Lookup("--kv-cache-dtype")
	if !ok {
		return nil, fmt.Sprintf(" (%s has no --kv-cache-dtype)", s.ID())
	}
	for _, c := range f.Choices {
		dtypes = append(dtypes, strings.ToLower(c))
	}
	return dtypes, ""
}

// sameLayout reports whether a and b name the same engine, model, GPU,
// layout and host KV tier, whatever their roles.
func (a *ArmCalibration) sameLayout(b *ArmCalibration) bool {
	return a.Engine == b.Engine && strings.EqualFold(modelName(a.Model), modelName(b.Model)) && strings.EqualFold(a.GPU, b.GPU) &&
		a.TP == b.TP && max(a.EP, 1) == max(b.EP, 1) && a.DPAttention == b.DPAttention && a.HostKV == b.HostKV
}

// modelName is a model path's last element: a Hugging Face id
// (Qwen/Qwen3.5-397B-A17B-FP8) and a local copy of its weights
// (/models/Qwen3.5-397B-A17B-FP8/) name the same model, whose name is all
// the engine derives its costs from.
func modelName(p string) string {
	return path.Base(strings.TrimRight(p, "/"))
}

// Label names the arm: engine, model, GPU and layout.
func (a *ArmCalibration) Label() string {
	l := fmt.Sprintf("%s %s %s tp%d ep%d", a.Engine, a.Model, a.GPU, a.TP, max(a.EP, 1))
	if a.DPAttention {
		l += " dpa"
	}
	if a.HostKV {
		l += " host kv"
	}
	if a.Role != "" {
		l += " " + a.Role + " worker"
	}
	return l
}

// Describe names the arm as its Label does, with the KV cache dtype and
// draft steps it matches engines by where it names them (sameSteps).
func (a *ArmCalibration) Describe() string {
	var what []string
	if a.KVCacheDType != "" {
		what = append(what, fmt.Sprintf("KV dtype %q", a.KVCacheDType))
	}
	if a.DraftSteps != nil {
		what = append(what, fmt.Sprintf("%d draft steps", *a.DraftSteps))
	}
	if len(what) == 0 {
		return a.Label()
	}
	return a.Label() + " (" + strings.Join(what, ", ") + ")"
}

// measuredStep is the time between two of a request's decode steps the
// point measured: a disaggregated decode worker's own mean step where the
// point has it, else its mean gap between tokens × AL, else (no means to
// read the gap from) its median ITL × AL.
func (p *FitPoint) measuredStep() float64 {
	if p.EngineStep > 0 {
		return p.EngineStep
	}
	if p.Gap > 0 {
		return p.Gap * p.AL
	}
	return p.ITL * p.AL
}

// FittedPoints is the number of points the arm's scale was fitted to
// (those with a measured step).
func (a *ArmCalibration) FittedPoints() int {
	n := 0
	for _, p := range a.Points {
		if p.MeasuredStep != 0 {
			n++
		}
	}
	return n
}

// OnePoint says of an arm fitted to one point that its error is not
// measured: the scale is that point's ratio, its error 0 by construction.
const OnePoint = "rms error not measured (1 point: the scale is its ratio, the error 0 by construction; fit more concurrencies to check the fit)"

// WriteFits writes each arm's fit: its step scale, pool and error (on
// one point, OnePoint), then a table of the measured and the fitted
// decode step per concurrency.
func (c *Calibration) WriteFits(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range c.Arms {
		pool := "the model's pool (the results report none)"
		if a.PoolTokens > 0 {
			pool = fmt.Sprintf("pool %d tokens per rank", a.PoolTokens)
		}
		rms := fmt.Sprintf("rms error %.1f%%", a.RMSErrorPct)
		if a.FittedPoints() == 1 {
			rms = OnePoint
		}
		fmt.Fprintf(tw, "%s: step scale %s, %s, %s\n", a.Label(), result.ScaleText(a.StepScale), pool, rms)
		if a.Basis != "" {
			fmt.Fprintf(tw, "  the model's configuration: %s\n", a.Basis)
		}
		if a.PoolFrom != "" {
			fmt.Fprintf(tw, "  the pool: %s\n", a.PoolFrom)
		}
		if a.ALFrom != "" {
			fmt.Fprintf(tw, "  acceptance length: %s\n", a.ALFrom)
		}
		prefill := a.Role == DisaggPrefill
		if prefill {
			fmt.Fprintln(tw, "  conc\tcomputed tokens per request\tmeasured prefill (ms per request)\tfitted (ms)\terror")
		} else {
			fmt.Fprintln(tw, "  conc\tin flight\tmeasured step (ms)\tfitted (ms)\terror")
		}
		seen := map[int]int{} // points so far at a concurrency: replicates are numbered
		for _, p := range a.Points {
			if p.MeasuredStep == 0 {
				continue
			}
			conc := strconv.Itoa(p.Conc)
			if p.ProbeSeconds > 0 {
				conc += fmt.Sprintf(" (%.0f s probe)", p.ProbeSeconds)
			}
			if seen[p.Conc]++; seen[p.Conc] > 1 {
				conc += fmt.Sprintf(" (replicate %d)", seen[p.Conc])
			}
			if prefill {
				fmt.Fprintf(tw, "  %s\t%.0f\t%.2f\t%.2f\t%+.1f%%\n", conc, p.PrefillTokens, 1e3*p.MeasuredStep, 1e3*p.FittedStep, p.ErrorPct)
				continue
			}
			fmt.Fprintf(tw, "  %s\t%.1f\t%.2f\t%.2f\t%+.1f%%\n", conc, p.Running, 1e3*p.MeasuredStep, 1e3*p.FittedStep, p.ErrorPct)
		}
		for _, l := range a.fallbacks() {
			fmt.Fprintf(tw, "  %s\n", l)
		}
		for _, l := range a.LeftOut {
			fmt.Fprintf(tw, "  left out: %s\n", l)
		}
	}
	return tw.Flush()
}

// fallbacks says where the fit of an arm's decode steps read less than
// it reads from a whole result, and what it took instead: the means'
// prefill context where no per-request records say what each request
// computed after what cached prefix (PrefillMidContext), the median ITL
// where the result has no mean latency and TTFT (Gap). A prefill
// worker's fit reads neither.
func (a *ArmCalibration) fallbacks() []string {
	if a.Role == DisaggPrefill {
		return nil
	}
	var means, medianITL []string
	for _, p := range a.Points {
		if p.MeasuredStep == 0 {
			continue
		}
		c := "c" + strconv.Itoa(p.Conc)
		if p.PrefillPerSecond > 0 && p.PrefillTokens > 0 && p.PrefillMidContext == 0 && !slices.Contains(means, c) {
			means = append(means, c)
		}
		if p.Gap == 0 && !slices.Contains(medianITL, c) {
			medianITL = append(medianITL, c)
		}
	}
	var out []string
	if len(means) > 0 {
		out = append(out, fmt.Sprintf("fitted on the means at %s: no per-request record says how much of its prompt was cached (%s is missing beside the results, or its records have no %s), so the prefills' context is the means' (on the simulated MI325X Qwen3.5 SGLang arm that put the scale 4.5 %% low)",
			strings.Join(means, ", "), aiperf.RecordsFile, "usage_prompt_cache_read_tokens"))
	}
	if len(medianITL) > 0 {
		out = append(out, fmt.Sprintf("fitted on the median ITL at %s: the results have no mean latency and TTFT to read the mean gap between tokens from",
			strings.Join(medianITL, ", ")))
	}
	return out
}
