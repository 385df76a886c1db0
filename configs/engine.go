package configs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Engine names an inference server as InferenceX's master configs name it
// (the framework key: "sglang", "vllm", "atom", "dynamo-sglang", ...): the
// flag schema's tool name, the simulator's kind and the metric prefix of
// its /metrics page. Row.Framework and the result file's framework carry
// it. The set of names is open (InferenceX adds frameworks); Facts gives
// what sweep knows of one, and Set (flags, YAML) accepts only the engines
// sweep runs.
//
// This file is the engine table: every per-engine fact lives in engines
// below, and code elsewhere reads the facts instead of comparing names. To
// add an engine, add its row here, its flag schema (recipes/schema), its
// recipes and its simulated behaviour (simengine).
type Engine string

// The engines sweep starts, simulates and scrapes.
const (
	SGLang Engine = "sglang"
	VLLM   Engine = "vllm"
)

// The frameworks sweep knows by name but does not run: they are read
// (aiperf server-metrics exports, result files) and reported as not
// supported yet.
const (
	ATOM         Engine = "atom"
	TRT          Engine = "trt"
	DynamoVLLM   Engine = "dynamo-vllm"
	DynamoSGLang Engine = "dynamo-sglang"
	DynamoTRT    Engine = "dynamo-trt"
	// SGLangDisagg is AMD's disaggregated SGLang (server_sglang.sh's
	// prefill and decode workers).
	SGLangDisagg Engine = "sglang-disagg"
)

// deepSeekV4Pro is the model launch_mi355x-amds.sh reads from its NFS
// share on vLLM and ATOM.
const deepSeekV4Pro = "deepseek-ai/DeepSeek-V4-Pro"

// EngineFacts is what sweep knows of one engine. The zero value of a field
// means the engine has no such thing (no router, no live gauges, ...).
type EngineFacts struct {
	Name    Engine
	Display string // name in messages: "SGLang", "vLLM", "TRT-LLM"
	// Runs says sweep has recipes for the engine and simulates it; only
	// these pass Set.
	Runs bool

	// MetricPrefix starts every family of its /metrics page ("sglang:").
	MetricPrefix string
	// DetectPrefixes are the metric-name prefixes that identify its
	// server-metrics export (InferenceX's detect_backend), tried in the
	// table's order; empty for engines detected only through another.
	DetectPrefixes []string
	// Family is the engine whose metric names the export uses for
	// acceptance length (dynamo-vllm: vllm); empty means the engine itself.
	Family Engine
	// ExportAdapter names the code that reads the engine's aiperf
	// server-metrics export into a result (InferenceX's backend adapter:
	// metrics/result's exportAdapters); empty when there is none.
	ExportAdapter string
	// Live are the series of the live view and the acceptance counters.
	Live LiveSeries
	AL   ALSeries

	// CacheFlush is the HTTP path that empties the engine's prefix cache.
	CacheFlush string
	// ModelFlag loads the model ("--model-path"; vLLM's "--model" is its
	// positional model tag); ServedModelFlag names it for clients.
	ModelFlag, ServedModelFlag string
	// Parallel maps TP / EP / DP attention to flags.
	Parallel ParallelFlags
	// Router is the router InferenceX puts in front of a DP-attention
	// engine.
	Router Router
	// Spec says how speculative decoding is configured.
	Spec SpecStyle
	// SimulateAcceptanceEnv is the environment that makes the engine accept
	// draft tokens at mean acceptance length al (SGLang); nil when the
	// engine takes it in its speculative config instead (vLLM).
	SimulateAcceptanceEnv func(al float64) map[string]string
	// AutoToolChoiceFlag must accompany a tool-call parser ("" when none).
	AutoToolChoiceFlag string
	// MemFractionFlag sets the share of GPU memory the engine takes.
	MemFractionFlag string
	// SchemaPrefix is what the flag schema's parser expects before the
	// flags of a "python3 -m MODULE" command (vLLM's "serve").
	SchemaPrefix []string
	// MinTemperature is the smallest positive sampling temperature the
	// engine honours; smaller positive ones are clamped up (0: none).
	MinTemperature float64
	// Workers is the engine a disaggregated framework's workers run (its
	// flag schema checks their commands); empty for the others.
	Workers Engine
	// MI355X is what launch_mi355x-amds.sh does differently for the
	// engine.
	MI355X MI355XLaunch
	// EnvPrefixes begin the names of the engine's own environment
	// variables (SGLANG_, VLLM_): the engine inherits them from sweep's
	// environment where its recipe does not set or unset them, and they
	// change what it measures (a sweep's resume identity records them,
	// with the libraries' beneath it: RuntimeEnvPrefixes).
	EnvPrefixes []string
}

