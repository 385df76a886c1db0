package matrix

import (
	"sweep/configs"
)

// Kind says which of InferenceX's four matrix row shapes a Row has. The
// shape decides which fields exist in the row's JSON.
type Kind uint8

// Row shapes, one per InferenceX matrix entry model.
const (
	// FixedSingleNode is a fixed-seq-len point on one node (top-level tp).
	FixedSingleNode Kind = iota
	// FixedMultiNode is a fixed-seq-len prefill/decode point; Concs holds
	// every concurrency the allocation runs in sequence.
	FixedMultiNode
	// AgenticSingleNode is an agentic-coding trace-replay point on one node.
	AgenticSingleNode
	// AgenticMultiNode is an agentic-coding prefill/decode point.
	AgenticMultiNode
)

// String returns a short name for the kind.
func (k Kind) String() string {
	switch k {
	case FixedSingleNode:
		return "fixed-seq-len single-node"
	case FixedMultiNode:
		return "fixed-seq-len multi-node"
	case AgenticSingleNode:
		return "agentic-coding single-node"
	case AgenticMultiNode:
		return "agentic-coding multi-node"
	}
	return "unknown"
}

// Agentic reports whether the kind is an agentic-coding shape.
func (k Kind) Agentic() bool { return k == AgenticSingleNode || k == AgenticMultiNode }

// MultiNode reports whether the kind has prefill/decode workers.
func (k Kind) MultiNode() bool { return k == FixedMultiNode || k == AgenticMultiNode }

// DefaultAgenticDuration is the duration, in seconds, of every agentic row.
const DefaultAgenticDuration = 3600

// Row is one point of the benchmark matrix, the typed form of one entry of
// InferenceX's generate_sweep_configs.py output.
//
// Which fields are meaningful depends on Kind:
//
//	field                      FixedSingle FixedMulti AgenticSingle AgenticMulti
//	ISL, OSL, MaxModelLen      yes         yes        -             -
//	TP, PP, DCPSize, PCPSize,
//	EP, DPAttn, Conc           yes         -          yes           yes*
//	Prefill, Decode, Concs     -           yes        -             yes
//	KVOffloading, TotalCPUDRAMGB,
//	Duration                   -           -          yes           yes
//	Disagg                     yes         yes        -             yes
//
// (*) AgenticMulti uses Concs, not Conc or the single-node parallelism.
//
// The pointer fields are nil when the key is absent from InferenceX's row,
// which is not the same as false: RunEval, for example, is always present
// on fixed-seq-len rows and only present on agentic rows once eval
// selection ran. MarshalJSON writes the row exactly as the Python generator
// prints it (same keys, same order, same values); see also
// Matrix.MarshalJSON and Changelog.MarshalJSON.
//
// Rows generated from one search-space entry share their Prefill, Decode,
// Router and KVOffloadBackend values (as the Python rows share those
// dicts): treat rows as read-only, or Clone a row before changing it.
//
// A new field (a new key of InferenceX's rows) is added in these places,
// all in this package:
//
//  1. here, and in Clone when it is a pointer or a slice;
//  2. a field constant and its rowFields entry (matrix_json.go): JSON
//     key, the kinds that have it, whether it is optional, pydantic's
//     default, and the Go field. The three JSON styles, the fingerprint,
//     the grouping keys (curve, trim-conc, parallelism) and UnmarshalJSON
//     all read this table;
//  3. its position in pythonOrder and pydanticOrder, per kind (the
//     generator's insertion order and the output models' field order);
//  4. the expansion that fills it (expander.fixed or expander.agentic in
//     matrix.go);
//  5. only when a comparison leaves it out: fingerprintSkip, trimSkip or
//     parallelismSkip;
//  6. only for a new Go type: appendValue, isSet and decodeValue.
//
// A new key of a Worker block is a workerKey constant and its
// workerFields entry, in WorkerConfig's field order.
type Row struct {
	Kind Kind
	// ConfigKey is the master config key the row was generated from. It is
	// not part of InferenceX's row: MarshalJSON leaves it out unless asked
	// (WithConfigKey), and UnmarshalJSON reads it when present.
	ConfigKey string

	Image       string
	Model       string
	ModelPrefix string // model-prefix
	Precision   string
	Framework   configs.Engine // the framework key (configs.Engine.Facts)
	// Runner is the runner label from the master config, or one concrete
	// runner name when a runner-node filter expanded the label.
	Runner       string
	SpecDecoding string // spec-decoding: mtp, draft_model or none

	ISL         int // fixed-seq-len only
	OSL         int // fixed-seq-len only
	MaxModelLen int // max-model-len = isl+osl+256, fixed-seq-len only

	// Parallelism is the engine's layout (TP, PP, DCPSize, PCPSize, EP,
	// DPAttn); TP is single-node only.
	configs.Parallelism

	Prefill *Worker // multi-node only
	Decode  *Worker // multi-node only

	Conc  int   // single-node concurrency
	Concs []int // multi-node concurrencies (JSON "conc" is a list)

	KVOffloading     string   // kv-offloading: none or dram, agentic only
	KVOffloadBackend *Backend // kv-offload-backend, nil when absent
	TotalCPUDRAMGB   int      // total-cpu-dram-gb, agentic only
	Duration         int      // seconds, agentic only

	ExpName string // exp-name
	Disagg  bool   // absent on AgenticSingleNode rows

	Router        *configs.Component // nil when absent
	KVP2PTransfer string             // kv-p2p-transfer, "" when absent (multi-node only)

	RunEval      *bool // run-eval
	EvalOnly     *bool // eval-only
	EvalConc     *int  // eval-conc, multi-node only
	EvalAllConcs *bool // eval-all-concs, fixed-seq-len multi-node only

	// RecipeFingerprint is set by changelog processing ("" when absent):
	// the sha256 of the row without conc, exp-name and itself (Fingerprint).
	RecipeFingerprint string
}

