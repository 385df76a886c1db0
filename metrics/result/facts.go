package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sweep/configs"
	"sweep/internal/filename"
	"sweep/internal/pyjson"
)

// RunFacts are the facts about a point that the aggregate result records
// and that InferenceX passes to its aggregator as environment variables.
// A point runner fills it from its plan; FromEnv builds it from
// InferenceX's variable names (an env file or the process environment).
// sweep run records it in run.json as "facts" (the JSON names below),
// which sweep result aggregate reads back for the point's directory.
type RunFacts struct {
	RunnerType        string         `json:"runner_type"`        // RUNNER_TYPE → "hw"
	Conc              int            `json:"conc"`               // CONC
	Image             string         `json:"image"`              // IMAGE
	RecipeFingerprint string         `json:"recipe_fingerprint"` // RECIPE_FINGERPRINT
	Model             string         `json:"model"`              // MODEL
	ModelPrefix       string         `json:"model_prefix"`       // MODEL_PREFIX → "infmax_model_prefix"
	Framework         configs.Engine `json:"framework"`          // FRAMEWORK (also picks the server-metrics adapter when none is exported)
	Precision         string         `json:"precision"`          // PRECISION
	SpecDecoding      string         `json:"spec_decoding"`      // SPEC_DECODING, default "none"
	Disagg            bool           `json:"disagg"`             // DISAGG
	Multinode         bool           `json:"is_multinode"`       // IS_MULTINODE

	// Single-node topology.
	TP          int    `json:"tp"`           // TP, default 1
	EP          int    `json:"ep"`           // EP_SIZE, default 1
	DPAttention string `json:"dp_attention"` // DP_ATTENTION, written as given, default "false"
	PP          int    `json:"pp"`           // PP_SIZE, default 1
	DCP         int    `json:"dcp"`          // DCP_SIZE, default 1
	PCP         int    `json:"pcp"`          // PCP_SIZE, default 1

	// Multinode (disaggregated) topology; used when Multinode is true.
	Prefill   WorkerShape `json:"prefill"`
	Decode    WorkerShape `json:"decode"`
	PrefillHW string      `json:"prefill_hw"` // PREFILL_HARDWARE
	DecodeHW  string      `json:"decode_hw"`  // DECODE_HARDWARE

	KVOffloading string `json:"kv_offloading"` // KV_OFFLOADING (required): "none" or e.g. "dram"
	// KVOffloadBackend is KV_OFFLOAD_BACKEND; KVOffloadBackendMeta is the
	// parsed KV_OFFLOAD_BACKEND_METADATA ({"name"[, "version"]}), nil if unset.
	KVOffloadBackend     string             `json:"kv_offload_backend"`
	KVOffloadBackendMeta *configs.Component `json:"kv_offload_backend_metadata,omitempty"`
	TotalCPUDRAMGB       int                `json:"total_cpu_dram_gb"`         // TOTAL_CPU_DRAM_GB → "allocated_cpu_dram_gb"
	Router               *configs.Component `json:"router,omitempty"`          // ROUTER_METADATA ({"name","version"}), nil if unset
	KVP2PTransfer        string             `json:"kv_p2p_transfer,omitempty"` // KV_P2P_TRANSFER, written when non-empty

	// ResultFilename is RESULT_FILENAME, the output's base name (no .json).
	ResultFilename string `json:"result_filename"`
	// HFHubCache is where the WEKA trace dataset is looked up for the
	// expected output lengths (HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE,
	// HF_HOME/hub, ~/.cache/huggingface/hub). Empty disables the lookup.
	HFHubCache string `json:"hf_hub_cache,omitempty"`

	// Our additions (no InferenceX variable): the recipe's golden
	// acceptance length and the tolerance of the check (0 = default).
	GoldenAL    *float64 `json:"golden_al,omitempty"`
	ALTolerance float64  `json:"al_tolerance,omitempty"`
}

