package matrix

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
)

// ErrInvalidOptions marks an error in the options given to the generator
// (the CLI reports it as a usage error).
var ErrInvalidOptions = errors.New("invalid options")

func optionErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOptions, fmt.Sprintf(format, args...))
}

// Generator expands master config entries into matrix rows exactly as
// InferenceX's utils/matrix_logic/generate_sweep_configs.py does. Both
// fields are required; the zero Generator is not usable. A Generator only
// reads its inputs and is safe for concurrent use.
type Generator struct {
	Masters *configs.Masters
	Runners *configs.Runners
}

// EvalOptions select eval rows, as the generator's --no-evals,
// --evals-only and --all-evals flags do. With none set, every row is
// returned and the default eval policy marks some of them run-eval.
type EvalOptions struct {
	NoEvals   bool // throughput rows only, no eval marking
	EvalsOnly bool // only rows selected for evals, marked eval-only
	AllEvals  bool // every 8k1k / agentic row becomes an eval row (implies eval-only)
}

func (o EvalOptions) check() error {
	if o.NoEvals && o.EvalsOnly {
		return optionErrorf("--no-evals and --evals-only cannot be combined")
	}
	if o.NoEvals && o.AllEvals {
		return optionErrorf("--all-evals cannot be combined with --no-evals")
	}
	return nil
}

