package matrix

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"sweep/configs"
	"sweep/internal/pyjson"
)

// This file writes rows as JSON in the three byte formats InferenceX uses:
//
//   - stylePython: what generate_sweep_configs.py prints, json.dumps with
//     its defaults (", " and ": " separators, ASCII only), keys in the order
//     the generator inserts them.
//   - styleCanonical: json.dumps(sort_keys=True, separators=(",", ":"),
//     ensure_ascii=True), the input of the recipe fingerprint and of every
//     "group rows that differ only in X" comparison.
//   - stylePydantic: what process_changelog.py prints, pydantic's
//     model_dump_json(by_alias=True, exclude_none=True): compact, UTF-8,
//     keys in model field order, model defaults filled in.
//
// The writers append to a byte slice and never go through encoding/json,
// which would escape <, > and & and format numbers differently.

type jsonStyle uint8

const (
	stylePython jsonStyle = iota
	styleCanonical
	stylePydantic
)

func (s jsonStyle) asciiOnly() bool { return s != stylePydantic }

func (s jsonStyle) itemSep() string {
	if s == stylePython {
		return ", "
	}
	return ","
}

func (s jsonStyle) keySep() string {
	if s == stylePython {
		return ": "
	}
	return ":"
}

// field identifies one key of a matrix row.
type field uint8

const (
	fImage field = iota
	fModel
	fModelPrefix
	fPrecision
	fFramework
	fRunner
	fSpecDecoding
	fISL
	fOSL
	fMaxModelLen
	fTP
	fPP
	fDCPSize
	fPCPSize
	fEP
	fDPAttn
	fPrefill
	fDecode
	fConc
	fKVOffloading
	fKVOffloadBackend
	fTotalCPUDRAMGB
	fDuration
	fExpName
	fDisagg
	fScenarioType
	fRouter
	fKVP2PTransfer
	fRunEval
	fEvalOnly
	fEvalConc
	fEvalAllConcs
	fRecipeFingerprint
	numFields
)

// kindSet is a set of row kinds.
type kindSet uint8

const (
	fixedKinds   kindSet = 1<<FixedSingleNode | 1<<FixedMultiNode
	agenticKinds kindSet = 1<<AgenticSingleNode | 1<<AgenticMultiNode
	singleKinds  kindSet = 1<<FixedSingleNode | 1<<AgenticSingleNode
	multiKinds   kindSet = 1<<FixedMultiNode | 1<<AgenticMultiNode
	allKinds             = fixedKinds | agenticKinds
)

func (s kindSet) has(k Kind) bool { return s&(1<<k) != 0 }

// rowField describes one key of a matrix row. Every writer (the three
// styles, the fingerprint, the group keys) and the reader go through this
// table, so a new key is one entry here plus its place in pythonOrder and
// pydanticOrder.
type rowField struct {
	name  string  // the JSON key
	kinds kindSet // the row kinds whose JSON has the key
	// optional keys are present only when their value is set: a non-nil
	// pointer or a non-empty string.
	optional bool
	// pydanticDefault lists the kinds whose output model fills an
	// optional key in (with false) when the row lacks it.
	pydanticDefault kindSet
	// value returns a pointer to the Row field holding the key's value
	// (*string, *int, *bool, **bool, **int, *[]int, **Worker, **Backend,
	// **configs.Component; see appendValue and decodeValue), or a derived
	// string for a key that follows from other fields.
	value func(r *Row) any
}

// derived is the value of a key computed from other fields (written, not
// read back).
type derived string