// HubCache is the Hugging Face hub cache a process with the environment
// getenv reads datasets from, as InferenceX's aggregator resolves it:
// HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, HF_HOME/hub, then
// ~/.cache/huggingface/hub; "" when none is set.
func HubCache(getenv func(string) string) string {
	switch {
	case getenv("HF_HUB_CACHE") != "":
		return getenv("HF_HUB_CACHE")
	case getenv("HUGGINGFACE_HUB_CACHE") != "":
		return getenv("HUGGINGFACE_HUB_CACHE")
	case getenv("HF_HOME") != "":
		return filepath.Join(getenv("HF_HOME"), "hub")
	case getenv("HOME") != "":
		return filepath.Join(getenv("HOME"), ".cache", "huggingface", "hub")
	}
	return ""
}

// WorkerShape is the parallelism of one side of a disaggregated deployment.
type WorkerShape struct {
	NumWorkers  int    `json:"num_workers"`
	TP          int    `json:"tp"`
	PP          int    `json:"pp"`
	DCP         int    `json:"dcp"`
	PCP         int    `json:"pcp"`
	EP          int    `json:"ep"`
	DPAttention string `json:"dp_attention"` // as given ("true"/"false")
}

// EnvError is a variable InferenceX's aggregator would reject (it exits
// with the same message).
type EnvError struct {
	Var string
	Msg string
}

func (e *EnvError) Error() string { return e.Msg }

// FromEnv builds RunFacts from InferenceX's environment variable names, with
// InferenceX's defaults and checks (KV offload consistency, positive
// PP/DCP/PCP, strict component metadata). Unknown variables are ignored.
func FromEnv(env map[string]string) (RunFacts, error) {
	var errs []error
	get := func(name string) string { return env[name] }
	num := func(name string, def int) int {
		v := get(name)
		if v == "" {
			return def
		}
		n, ok := pyjson.ParseInt(v)
		if !ok {
			errs = append(errs, &EnvError{Var: name, Msg: fmt.Sprintf("%s=%q is not an integer", name, v)})
			return def
		}
		return int(n)
	}
	f := RunFacts{
		RunnerType:        get("RUNNER_TYPE"),
		Image:             get("IMAGE"),
		RecipeFingerprint: get("RECIPE_FINGERPRINT"),
		Model:             get("MODEL"),
		ModelPrefix:       get("MODEL_PREFIX"),
		Framework:         configs.Engine(get("FRAMEWORK")),
		Precision:         get("PRECISION"),
		SpecDecoding:      "none",
		Disagg:            envBool(get("DISAGG")),
		Multinode:         envBool(get("IS_MULTINODE")),
		TP:                num("TP", 1),
		EP:                num("EP_SIZE", 1),
		DPAttention:       "false",
		PP:                num("PP_SIZE", 1),
		DCP:               num("DCP_SIZE", 1),
		PCP:               num("PCP_SIZE", 1),
		KVOffloading:      get("KV_OFFLOADING"),
		KVOffloadBackend:  get("KV_OFFLOAD_BACKEND"),
		TotalCPUDRAMGB:    num("TOTAL_CPU_DRAM_GB", 0),
		KVP2PTransfer:     get("KV_P2P_TRANSFER"),
		ResultFilename:    get("RESULT_FILENAME"),
		PrefillHW:         get("PREFILL_HARDWARE"),
		DecodeHW:          get("DECODE_HARDWARE"),
	}
	// CONC has no empty-string default in InferenceX: int("") fails there.
	if v, ok := env["CONC"]; ok {
		n, ok := pyjson.ParseInt(v)
		if !ok {
			errs = append(errs, &EnvError{Var: "CONC", Msg: fmt.Sprintf("CONC=%q is not an integer", v)})
		}
		f.Conc = int(n)
	}
	if v, ok := env["SPEC_DECODING"]; ok {
		f.SpecDecoding = v
	}
	if v, ok := env["DP_ATTENTION"]; ok {
		f.DPAttention = v
	}
	f.Prefill = WorkerShape{
		NumWorkers: num("PREFILL_NUM_WORKERS", 0), TP: num("PREFILL_TP", 0),
		PP: num("PREFILL_PP_SIZE", 1), DCP: num("PREFILL_DCP_SIZE", 1), PCP: num("PREFILL_PCP_SIZE", 1),
		EP: num("PREFILL_EP", 1), DPAttention: orDefault(env, "PREFILL_DP_ATTN", "false"),
	}
	f.Decode = WorkerShape{
		NumWorkers: num("DECODE_NUM_WORKERS", 0), TP: num("DECODE_TP", 0),
		PP: num("DECODE_PP_SIZE", 1), DCP: num("DECODE_DCP_SIZE", 1), PCP: num("DECODE_PCP_SIZE", 1),
		EP: num("DECODE_EP", 1), DPAttention: orDefault(env, "DECODE_DP_ATTN", "false"),
	}
	var err error
	if f.Router, err = componentMeta("ROUTER_METADATA", get("ROUTER_METADATA"), true); err != nil {
		errs = append(errs, err)
	}
	if f.KVOffloadBackendMeta, err = componentMeta("KV_OFFLOAD_BACKEND_METADATA", get("KV_OFFLOAD_BACKEND_METADATA"), false); err != nil {
		errs = append(errs, err)
	}
	f.HFHubCache = HubCache(func(k string) string { return env[k] })
	if err := errors.Join(errs...); err != nil {
		return f, err
	}
	return f, f.Check()
}

