package recipes

import (
	"fmt"
	"slices"

	"sweep/configs"
	"sweep/configs/matrix"
)

// Recipe is the typed form of one InferenceX single-node recipe script: what
// it starts for a matrix row. A Recipe is a plain value; the functions in it
// are small sizing rules of the row (Ctx). Every flag it produces is built
// through the schema of EngineVersion, so planning rejects a flag the engine
// does not have.
type Recipe struct {
	// Name is the InferenceX script stem the recipe replaces, e.g.
	// "qwen3.5_fp8_mi325x_mtp" for benchmarks/single_node/agentic/
	// qwen3.5_fp8_mi325x_mtp.sh. Lookup routes rows to it by this name,
	// following the launchers' naming rules.
	Name string
	// Keys lists the master config keys the recipe is known to serve (the
	// ones it was checked against). Rows of other keys that route to the
	// same script name are served too, as in InferenceX.
	Keys []string
	// Engine and EngineVersion pick the flag schema (recipes/schema).
	Engine        configs.Engine
	EngineVersion string
	// CommandFile is the file InferenceX records the engine argv in
	// (sglang_command.txt, vllm_command.txt, server_command.txt).
	CommandFile string
	// ModelPath, when set, is what the engine loads when the launcher sets
	// no MODEL_PATH (e.g. a snapshot in the HF cache); it may hold run-time
	// placeholders (${NAME}). Nil loads the model id.
	ModelPath func(*Ctx) string
	// CopyHIPDevices copies ROCR_VISIBLE_DEVICES to HIP_VISIBLE_DEVICES at
	// run time when it is set (every AMD recipe but one does).
	CopyHIPDevices bool
	// Env is exported before the engine starts, in addition to the
	// workflow, launcher and library environment (Plan adds those).
	Env []EnvVar
	// Parallel maps TP/EP/DP attention to engine flags (shared per engine).
	Parallel Parallel
	// Spec is the speculative decoding setup; its zero value means none.
	Spec Speculation
	// SpecFor, when set, replaces Spec for a row (a recipe that drafts
	// more tokens at low concurrency and none at high); a zero value means
	// no speculation for that row.
	SpecFor func(*matrix.Row) Speculation
	// Args are the engine flags in the order InferenceX passes them. The
	// groups ParallelArgs, SpecArgs and OffloadArgs expand the shared
	// behaviour at their position.
	Args []Arg
	// Offload lists the KV offload backends the recipe accepts when the
	// row's kv-offloading is dram; any other backend is a plan error.
	Offload []Offload
	// Client configures the aiperf replay command built by the shared
	// driver (and the eval command for eval-only rows).
	Client Client
	// Check, when set, rejects rows the recipe cannot run (e.g. a TP the
	// script refuses); the error becomes a plan problem.
	Check func(*Ctx) error
	// ArmServer, when not empty, declares that one engine planned for an
	// arm's largest concurrency serves every smaller concurrency of the arm
	// as its own would, and says why (what each concurrency-dependent
	// engine flag does). Empty means a recipe whose engine flags depend on
	// conc restarts its engine for every point of a sweep.
	ArmServer string
}

// Ctx is what a recipe's sizing rules see: the row and the values derived
// from it and from the plan options.
type Ctx struct {
	Row *matrix.Row
	// Parallelism is the row's layout, EP at least 1.
	configs.Parallelism
	// Conc is the row's concurrency.
	Conc int
	// EvalOnly is true for eval-only rows (real acceptance, lm-eval client).
	EvalOnly bool
	// Port is the point's public port (the router's with DP attention) and
	// EnginePort the engine's (Port+1 with DP attention).
	Port, EnginePort int
	// Model is the model id (also the served model name); ModelPath is
	// what the engine loads.
	Model, ModelPath string
	// ResultDir is the point's result directory (RESULT_DIR).
	ResultDir string
	// GoldenAL is the recipe's golden acceptance length (0 without
	// speculative decoding).
	GoldenAL float64
}

// Offloaded reports whether the row asks for KV offload to CPU DRAM.
func (c *Ctx) Offloaded() bool { return c.Row.KVOffloading != "" && c.Row.KVOffloading != "none" }

// Backend is the row's KV offload backend name ("" when none).
func (c *Ctx) Backend() string {
	if c.Row.KVOffloadBackend == nil {
		return ""
	}
	return c.Row.KVOffloadBackend.Name
}

// TotalCPUDRAMGB is the row's total-cpu-dram-gb (the offload budget).
func (c *Ctx) TotalCPUDRAMGB() int { return c.Row.TotalCPUDRAMGB }