// rowFields describes every field, indexed by field.
var rowFields = [numFields]rowField{
	fImage:        {name: "image", kinds: allKinds, value: func(r *Row) any { return &r.Image }},
	fModel:        {name: "model", kinds: allKinds, value: func(r *Row) any { return &r.Model }},
	fModelPrefix:  {name: "model-prefix", kinds: allKinds, value: func(r *Row) any { return &r.ModelPrefix }},
	fPrecision:    {name: "precision", kinds: allKinds, value: func(r *Row) any { return &r.Precision }},
	fFramework:    {name: "framework", kinds: allKinds, value: func(r *Row) any { return (*string)(&r.Framework) }},
	fRunner:       {name: "runner", kinds: allKinds, value: func(r *Row) any { return &r.Runner }},
	fSpecDecoding: {name: "spec-decoding", kinds: allKinds, value: func(r *Row) any { return &r.SpecDecoding }},
	fISL:          {name: "isl", kinds: fixedKinds, value: func(r *Row) any { return &r.ISL }},
	fOSL:          {name: "osl", kinds: fixedKinds, value: func(r *Row) any { return &r.OSL }},
	fMaxModelLen:  {name: "max-model-len", kinds: fixedKinds, value: func(r *Row) any { return &r.MaxModelLen }},
	fTP:           {name: "tp", kinds: singleKinds, value: func(r *Row) any { return &r.TP }},
	fPP:           {name: "pp", kinds: singleKinds, value: func(r *Row) any { return &r.PP }},
	fDCPSize:      {name: "dcp-size", kinds: singleKinds, value: func(r *Row) any { return &r.DCPSize }},
	fPCPSize:      {name: "pcp-size", kinds: singleKinds, value: func(r *Row) any { return &r.PCPSize }},
	fEP:           {name: "ep", kinds: singleKinds, value: func(r *Row) any { return &r.EP }},
	fDPAttn:       {name: "dp-attn", kinds: singleKinds, value: func(r *Row) any { return &r.DPAttn }},
	fPrefill:      {name: "prefill", kinds: multiKinds, value: func(r *Row) any { return &r.Prefill }},
	fDecode:       {name: "decode", kinds: multiKinds, value: func(r *Row) any { return &r.Decode }},
	fConc: {name: "conc", kinds: allKinds, value: func(r *Row) any {
		if r.Kind.MultiNode() {
			return &r.Concs
		}
		return &r.Conc
	}},
	fKVOffloading:     {name: "kv-offloading", kinds: agenticKinds, value: func(r *Row) any { return &r.KVOffloading }},
	fKVOffloadBackend: {name: "kv-offload-backend", kinds: agenticKinds, optional: true, value: func(r *Row) any { return &r.KVOffloadBackend }},
	fTotalCPUDRAMGB:   {name: "total-cpu-dram-gb", kinds: agenticKinds, value: func(r *Row) any { return &r.TotalCPUDRAMGB }},
	fDuration:         {name: "duration", kinds: agenticKinds, value: func(r *Row) any { return &r.Duration }},
	fExpName:          {name: "exp-name", kinds: allKinds, value: func(r *Row) any { return &r.ExpName }},
	fDisagg:           {name: "disagg", kinds: allKinds &^ (1 << AgenticSingleNode), value: func(r *Row) any { return &r.Disagg }},
	fScenarioType: {name: "scenario-type", kinds: agenticKinds, value: func(r *Row) any {
		if r.Kind.Agentic() {
			return derived(configs.ScenarioAgenticCoding)
		}
		return derived(configs.ScenarioFixedSeqLen)
	}},
	fRouter:        {name: "router", kinds: allKinds, optional: true, value: func(r *Row) any { return &r.Router }},
	fKVP2PTransfer: {name: "kv-p2p-transfer", kinds: allKinds, optional: true, value: func(r *Row) any { return &r.KVP2PTransfer }},
	fRunEval: {name: "run-eval", kinds: allKinds, optional: true, pydanticDefault: fixedKinds, // required on fixed-seq-len models
		value: func(r *Row) any { return &r.RunEval }},
	fEvalOnly: {name: "eval-only", kinds: allKinds, optional: true, pydanticDefault: fixedKinds,
		value: func(r *Row) any { return &r.EvalOnly }},
	fEvalConc: {name: "eval-conc", kinds: allKinds, optional: true, value: func(r *Row) any { return &r.EvalConc }},
	fEvalAllConcs: {name: "eval-all-concs", kinds: allKinds, optional: true, pydanticDefault: 1 << FixedMultiNode,
		value: func(r *Row) any { return &r.EvalAllConcs }},
	fRecipeFingerprint: {name: "recipe-fingerprint", kinds: allKinds, optional: true, value: func(r *Row) any { return &r.RecipeFingerprint }},
}