// Check applies InferenceX's consistency rules to facts built by hand.
func (f *RunFacts) Check() error {
	switch {
	case f.KVOffloading == "":
		return &EnvError{Var: "KV_OFFLOADING", Msg: "Missing required environment variable: KV_OFFLOADING"}
	case f.KVOffloading == "none":
		if f.KVOffloadBackend != "" || f.KVOffloadBackendMeta != nil {
			return &EnvError{Var: "KV_OFFLOAD_BACKEND", Msg: "KV_OFFLOAD_BACKEND must be empty when KV_OFFLOADING=none"}
		}
	default:
		if f.KVOffloadBackend == "" || f.KVOffloadBackend == "none" || f.KVOffloadBackendMeta == nil {
			return &EnvError{Var: "KV_OFFLOAD_BACKEND", Msg: "KV_OFFLOAD_BACKEND is required when KV_OFFLOADING is enabled"}
		}
		if f.KVOffloadBackendMeta.Name != f.KVOffloadBackend {
			return &EnvError{Var: "KV_OFFLOAD_BACKEND", Msg: "KV_OFFLOAD_BACKEND must match KV_OFFLOAD_BACKEND_METADATA.name"}
		}
	}
	if !f.Multinode {
		if f.PP <= 0 || f.DCP <= 0 || f.PCP <= 0 {
			return &EnvError{Var: "PP_SIZE", Msg: "PP_SIZE, DCP_SIZE, and PCP_SIZE must be positive integers."}
		}
		return nil
	}
	for _, v := range []int{f.Prefill.PP, f.Prefill.DCP, f.Prefill.PCP, f.Decode.PP, f.Decode.DCP, f.Decode.PCP} {
		if v <= 0 {
			return &EnvError{Var: "PREFILL_PP_SIZE", Msg: "Multinode PP, DCP, and PCP sizes must be positive integers."}
		}
	}
	if (f.PrefillHW == "") != (f.DecodeHW == "") {
		return &EnvError{Var: "PREFILL_HARDWARE", Msg: "PREFILL_HARDWARE and DECODE_HARDWARE must be specified together."}
	}
	return nil
}

// NumGPUs is the per-GPU throughput denominator: TP·PP·PCP on one node,
// prefill plus decode GPUs (workers·TP·PP·PCP each) across nodes.
func (f *RunFacts) NumGPUs() int {
	if !f.Multinode {
		return f.TP * f.PP * f.PCP
	}
	return f.Prefill.gpus() + f.Decode.gpus()
}

func (w WorkerShape) gpus() int { return w.NumWorkers * w.TP * w.PP * w.PCP }

