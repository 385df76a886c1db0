package configs

import "fmt"

// Pos is where a value starts in its source file (1-based line and column).
type Pos struct {
	File string
	Line int
	Col  int
}

// String formats the position as file:line:col.
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Masters is the merged content of one or more master config files
// (configs/amd-master.yaml, configs/nvidia-master.yaml).
//
// Entries keeps the entries in file order, files in the order they were
// given to LoadMasters; Lookup finds an entry by key. A Masters returned by a
// loader is read-only and safe for concurrent use.
type Masters struct {
	Files   []string  // the files loaded, in order
	Entries []*Master // every entry, in file order across Files
	byKey   map[string]*Master
	// broken holds the keys of entries left out for their problems (only
	// in the partial Masters Validate works on), so changelog keys naming
	// them are not reported as undefined.
	broken map[string]bool
}

// Lookup returns the entry named key.
func (m *Masters) Lookup(key string) (*Master, bool) {
	e, ok := m.byKey[key]
	return e, ok
}

// Keys returns every entry key in file order.
func (m *Masters) Keys() []string {
	keys := make([]string, len(m.Entries))
	for i, e := range m.Entries {
		keys[i] = e.Key
	}
	return keys
}

// Scenario type names as written in master configs and the changelog.
const (
	ScenarioFixedSeqLen   = "fixed-seq-len"
	ScenarioAgenticCoding = "agentic-coding"
)

// Spec-decoding modes (spec-decoding).
const (
	SpecMTP        = "mtp"
	SpecDraftModel = "draft_model"
	SpecNone       = "none"
)

// KV offloading modes (kv-offloading).
const (
	KVOffloadNone = "none"
	KVOffloadDRAM = "dram"
)

// KVOffloadModes are the kv-offloading values a search space may give
// (and sweep run's --kv-offloading picks among).
func KVOffloadModes() []string { return []string{KVOffloadNone, KVOffloadDRAM} }

// ClusterPrefix starts every runner label that names one exact hardware
// fleet; agentic configs must use such a label.
const ClusterPrefix = "cluster:"

// Master is one top-level entry of a master config file. Optional values
// are pointers (or nil slices) so that "absent" stays distinguishable from
// "given with the default value": the generator's output depends on it.
type Master struct {
	Key  string // the entry's key, e.g. qwen3.5-fp8-mi325x-sglang-agentic-mtp
	Pos  Pos    // position of the key
	File string // file the entry came from (same as Pos.File)

	Image       string
	Model       string
	ModelPrefix string // model-prefix
	Runner      string // runner label, e.g. mi325x or cluster:mi325x-amds
	RunnerPos   Pos    // position of the runner value
	Precision   string
	Framework   Engine // the framework key, any name (Engine.Facts)
	Multinode   bool
	// Disagg is nil when the key is absent (InferenceX then uses false);
	// DisaggPos is the position of its key.
	Disagg    *bool
	DisaggPos Pos
	// Router is nil when absent at the top level; RouterPos is its position.
	Router    *Component
	RouterPos Pos
	// KVP2PTransfer (kv-p2p-transfer) is nil when absent at the top level;
	// only multinode entries may set it.
	KVP2PTransfer *string
	Scenarios     Scenarios
}

// DisaggValue returns disagg with InferenceX's default (false).
func (m *Master) DisaggValue() bool { return m.Disagg != nil && *m.Disagg }

// Scenarios holds the scenario lists of a master entry. A nil slice means
// the scenario key is absent; at least one of them is non-empty in a valid
// entry.
type Scenarios struct {
	Pos           Pos
	FixedSeqLen   []*SeqLenConfig  // fixed-seq-len
	AgenticCoding []*AgenticConfig // agentic-coding
}

// SeqLenConfig is one fixed-seq-len item: an input/output length pair and
// its search space.
type SeqLenConfig struct {
	Pos         Pos
	ISL         int
	OSL         int
	SearchSpace []*SearchSpace // search-space
}

// AgenticConfig is one agentic-coding item.
type AgenticConfig struct {
	Pos Pos
	// DRAMUtilization (dram-utilization) is in (0, 1]; nil when absent.
	// kv-offloading: dram in any of the items' entries requires it.
	DRAMUtilization *float64
	SearchSpace     []*SearchSpace // search-space
}