// fieldSet is a set of fields.
type fieldSet uint64

func setOf(fs ...field) fieldSet {
	var s fieldSet
	for _, f := range fs {
		s |= 1 << f
	}
	return s
}

func (s fieldSet) has(f field) bool { return s&(1<<f) != 0 }

// Field sets left out of the comparisons InferenceX makes between rows.
var (
	// fingerprintSkip: recipe_fingerprint and the append-only curve key.
	fingerprintSkip = setOf(fConc, fExpName, fRecipeFingerprint)
	// trimSkip: trim_conc's single-node group key.
	trimSkip = setOf(fConc, fExpName)
	// parallelismSkip: the generator's multi-node parallelism key.
	parallelismSkip = setOf(fConc, fRunEval, fEvalOnly, fEvalConc, fEvalAllConcs, fExpName)
)

// sortedFields is every field in Python's sort_keys order (code point
// order of the key strings; Go orders strings by UTF-8 bytes, which is the
// same order).
var sortedFields = func() []field {
	fs := make([]field, numFields)
	for i := range fs {
		fs[i] = field(i)
	}
	slices.SortFunc(fs, func(a, b field) int { return strings.Compare(rowFields[a].name, rowFields[b].name) })
	return fs
}()

// pythonOrder is the generator's insertion order per kind. Optional fields
// sit where the generator would insert them and are skipped when absent.
var pythonOrder = [...][]field{
	FixedSingleNode: {fImage, fModel, fModelPrefix, fPrecision, fFramework, fRunner,
		fISL, fOSL, fTP, fPP, fDCPSize, fPCPSize, fConc, fMaxModelLen, fEP, fDPAttn,
		fSpecDecoding, fExpName, fDisagg, fRunEval, fRouter, fKVP2PTransfer,
		fEvalConc, fEvalAllConcs, fEvalOnly, fRecipeFingerprint},
	FixedMultiNode: {fImage, fModel, fModelPrefix, fPrecision, fFramework, fRunner,
		fISL, fOSL, fSpecDecoding, fPrefill, fDecode, fConc, fMaxModelLen, fExpName,
		fDisagg, fRunEval, fRouter, fKVP2PTransfer, fEvalConc, fEvalAllConcs,
		fEvalOnly, fRecipeFingerprint},
	AgenticSingleNode: {fImage, fModel, fModelPrefix, fPrecision, fFramework, fRunner,
		fTP, fPP, fDCPSize, fPCPSize, fEP, fDPAttn, fSpecDecoding, fConc,
		fKVOffloading, fTotalCPUDRAMGB, fDuration, fExpName, fScenarioType,
		fKVOffloadBackend, fRouter, fKVP2PTransfer, fRunEval, fEvalConc,
		fEvalAllConcs, fEvalOnly, fRecipeFingerprint},
	AgenticMultiNode: {fImage, fModel, fModelPrefix, fPrecision, fFramework, fRunner,
		fSpecDecoding, fPrefill, fDecode, fConc, fKVOffloading, fTotalCPUDRAMGB,
		fDuration, fExpName, fDisagg, fScenarioType, fKVOffloadBackend, fRouter,
		fKVP2PTransfer, fRunEval, fEvalConc, fEvalAllConcs, fEvalOnly,
		fRecipeFingerprint},
}