// finishEvals applies the eval options to freshly generated rows, as the
// generator's main does after expansion.
func finishEvals(rows Matrix, o EvalOptions) Matrix {
	if o.NoEvals {
		// Fixed-seq-len rows always carry run-eval; agentic rows only
		// once eval selection ran.
		for _, r := range rows {
			if !r.Kind.Agentic() {
				r.RunEval = ptr(false)
			}
		}
	} else {
		markEvals(rows, o.EvalsOnly || o.AllEvals)
		if o.AllEvals {
			rows = markAllEvals(rows)
		}
	}
	if o.EvalsOnly || o.AllEvals {
		kept := rows[:0]
		for _, r := range rows {
			if r.IsEval() {
				r.EvalOnly = ptr(true)
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	return rows
}

// TestConfigOptions are the arguments of "generate_sweep_configs.py
// test-config": every point of the named config keys, concurrency ranges
// always doubling.
type TestConfigOptions struct {
	// ConfigKeys are master config keys or fnmatch patterns (*, ?, [seq]).
	// Each must match at least one key; the result keeps the first-seen
	// order without duplicates.
	ConfigKeys []string
	// Conc keeps only these concurrencies when non-empty.
	Conc []int
	// SeqLens keeps only these fixed-seq-len shapes ("1k1k", "8k1k").
	SeqLens []string
	// ScenarioTypes keeps only these scenarios ("fixed-seq-len",
	// "agentic-coding"); empty means both.
	ScenarioTypes []string
	// RunnerNodeFilter, when set, replaces each runner label by the label
	// itself (if it contains the filter) and its runner names that contain
	// the filter, one row per name; configs with no match are skipped.
	RunnerNodeFilter string
	EvalOptions
}

// FullSweepOptions are the arguments of "generate_sweep_configs.py
// full-sweep": every config, filtered. Nil pointers and empty lists mean
// "no filter".
type FullSweepOptions struct {
	ModelPrefixes []string // config keys starting with any of these
	Precisions    []string
	Frameworks    []string
	RunnerTypes   []string // runner labels; each must exist in runners.yaml
	SeqLens       []string // "1k1k", "8k1k"
	// StepSize multiplies the concurrency on each step of a conc-start /
	// conc-end range; 0 means the default 2, otherwise it must be > 1.
	StepSize int
	MinConc  *int
	MaxConc  *int
	MaxTP    *int // fixed-seq-len single-node entries with a larger tp are skipped
	MaxEP    *int // fixed-seq-len single-node ep above it is clamped to it
	// SingleNode and MultiNode select node types; neither means both.
	SingleNode    bool
	MultiNode     bool
	ScenarioTypes []string
	// RunnerNodeFilter expands each runner label into its runner names
	// that contain the filter; configs with no match are skipped.
	RunnerNodeFilter string
	EvalOptions
}

// seqLenShapes maps the --seq-lens names to (isl, osl).
var seqLenShapes = map[string][2]int{"1k1k": {1024, 1024}, "8k1k": {8192, 1024}}

// SeqLenName returns the short name of an input/output length pair as
// InferenceX uses it in exp-names and bucket names: "1k1k", "8k1k", or
// "<isl>_<osl>".
func SeqLenName(isl, osl int) string {
	switch {
	case isl == 1024 && osl == 1024:
		return "1k1k"
	case isl == 8192 && osl == 1024:
		return "8k1k"
	}
	return strconv.Itoa(isl) + "_" + strconv.Itoa(osl)
}

func seqLenFilter(names []string) (map[[2]int]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	f := make(map[[2]int]bool, len(names))
	for _, n := range names {
		s, ok := seqLenShapes[n]
		if !ok {
			return nil, optionErrorf("--seq-lens %q: want 1k1k or 8k1k", n)
		}
		f[s] = true
	}
	return f, nil
}

// scenarioFilter returns which scenarios to generate.
func scenarioFilter(types []string) (fixed, agentic bool, err error) {
	if len(types) == 0 {
		return true, true, nil
	}
	for _, t := range types {
		switch t {
		case configs.ScenarioFixedSeqLen:
			fixed = true
		case configs.ScenarioAgenticCoding:
			agentic = true
		default:
			return false, false, optionErrorf("--scenario-type %q: want fixed-seq-len or agentic-coding", t)
		}
	}
	return fixed, agentic, nil
}

// TestConfig expands the configs named by o.ConfigKeys.
func (g *Generator) TestConfig(o TestConfigOptions) (Matrix, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	seqLens, err := seqLenFilter(o.SeqLens)
	if err != nil {
		return nil, err
	}
	wantFixed, wantAgentic, err := scenarioFilter(o.ScenarioTypes)
	if err != nil {
		return nil, err
	}
	ms, err := ResolveKeys(g.Masters, o.ConfigKeys)
	if err != nil {
		return nil, err
	}
	x := expander{g: g, step: 2, conc: o.Conc, testConfig: true}
	var sel []selected
	for _, m := range ms {
		if runners := g.testConfigRunners(m.Runner, o.RunnerNodeFilter); len(runners) > 0 {
			sel = append(sel, selected{m, runners})
		}
	}
	return x.expand(sel, wantFixed, wantAgentic, seqLens, o.EvalOptions)
}

// selected is a config to expand with its runner values.
type selected struct {
	master  *configs.Master
	runners []string
}

// expand generates the rows of the selected configs and applies the eval
// options.
func (x *expander) expand(sel []selected, wantFixed, wantAgentic bool, seqLens map[[2]int]bool, o EvalOptions) (Matrix, error) {
	var rows Matrix
	var err error
	for _, c := range sel {
		if wantFixed {
			rows = x.fixed(rows, c.master, c.runners, seqLens)
		}
		if wantAgentic {
			if rows, err = x.agentic(rows, c.master, c.runners); err != nil {
				return nil, err
			}
		}
	}
	return finishEvals(rows, o), nil
}

// FullSweep expands every config that passes the filters in o.
func (g *Generator) FullSweep(o FullSweepOptions) (Matrix, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	step := o.StepSize
	if step == 0 {
		step = 2
	}
	if step <= 1 {
		return nil, optionErrorf("--step-size must be greater than 1, got %d", step)
	}
	if o.MinConc != nil && o.MaxConc != nil && *o.MinConc > *o.MaxConc {
		return nil, optionErrorf("--min-conc (%d) must be less than or equal to --max-conc (%d)", *o.MinConc, *o.MaxConc)
	}
	var bad []string
	for _, rt := range o.RunnerTypes {
		if _, ok := g.Runners.Labels[rt]; !ok {
			bad = append(bad, strconv.Quote(rt))
		}
	}
	if len(bad) > 0 {
		valid := slices.Clone(g.Runners.LabelOrder)
		slices.Sort(valid)
		return nil, optionErrorf("invalid runner type(s) %s; valid runner types are: %s", strings.Join(bad, ", "), strings.Join(valid, ", "))
	}
	seqLens, err := seqLenFilter(o.SeqLens)
	if err != nil {
		return nil, err
	}
	wantFixed, wantAgentic, err := scenarioFilter(o.ScenarioTypes)
	if err != nil {
		return nil, err
	}
	single, multi := o.SingleNode, o.MultiNode
	if !single && !multi {
		single, multi = true, true
	}
	x := expander{g: g, step: step, minConc: o.MinConc, maxConc: o.MaxConc, maxTP: o.MaxTP, maxEP: o.MaxEP}
	var sel []selected
	for _, m := range g.Masters.Entries {
		if len(o.ModelPrefixes) > 0 && !slices.ContainsFunc(o.ModelPrefixes, func(p string) bool { return strings.HasPrefix(m.Key, p) }) {
			continue
		}
		if len(o.Precisions) > 0 && !slices.Contains(o.Precisions, m.Precision) {
			continue
		}
		if len(o.Frameworks) > 0 && !slices.Contains(o.Frameworks, string(m.Framework)) {
			continue
		}
		if len(o.RunnerTypes) > 0 && !slices.Contains(o.RunnerTypes, m.Runner) {
			continue
		}
		runners := []string{m.Runner}
		if o.RunnerNodeFilter != "" {
			runners = nil
			for _, n := range g.Runners.Labels[m.Runner] {
				if strings.Contains(n, o.RunnerNodeFilter) {
					runners = append(runners, n)
				}
			}
			if len(runners) == 0 {
				continue
			}
		}
		if m.Multinode && !multi || !m.Multinode && !single {
			continue
		}
		sel = append(sel, selected{m, runners})
	}
	return x.expand(sel, wantFixed, wantAgentic, seqLens, o.EvalOptions)
}

// testConfigRunners returns the runner values of a test-config row: the
// label, or with a filter the label (when it contains the filter) and its
// runner names that contain the filter, without duplicates.
func (g *Generator) testConfigRunners(label, filter string) []string {
	if filter == "" {
		return []string{label}
	}
	candidates := g.Runners.Labels[label]
	if strings.Contains(label, filter) {
		candidates = append([]string{label}, candidates...)
	}
	var out []string
	for _, c := range candidates {
		if strings.Contains(c, filter) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// expander holds the per-call settings shared by the expansion functions.
type expander struct {
	g       *Generator
	step    int
	conc    []int // test-config --conc
	minConc *int  // full-sweep filters
	maxConc *int
	maxTP   *int
	maxEP   *int
	// testConfig selects test-config's concurrency rules (conc-list taken
	// whenever the key is present, --conc intersection) over full-sweep's.
	testConfig bool
	dram       map[dramInput]int // dramGB results by input
}

// concRange expands conc-start..conc-end: multiply by step each time and
// clamp the last step to end.
func concRange(start, end, step int) []int {
	var out []int
	for c := start; c <= end; {
		out = append(out, c)
		if c == end || c <= 0 {
			break
		}
		c *= step
		if c > end {
			c = end
		}
	}
	return out
}

func keepConcs(values, keep []int) []int {
	out := make([]int, 0, len(values))
	for _, c := range values {
		if slices.Contains(keep, c) {
			out = append(out, c)
		}
	}
	return out
}

func filterConcs(values []int, keep func(int) bool) []int {
	out := make([]int, 0, len(values))
	for _, c := range values {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// fixedSingleConcs returns the concurrencies of a fixed-seq-len
// single-node entry; ok is false when the entry is skipped.
func (x *expander) fixedSingleConcs(s *configs.SearchSpace) ([]int, bool) {
	if x.testConfig {
		var cs []int
		if s.ConcList != nil {
			cs = s.ConcList
		} else {
			cs = concRange(*s.ConcStart, *s.ConcEnd, 2)
		}
		if len(x.conc) > 0 {
			cs = keepConcs(cs, x.conc)
			if len(cs) == 0 {
				return nil, false
			}
		}
		return cs, true
	}
	if len(s.ConcList) > 0 {
		return x.clampConcList(s.ConcList)
	}
	start, end := *s.ConcStart, *s.ConcEnd
	if x.minConc != nil {
		if *x.minConc <= 0 || end < *x.minConc {
			return nil, false
		}
		start = max(start, *x.minConc)
	}
	if x.maxConc != nil {
		if *x.maxConc <= 0 {
			return nil, false
		}
		if start > *x.maxConc {
			start, end = *x.maxConc, *x.maxConc
		} else {
			end = min(end, *x.maxConc)
		}
	}
	return concRange(start, end, x.step), true
}

// fixedMultiConcs returns the concurrency list of a fixed-seq-len
// multi-node entry; ok is false when the entry is skipped.
func (x *expander) fixedMultiConcs(s *configs.SearchSpace) ([]int, bool) {
	var cs []int
	switch {
	case x.testConfig && s.ConcList != nil, !x.testConfig && len(s.ConcList) > 0:
		cs = s.ConcList
	default:
		cs = concRange(*s.ConcStart, *s.ConcEnd, x.step)
	}
	if x.testConfig {
		if len(x.conc) > 0 {
			cs = keepConcs(cs, x.conc)
			if len(cs) == 0 {
				return nil, false
			}
		}
		return cs, true
	}
	return x.clampConcList(cs)
}

// clampConcList applies full-sweep's --min-conc and --max-conc to a list
// of (positive) concurrencies, as the generator does for conc-list
// entries and multi-node rows: values below the minimum are dropped,
// values above the maximum too, and a list with nothing left at or below
// the maximum becomes [max]. ok is false when the entry is skipped.
func (x *expander) clampConcList(cs []int) ([]int, bool) {
	if x.minConc != nil {
		if *x.minConc <= 0 {
			return nil, false
		}
		cs = filterConcs(cs, func(c int) bool { return c >= *x.minConc })
		if len(cs) == 0 {
			return nil, false
		}
	}
	if x.maxConc != nil {
		if *x.maxConc <= 0 {
			return nil, false
		}
		if f := filterConcs(cs, func(c int) bool { return c <= *x.maxConc }); len(f) > 0 {
			cs = f
		} else {
			cs = []int{*x.maxConc}
		}
	}
	return cs, true
}

// agenticConcs returns the concurrencies of an agentic entry; empty means
// the entry is skipped.
func (x *expander) agenticConcs(s *configs.SearchSpace) []int {
	var cs []int
	if len(s.ConcList) > 0 {
		cs = s.ConcList
	} else {
		cs = concRange(*s.ConcStart, *s.ConcEnd, x.step)
	}
	if x.testConfig {
		if len(x.conc) > 0 {
			cs = keepConcs(cs, x.conc)
		}
		return cs
	}
	if x.minConc != nil {
		cs = filterConcs(cs, func(c int) bool { return c >= *x.minConc })
	}
	if x.maxConc != nil {
		cs = filterConcs(cs, func(c int) bool { return c <= *x.maxConc })
	}
	return cs
}

// newWorker copies a master config worker block and fills in pp,
// dcp-size and pcp-size.
func newWorker(w *configs.Worker) *Worker {
	out := &Worker{
		NumWorker: w.NumWorker,
		Parallelism: configs.Parallelism{
			TP: w.TP, PP: w.PPValue(), DCPSize: w.DCPSizeValue(), PCPSize: w.PCPSizeValue(), EP: w.EP, DPAttn: w.DPAttn,
		},
		Hardware:           clonePtr(w.Hardware),
		AdditionalSettings: w.AdditionalSettings,
		keys:               make([]workerKey, 0, len(w.Keys)+3),
	}
	for _, name := range w.Keys {
		if k, ok := workerKeyOf(name); ok {
			out.keys = append(out.keys, k)
		}
	}
	for _, k := range [...]workerKey{wPP, wDCPSize, wPCPSize} {
		if !slices.Contains(out.keys, k) {
			out.keys = append(out.keys, k)
		}
	}
	return out
}

// components returns the router and kv-p2p-transfer of a search-space
// entry, falling back to the config's top level.
func components(m *configs.Master, s *configs.SearchSpace) (*configs.Component, string) {
	var router *configs.Component
	if r := cmpOr(s.Router, m.Router); r != nil {
		router = &configs.Component{Name: r.Name, Version: r.Version}
	}
	transfer := ""
	if t := cmpOr(s.KVP2PTransfer, m.KVP2PTransfer); t != nil {
		transfer = *t
	}
	return router, transfer
}

func cmpOr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func (x *expander) fixed(rows Matrix, m *configs.Master, runners []string, seqLens map[[2]int]bool) Matrix {
	for _, sc := range m.Scenarios.FixedSeqLen {
		if seqLens != nil && !seqLens[[2]int{sc.ISL, sc.OSL}] {
			continue
		}
		expName := m.ModelPrefix + "_" + SeqLenName(sc.ISL, sc.OSL)
		for _, s := range sc.SearchSpace {
			router, transfer := components(m, s)
			base := Row{
				ConfigKey:     m.Key,
				Image:         m.Image,
				Model:         m.Model,
				ModelPrefix:   m.ModelPrefix,
				Precision:     m.Precision,
				Framework:     m.Framework,
				SpecDecoding:  s.SpecDecodingValue(),
				ISL:           sc.ISL,
				OSL:           sc.OSL,
				MaxModelLen:   sc.ISL + sc.OSL + 256,
				ExpName:       expName,
				Disagg:        m.DisaggValue(),
				Router:        router,
				KVP2PTransfer: transfer,
			}
			if m.Multinode {
				cs, ok := x.fixedMultiConcs(s)
				if !ok {
					continue
				}
				base.Kind = FixedMultiNode
				base.Prefill = newWorker(s.Prefill)
				base.Decode = newWorker(s.Decode)
				for _, rn := range runners {
					r := base
					r.Runner = rn
					r.Concs = slices.Clone(cs)
					rows = append(rows, &r)
				}
				continue
			}
			tp := *s.TP
			if x.maxTP != nil && (*x.maxTP <= 0 || tp > *x.maxTP) {
				continue
			}
			ep := s.EP
			if x.maxEP != nil {
				if *x.maxEP <= 0 {
					continue
				}
				if ep != nil && *ep > *x.maxEP {
					ep = x.maxEP
				}
			}
			cs, ok := x.fixedSingleConcs(s)
			if !ok {
				continue
			}
			base.Kind = FixedSingleNode
			base.TP, base.PP, base.DCPSize, base.PCPSize = tp, s.PPValue(), s.DCPSizeValue(), s.PCPSizeValue()
			base.EP = 1
			if ep != nil {
				base.EP = *ep
			}
			base.DPAttn = s.DPAttn != nil && *s.DPAttn
			for _, c := range cs {
				for _, rn := range runners {
					r := base
					r.Runner = rn
					r.Conc = c
					rows = append(rows, &r)
				}
			}
		}
	}
	return rows
}

func (x *expander) agentic(rows Matrix, m *configs.Master, runners []string) (Matrix, error) {
	for ci, ac := range m.Scenarios.AgenticCoding {
		for si, s := range ac.SearchSpace {
			gb, err := x.dramOffloadGB(m, ac, s)
			if err != nil {
				return nil, &configs.Error{File: s.Pos.File, Line: s.Pos.Line, Col: s.Pos.Col, Key: fmt.Sprintf("%s.scenarios.agentic-coding[%d].search-space[%d]", m.Key, ci, si), Msg: err.Error()}
			}
			cs := x.agenticConcs(s)
			if len(cs) == 0 {
				continue
			}
			router, transfer := components(m, s)
			kv := s.KVOffloadingValue()
			var backend *Backend
			if s.KVOffloadBackend != nil {
				backend = &Backend{Name: s.KVOffloadBackend.Name, Version: clonePtr(s.KVOffloadBackend.Version)}
			}
			base := Row{
				ConfigKey:        m.Key,
				Image:            m.Image,
				Model:            m.Model,
				ModelPrefix:      m.ModelPrefix,
				Precision:        m.Precision,
				Framework:        m.Framework,
				SpecDecoding:     s.SpecDecodingValue(),
				KVOffloading:     kv,
				KVOffloadBackend: backend,
				TotalCPUDRAMGB:   gb,
				Duration:         DefaultAgenticDuration,
				Router:           router,
				KVP2PTransfer:    transfer,
			}
			if m.Multinode {
				base.Kind = AgenticMultiNode
				base.Disagg = m.DisaggValue()
				base.Prefill = newWorker(s.Prefill)
				base.Decode = newWorker(s.Decode)
				suffix := ""
				if kv != configs.KVOffloadNone {
					suffix = "_" + kvOffloadSuffix(kv, backend)
				}
				namePrefix := multiNodeAgenticExpPrefix(m.ModelPrefix, base.Prefill, base.Decode)
				for _, rn := range runners {
					// One allocation per concurrency
					// (MAX_MULTINODE_AGENTIC_CONCURRENCIES_PER_ALLOCATION = 1).
					for _, c := range cs {
						r := base
						r.Runner = rn
						r.Concs = []int{c}
						r.ExpName = namePrefix + strconv.Itoa(c) + suffix
						rows = append(rows, &r)
					}
				}
				continue
			}
			base.Kind = AgenticSingleNode
			base.TP, base.PP, base.DCPSize, base.PCPSize = *s.TP, s.PPValue(), s.DCPSizeValue(), s.PCPSizeValue()
			base.EP = 1
			if s.EP != nil {
				base.EP = *s.EP
			}
			base.DPAttn = s.DPAttn != nil && *s.DPAttn
			for _, c := range cs {
				name := base.agenticExpName(c)
				for _, rn := range runners {
					r := base
					r.Runner = rn
					r.Conc = c
					r.ExpName = name
					rows = append(rows, &r)
				}
			}
		}
	}
	return rows, nil
}

func kvOffloadSuffix(kv string, b *Backend) string {
	if kv == configs.KVOffloadNone {
		return "kvnone"
	}
	name := ""
	if b != nil {
		name = b.Name
	}
	return "kv" + kv + "-" + name
}

// multiNodeAgenticExpPrefix returns a multi-node agentic exp-name up to
// its concurrencies: <prefix>_p<N>x<tp>[ep<ep>][dpa]_d..._conc. The name
// goes on with the concurrencies joined by "x" and the offload suffix.
func multiNodeAgenticExpPrefix(prefix string, p, d *Worker) string {
	tag := func(b []byte, w *Worker, role byte) []byte {
		b = append(b, role)
		b = strconv.AppendInt(b, int64(w.NumWorker), 10)
		b = strconv.AppendInt(append(b, 'x'), int64(w.TP), 10)
		if w.EP != 1 {
			b = strconv.AppendInt(append(b, "ep"...), int64(w.EP), 10)
		}
		if w.DPAttn {
			b = append(b, "dpa"...)
		}
		return b
	}
	var buf [128]byte
	b := append(buf[:0], prefix...)
	b = tag(append(b, '_'), p, 'p')
	b = tag(append(b, '_'), d, 'd')
	return string(append(b, "_conc"...))
}

// maxAgenticDRAMMiB caps a node's available CPU DRAM (3 TB decimal, in
// MiB) before utilization scaling.
const maxAgenticDRAMMiB = 2_861_022

// dramOffloadGB returns total-cpu-dram-gb for an agentic entry: 0 without
// DRAM offload, otherwise
//
//	min(available-cpu-dram-mib, 2_861_022) MiB * dram-utilization
//	  * gpus used on the node / gpus-per-node, in decimal GB, truncated.
//
// The arithmetic follows Python's decimal module (28 significant digits,
// half-even) so results match InferenceX to the last unit.
func (x *expander) dramOffloadGB(m *configs.Master, ac *configs.AgenticConfig, s *configs.SearchSpace) (int, error) {
	g := x.g
	if s.KVOffloadingValue() != configs.KVOffloadDRAM {
		return 0, nil
	}
	hw, ok := g.Runners.Hardware[m.Runner]
	if !ok {
		keys := slices.Clone(g.Runners.HardwareOrder)
		slices.Sort(keys)
		return 0, fmt.Errorf("runner %q needs available-cpu-dram-mib and gpus-per-node under hardware in %s for kv-offloading: dram; hardware is given for: %s",
			m.Runner, g.Runners.File, strings.Join(keys, ", "))
	}
	if ac.DRAMUtilization == nil {
		return 0, fmt.Errorf("kv-offloading: dram requires dram-utilization on the agentic-coding item")
	}
	gpusPerNode := hw.GPUsPerNode
	var gpus int
	if s.Prefill != nil {
		w := s.Prefill
		perReplica := w.TP * w.PPValue() * w.PCPSizeValue()
		switch {
		case perReplica > gpusPerNode && perReplica%gpusPerNode != 0:
			return 0, fmt.Errorf("prefill worker tp*pp*pcp-size=%d spans several nodes but is not a multiple of gpus-per-node=%d", perReplica, gpusPerNode)
		case perReplica > gpusPerNode:
			gpus = gpusPerNode
		case gpusPerNode%perReplica != 0:
			return 0, fmt.Errorf("prefill worker tp*pp*pcp-size=%d does not divide gpus-per-node=%d evenly", perReplica, gpusPerNode)
		default:
			gpus = perReplica
		}
	} else {
		gpus = *s.TP * s.PPValue() * s.PCPSizeValue()
		if gpus > gpusPerNode {
			return 0, fmt.Errorf("tp=%d with pp=%d and pcp-size=%d needs %d GPUs, more than gpus-per-node=%d of runner %q",
				*s.TP, s.PPValue(), s.PCPSizeValue(), gpus, gpusPerNode, m.Runner)
		}
	}
	in := dramInput{min(hw.AvailableCPUDRAMMiB, maxAgenticDRAMMiB), *ac.DRAMUtilization, gpus, gpusPerNode}
	// Many entries share their inputs, and the decimal arithmetic is slow.
	gb, ok := x.dram[in]
	if !ok {
		gb = dramGB(in.mib, in.util, in.gpus, in.gpusPerNode)
		if x.dram == nil {
			x.dram = map[dramInput]int{}
		}
		x.dram[in] = gb
	}
	return gb, nil
}

// dramInput holds the arguments of dramGB.
type dramInput struct {
	mib               int64
	util              float64
	gpus, gpusPerNode int
}

// agenticExpName is a single-node agentic row's exp-name at concurrency c.
func (r *Row) agenticExpName(c int) string {
	spec := ""
	if r.SpecDecoding != configs.SpecNone {
		spec = "_spec-" + r.SpecDecoding
	}
	return r.ModelPrefix + "_tp" + strconv.Itoa(r.TP) + "_conc" + strconv.Itoa(c) + "_" + kvOffloadSuffix(r.KVOffloading, r.KVOffloadBackend) + spec
}

// AtConc is a single-node agentic row of an arm at another concurrency c
// (one off its conc-list, as sweep sim agreement's frontier point): its
// concurrency and exp-name moved to c, unstamped.
func (r *Row) AtConc(c int) *Row {
	at := *r
	at.Conc, at.ExpName, at.RecipeFingerprint = c, r.agenticExpName(c), ""
	return &at
}