// ScenarioType returns "agentic-coding" or "fixed-seq-len". Only agentic
// rows carry it in JSON (scenario-type).
func (r *Row) ScenarioType() string {
	if r.Kind.Agentic() {
		return "agentic-coding"
	}
	return "fixed-seq-len"
}

// IsEval reports whether the row is selected for evals (run-eval true).
func (r *Row) IsEval() bool { return r.RunEval != nil && *r.RunEval }

// ConcValues returns the row's concurrencies: Concs on multi-node rows,
// Conc alone otherwise.
func (r *Row) ConcValues() []int {
	if r.Kind.MultiNode() {
		return r.Concs
	}
	return []int{r.Conc}
}

// Clone returns a deep copy of r.
func (r *Row) Clone() *Row {
	c := *r
	c.Prefill = r.Prefill.clone()
	c.Decode = r.Decode.clone()
	if r.Concs != nil {
		c.Concs = append([]int(nil), r.Concs...)
	}
	if r.KVOffloadBackend != nil {
		b := *r.KVOffloadBackend
		c.KVOffloadBackend = &b
	}
	if r.Router != nil {
		rt := *r.Router
		c.Router = &rt
	}
	c.RunEval = clonePtr(r.RunEval)
	c.EvalOnly = clonePtr(r.EvalOnly)
	c.EvalConc = clonePtr(r.EvalConc)
	c.EvalAllConcs = clonePtr(r.EvalAllConcs)
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func ptr[T any](v T) *T { return &v }

// workerKey identifies one key of a worker block. The constants are in
// the order of InferenceX's WorkerConfig model.
type workerKey uint8

const (
	wNumWorker workerKey = iota
	wTP
	wPP
	wDCPSize
	wPCPSize
	wEP
	wDPAttn
	wHardware
	wAdditionalSettings
	numWorkerKeys
)

// Worker is the prefill or decode block of a multi-node row: the master
// config's worker block with pp, dcp-size and pcp-size filled in.
type Worker struct {
	NumWorker int // num-worker
	configs.Parallelism
	// Hardware is nil when the master config leaves it out.
	Hardware *string
	// AdditionalSettings ("KEY=VALUE" strings) is nil when the master
	// config leaves the key out.
	AdditionalSettings []string
	// keys lists the worker's keys in the order the Python generator
	// prints them: the master config's order, then pp, dcp-size and
	// pcp-size when they were not written.
	keys []workerKey
}

func (w *Worker) clone() *Worker {
	if w == nil {
		return nil
	}
	c := *w
	c.Hardware = clonePtr(w.Hardware)
	if w.AdditionalSettings != nil {
		c.AdditionalSettings = append([]string{}, w.AdditionalSettings...)
	}
	// keys is never modified after construction, so it can be shared.
	return &c
}

// Backend is a KV offload backend; Version is nil when absent.
type Backend struct {
	Name    string
	Version *string
}

// Matrix is a list of rows in generator order.
type Matrix []*Row