// pydanticOrder is the field order of InferenceX's output models
// (SingleNodeMatrixEntry, MultiNodeMatrixEntry, SingleNodeAgenticMatrixEntry,
// MultiNodeAgenticMatrixEntry) per kind.
var pydanticOrder = [...][]field{
	FixedSingleNode: {fImage, fModel, fModelPrefix, fPrecision, fFramework,
		fSpecDecoding, fRunner, fISL, fOSL, fTP, fPP, fDCPSize, fPCPSize, fEP,
		fDPAttn, fConc, fMaxModelLen, fExpName, fDisagg, fRunEval, fEvalOnly,
		fRouter, fRecipeFingerprint},
	FixedMultiNode: {fImage, fModel, fModelPrefix, fPrecision, fFramework,
		fSpecDecoding, fRunner, fISL, fOSL, fPrefill, fDecode, fConc,
		fMaxModelLen, fExpName, fDisagg, fRunEval, fEvalOnly, fEvalConc,
		fEvalAllConcs, fRouter, fKVP2PTransfer, fRecipeFingerprint},
	AgenticSingleNode: {fImage, fModel, fModelPrefix, fPrecision, fFramework,
		fRunner, fTP, fPP, fDCPSize, fPCPSize, fEP, fDPAttn, fSpecDecoding, fConc,
		fKVOffloading, fKVOffloadBackend, fRouter, fTotalCPUDRAMGB, fDuration,
		fExpName, fScenarioType, fRunEval, fEvalOnly, fRecipeFingerprint},
	AgenticMultiNode: {fImage, fModel, fModelPrefix, fPrecision, fFramework,
		fSpecDecoding, fRunner, fPrefill, fDecode, fConc, fKVOffloading,
		fKVOffloadBackend, fRouter, fKVP2PTransfer, fTotalCPUDRAMGB, fDuration,
		fExpName, fDisagg, fScenarioType, fRunEval, fEvalOnly, fEvalConc,
		fRecipeFingerprint},
}

// isSet reports whether an optional value (see rowField.value) is set.
func isSet(v any) bool {
	switch p := v.(type) {
	case *string:
		return *p != ""
	case **bool:
		return *p != nil
	case **int:
		return *p != nil
	case **Backend:
		return *p != nil
	case **configs.Component:
		return *p != nil
	}
	return true
}

// appendRowJSON appends r as a JSON object in style s, leaving out the
// fields in skip.
func appendRowJSON(b []byte, r *Row, s jsonStyle, skip fieldSet) []byte {
	var order []field
	switch s {
	case styleCanonical:
		order = sortedFields
	case stylePydantic:
		order = pydanticOrder[r.Kind]
	default:
		order = pythonOrder[r.Kind]
	}
	b = append(b, '{')
	first := true
	for _, f := range order {
		d := &rowFields[f]
		if skip.has(f) || !d.kinds.has(r.Kind) {
			continue
		}
		v := d.value(r)
		if d.optional && !isSet(v) && !(s == stylePydantic && d.pydanticDefault.has(r.Kind)) {
			continue
		}
		if s == stylePython {
			if !first {
				b = append(b, ',', ' ')
			}
			b = append(b, rowKeys.spaced[f]...)
		} else {
			if !first {
				b = append(b, ',')
			}
			b = append(b, rowKeys.compact[f]...)
		}
		first = false
		b = appendValue(b, v, s)
	}
	return append(b, '}')
}

func appendKey(b []byte, k string, s jsonStyle) []byte {
	b = append(b, '"')
	b = append(b, k...) // keys are plain ASCII
	b = append(b, '"')
	return append(b, s.keySep()...)
}

// fieldKeys holds each field's `"key": ` (Python style) and `"key":`
// (compact styles), ready to append.
type fieldKeys struct {
	spaced, compact [numFields]string
}

func makeFieldKeys() *fieldKeys {
	k := &fieldKeys{}
	for f, d := range rowFields {
		k.spaced[f] = `"` + d.name + `": `
		k.compact[f] = `"` + d.name + `":`
	}
	return k
}

// rowKeys is read-only after initialization.
var rowKeys = makeFieldKeys()