// SearchSpace is one search-space entry. Single-node entries set TP;
// multinode entries set Prefill and Decode instead. Pointer fields are nil
// when the key is absent; use the XxxValue methods for InferenceX's
// defaults.
type SearchSpace struct {
	Pos Pos

	TP      *int // nil in multinode entries
	PP      *int // default 1
	DCPSize *int // dcp-size, default 1
	PCPSize *int // pcp-size, default 1
	EP      *int
	DPAttn  *bool // dp-attn
	// SpecDecoding (spec-decoding) is one of SpecMTP, SpecDraftModel,
	// SpecNone; nil when absent (default SpecNone).
	SpecDecoding *string

	// ConcList is nil when conc-list is absent, otherwise the values as
	// written. Exactly one of ConcList and ConcStart/ConcEnd is given.
	ConcList  []int
	ConcStart *int // conc-start
	ConcEnd   *int // conc-end

	// KVOffloading (kv-offloading, agentic only) is KVOffloadNone or
	// KVOffloadDRAM; nil when absent.
	KVOffloading     *string
	KVOffloadingPos  Pos      // position of the kv-offloading key
	KVOffloadBackend *Backend // kv-offload-backend, required iff dram

	Router        *Component // per-entry router (XOR top level)
	RouterPos     Pos        // position of the per-entry router
	KVP2PTransfer *string    // kv-p2p-transfer, multinode only (XOR top level)

	Prefill    *Worker // multinode only
	PrefillPos Pos     // position of the prefill key
	Decode     *Worker // multinode only
}

// IsMultinode reports whether the entry describes prefill/decode workers.
func (s *SearchSpace) IsMultinode() bool { return s.Prefill != nil || s.Decode != nil }

// PPValue returns pp, default 1.
func (s *SearchSpace) PPValue() int { return intOr(s.PP, 1) }

// DCPSizeValue returns dcp-size, default 1.
func (s *SearchSpace) DCPSizeValue() int { return intOr(s.DCPSize, 1) }

// PCPSizeValue returns pcp-size, default 1.
func (s *SearchSpace) PCPSizeValue() int { return intOr(s.PCPSize, 1) }

// SpecDecodingValue returns spec-decoding, default "none".
func (s *SearchSpace) SpecDecodingValue() string { return strOr(s.SpecDecoding, SpecNone) }

// KVOffloadingValue returns kv-offloading, default "none".
func (s *SearchSpace) KVOffloadingValue() string { return strOr(s.KVOffloading, KVOffloadNone) }

// Worker is a prefill or decode worker block of a multinode entry.
type Worker struct {
	Pos       Pos
	NumWorker int // num-worker
	TP        int
	PP        *int // default 1
	DCPSize   *int // dcp-size, default 1
	PCPSize   *int // pcp-size, default 1
	EP        int
	DPAttn    bool    // dp-attn
	Hardware  *string // nil when absent; prefill and decode set it together
	// AdditionalSettings (additional-settings, "KEY=VALUE" strings) is nil
	// when the key is absent and non-nil (possibly empty) when given.
	AdditionalSettings []string
	// Keys lists the worker's keys in file order; the generator copies a
	// worker block key by key.
	Keys []string
}

// PPValue returns pp, default 1.
func (w *Worker) PPValue() int { return intOr(w.PP, 1) }

// DCPSizeValue returns dcp-size, default 1.
func (w *Worker) DCPSizeValue() int { return intOr(w.DCPSize, 1) }

// PCPSizeValue returns pcp-size, default 1.
func (w *Worker) PCPSizeValue() int { return intOr(w.PCPSize, 1) }

// Component names an optional runtime component (router, KV offload
// backend in a result) and its version: a master config's router, a matrix
// row's router and a result's router/kv_offload_backend metadata are this
// one value. The JSON tags are the result file's spelling (version omitted
// when empty); the matrix writes its own JSON.
type Component struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Backend is a KV offload backend; Version is nil when absent.
type Backend struct {
	Pos     Pos
	Name    string
	Version *string
}

// Runners is the content of configs/runners.yaml.
type Runners struct {
	File string
	// Labels maps a runner label to its concrete runner names, in file order.
	Labels map[string][]string
	// LabelOrder lists the labels in file order.
	LabelOrder []string
	// Hardware maps a runner label to its hardware facts.
	Hardware map[string]Hardware
	// HardwareOrder lists the hardware labels in file order.
	HardwareOrder []string
	// LabelPos and HardwarePos give the position of each label key.
	LabelPos    map[string]Pos
	HardwarePos map[string]Pos
}

// Hardware holds the facts about one runner label's machines.
type Hardware struct {
	AvailableCPUDRAMMiB int64 // available-cpu-dram-mib
	GPUsPerNode         int   // gpus-per-node
}

// ChangelogEntry is one entry of perf-changelog.yaml.
type ChangelogEntry struct {
	Pos          Pos
	ConfigKeys   []string // config-keys: exact keys or '*' globs, at least one
	ScenarioType []string // scenario-type: nil when absent
	Description  []string // at least one line
	PRLink       string   // pr-link
	EvalsOnly    bool     // evals-only
	AllEvals     bool     // all-evals
	AppendOnly   bool     // append-only
	// EvalMinPrefillEP (eval-min-prefill-ep, >= 1) is nil when absent.
	EvalMinPrefillEP *int
	// Keys lists the entry's keys in file order.
	Keys []string
	// ConfigKeyPos gives the position of each ConfigKeys item.
	ConfigKeyPos []Pos
	// PRLinkPos is the position of the pr-link value.
	PRLinkPos Pos
	// Index is the entry's 1-based number in its file.
	Index int
}

func intOr(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

func strOr(p *string, d string) string {
	if p == nil {
		return d
	}
	return *p
}
