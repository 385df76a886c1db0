package matrix

import (
	"strconv"
	"sweep/configs"
	"unicode/utf8"
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

// fieldNames are the JSON keys, indexed by field.
var fieldNames = [numFields]string{
	fImage:             "image",
	fModel:             "model",
	fModelPrefix:       "model-prefix",
	fPrecision:         "precision",
	fFramework:         "framework",
	fRunner:            "runner",
	fSpecDecoding:      "spec-decoding",
	fISL:               "isl",
	fOSL:               "osl",
	fMaxModelLen:       "max-model-len",
	fTP:                "tp",
	fPP:                "pp",
	fDCPSize:           "dcp-size",
	fPCPSize:           "pcp-size",
	fEP:                "ep",
	fDPAttn:            "dp-attn",
	fPrefill:           "prefill",
	fDecode:            "decode",
	fConc:              "conc",
	fKVOffloading:      "kv-offloading",
	fKVOffloadBackend:  "kv-offload-backend",
	fTotalCPUDRAMGB:    "total-cpu-dram-gb",
	fDuration:          "duration",
	fExpName:           "exp-name",
	fDisagg:            "disagg",
	fScenarioType:      "scenario-type",
	fRouter:            "router",
	fKVP2PTransfer:     "kv-p2p-transfer",
	fRunEval:           "run-eval",
	fEvalOnly:          "eval-only",
	fEvalConc:          "eval-conc",
	fEvalAllConcs:      "eval-all-concs",
	fRecipeFingerprint: "recipe-fingerprint",
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
// order of the key strings); TestSortedFields checks it.
var sortedFields = [...]field{
	fConc, fDCPSize, fDecode, fDisagg, fDPAttn, fDuration, fEP,
	fEvalAllConcs, fEvalConc, fEvalOnly, fExpName, fFramework, fImage, fISL,
	fKVOffloadBackend, fKVOffloading, fKVP2PTransfer, fMaxModelLen, fModel,
	fModelPrefix, fOSL, fPCPSize, fPP, fPrecision, fPrefill,
	fRecipeFingerprint, fRouter, fRunEval, fRunner, fScenarioType,
	fSpecDecoding, fTotalCPUDRAMGB, fTP,
}

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

// present reports whether f is a key of the row as the generator builds it.
func (r *Row) present(f field) bool {
	k := r.Kind
	switch f {
	case fImage, fModel, fModelPrefix, fPrecision, fFramework, fRunner,
		fSpecDecoding, fConc, fExpName:
		return true
	case fISL, fOSL, fMaxModelLen:
		return !k.Agentic()
	case fTP, fPP, fDCPSize, fPCPSize, fEP, fDPAttn:
		return !k.MultiNode()
	case fPrefill, fDecode:
		return k.MultiNode()
	case fKVOffloading, fTotalCPUDRAMGB, fDuration, fScenarioType:
		return k.Agentic()
	case fKVOffloadBackend:
		return k.Agentic() && r.KVOffloadBackend != nil
	case fDisagg:
		return k != AgenticSingleNode
	case fRouter:
		return r.Router != nil
	case fKVP2PTransfer:
		return r.KVP2PTransfer != ""
	case fRunEval:
		return r.RunEval != nil
	case fEvalOnly:
		return r.EvalOnly != nil
	case fEvalConc:
		return r.EvalConc != nil
	case fEvalAllConcs:
		return r.EvalAllConcs != nil
	case fRecipeFingerprint:
		return r.RecipeFingerprint != ""
	}
	return false
}

// pydanticDefault reports whether the output model fills f with a default
// when the row lacks it; the default is false for every such field.
func pydanticDefault(k Kind, f field) bool {
	switch f {
	case fRunEval:
		return !k.Agentic() // required on fixed-seq-len models
	case fEvalOnly:
		return !k.Agentic()
	case fEvalAllConcs:
		return k == FixedMultiNode
	}
	return false
}

// appendRowJSON appends r as a JSON object in style s, leaving out the
// fields in skip.
func appendRowJSON(b []byte, r *Row, s jsonStyle, skip fieldSet) []byte {
	var order []field
	switch s {
	case styleCanonical:
		order = sortedFields[:]
	case stylePydantic:
		order = pydanticOrder[r.Kind]
	default:
		order = pythonOrder[r.Kind]
	}
	b = append(b, '{')
	first := true
	for _, f := range order {
		if skip.has(f) {
			continue
		}
		if !r.present(f) && !(s == stylePydantic && pydanticDefault(r.Kind, f)) {
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
		b = r.appendValue(b, f, s)
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
	for f, name := range fieldNames {
		k.spaced[f] = `"` + name + `": `
		k.compact[f] = `"` + name + `":`
	}
	return k
}

// rowKeys is read-only after initialization.
var rowKeys = makeFieldKeys()

func (r *Row) appendValue(b []byte, f field, s jsonStyle) []byte {
	ascii := s.asciiOnly()
	switch f {
	case fImage:
		return appendString(b, r.Image, ascii)
	case fModel:
		return appendString(b, r.Model, ascii)
	case fModelPrefix:
		return appendString(b, r.ModelPrefix, ascii)
	case fPrecision:
		return appendString(b, r.Precision, ascii)
	case fFramework:
		return appendString(b, r.Framework, ascii)
	case fRunner:
		return appendString(b, r.Runner, ascii)
	case fSpecDecoding:
		return appendString(b, r.SpecDecoding, ascii)
	case fISL:
		return strconv.AppendInt(b, int64(r.ISL), 10)
	case fOSL:
		return strconv.AppendInt(b, int64(r.OSL), 10)
	case fMaxModelLen:
		return strconv.AppendInt(b, int64(r.MaxModelLen), 10)
	case fTP:
		return strconv.AppendInt(b, int64(r.TP), 10)
	case fPP:
		return strconv.AppendInt(b, int64(r.PP), 10)
	case fDCPSize:
		return strconv.AppendInt(b, int64(r.DCPSize), 10)
	case fPCPSize:
		return strconv.AppendInt(b, int64(r.PCPSize), 10)
	case fEP:
		return strconv.AppendInt(b, int64(r.EP), 10)
	case fDPAttn:
		return strconv.AppendBool(b, r.DPAttn)
	case fPrefill:
		return r.Prefill.appendJSON(b, s)
	case fDecode:
		return r.Decode.appendJSON(b, s)
	case fConc:
		if r.Kind.MultiNode() {
			return appendIntList(b, r.Concs, s)
		}
		return strconv.AppendInt(b, int64(r.Conc), 10)
	case fKVOffloading:
		return appendString(b, r.KVOffloading, ascii)
	case fKVOffloadBackend:
		return r.KVOffloadBackend.appendJSON(b, s)
	case fTotalCPUDRAMGB:
		return strconv.AppendInt(b, int64(r.TotalCPUDRAMGB), 10)
	case fDuration:
		return strconv.AppendInt(b, int64(r.Duration), 10)
	case fExpName:
		return appendString(b, r.ExpName, ascii)
	case fDisagg:
		return strconv.AppendBool(b, r.Disagg)
	case fScenarioType:
		return appendString(b, r.ScenarioType(), ascii)
	case fRouter:
		return appendComponent(b, r.Router, s)
	case fKVP2PTransfer:
		return appendString(b, r.KVP2PTransfer, ascii)
	case fRunEval:
		return appendOptBool(b, r.RunEval)
	case fEvalOnly:
		return appendOptBool(b, r.EvalOnly)
	case fEvalConc:
		if r.EvalConc == nil {
			return append(b, "null"...)
		}
		return strconv.AppendInt(b, int64(*r.EvalConc), 10)
	case fEvalAllConcs:
		return appendOptBool(b, r.EvalAllConcs)
	case fRecipeFingerprint:
		return appendString(b, r.RecipeFingerprint, ascii)
	}
	return append(b, "null"...)
}

func appendOptBool(b []byte, p *bool) []byte {
	return strconv.AppendBool(b, p != nil && *p)
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
		b = appendString(b, x, s.asciiOnly())
	}
	return append(b, ']')
}

// workerKey identifies one key of a worker block.
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
)

var workerKeyNames = [...]string{
	wNumWorker:          "num-worker",
	wTP:                 "tp",
	wPP:                 "pp",
	wDCPSize:            "dcp-size",
	wPCPSize:            "pcp-size",
	wEP:                 "ep",
	wDPAttn:             "dp-attn",
	wHardware:           "hardware",
	wAdditionalSettings: "additional-settings",
}

// workerSorted is every worker key in sort_keys order.
var workerSorted = [...]workerKey{wAdditionalSettings, wDCPSize, wDPAttn, wEP, wHardware, wNumWorker, wPCPSize, wPP, wTP}

// workerModel is WorkerConfig's field order.
var workerModel = [...]workerKey{wNumWorker, wTP, wPP, wDCPSize, wPCPSize, wEP, wDPAttn, wHardware, wAdditionalSettings}

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

func (w *Worker) hasKey(k workerKey) bool {
	for _, x := range w.keyList() {
		if x == k {
			return true
		}
	}
	return false
}

func (w *Worker) appendJSON(b []byte, s jsonStyle) []byte {
	if w == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	first := true
	for _, k := range w.orderFor(s) {
		switch {
		case s == styleCanonical && !w.hasKey(k):
			continue
		case s == stylePydantic && k == wHardware && w.Hardware == nil:
			continue // None is excluded
		case s == stylePydantic && k == wAdditionalSettings && w.AdditionalSettings == nil && w.hasKey(k):
			continue // an explicit null stays None and is excluded; absent means []
		}
		if !first {
			b = append(b, s.itemSep()...)
		}
		first = false
		b = appendKey(b, workerKeyNames[k], s)
		b = w.appendValue(b, k, s)
	}
	return append(b, '}')
}

// orderFor returns the keys to consider, in order, for style s.
func (w *Worker) orderFor(s jsonStyle) []workerKey {
	switch s {
	case styleCanonical:
		return workerSorted[:]
	case stylePydantic:
		return workerModel[:]
	}
	return w.keyList()
}

func (w *Worker) appendValue(b []byte, k workerKey, s jsonStyle) []byte {
	switch k {
	case wNumWorker:
		return strconv.AppendInt(b, int64(w.NumWorker), 10)
	case wTP:
		return strconv.AppendInt(b, int64(w.TP), 10)
	case wPP:
		return strconv.AppendInt(b, int64(w.PP), 10)
	case wDCPSize:
		return strconv.AppendInt(b, int64(w.DCPSize), 10)
	case wPCPSize:
		return strconv.AppendInt(b, int64(w.PCPSize), 10)
	case wEP:
		return strconv.AppendInt(b, int64(w.EP), 10)
	case wDPAttn:
		return strconv.AppendBool(b, w.DPAttn)
	case wHardware:
		if w.Hardware == nil {
			return append(b, "null"...)
		}
		return appendString(b, *w.Hardware, s.asciiOnly())
	case wAdditionalSettings:
		if w.AdditionalSettings == nil && s != stylePydantic {
			return append(b, "null"...)
		}
		return appendStringList(b, w.AdditionalSettings, s)
	}
	return append(b, "null"...)
}

func appendComponent(b []byte, c *configs.Component, s jsonStyle) []byte {
	b = append(b, '{')
	b = appendKey(b, "name", s)
	b = appendString(b, c.Name, s.asciiOnly())
	b = append(b, s.itemSep()...)
	b = appendKey(b, "version", s)
	b = appendString(b, c.Version, s.asciiOnly())
	return append(b, '}')
}

func (k *Backend) appendJSON(b []byte, s jsonStyle) []byte {
	b = append(b, '{')
	b = appendKey(b, "name", s)
	b = appendString(b, k.Name, s.asciiOnly())
	if k.Version != nil {
		b = append(b, s.itemSep()...)
		b = appendKey(b, "version", s)
		b = appendString(b, *k.Version, s.asciiOnly())
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way Python's json module
// writes it: ", \\, \n, \r, \t, \b and \f get short escapes, other control
// characters \u00XX. With asciiOnly (ensure_ascii=True) every character
// from U+007F up is written as \uXXXX, characters above U+FFFF as a UTF-16
// surrogate pair; otherwise they are written as UTF-8 (pydantic and
// ensure_ascii=False). Invalid UTF-8 is written as U+FFFD.
func appendString(b []byte, s string, asciiOnly bool) []byte {
	b = append(b, '"')
	if plainASCII(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x7f {
			i++
			continue
		}
		if c >= 0x7f && !asciiOnly {
			if c == 0x7f {
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		b = append(b, s[start:i]...)
		switch {
		case c == '"':
			b = append(b, '\\', '"')
			i++
		case c == '\\':
			b = append(b, '\\', '\\')
			i++
		case c == '\n':
			b = append(b, '\\', 'n')
			i++
		case c == '\r':
			b = append(b, '\\', 'r')
			i++
		case c == '\t':
			b = append(b, '\\', 't')
			i++
		case c == '\b':
			b = append(b, '\\', 'b')
			i++
		case c == '\f':
			b = append(b, '\\', 'f')
			i++
		case c < 0x20 || c == 0x7f:
			b = appendU4(b, rune(c))
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			if !asciiOnly { // invalid byte
				b = append(b, "\ufffd"...)
				break
			}
			if r > 0xffff {
				r -= 0x10000
				b = appendU4(b, 0xd800+(r>>10))
				b = appendU4(b, 0xdc00+(r&0x3ff))
			} else {
				b = appendU4(b, r)
			}
		}
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainASCII reports whether s holds only printable ASCII other than '"'
// and '\\', so it needs no escaping in any style. It tests 8 bytes at a
// time.
func plainASCII(s string) bool {
	const (
		lo     = 0x0101010101010101
		hi     = 0x8080808080808080
		quote  = lo * '"'
		bslash = lo * '\\'
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		v := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// A byte needs escaping when it is < 0x20, >= 0x7f, '"' or '\\'.
		ctrl := (v - lo*0x20) & ^v & hi // bytes < 0x20
		high := (v + lo*0x01) & hi      // bytes >= 0x7f (0x7f+1 sets the top bit)
		high |= v & hi                  // bytes >= 0x80
		q := v ^ quote
		isQ := (q - lo) & ^q & hi // bytes == '"'
		bs := v ^ bslash
		isB := (bs - lo) & ^bs & hi // bytes == '\\'
		if ctrl|high|isQ|isB != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
