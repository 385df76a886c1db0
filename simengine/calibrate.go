package simengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"sweep/configs"
	"sweep/internal/inputfile"
	"sweep/metrics/result"
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
	// ("" when not recorded: 16-bit); the fit's per-context cost uses it.
	KVCacheDType string `json:"kv_cache_dtype,omitempty"`

	StepScale  float64 `json:"step_scale"`
	PoolTokens int     `json:"pool_tokens"`

	// Basis is the configuration the scale was fitted against:
	// BasisCommand, BasisPlanned or BasisIdentity (with why, when a
	// command could not be read).
	Basis string `json:"basis,omitempty"`
	// ALFrom says where a speculative arm's acceptance length came from
	// when its results carry none ("" when they do).
	ALFrom string `json:"al_from,omitempty"`

	// Points are the measurements the scale was fitted to, with the
	// fitted step and its error; RMSErrorPct is their root mean square.
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
	AL       float64 `json:"al"`
	Running  float64 `json:"running"`
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

// CalibrationArm is the arm of a calibration that calibrates c: its
// engine, model, GPU, layout, host KV tier and worker role, nothing
// fitted.
func (c *Config) CalibrationArm() ArmCalibration {
	return ArmCalibration{Engine: c.Engine, Model: c.ModelPath, GPU: c.GPU, TP: c.TP, EP: max(c.EP, 1), DPAttention: c.DPAttention, HostKV: c.HostKV.Enabled(), Role: c.Disagg}
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

// sameArm reports whether a and b calibrate the same engines: the same
// layout and role.
func (a *ArmCalibration) sameArm(b *ArmCalibration) bool {
	return a.sameLayout(b) && a.Role == b.Role
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

// Arm returns the arm of the calibration that calibrates c (normalized),
// or nil: the arm of its layout and role, else (a disaggregated worker
// the file has no arm of its role for) the arm of its layout without a
// role.
func (cal *Calibration) Arm(c Config) *ArmCalibration {
	want := c.CalibrationArm()
	for _, role := range []string{want.Role, ""} {
		for i := range cal.Arms {
			if a := &cal.Arms[i]; a.Role == role && a.sameLayout(&want) {
				return a
			}
		}
	}
	return nil
}

// apply replaces the model's step costs and pool by the arm's.
func (a *ArmCalibration) apply(capa *capacity, pageSize int) {
	if a.StepScale > 0 {
		capa.fixedStep *= a.StepScale
		capa.perSeq *= a.StepScale
		capa.perCtxToken *= a.StepScale
		capa.perPrefill *= a.StepScale
	}
	if a.PoolTokens > 0 {
		capa.poolTokens = max(a.PoolTokens/pageSize*pageSize, 4*pageSize)
	}
}

// ErrTooFewPoints is returned by FitStepScale when no point can be fitted.
var ErrTooFewPoints = errors.New("no point left to fit")

// FitStepScale fits the scale of the model's step costs for cfg to the
// points: the median over the points of the scale at which the model's
// time between two of a request's tokens (a decode step of the requests
// decoding beside it over their contexts, stretched by the share of time
// the other requests' prefills take) equals the measured one (the
// token-weighted mean gap × AL, FitPoint.Gap; the median ITL × AL where
// the result has no means to read it from). It fills every point's fitted
// step and error.
func FitStepScale(cfg Config, points []FitPoint) (scale, rmsPct float64, err error) {
	capa := newCapacity(cfg)
	// The modelled step between two of a request's tokens: a decode step
	// stretched by the share of time prefills take (scaled with the step
	// costs, so the share is solved for the scale in the fit below). With
	// DP attention a step is a rank's: its share of the requests and of
	// their context (the capacity's per-sequence cost already waits for
	// every rank's experts); it read the whole engine's, which put a
	// simulated DP-attention arm's scale at 0.59.
	//
	// The measured gap is a mean over every gap a request sees, weighted
	// by tokens, so the model is one too: the decode step of the batch a
	// request is decoding in, and the prefills of the other requests that
	// run while it decodes. The point's conc clients (sessions) spread
	// over the ranks, each decoding and prefilling a 1/conc share of the
	// time, so beside a request run 1 - 1/conc of the others' decoding
	// requests and of their prefills (on average over the ranks a
	// session-keyed router sends them to; one rank: exactly). The median
	// ITL it read before saw few of the gaps a prefill stretches when a
	// rank runs a few requests (on the simulated B300 DeepSeek-V4 TP4/EP4
	// DP-attention arm at c8, 31.8 ms for a 40.8 ms mean gap), and
	// counting the others as 1 - 1/(requests in flight per rank) put the
	// prefills' share there at a third of theirs.
	ranks := float64(max(capa.ranks, 1))
	perRank := func(p FitPoint) float64 { return max(p.Running/ranks, 1) }
	others := func(p FitPoint) float64 {
		if p.Conc > 0 {
			return 1 - 1/float64(p.Conc)
		}
		return 1 - 1/max(p.Running, 1)
	}
	// SGLang runs a prefill batch on its own, the decoding requests
	// waiting; vLLM mixes the prefill chunks into the decode steps.
	prefillStalls := cfg.Engine != configs.VLLM
	prefillShare := func(p FitPoint) float64 {
		if p.PrefillPerSecond <= 0 || p.PrefillTokens <= 0 {
			return 0
		}
		// A request's prefill at its computed tokens, and the context
		// they attend to: the records' (the mean of a cost that grows
		// with tokens × context), else the means'.
		before := p.PrefillContext
		if p.PrefillMidContext > 0 {
			before = max(p.PrefillMidContext-p.PrefillTokens/2, 0)
		}
		return p.PrefillPerSecond / p.PrefillTokens * capa.prefillTime(int(p.PrefillTokens), int(before)) / ranks
	}
	// batch is the decode step's batch a request decodes in at scale s:
	// itself and the others' share of the requests decoding. Where
	// prefills stall the decode steps, the requests decoding (counted
	// from their first token to their last) include the ones waiting
	// through a prefill, a share s·q·others of their time, while the
	// decode steps take 1 - s·q of the rank's (q the prefills' share at
	// scale 1): a decode step runs (1 - s·q·others) / (1 - s·q) of them.
	// Taking the requests decoding as the batch put the simulated SGLang
	// arms' scales 1-2 % high (their decode steps' batch 2-5 % low), the
	// requests in flight put the vLLM arm's 2 % low.
	batch := func(p FitPoint, s float64) float64 {
		if p.Decoding <= 0 {
			return perRank(p)
		}
		decoding := p.Decoding / ranks
		if prefillStalls {
			sq := s * prefillShare(p)
			decoding *= (1 - sq*others(p)) / (1 - sq)
		}
		return 1 + others(p)*decoding
	}
	model := func(p FitPoint, s float64) float64 {
		n := batch(p, s)
		return s * capa.meanDecodeTime(n, n*p.CtxTokens/p.Running) / (1 - s*others(p)*prefillShare(p))
	}
	// The model holds while the prefills take less than all of a rank's
	// time (and grows without bound towards it).
	maxScale := func(p FitPoint) float64 {
		q := prefillShare(p)
		if !prefillStalls {
			q *= others(p)
		}
		if q <= 0 {
			return maxStepScale
		}
		return min(maxStepScale, (1-1e-9)/q)
	}
	var use []int
	for i, p := range points {
		if p.ITL > 0 && p.AL > 0 && p.Running > 0 {
			use = append(use, i)
		}
	}
	if len(use) == 0 {
		return 0, 0, ErrTooFewPoints
	}
	slices.SortFunc(use, func(a, b int) int { return points[a].Conc - points[b].Conc })
	ratios := make([]float64, 0, len(use))
	for _, i := range use {
		// The scale at which the model meets the measured step: the
		// model grows with the scale, so bisect (on its logarithm,
		// within the bounds a calibration may set).
		p := points[i]
		m := p.measuredStep()
		lo, hi := math.Log(minStepScale), math.Log(maxScale(p))
		for range 60 {
			mid := (lo + hi) / 2
			if model(p, math.Exp(mid)) < m {
				lo = mid
			} else {
				hi = mid
			}
		}
		ratios = append(ratios, math.Exp((lo+hi)/2))
	}
	slices.Sort(ratios)
	scale = ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		scale = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	var sq float64
	for _, i := range use {
		p := &points[i]
		p.MeasuredStep = p.measuredStep()
		p.FittedStep = model(*p, min(scale, maxScale(*p)))
		p.ErrorPct = 100 * (p.FittedStep - p.MeasuredStep) / p.MeasuredStep
		sq += p.ErrorPct * p.ErrorPct
	}
	return scale, math.Sqrt(sq / float64(len(use))), nil
}

// FitPrefillScale fits the scale of the model's prefill cost for cfg, a
// disaggregated prefill worker's configuration, to the points: the
// median over the points of the measured forward time per request
// (FitPoint.PrefillSeconds) over the model's for the mean request, one
// prefill batch of PrefillTokens computed tokens after PrefillContext
// cached ones (prefillTime at scale 1). The model is linear in the scale.
// It counts a batch's fixed cost per request (a batch that prefills
// several requests pays it once) and attends every request's tokens to
// the mean cached context (a session's first turn, which computes the
// most after the least, makes that an overstatement); the host tier's
// loads, which the worker's forward time includes, are not told apart
// (SGLang exports no count of its host hits). It fills every point's
// measured and fitted prefill time and error.
func FitPrefillScale(cfg Config, points []FitPoint) (scale, rmsPct float64, err error) {
	capa := newCapacity(cfg)
	model := func(p FitPoint) float64 {
		return capa.prefillTime(max(int(math.Round(p.PrefillTokens)), 1), int(p.PrefillContext))
	}
	var ratios []float64
	var use []int
	for i, p := range points {
		if p.PrefillSeconds > 0 && p.PrefillTokens > 0 {
			use = append(use, i)
			ratios = append(ratios, p.PrefillSeconds/model(p))
		}
	}
	if len(use) == 0 {
		return 0, 0, ErrTooFewPoints
	}
	slices.Sort(ratios)
	scale = ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		scale = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	scale = min(max(scale, minStepScale), maxStepScale)
	var sq float64
	for _, i := range use {
		p := &points[i]
		p.MeasuredStep = p.PrefillSeconds
		p.FittedStep = scale * model(*p)
		p.ErrorPct = 100 * (p.FittedStep - p.MeasuredStep) / p.MeasuredStep
		sq += p.ErrorPct * p.ErrorPct
	}
	return scale, math.Sqrt(sq / float64(len(use))), nil
}

// measuredStep is the time between two of a request's decode steps the
// point measured: its mean gap between tokens × AL, else (no means to
// read the gap from) its median ITL × AL.
func (p *FitPoint) measuredStep() float64 {
	if p.Gap > 0 {
		return p.Gap * p.AL
	}
	return p.ITL * p.AL
}

// Config is the simulator configuration of the arm as far as its results
// say (sweep/simfit fits its step scale with it): the pool is theirs, speculative decoding (spec "none" or empty:
// off) drafts 3 tokens at the measured acceptance length.
func (a *ArmCalibration) Config(spec string, al float64) (Config, error) {
	c := Config{Engine: a.Engine, ModelPath: a.Model, GPU: a.GPU, TP: a.TP, EP: a.EP, DPAttention: a.DPAttention, MaxTotalTokens: a.PoolTokens, KVCacheDType: a.KVCacheDType}
	if a.DPAttention {
		c.DP = a.TP
	}
	if result.Speculative(spec) {
		c.Spec = Spec{Algorithm: "EAGLE", NumSteps: 3, TopK: 1, NumDraftTokens: 4, AcceptLength: min(max(al, 1), 4)}
	}
	return c.Normalize()
}

// WriteFits writes each arm's fit: its step scale, pool and error, then a
// table of the measured and the fitted decode step per concurrency.
func (c *Calibration) WriteFits(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range c.Arms {
		pool := "the model's pool (the results report none)"
		if a.PoolTokens > 0 {
			pool = fmt.Sprintf("pool %d tokens per rank", a.PoolTokens)
		}
		fmt.Fprintf(tw, "%s: step scale %.3f, %s, rms error %.1f%%\n", a.Label(), a.StepScale, pool, a.RMSErrorPct)
		if a.Basis != "" {
			fmt.Fprintf(tw, "  the model's configuration: %s\n", a.Basis)
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
		for _, l := range a.LeftOut {
			fmt.Fprintf(tw, "  left out: %s\n", l)
		}
	}
	return tw.Flush()
}