// OwnEnvPrefixes are the prefixes of the environment variables the
// engine e runs with as its own (EnvPrefixes): its workers' for a
// disaggregated framework, its family's for a wrapper (dynamo-vllm).
func (e Engine) OwnEnvPrefixes() []string {
	f := e.Facts()
	switch {
	case len(f.EnvPrefixes) > 0:
		return f.EnvPrefixes
	case f.Workers != "":
		return f.Workers.Facts().EnvPrefixes
	case f.Family != "":
		return f.Family.Facts().EnvPrefixes
	}
	return nil
}

// RuntimeEnvPrefixes begin the names of the environment variables of the
// libraries every engine runs on, beside its own (OwnEnvPrefixes): they
// change what it measures as much, and an engine inherits them from
// sweep's environment as it does its own (a sweep's resume identity
// records both). The list is one for every framework and GPU vendor, as
// the libraries are: collective communication (NCCL_, which ROCm's RCCL
// reads under the same names, as NCCL_P2P_DISABLE or NCCL_MIN_NCHANNELS;
// RCCL_ for RCCL's own; NVSHMEM_ for DeepEP's expert all-to-all), the GPU
// runtimes (CUDA_ as CUDA_DEVICE_MAX_CONNECTIONS or CUDA_MODULE_LOADING;
// HIP_, HSA_ as HSA_NO_SCRATCH_RECLAIM, ROCR_ of ROCm), PyTorch (TORCH_
// as TORCH_NCCL_*, PYTORCH_ as PYTORCH_CUDA_ALLOC_CONF, which sizes the
// allocator on ROCm too, or PYTORCH_TUNABLEOP_ENABLED) and the kernels
// both engines compile or call (TRITON_, and AITER_ of ROCm's AITER). A
// variable of the other vendor's library is inert, and not set, on a
// host; the GPU visibility variables (CUDA_, HIP_ and
// ROCR_VISIBLE_DEVICES) are the executor's to set, not the
// environment's (campaign.EngineEnv leaves them out).
func RuntimeEnvPrefixes() []string {
	return []string{"NCCL_", "RCCL_", "NVSHMEM_", "CUDA_", "HIP_", "HSA_", "ROCR_", "TORCH_", "PYTORCH_", "TRITON_", "AITER_"}
}

// MI355XLaunch are launch_mi355x-amds.sh's per-framework choices.
type MI355XLaunch struct {
	// NoHomeMount: the container gets no home directory mount
	// (SLURM_HOME_MOUNT).
	NoHomeMount bool
	// SharedHubModels are read from the NFS share's Hugging Face cache
	// instead of the node-local one (HF_HUB_CACHE_MOUNT).
	SharedHubModels []string
}

// LiveSeries are the families a live view reads. A gauge is summed over
// ranks, KV usage is the fullest rank, a cache-hit gauge is the mean over
// ranks; counters give rates between two snapshots.
type LiveSeries struct {
	Running, Queued string // summed gauges
	// KVUsage: the first family present, fullest rank.
	KVUsage []string
	// CacheHitRate is a gauge (mean over ranks); without it the rate is
	// ΔPrefixCacheHits/ΔPrefixCacheQueries.
	CacheHitRate                        string
	PrefixCacheHits, PrefixCacheQueries string
	// GenThroughput is a gauge (summed); without it the rate is
	// ΔGenerationTokens/Δt.
	GenThroughput    string
	GenerationTokens string
	// Required are the series a live view needs.
	Required []string
	// Families lists every family the adapter reads (live gauges, counter
	// rates, acceptance counters), for KeepFamilies.
	Families []string
}

// ALCounter is one acceptance-length counter (its family name without
// "_total") and how to make the engine export it.
type ALCounter struct{ Name, Hint string }

// ALSeries are the counters mean acceptance length is computed from: per
// draft, 1 + ΔAccepted/ΔDrafts (vLLM), or per verify step,
// (ΔGeneration − ΔRequests)/ΔVerify (SGLang: a request's first token comes
// from prefill).
type ALSeries struct {
	Formula                      string
	Accepted, Drafts             ALCounter
	Generation, Requests, Verify ALCounter
}

// PerDraft reports whether AL is 1 + ΔAccepted/ΔDrafts.
func (a ALSeries) PerDraft() bool { return a.Accepted.Name != "" }

// PerVerify reports whether AL is (ΔGeneration − ΔRequests)/ΔVerify.
func (a ALSeries) PerVerify() bool { return a.Verify.Name != "" }