// appendValue appends the value v (a rowField.value or workerField.value)
// in style s. An unset pointer is null, except an unset bool, which is
// false: the only unset bools written are pydantic's defaults.
func appendValue(b []byte, v any, s jsonStyle) []byte {
	switch p := v.(type) {
	case derived:
		return pyjson.AppendString(b, string(p), s.asciiOnly())
	case *string:
		return pyjson.AppendString(b, *p, s.asciiOnly())
	case **string:
		if *p == nil {
			break
		}
		return pyjson.AppendString(b, **p, s.asciiOnly())
	case *int:
		return strconv.AppendInt(b, int64(*p), 10)
	case **int:
		if *p == nil {
			break
		}
		return strconv.AppendInt(b, int64(**p), 10)
	case *bool:
		return strconv.AppendBool(b, *p)
	case **bool:
		return strconv.AppendBool(b, *p != nil && **p)
	case *[]int:
		return appendIntList(b, *p, s)
	case *[]string:
		if *p == nil {
			break
		}
		return appendStringList(b, *p, s)
	case **Worker:
		return (*p).appendJSON(b, s)
	case **Backend:
		if *p == nil {
			break
		}
		return (*p).appendJSON(b, s)
	case **configs.Component:
		if *p == nil {
			break
		}
		return appendComponent(b, *p, s)
	}
	return append(b, "null"...)
}

func appendIntList(b []byte, xs []int, s jsonStyle) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, s.itemSep()...)
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

func appendStringList(b []byte, xs []string, s jsonStyle) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, s.itemSep()...)
		}
		b = pyjson.AppendString(b, x, s.asciiOnly())
	}
	return append(b, ']')
}

// workerField describes one key of a worker block, as rowField does for a
// row.
type workerField struct {
	name  string
	value func(w *Worker) any // a pointer to the Worker field
}

var workerFields = [numWorkerKeys]workerField{
	wNumWorker:          {"num-worker", func(w *Worker) any { return &w.NumWorker }},
	wTP:                 {"tp", func(w *Worker) any { return &w.TP }},
	wPP:                 {"pp", func(w *Worker) any { return &w.PP }},
	wDCPSize:            {"dcp-size", func(w *Worker) any { return &w.DCPSize }},
	wPCPSize:            {"pcp-size", func(w *Worker) any { return &w.PCPSize }},
	wEP:                 {"ep", func(w *Worker) any { return &w.EP }},
	wDPAttn:             {"dp-attn", func(w *Worker) any { return &w.DPAttn }},
	wHardware:           {"hardware", func(w *Worker) any { return &w.Hardware }},
	wAdditionalSettings: {"additional-settings", func(w *Worker) any { return &w.AdditionalSettings }},
}

// workerKeyOf returns the worker key named name.
func workerKeyOf(name string) (workerKey, bool) {
	for k, f := range workerFields {
		if f.name == name {
			return workerKey(k), true
		}
	}
	return 0, false
}

// workerModel is WorkerConfig's field order; workerSorted is sort_keys
// order.
var workerModel, workerSorted = func() (model, sorted []workerKey) {
	for k := range numWorkerKeys {
		model = append(model, k)
	}
	sorted = slices.Clone(model)
	slices.SortFunc(sorted, func(a, b workerKey) int { return strings.Compare(workerFields[a].name, workerFields[b].name) })
	return model, sorted
}()

// keyList returns the worker's keys in generator order. A Worker built by
// hand (without keys) gets the model order, with the optional keys present
// when set.
func (w *Worker) keyList() []workerKey {
	if w.keys != nil {
		return w.keys
	}
	ks := []workerKey{wNumWorker, wTP, wPP, wDCPSize, wPCPSize, wEP, wDPAttn}
	if w.Hardware != nil {
		ks = append(ks, wHardware)
	}
	if w.AdditionalSettings != nil {
		ks = append(ks, wAdditionalSettings)
	}
	return ks
}

func (w *Worker) hasKey(k workerKey) bool { return slices.Contains(w.keyList(), k) }

func (w *Worker) appendJSON(b []byte, s jsonStyle) []byte {
	if w == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	first := true
	for _, k := range w.orderFor(s) {
		v := workerFields[k].value(w)
		switch {
		case s == styleCanonical && !w.hasKey(k):
			continue
		case s == stylePydantic && k == wHardware && w.Hardware == nil:
			continue // None is excluded
		case s == stylePydantic && k == wAdditionalSettings && w.AdditionalSettings == nil:
			if w.hasKey(k) {
				continue // an explicit null stays None and is excluded
			}
			v = &[]string{} // absent means the model's default []
		}
		if !first {
			b = append(b, s.itemSep()...)
		}
		first = false
		b = appendKey(b, workerFields[k].name, s)
		b = appendValue(b, v, s)
	}
	return append(b, '}')
}