// Arg is one engine or client flag of a recipe: a name and a value that may
// depend on the row, optionally conditional. A nil Value is a bare boolean
// flag. A group Arg (Expand set) stands for several flags computed by
// shared code at its position.
type Arg struct {
	Name   string
	Value  func(*Ctx) any
	When   func(*Ctx) bool
	Expand func(*Ctx, *Recipe) ([]Arg, error)
	// EscapeReason, when set, is why the flag may be passed without a schema
	// check: if the engine's schema does not know the flag, it goes through
	// the builder's escape hatch with this reason (and the plan lists it);
	// once the schema has it, the typed setter checks it as usual.
	EscapeReason string
}

// Flag is a flag with a constant value: string, int, float64, bool (false
// renders the flag's explicit false form, e.g. vLLM --no-x) or, for JSON
// flags, any JSON-encodable value. Flag(name, nil) is a bare boolean flag.
func Flag(name string, v any) Arg {
	if v == nil {
		return Arg{Name: name}
	}
	return Arg{Name: name, Value: func(*Ctx) any { return v }}
}

// FlagFn is a flag whose value is a function of the row.
func FlagFn[T any](name string, fn func(*Ctx) T) Arg {
	return Arg{Name: name, Value: func(c *Ctx) any { return fn(c) }}
}

// Unverified marks a flag the engine has but its schema may lack yet.
func (a Arg) Unverified(reason string) Arg {
	a.EscapeReason = reason
	return a
}

// If makes the flag conditional.
func (a Arg) If(cond func(*Ctx) bool) Arg {
	prev := a.When
	a.When = func(c *Ctx) bool { return (prev == nil || prev(c)) && cond(c) }
	return a
}

// ArgGroup is a named run of flags that several recipes pass in the same
// order; it expands at its position like ParallelArgs (When on the group
// or on a member still applies), to exactly the flags it names in order,
// so a recipe's argv is the same as with the flags written out. A group
// may hold other groups (SpecArgs, OffloadArgs).
func ArgGroup(name string, args ...Arg) Arg {
	return Arg{Name: "<" + name + ">", Expand: func(*Ctx, *Recipe) ([]Arg, error) { return args, nil }}
}

// EnvVar is one exported environment variable of a recipe.
type EnvVar struct {
	Name  string
	Value func(*Ctx) string
	When  func(*Ctx) bool
	// AfterStart marks a variable the recipe exports only after the engine
	// is ready (so only the client sees it).
	AfterStart bool
}

// Env is a variable with a constant value.
func Env(name, value string) EnvVar {
	return EnvVar{Name: name, Value: func(*Ctx) string { return value }}
}

// EnvFn is a variable whose value is a function of the row.
func EnvFn(name string, fn func(*Ctx) string) EnvVar { return EnvVar{Name: name, Value: fn} }

// If makes the variable conditional.
func (e EnvVar) If(cond func(*Ctx) bool) EnvVar {
	prev := e.When
	e.When = func(c *Ctx) bool { return (prev == nil || prev(c)) && cond(c) }
	return e
}

// Client configures the shared aiperf replay command for a recipe.
type Client struct {
	// Loader overrides the default trace loader (InferenceX
	// WEKA_LOADER_OVERRIDE); "" picks the default by model prefix.
	Loader string
	// ApplyChatTemplate appends --apply-chat-template.
	ApplyChatTemplate bool
	// ServerMetrics passes the engine's /metrics to --server-metrics.
	ServerMetrics bool
	// MetricsURLEnv says InferenceX passes that URL through
	// AIPERF_SERVER_METRICS_URLS (exported for every process) rather than by
	// appending the flag; the argv is the same either way.
	MetricsURLEnv bool
	// RequiredMetricPrefix ("sglang:", "vllm:") must appear in the exported
	// server metrics for the point to count; "" means no check.
	RequiredMetricPrefix string
	// MetricsEnvAfterStart exports the two metrics variables only after the
	// engine started (qwen3.5 mi300x), so the engine does not see them.
	MetricsEnvAfterStart bool
	// BenchmarkGracePeriod, when > 0, appends --benchmark-grace-period.
	BenchmarkGracePeriod int
	// WarmupGracePeriod overrides --warmup-grace-period (InferenceX
	// AGENTIC_WARMUP_GRACE_PERIOD); nil or 0 keeps 1800.
	WarmupGracePeriod func(*Ctx) int
	// Extra flags appended to the replay command.
	Extra []Arg
}

// Clone returns a copy of r whose slices can be changed without touching r.
func (r *Recipe) Clone() *Recipe {
	c := *r
	c.Keys = slices.Clone(r.Keys)
	c.Env = slices.Clone(r.Env)
	c.Args = slices.Clone(r.Args)
	c.Offload = slices.Clone(r.Offload)
	c.Parallel.DPAttnArgs = slices.Clone(r.Parallel.DPAttnArgs)
	c.Client.Extra = slices.Clone(r.Client.Extra)
	if r.Spec.VLLM != nil {
		v := *r.Spec.VLLM
		c.Spec.VLLM = &v
	}
	return &c
}