// ParallelFlags map a row's TP / EP / DP attention to engine flags, in this
// order: TP, then DP (with DP attention, or an explicit 1), then the
// DP-attention switch, then EP.
type ParallelFlags struct {
	TP, DP string
	// DPAttention is the bare flag that turns DP attention on ("" when
	// DP attention is data parallelism over TP-1 engines instead).
	DPAttention string
	// EPSize takes the expert-parallel size; EPEnable is a bare flag
	// passed when EP > 1. An engine has one of them.
	EPSize, EPEnable string
}

// Router is a router program in front of an engine on PORT+1, listening on
// PORT with its metrics on PORT+10000.
type Router struct {
	Program string
	// Argv is its command for a worker URL, its port and metrics port and
	// the engine's TP size (nil: no router).
	Argv func(worker string, port, metricsPort, tp int) []string
	// Env is the aiperf setting that sends the session key the router
	// hashes on.
	Env map[string]string
}

// SpecStyle is how an engine is told about speculative decoding.
type SpecStyle uint8

// Speculative decoding styles.
const (
	NoSpec       SpecStyle = iota // no speculative decoding
	SpecByFlags                   // separate flags (SGLang --speculative-*)
	SpecByConfig                  // one JSON object (vLLM --speculative-config)
)

// engines is the engine table, in detection order (dynamo before the
// engines it wraps).
var engines = []EngineFacts{
	{Name: DynamoVLLM, Display: "Dynamo (vLLM)", DetectPrefixes: []string{"dynamo_"}, Family: VLLM, ExportAdapter: "dynamo-vllm"},
	{Name: DynamoSGLang, Display: "Dynamo (SGLang)"},
	{Name: DynamoTRT, Display: "Dynamo (TRT-LLM)"},
	{Name: ATOM, Display: "ATOM", DetectPrefixes: []string{"atom:", "atom_"}, ExportAdapter: "atom",
		MI355X: MI355XLaunch{NoHomeMount: true, SharedHubModels: []string{deepSeekV4Pro}}},
	{Name: SGLangDisagg, Display: string(SGLangDisagg), Workers: SGLang},
	{
		Name: SGLang, Display: "SGLang", Runs: true,
		MetricPrefix: "sglang:", DetectPrefixes: []string{"sglang:"}, ExportAdapter: "sglang",
		Live: LiveSeries{
			Running: "sglang:num_running_reqs", Queued: "sglang:num_queue_reqs",
			KVUsage: []string{"sglang:token_usage"}, CacheHitRate: "sglang:cache_hit_rate",
			GenThroughput: "sglang:gen_throughput",
			Required:      []string{"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage"},
			Families: []string{"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage",
				"sglang:cache_hit_rate", "sglang:gen_throughput", "sglang:generation_tokens",
				"sglang:num_requests", "sglang:spec_verify_calls", "sglang:prompt_tokens", "sglang:cached_tokens"},
		},
		AL: ALSeries{
			Formula:    "(Δgeneration_tokens - Δnum_requests) / Δspec_verify_calls",
			Generation: ALCounter{"sglang:generation_tokens", "start SGLang with --enable-metrics"},
			Requests:   ALCounter{"sglang:num_requests", "start SGLang with --enable-metrics"},
			Verify:     ALCounter{"sglang:spec_verify_calls", "needs an SGLang build that exports it (2026+) and speculative decoding on"},
		},
		CacheFlush: "/flush_cache",
		ModelFlag:  "--model-path", ServedModelFlag: "--served-model-name",
		Parallel: ParallelFlags{TP: "--tp-size", DP: "--dp-size", DPAttention: "--enable-dp-attention", EPSize: "--ep-size"},
		Router: Router{
			Program: "sglang_router",
			Argv: func(worker string, port, prom, _ int) []string {
				return []string{"python3", "-m", "sglang_router.launch_router",
					"--worker-urls", worker, "--policy", "consistent_hashing",
					"--request-id-headers", "x-correlation-id", "--dp-aware",
					"--host", "0.0.0.0", "--port", strconv.Itoa(port),
					"--prometheus-host", "127.0.0.1", "--prometheus-port", strconv.Itoa(prom),
					"--connect-timeout-secs", "900", "--request-timeout-secs", "14400",
					"--disable-health-check", "--disable-retries"}
			},
			Env: map[string]string{"AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID": "true"},
		},
		Spec:            SpecByFlags,
		MemFractionFlag: "--mem-fraction-static",
		MI355X:          MI355XLaunch{NoHomeMount: true},
		EnvPrefixes:     []string{"SGLANG_", "SGL_"},
		SimulateAcceptanceEnv: func(al float64) map[string]string {
			return map[string]string{
				"SGLANG_SIMULATE_ACC_LEN":        strconv.FormatFloat(al, 'f', -1, 64),
				"SGLANG_SIMULATE_ACC_METHOD":     "match-expected",
				"SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
			}
		},
	},
	{
		Name: VLLM, Display: "vLLM", Runs: true,
		MetricPrefix: "vllm:", DetectPrefixes: []string{"vllm:"}, ExportAdapter: "vllm",
		Live: LiveSeries{
			Running: "vllm:num_requests_running", Queued: "vllm:num_requests_waiting",
			KVUsage:         []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
			PrefixCacheHits: "vllm:prefix_cache_hits", PrefixCacheQueries: "vllm:prefix_cache_queries",
			GenerationTokens: "vllm:generation_tokens",
			Required:         []string{"vllm:num_requests_running", "vllm:num_requests_waiting"},
			Families: []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
				"vllm:gpu_cache_usage_perc", "vllm:prefix_cache_hits", "vllm:prefix_cache_queries",
				"vllm:generation_tokens", "vllm:prompt_tokens", "vllm:spec_decode_num_accepted_tokens",
				"vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens"},
		},
		AL: ALSeries{
			Formula:  "1 + Δspec_decode_num_accepted_tokens / Δspec_decode_num_drafts",
			Accepted: ALCounter{"vllm:spec_decode_num_accepted_tokens", "speculative decoding must be on; vLLM exports it per engine"},
			Drafts:   ALCounter{"vllm:spec_decode_num_drafts", "speculative decoding must be on; vLLM exports it per engine"},
		},
		CacheFlush: "/reset_prefix_cache",
		ModelFlag:  "--model", ServedModelFlag: "--served-model-name",
		Parallel: ParallelFlags{TP: "--tensor-parallel-size", DP: "--data-parallel-size", EPEnable: "--enable-expert-parallel"},
		Router: Router{
			Program: "vllm-router",
			Argv: func(worker string, port, prom, tp int) []string {
				return []string{"vllm-router",
					"--worker-urls", worker, "--policy", "consistent_hash",
					"--intra-node-data-parallel-size", strconv.Itoa(tp),
					"--host", "0.0.0.0", "--port", strconv.Itoa(port),
					"--prometheus-host", "127.0.0.1", "--prometheus-port", strconv.Itoa(prom),
					"--request-timeout-secs", "14400", "--disable-retries"}
			},
			Env: map[string]string{"AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID": "1"},
		},
		Spec:               SpecByConfig,
		AutoToolChoiceFlag: "--enable-auto-tool-choice",
		MemFractionFlag:    "--gpu-memory-utilization",
		SchemaPrefix:       []string{"serve"},
		MinTemperature:     0.01,
		MI355X:             MI355XLaunch{SharedHubModels: []string{deepSeekV4Pro}},
		EnvPrefixes:        []string{"VLLM_"},
	},
	{Name: TRT, Display: "TRT-LLM"},
	{Name: "trtllm", Display: "TRT-LLM"},
	{Name: "tilert", Display: "TileRT"},
}