// orderFor returns the keys to consider, in order, for style s.
func (w *Worker) orderFor(s jsonStyle) []workerKey {
	switch s {
	case styleCanonical:
		return workerSorted
	case stylePydantic:
		return workerModel
	}
	return w.keyList()
}

func appendComponent(b []byte, c *configs.Component, s jsonStyle) []byte {
	b = append(b, '{')
	b = appendKey(b, "name", s)
	b = pyjson.AppendString(b, c.Name, s.asciiOnly())
	b = append(b, s.itemSep()...)
	b = appendKey(b, "version", s)
	b = pyjson.AppendString(b, c.Version, s.asciiOnly())
	return append(b, '}')
}

func (k *Backend) appendJSON(b []byte, s jsonStyle) []byte {
	b = append(b, '{')
	b = appendKey(b, "name", s)
	b = pyjson.AppendString(b, k.Name, s.asciiOnly())
	if k.Version != nil {
		b = append(b, s.itemSep()...)
		b = appendKey(b, "version", s)
		b = pyjson.AppendString(b, *k.Version, s.asciiOnly())
	}
	return append(b, '}')
}

// MarshalJSON writes the matrix byte for byte as generate_sweep_configs.py
// prints it (json.dumps defaults: ", " and ": " separators, ASCII only,
// keys in the generator's insertion order). Rows' ConfigKey is left out,
// as InferenceX has no such key; AppendJSON(b, WithConfigKey()) keeps it.
func (m Matrix) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, 600*len(m)+2)), nil
}

// JSONOption changes how AppendJSON writes rows.
type JSONOption func(*jsonOptions)

type jsonOptions struct {
	configKey bool
}

// WithConfigKey writes each row's ConfigKey as a last "config-key" member
// (when set), so the rows read back with UnmarshalJSON know their key. The
// output is then no longer InferenceX's.
func WithConfigKey() JSONOption { return func(o *jsonOptions) { o.configKey = true } }

// AppendJSON appends the matrix as MarshalJSON writes it, changed by opts.
func (m Matrix) AppendJSON(b []byte, opts ...JSONOption) []byte {
	var o jsonOptions
	for _, opt := range opts {
		opt(&o)
	}
	b = append(b, '[')
	for i, r := range m {
		if i > 0 {
			b = append(b, ',', ' ')
		}
		b = r.appendJSON(b, o)
	}
	return append(b, ']')
}

// WriteJSON writes the matrix and a newline as InferenceX's generator
// prints it, with each row's config key when withKey is set.
func (m Matrix) WriteJSON(w io.Writer, withKey bool) error {
	var opts []JSONOption
	if withKey {
		opts = append(opts, WithConfigKey())
	}
	_, err := w.Write(append(m.AppendJSON(make([]byte, 0, 600*len(m)+2), opts...), '\n'))
	return err
}

// MarshalJSON writes the row as one element of Matrix.MarshalJSON.
func (r *Row) MarshalJSON() ([]byte, error) {
	return appendRowJSON(nil, r, stylePython, 0), nil
}

// AppendJSON appends the row as MarshalJSON writes it, changed by opts.
func (r *Row) AppendJSON(b []byte, opts ...JSONOption) []byte {
	var o jsonOptions
	for _, opt := range opts {
		opt(&o)
	}
	return r.appendJSON(b, o)
}

func (r *Row) appendJSON(b []byte, o jsonOptions) []byte {
	b = appendRowJSON(b, r, stylePython, 0)
	if o.configKey && r.ConfigKey != "" {
		b = append(b[:len(b)-1], `, "config-key": `...)
		b = pyjson.AppendString(b, r.ConfigKey, true)
		b = append(b, '}')
	}
	return b
}