func envBool(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func orDefault(env map[string]string, name, def string) string {
	if v, ok := env[name]; ok {
		return v
	}
	return def
}

// componentMeta parses {"name","version"} metadata with InferenceX's
// messages; strict requires both keys (router), otherwise version is
// optional (KV offload backend).
func componentMeta(name, raw string, strict bool) (*configs.Component, error) {
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, &EnvError{Var: name, Msg: name + " must contain valid JSON"}
	}
	m, isObj := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	joined := strings.Join(keys, ",")
	if strict {
		if !isObj || joined != "name,version" {
			return nil, &EnvError{Var: name, Msg: name + " must contain exactly 'name' and 'version'"}
		}
	} else {
		if !isObj || !subset(keys, "name", "version") {
			return nil, &EnvError{Var: name, Msg: name + " may contain only 'name' and 'version'"}
		}
		if joined != "name" && joined != "name,version" {
			return nil, &EnvError{Var: name, Msg: name + " must contain 'name' and optional 'version'"}
		}
	}
	c := &configs.Component{}
	for _, k := range keys {
		s, ok := m[k].(string)
		if !ok || s == "" {
			if strict {
				return nil, &EnvError{Var: name, Msg: name + " name and version must be non-empty strings"}
			}
			return nil, &EnvError{Var: name, Msg: name + " values must be non-empty strings"}
		}
		if k == "name" {
			c.Name = s
		} else {
			c.Version = s
		}
	}
	return c, nil
}

func subset(keys []string, allowed ...string) bool {
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return false
		}
	}
	return true
}

// EnvFromFile reads a JSON object of variable names to string values (the
// conformance cases' env.json) and replaces each "<NAME>" placeholder with
// placeholders[NAME] (e.g. "RESULT_DIR").
func EnvFromFile(path string, placeholders map[string]string) (map[string]string, error) {
	var raw map[string]any
	if _, err := configs.ReadJSON(path, &raw, "a JSON object of InferenceX variable names to values"); err != nil {
		return nil, err
	}
	env := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		switch t := v.(type) {
		case string:
			s = t
		case float64, bool:
			s = fmt.Sprint(t)
		case nil:
			continue
		default:
			return nil, fmt.Errorf("%s: %s: want a string, got %T", path, k, v)
		}
		for name, val := range placeholders {
			s = strings.ReplaceAll(s, "<"+name+">", val)
		}
		env[k] = s
	}
	return env, nil
}

// ProcessEnv returns os.Environ as a map.
func ProcessEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// FilenameParts are the inputs of InferenceX's RESULT_FILENAME.
type FilenameParts struct {
	ExpName   string // e.g. "qwen3.5_agentic"
	Precision string
	Framework configs.Engine
	// Parallelism is the engine's layout (a multi-node row's prefill
	// worker's).
	configs.Parallelism
	Disagg            bool
	SpecDecoding      string // "none", "mtp", ...
	Conc              int
	RunnerName        string // the runner's name, e.g. "mi325x-amds_07"
	RecipeFingerprint string // full hex; the first 16 characters are used
}

// ResultFilename builds RESULT_FILENAME as InferenceX's benchmark template
// does: <exp>_<precision>_<framework>_tp<TP>-pp<PP>-dcp<DCP>-pcp<PCP>-ep<EP>-
// dpa<true|false>_disagg-<true|false>_spec-<S>_conc<C>_<runner>, plus
// _recipe-<fingerprint[:16]> when a fingerprint is set. No extension.
func ResultFilename(p FilenameParts) string {
	s := fmt.Sprintf("%s_%s_%s_tp%d-pp%d-dcp%d-pcp%d-ep%d-dpa%t_disagg-%t_spec-%s_conc%d_%s",
		p.ExpName, p.Precision, p.Framework, p.TP, p.PP, p.DCPSize, p.PCPSize, p.EP,
		p.DPAttn, p.Disagg, p.SpecDecoding, p.Conc, p.RunnerName)
	if fp := p.RecipeFingerprint; fp != "" {
		if len(fp) > 16 {
			fp = fp[:16]
		}
		s += "_recipe-" + fp
	}
	return s
}

// CheckResultFilename rejects names that cannot be a single file name.
func CheckResultFilename(name string) error { return filename.Check("RESULT_FILENAME", name) }

// Speculative reports whether a spec_decoding value names a speculative
// method ("mtp", "eagle", ...), not "none" or unset.
func Speculative(specDecoding string) bool {
	return specDecoding != "" && specDecoding != "none"
}