// Facts returns what sweep knows of e; an unknown name gives facts with
// only Name and Display (the name itself) set.
func (e Engine) Facts() EngineFacts {
	if i := slices.IndexFunc(engines, func(f EngineFacts) bool { return f.Name == e }); i >= 0 {
		return engines[i]
	}
	return EngineFacts{Name: e, Display: string(e)}
}

// Runs reports whether sweep has recipes for e and simulates it.
func (e Engine) Runs() bool { return e.Facts().Runs }

// Disaggregated reports whether the framework serves prefill and decode on
// separate engines (Dynamo, "-disagg" frameworks), which sweep does not
// plan.
func (e Engine) Disaggregated() bool {
	return strings.Contains(string(e), "dynamo") || strings.HasSuffix(string(e), "-disagg")
}

// Runnable lists the engines sweep runs (the ones Set accepts), in the
// table's order.
func Runnable() []Engine {
	var out []Engine
	for _, f := range engines {
		if f.Runs {
			out = append(out, f.Name)
		}
	}
	return out
}

func runnable() []string {
	var out []string
	for _, e := range Runnable() {
		out = append(out, string(e))
	}
	return out
}

// Set validates and stores an engine name (pflag.Value): one that sweep
// runs.
func (e *Engine) Set(s string) error {
	if !Engine(s).Runs() {
		return fmt.Errorf("engine %q: want one of %s", s, strings.Join(runnable(), ", "))
	}
	*e = Engine(s)
	return nil
}