// RequireTP is a Check that accepts only the given TP sizes.
func RequireTP(sizes ...int) func(*Ctx) error {
	return func(c *Ctx) error {
		if slices.Contains(sizes, c.TP) {
			return nil
		}
		return fmt.Errorf("tp %d: the recipe runs only tp %v", c.TP, sizes)
	}
}

// Sizing rules shared by several recipes.

// TwiceConc is 2×conc: AgentX concurrency counts session trees and
// subagents fan out, so the engine admits twice as many requests.
func TwiceConc(c *Ctx) int { return 2 * c.Conc }

// ConcCapped returns min(conc, limit).
func ConcCapped(limit int) func(*Ctx) int { return func(c *Ctx) int { return min(c.Conc, limit) } }

// TwiceConcCapped returns min(2×conc, limit).
func TwiceConcCapped(limit int) func(*Ctx) int {
	return func(c *Ctx) int { return min(2*c.Conc, limit) }
}

// TPAtLeast is a condition on the row's TP.
func TPAtLeast(n int) func(*Ctx) bool { return func(c *Ctx) bool { return c.TP >= n } }

// DPAttention is true for rows with dp-attn.
func DPAttention(c *Ctx) bool { return c.DPAttn }

// NoDPAttention is true for rows without dp-attn.
func NoDPAttention(c *Ctx) bool { return !c.DPAttn }

// Offloaded is true for rows with KV offload to DRAM.
func Offloaded(c *Ctx) bool { return c.Offloaded() }

// EPRule says how a recipe passes the row's expert-parallel size.
type EPRule uint8

// Expert-parallel rules.
const (
	// EPAlways passes the size every time (SGLang --ep-size E, also E=1).
	// For vLLM it means --enable-expert-parallel whenever EP > 1.
	EPAlways EPRule = iota
	// EPAboveOne passes it only when EP > 1 (DSv4 SGLang).
	EPAboveOne
	// EPIgnored never passes it (the recipe has no EP handling).
	EPIgnored
)

// Parallel maps a row's TP / EP / DP attention to engine flags. The mapping
// itself is shared per engine (ParallelArgs):
//
//	SGLang  TP: --tp-size T [--dp-size 1] --ep-size 1     TEP: ... --ep-size T
//	        DEP (dp-attn): --tp-size T --dp-size T --enable-dp-attention, engine on PORT+1
//	        behind sglang_router on PORT
//	vLLM    TP: --tensor-parallel-size T [--data-parallel-size 1]
//	        EP > 1: --enable-expert-parallel
//	        DEP (dp-attn): --tensor-parallel-size 1 --data-parallel-size T, engine on
//	        PORT+1 behind vllm-router on PORT
type Parallel struct {
	// DataParallelOne passes an explicit data-parallel size of 1 on rows
	// without DP attention (--dp 1 / --data-parallel-size 1).
	DataParallelOne bool
	EP              EPRule
	// DPAttention says the recipe has a DP-attention path; rows with
	// dp-attn are a plan error otherwise.
	DPAttention bool
	// DPAttnArgs are extra engine flags on DP-attention rows.
	DPAttnArgs []Arg
}

// Speculation is a recipe's speculative decoding setup. The zero value means
// none.
type Speculation struct {
	// Algorithm, Steps, TopK and DraftTokens are SGLang's
	// --speculative-algorithm (EAGLE, NEXTN), --speculative-num-steps,
	// --speculative-eagle-topk and --speculative-num-draft-tokens.
	Algorithm                string
	Steps, TopK, DraftTokens int
	// VLLM is vLLM's --speculative-config without the synthetic-acceptance
	// keys, which SpecArgs adds on benchmark rows.
	VLLM *VLLMSpecConfig
	// EvalRejectionSampleMethod replaces the synthetic rejection sampler on
	// eval-only rows ("block" for Kimi K3); "" drops the key.
	EvalRejectionSampleMethod string
	// DraftModel, when set, replaces VLLM.Model with a row-dependent path
	// (a draft head staged next to the target's weights).
	DraftModel func(*Ctx) string
	// Golden says where the golden acceptance length is looked up.
	Golden GoldenRef
}

// GoldenRef addresses one golden AL curve: file (without .yaml), model key
// and thinking mode. The number of speculative tokens comes from the
// speculation settings.
type GoldenRef struct {
	File, Model, Thinking string
}

// Offload is one KV offload backend a recipe accepts on rows with
// kv-offloading dram. Its settings are sized from the row's
// total-cpu-dram-gb, the CPU DRAM budget the matrix generator computed.
type Offload struct {
	// Backend is the kv-offload-backend name (hicache, vllm-simple, lmcache).
	Backend string
	// Args returns the engine flags for the row.
	Args func(*Ctx) ([]Arg, error)
	// Sidecars returns processes that must be ready before the engine
	// starts (LMCache servers); nil for none.
	Sidecars func(*Ctx) []Sidecar
	// Env is exported before the engine starts on offload rows.
	Env []EnvVar
}