// UnmarshalYAML decodes an engine name that sweep runs; a bad one is an
// *Error at the node's position.
func (e *Engine) UnmarshalYAML(n *yaml.Node) error {
	if err := e.Set(n.Value); err != nil {
		return &Error{Line: n.Line, Col: n.Column, Msg: err.Error()}
	}
	return nil
}

// String returns the engine name (pflag.Value).
func (e *Engine) String() string { return string(*e) }

// Type names the flag type in --help (pflag.Value).
func (e *Engine) Type() string { return "engine" }

// DetectEngine names the engine whose metrics a server-metrics export
// holds, as InferenceX's detect_backend does: a Dynamo framework is read as
// Dynamo; otherwise the first engine of the table with a family starting
// with one of its DetectPrefixes (has reports that), or, when the export
// is empty, framework fw itself. It returns "" when nothing matches.
func DetectEngine(has func(prefixes ...string) bool, empty bool, fw Engine) Engine {
	if strings.HasPrefix(string(fw), "dynamo") {
		return DynamoVLLM
	}
	return detect(has, func(f EngineFacts) bool { return empty && fw == f.Name }, false)
}

// DetectServing names the engine sweep runs whose families a /metrics
// page holds (has reports a family starting with one of the prefixes).
func DetectServing(has func(prefixes ...string) bool) (Engine, bool) {
	e := detect(has, func(EngineFacts) bool { return false }, true)
	return e, e != ""
}

func detect(has func(prefixes ...string) bool, fallback func(EngineFacts) bool, runsOnly bool) Engine {
	for _, f := range engines {
		if len(f.DetectPrefixes) == 0 || runsOnly && !f.Runs {
			continue
		}
		if has(f.DetectPrefixes...) || fallback(f) {
			return f.Name
		}
	}
	return ""
}

// AdapterFamily is the engine whose metric names e's export uses (e itself
// unless the table says otherwise).
func (e Engine) AdapterFamily() Engine {
	if f := e.Facts(); f.Family != "" {
		return f.Family
	}
	return e
}

// ServeKind is one way an A/B arm declared by its engine (ABArm.Engine)
// starts it, as SMG's launch_arm.sh does: a loopback server on one port.
type ServeKind struct {
	// Name is the arm's engine key: "vllm", "vllm-grpc", "sglang".
	Name string
	// Engine is the engine it runs; its flag schema checks the command.
	Engine Engine
	// GRPC: the server answers gRPC only (TCP readiness, a grpc:// worker
	// behind a router, no parser flags).
	GRPC bool
	// Argv is the command serving model (loaded from its path) as served
	// on port over tp GPUs with the maximum model length maxLen ("auto":
	// the engine's own).
	Argv func(model, served string, port, tp int, maxLen string) []string
}

// serveKinds are the engines an arm can declare directly, in the order
// errors list them.
var serveKinds = []ServeKind{
	{Name: string(VLLM), Engine: VLLM, Argv: func(model, served string, port, tp int, maxLen string) []string {
		return []string{"vllm", "serve", model, "--served-model-name", served, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
			"--tensor-parallel-size", strconv.Itoa(tp), "--max-model-len", maxLen}
	}},
	{Name: "vllm-grpc", Engine: VLLM, GRPC: true, Argv: func(model, served string, port, tp int, maxLen string) []string {
		return []string{"python3", "-m", "vllm.entrypoints.grpc_server", "--model", model, "--served-model-name", served,
			"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--tensor-parallel-size", strconv.Itoa(tp), "--max-model-len", maxLen}
	}},
	{Name: string(SGLang), Engine: SGLang, Argv: func(model, served string, port, tp int, maxLen string) []string {
		argv := []string{"python3", "-m", "sglang.launch_server", "--model-path", model, "--served-model-name", served,
			"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--tp-size", strconv.Itoa(tp)}
		if maxLen != "auto" {
			argv = append(argv, "--context-length", maxLen)
		}
		return argv
	}},
}

// ServeKindFor returns the serve kind called name.
func ServeKindFor(name string) (ServeKind, bool) {
	i := slices.IndexFunc(serveKinds, func(k ServeKind) bool { return k.Name == name })
	if i < 0 {
		return ServeKind{}, false
	}
	return serveKinds[i], true
}

// ServeKindNames lists the serve kinds' names.
func ServeKindNames() []string {
	out := make([]string, len(serveKinds))
	for i, k := range serveKinds {
		out[i] = k.Name
	}
	return out
}
