package simengine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sweep/configs"
	"sweep/internal/simproto"
	"sweep/recipes"
	"time"
)

// Spec holds the speculative-decoding settings the simulator honours.
// Algorithm "" means speculative decoding is off and every decode step
// yields one token.
type Spec struct {
	// Algorithm is SGLang's --speculative-algorithm (EAGLE, EAGLE3, NEXTN,
	// MTP...) or vLLM's speculative-config "method" (mtp, eagle3, ...).
	Algorithm string
	// NumSteps is the number of draft steps (SGLang
	// --speculative-num-steps, vLLM num_speculative_tokens).
	NumSteps int
	// TopK is SGLang's --speculative-eagle-topk (1 for vLLM).
	TopK int
	// NumDraftTokens is the number of tokens verified per step including
	// the bonus token (SGLang --speculative-num-draft-tokens; vLLM
	// num_speculative_tokens+1).
	NumDraftTokens int
	// AcceptLength is the synthetic mean acceptance length (accepted
	// drafts + bonus per verify step): SGLANG_SIMULATE_ACC_LEN or vLLM
	// synthetic_acceptance_length. 0 means "not pinned": the simulator
	// then uses DefaultAcceptRate per draft position.
	AcceptLength float64
	// AcceptRates are vLLM's synthetic_acceptance_rates: per draft
	// position i the unconditional odds that the first i+1 drafts are all
	// accepted (non-increasing, one per draft). Used when AcceptLength is
	// 0; a length resolves to the minimum-variance schedule as vLLM does.
	AcceptRates []float64
	// AcceptMethod is how SGLang simulates AcceptLength
	// (SGLANG_SIMULATE_ACC_METHOD): AcceptMatchExpected or
	// AcceptMultinomial draw one length per verify step that every request
	// of the batch takes; "" (vLLM's synthetic rejection sampler) draws
	// each request's drafts on their own.
	AcceptMethod string
}

// SGLang's simulated acceptance methods (SGLANG_SIMULATE_ACC_METHOD).
const (
	// AcceptMatchExpected takes the acceptance length rounded down or up,
	// up with the probability of its fraction, so the mean is met
	// (current SGLang's default; InferenceX's recipes set it).
	AcceptMatchExpected = "match-expected"
	// AcceptMultinomial rounds a normal draw (mean the length, deviation
	// 1) clamped to [1, drafts+1]; its mean misses the length near the
	// ends (the default of older SGLang builds).
	AcceptMultinomial = "multinomial"
)

// Enabled reports whether speculative decoding is on.
func (s Spec) Enabled() bool { return s.Algorithm != "" && s.MaxDrafts() > 0 }

// MaxDrafts is the largest number of draft tokens one verify step can
// accept (the bonus token excluded).
func (s Spec) MaxDrafts() int {
	if s.NumDraftTokens > 0 {
		return max(min(s.NumSteps, s.NumDraftTokens-1), 0)
	}
	return s.NumSteps
}

// DefaultAcceptRate is the per-position acceptance probability used when
// speculative decoding is on but no synthetic acceptance is configured.
const DefaultAcceptRate = 0.72

// Config is everything that shapes the simulated engine. Build it with
// ConfigFromArgs (from a real engine argv) or by hand; zero fields take
// the defaults documented on each field, applied by Normalize.
type Config struct {
	Engine          configs.Engine
	ModelPath       string // --model-path / vllm serve MODEL
	ServedModelName string // defaults to ModelPath
	Host            string // default 127.0.0.1 (SGLang) / 0.0.0.0 (vLLM)
	Port            int    // default 30000 (SGLang) / 8000 (vLLM)

	TP, EP, DP, PP int // parallel sizes; 0 means 1
	// DPAttention is SGLang --enable-dp-attention: DP ranks share the
	// GPUs of the TP group instead of multiplying them.
	DPAttention bool

	// MaxRunningRequests caps the batch per DP rank (SGLang
	// --max-running-requests, vLLM --max-num-seqs). 0 means auto.
	MaxRunningRequests int
	// MemFraction is SGLang --mem-fraction-static or vLLM
	// --gpu-memory-utilization: the share of HBM for weights and KV.
	MemFraction float64
	// MaxTotalTokens overrides the KV pool size (SGLang --max-total-tokens).
	MaxTotalTokens int
	// CPUOffloadGiB is vLLM's --cpu-offload-gb: GiB of each GPU's weights
	// kept in host memory (vLLM's docs: "a virtual way to increase the GPU
	// memory size"); the pool gains them.
	CPUOffloadGiB float64
	PageSize      int // KV page (block) size in tokens; default 1 / 16
	// ChunkSize is the prefill token budget per step (SGLang
	// --chunked-prefill-size, vLLM --max-num-batched-tokens).
	ChunkSize     int
	ContextLength int // default the model's native context (262144 unless its family says otherwise)
	// NoPrefixCache is SGLang --disable-radix-cache or vLLM
	// --no-enable-prefix-caching.
	NoPrefixCache bool
	// EnableMetrics is SGLang --enable-metrics (vLLM always serves
	// /metrics).
	EnableMetrics     bool
	EnableCacheReport bool // SGLang --enable-cache-report: usage.prompt_tokens_details
	StreamInterval    int  // SGLang --stream-interval; default 1
	DecodeLogInterval int  // SGLang --decode-log-interval; default 40
	SkipWarmup        bool // SGLang --skip-server-warmup
	KVCacheDType      string
	// AttentionBackend is SGLang's --attention-backend: "aiter" (AMD)
	// takes 15 % off the memory fraction for a long context.
	AttentionBackend string
	// SWAFullTokensRatio is SGLang's --swa-full-tokens-ratio: a sliding
	// window pool of this many tokens per token of the full pool, for a
	// model whose layers keep a sliding window (DeepSeek-V4). Default 0.8,
	// SGLang's.
	SWAFullTokensRatio float64

	// Disagg is SGLang --disaggregation-mode: "" (the default "null",
	// serving both phases), DisaggPrefill or DisaggDecode. A prefill
	// worker computes a prompt and its first token and hands the KV to a
	// decode worker; a decode worker receives a prompt's KV (KVTransfer)
	// and generates. SGLang's decode worker keeps no radix cache unless
	// --disaggregation-decode-enable-radix-cache (default false): every
	// turn's whole prompt KV arrives from the prefill worker.
	Disagg string
	// KVTransferBackend is --disaggregation-transfer-backend (mooncake,
	// nixl, mori, ...): named in /get_server_info only; the transfer's cost
	// is KVLinkBytesPerSec per link.
	KVTransferBackend string

	Spec Spec

	// GPU is a hint for the hardware model (mi300x, mi325x, mi355x, h100,
	// h200, b200, b300, gb200); default mi300x.
	GPU string
	// Runner is the point's runner label (simproto.EnvRunner), whose node
	// bounds the host KV tier's memory (hostTierLog); "" when not told.
	Runner string
	// TimeScale divides every simulated duration: 60 runs a 20-minute
	// point in 20 s. Metrics report simulated seconds. Default 1.
	TimeScale float64
	// Virtual runs the engine on the virtual clock (see the package doc):
	// simulated time advances by events, paced by the registered
	// participants of the built-in load generator, never by the wall
	// clock; TimeScale is then ignored. Env SWEEP_SIM_CLOCK=virtual.
	Virtual bool
	// Seed makes noise and output lengths reproducible.
	Seed uint64
	// LoadTime is the simulated time before the port opens (weights,
	// graph capture). WarmupTime is the simulated time after the port
	// opens before /health turns 200 (SGLang only). Zero takes the
	// default (90 s and 10 s); a negative value means none.
	LoadTime, WarmupTime time.Duration
	// HostKV is the KV offload tier in host memory (SGLang HiCache, vLLM's
	// CPU offload, Mooncake store and LMCache connectors); the zero value
	// means none.
	HostKV HostKV
	// KVBytesPerToken overrides the KV footprint of one token summed
	// over all ranks; 0 derives it from the model name.
	KVBytesPerToken int
	// Faults are injected failures for tests.
	Faults []Fault
	// Calibration, when set, replaces the model's step costs and KV pool
	// by a fit to measured results (env SWEEP_SIM_CALIBRATION names the
	// file; the arm matching this configuration is used).
	Calibration *ArmCalibration
	// CalibrationFile is the file SWEEP_SIM_CALIBRATION named, "" when
	// none: with Calibration nil, the file has no arm for this
	// configuration and the model's step costs and pool stand.
	CalibrationFile string
}

// HostKV sizes a host-memory KV tier. Its pool is per rank of the engine's
// workers (one per GPU), like the device pool it extends.
type HostKV struct {
	// BytesPerWorker is the host memory of each worker (SGLang
	// --hicache-size GB, vLLM cpu_bytes_to_use_per_rank, an LMCache
	// server's --l1-size-gb over the workers it serves).
	BytesPerWorker float64
	// Bytes is the host memory of one engine, split evenly over its
	// workers, when BytesPerWorker is 0 (vLLM's SimpleCPUOffload
	// cpu_bytes_to_use, which InferenceX's MiniMax-M3 and DeepSeek-V4
	// Blackwell scripts set). vLLM divides it by the engine's world size,
	// TP × PP: every data-parallel rank runs an engine of its own, so
	// each DP rank's workers share all of it.
	Bytes float64
	// WriteBack: blocks go to the host when the device evicts them, not
	// when they are computed (SGLang --hicache-write-policy write_back,
	// vLLM's lazy_offload), so the tier holds its whole size beyond the
	// device pool's blocks, and a loaded block keeps its host copy.
	WriteBack bool
	// Ratio sizes the host pool as a multiple of the device pool when
	// BytesPerWorker is 0 (SGLang --hicache-ratio, default 2).
	Ratio float64
	// Shared: the workers' memory is one store that keeps each distinct
	// KV shard of a block once (Mooncake's embedded store, vLLM's
	// MooncakeStoreConnector): every worker mounts BytesPerWorker, and the
	// TP ranks that hold the same KV head (TP above the model's KV heads)
	// write one key between them instead of a copy each.
	Shared bool
	// Source says where the tier comes from, as the engine's log names
	// it: "SGLang HiCache: --hicache-size 144 GB per rank", "LMCache: 4
	// servers × 74 GiB L1, LRU", ...; "" for none.
	Source string
}

// Enabled reports whether the configuration has a host tier.
func (h HostKV) Enabled() bool { return h.BytesPerWorker > 0 || h.Bytes > 0 || h.Ratio > 0 }

// GPUs returns the number of GPUs the configuration occupies, computed
// the way each engine does.
func (c Config) GPUs() int {
	tp, dp, pp := max(c.TP, 1), max(c.DP, 1), max(c.PP, 1)
	if c.Engine == configs.SGLang && c.DPAttention {
		return tp * pp
	}
	return tp * dp * pp
}

// Ranks is the number of independent schedulers (DP ranks), each with its
// own batch and KV pool.
func (c Config) Ranks() int { return max(c.DP, 1) }

// Normalize fills defaults and checks the configuration.
func (c Config) Normalize() (Config, error) {
	var errs []error
	if err := c.Engine.Set(string(c.Engine)); err != nil {
		errs = append(errs, err)
	}
	if c.ModelPath == "" {
		errs = append(errs, errors.New("model path is required (--model-path or vllm serve MODEL)"))
	}
	if c.ServedModelName == "" {
		c.ServedModelName = c.ModelPath
	}
	if c.Host == "" {
		c.Host = map[configs.Engine]string{configs.SGLang: "127.0.0.1", configs.VLLM: "0.0.0.0"}[c.Engine]
	}
	if c.Port == 0 {
		c.Port = map[configs.Engine]int{configs.SGLang: 30000, configs.VLLM: 8000}[c.Engine]
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d: want 0-65535", c.Port))
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{"tp", &c.TP}, {"ep", &c.EP}, {"dp", &c.DP}, {"pp", &c.PP}} {
		if *p.v < 0 {
			errs = append(errs, fmt.Errorf("%s size %d: want a positive integer", p.name, *p.v))
		}
		*p.v = max(*p.v, 1)
	}
	if c.DPAttention && c.TP%c.DP != 0 {
		errs = append(errs, fmt.Errorf("dp-attention: tp %d is not a multiple of dp %d", c.TP, c.DP))
	}
	if c.MemFraction == 0 {
		c.MemFraction = map[configs.Engine]float64{configs.SGLang: 0.85, configs.VLLM: 0.92}[c.Engine]
	}
	if c.CPUOffloadGiB < 0 {
		errs = append(errs, fmt.Errorf("cpu offload %g GiB: want 0 or more", c.CPUOffloadGiB))
	}
	if c.MemFraction < 0 || c.MemFraction > 1 {
		errs = append(errs, fmt.Errorf("memory fraction %g: want a value in (0, 1]", c.MemFraction))
	}
	if c.SWAFullTokensRatio == 0 && c.Engine == configs.SGLang {
		c.SWAFullTokensRatio = sglangSWAFullTokensRatio
	}
	if c.SWAFullTokensRatio < 0 {
		errs = append(errs, fmt.Errorf("--swa-full-tokens-ratio %g: want a positive ratio (SGLang's default is %g)", c.SWAFullTokensRatio, sglangSWAFullTokensRatio))
	}
	if c.PageSize <= 0 {
		c.PageSize = map[configs.Engine]int{configs.SGLang: 1, configs.VLLM: 16}[c.Engine]
	}
	if c.ChunkSize <= 0 {
		c.ChunkSize = map[configs.Engine]int{configs.SGLang: 16384, configs.VLLM: 8192}[c.Engine]
	}
	if c.ContextLength <= 0 {
		// The model's native context, as the engines default to it.
		c.ContextLength = shapeOf(c.ModelPath).context
	}
	if c.StreamInterval <= 0 {
		c.StreamInterval = 1
	}
	if c.DecodeLogInterval <= 0 {
		c.DecodeLogInterval = 40
	}
	if c.Engine == configs.VLLM {
		c.EnableMetrics = true
	}
	if c.TimeScale == 0 {
		c.TimeScale = 1
	}
	if c.TimeScale < 0 {
		errs = append(errs, fmt.Errorf("time scale %g: want a positive number", c.TimeScale))
	}
	if c.LoadTime == 0 {
		c.LoadTime = 90 * time.Second
	}
	if c.WarmupTime == 0 {
		c.WarmupTime = 10 * time.Second
	}
	if c.GPU == "" {
		c.GPU = "mi300x"
	}
	c.GPU = strings.ToLower(c.GPU)
	if _, ok := gpuSpecs[c.GPU]; !ok {
		errs = append(errs, fmt.Errorf("gpu %q: want one of %s", c.GPU, strings.Join(gpuNames(), ", ")))
	}
	switch c.Disagg {
	case "", DisaggPrefill, DisaggDecode:
	default:
		errs = append(errs, fmt.Errorf("disaggregation mode %q: want %s or %s (or none)", c.Disagg, DisaggPrefill, DisaggDecode))
	}
	if c.Disagg != "" && c.Virtual {
		errs = append(errs, fmt.Errorf("a disaggregated %s worker runs on the wall clock (--time-scale): the virtual clock has one engine, not prefill and decode workers", c.Disagg))
	}
	errs = append(errs, c.Spec.normalize()...)
	return c, errors.Join(errs...)
}

// sglangSimulatedAcceptance reads SGLang's simulated acceptance from the
// engine's environment: SGLANG_SIMULATE_ACC_LEN (-1, the default, is off)
// and SGLANG_SIMULATE_ACC_METHOD (match-expected unless set).
func (s *Spec) sglangSimulatedAcceptance(env map[string]string) []error {
	v, ok := env["SGLANG_SIMULATE_ACC_LEN"]
	if !ok {
		return nil
	}
	var errs []error
	al, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("SGLANG_SIMULATE_ACC_LEN=%q: want a number", v))
	case al > 0:
		s.AcceptLength, s.AcceptMethod = al, AcceptMatchExpected
	}
	switch m := strings.TrimSpace(env["SGLANG_SIMULATE_ACC_METHOD"]); m {
	case "":
	case AcceptMatchExpected, AcceptMultinomial:
		if s.AcceptLength > 0 {
			s.AcceptMethod = m
		}
	default:
		errs = append(errs, fmt.Errorf("SGLANG_SIMULATE_ACC_METHOD=%q: want %s or %s", m, AcceptMatchExpected, AcceptMultinomial))
	}
	return errs
}

// normalize fills the speculative defaults as SGLang does and checks the
// synthetic acceptance settings; nothing to do without an algorithm.
func (s *Spec) normalize() []error {
	if s.Algorithm == "" {
		return nil
	}
	var errs []error
	if s.TopK <= 0 {
		s.TopK = 1
	}
	if s.NumSteps <= 0 && s.NumDraftTokens > 1 {
		s.NumSteps = s.NumDraftTokens - 1
	}
	if s.NumSteps <= 0 {
		s.NumSteps = 3
	}
	if s.NumDraftTokens <= 0 || (s.TopK == 1 && s.NumDraftTokens != s.NumSteps+1) {
		s.NumDraftTokens = s.NumSteps + 1 // SGLang forces steps+1 when topk is 1
	}
	if k := float64(s.MaxDrafts()); s.AcceptLength != 0 && (s.AcceptLength < 1 || s.AcceptLength > k+1) {
		errs = append(errs, fmt.Errorf("synthetic acceptance length %g: want a value in [1, %g] for %d draft tokens", s.AcceptLength, k+1, int(k)))
	}
	for i, r := range s.AcceptRates {
		if r < 0 || r > 1 {
			errs = append(errs, fmt.Errorf("synthetic_acceptance_rates[%d] = %g: want a value in [0, 1]", i, r))
		}
		if i > 0 && r > s.AcceptRates[i-1] {
			errs = append(errs, fmt.Errorf("synthetic_acceptance_rates %v: want them non-increasing (position %d's odds include position %d's), as vLLM does", s.AcceptRates, i, i-1))
			break
		}
	}
	if n := len(s.AcceptRates); n > 0 && n != s.MaxDrafts() {
		errs = append(errs, fmt.Errorf("synthetic_acceptance_rates %v: want one per draft token (%d), as vLLM does", s.AcceptRates, s.MaxDrafts()))
	}
	return errs
}

// Lookup gives typed access to a parsed engine argv by canonical long flag
// name, spelled as in engine-flags.yaml ("--tp-size",
// "--tensor-parallel-size", "--speculative-config"). The second result
// reports whether the flag was given. A boolean flag reports its value
// (store_true: true when present; --no-x: false).
type Lookup interface {
	String(name string) (string, bool)
	Int(name string) (int, bool)
	Float(name string) (float64, bool)
	Bool(name string) (bool, bool)
}

// ConfigFromArgs builds a Config from a parsed engine argv and the
// environment the engine would see (SGLANG_SIMULATE_ACC_LEN, the
// SWEEP_SIM_* variables). The result is normalized.
func ConfigFromArgs(engine configs.Engine, flags Lookup, env map[string]string) (Config, error) {
	return configFromArgs(engine, flags, env, nil)
}

// configFromArgs is ConfigFromArgs with the files the engine's point
// writes before it starts (CommandLine.Files), read there before the
// disk.
func configFromArgs(engine configs.Engine, flags Lookup, env map[string]string, files []recipes.File) (Config, error) {
	c := Config{Engine: engine}
	var errs []error
	str := func(name string, dst *string) {
		if v, ok := flags.String(name); ok {
			*dst = v
		}
	}
	num := func(name string, dst *int) {
		if v, ok := flags.Int(name); ok {
			*dst = v
		}
	}
	frac := func(name string, dst *float64) {
		if v, ok := flags.Float(name); ok {
			*dst = v
		}
	}
	switch engine {
	case configs.SGLang:
		str("--model-path", &c.ModelPath)
		str("--served-model-name", &c.ServedModelName)
		str("--host", &c.Host)
		num("--port", &c.Port)
		num("--tp-size", &c.TP)
		num("--dp-size", &c.DP)
		num("--pp-size", &c.PP)
		num("--ep-size", &c.EP)
		c.DPAttention = boolFlag(flags, "--enable-dp-attention")
		num("--max-running-requests", &c.MaxRunningRequests)
		frac("--mem-fraction-static", &c.MemFraction)
		num("--max-total-tokens", &c.MaxTotalTokens)
		num("--page-size", &c.PageSize)
		num("--chunked-prefill-size", &c.ChunkSize)
		if c.ChunkSize < 0 { // -1 disables chunking: the whole prompt in one step
			c.ChunkSize = 1 << 30
		}
		num("--context-length", &c.ContextLength)
		c.NoPrefixCache = boolFlag(flags, "--disable-radix-cache")
		c.EnableMetrics = boolFlag(flags, "--enable-metrics")
		c.EnableCacheReport = boolFlag(flags, "--enable-cache-report")
		num("--stream-interval", &c.StreamInterval)
		num("--decode-log-interval", &c.DecodeLogInterval)
		c.SkipWarmup = boolFlag(flags, "--skip-server-warmup")
		str("--kv-cache-dtype", &c.KVCacheDType)
		str("--attention-backend", &c.AttentionBackend)
		frac("--swa-full-tokens-ratio", &c.SWAFullTokensRatio)
		if boolFlag(flags, "--enable-hierarchical-cache") {
			// SGLang's defaults: a host pool twice the device pool, unless
			// --hicache-size gives its GB per rank.
			c.HostKV.Ratio = 2
			frac("--hicache-ratio", &c.HostKV.Ratio)
			c.HostKV.Source = fmt.Sprintf("SGLang HiCache: --hicache-ratio %g of the device pool", c.HostKV.Ratio)
			if v, ok := flags.Float("--hicache-size"); ok && v > 0 {
				c.HostKV.BytesPerWorker = v * 1e9
				c.HostKV.Source = fmt.Sprintf("SGLang HiCache: --hicache-size %g GB per rank", v)
			}
			if v, ok := flags.String("--hicache-write-policy"); ok && v == "write_back" {
				c.HostKV.WriteBack = true
			}
		}
		str("--disaggregation-mode", &c.Disagg)
		str("--disaggregation-transfer-backend", &c.KVTransferBackend)
		decodeCache := boolFlag(flags, "--disaggregation-decode-enable-radix-cache")
		switch c.Disagg {
		case "null":
			c.Disagg = ""
		case DisaggDecode:
			c.NoPrefixCache = c.NoPrefixCache || !decodeCache
		}
		str("--speculative-algorithm", &c.Spec.Algorithm)
		num("--speculative-num-steps", &c.Spec.NumSteps)
		num("--speculative-eagle-topk", &c.Spec.TopK)
		num("--speculative-num-draft-tokens", &c.Spec.NumDraftTokens)
		if c.Spec.Algorithm != "" {
			errs = append(errs, c.Spec.sglangSimulatedAcceptance(env)...)
		}
	case configs.VLLM:
		str("--model", &c.ModelPath)
		str("--served-model-name", &c.ServedModelName)
		str("--host", &c.Host)
		num("--port", &c.Port)
		num("--tensor-parallel-size", &c.TP)
		num("--data-parallel-size", &c.DP)
		num("--pipeline-parallel-size", &c.PP)
		if boolFlag(flags, "--enable-expert-parallel") {
			c.EP = max(c.TP, 1) * max(c.DP, 1)
		}
		num("--max-num-seqs", &c.MaxRunningRequests)
		if v, ok := flags.Float("--gpu-memory-utilization"); ok {
			c.MemFraction = v
		}
		num("--block-size", &c.PageSize)
		num("--max-num-batched-tokens", &c.ChunkSize)
		if v, ok := flags.Float("--cpu-offload-gb"); ok {
			c.CPUOffloadGiB = v
		}
		num("--max-model-len", &c.ContextLength)
		if v, ok := flags.Bool("--enable-prefix-caching"); ok && !v {
			c.NoPrefixCache = true
		}
		str("--kv-cache-dtype", &c.KVCacheDType)
		if raw, ok := flags.String("--kv-transfer-config"); ok && strings.TrimSpace(raw) != "" {
			connector, extra, err := parseVLLMKVTransfer(raw, &c.HostKV)
			if err != nil {
				errs = append(errs, err)
			}
			switch connector {
			case "MooncakeStoreConnector":
				n, source, err := mooncakeTier(env[EnvMooncakeConfig], files)
				if err != nil {
					errs = append(errs, err)
				}
				c.HostKV.BytesPerWorker, c.HostKV.Shared, c.HostKV.Source = n, n > 0, source
			case lmcacheConnector:
				// Write-through, per worker: the connector stores every
				// chunk a worker computes in its own server.
				n, source, err := lmcacheTier(extra, env[simproto.EnvSidecars], max(c.TP, 1)*max(c.PP, 1))
				if err != nil {
					errs = append(errs, fmt.Errorf("--kv-transfer-config %s: %w", lmcacheConnector, err))
				}
				c.HostKV.BytesPerWorker, c.HostKV.Source = n, source
			}
		}
		if raw, ok := flags.String("--speculative-config"); ok && strings.TrimSpace(raw) != "" {
			if err := parseVLLMSpec(raw, &c.Spec); err != nil {
				errs = append(errs, err)
			}
		} else if m, ok := flags.String("--spec-method"); ok {
			c.Spec.Algorithm = m
			num("--spec-tokens", &c.Spec.NumSteps)
			c.Spec.TopK = 1
			c.Spec.NumDraftTokens = c.Spec.NumSteps + 1
		}
	default:
		return c, fmt.Errorf("engine %q: want one of sglang, vllm", engine)
	}
	if err := simEnv(env, &c); err != nil {
		errs = append(errs, err)
	}
	if c.GPU == "" {
		c.GPU = GPUFromRunner(env["RUNNER_TYPE"])
	}
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	c, err := c.Normalize()
	if path := env[simproto.EnvCalibration]; err == nil && path != "" {
		cal, lerr := LoadCalibration(path)
		if lerr != nil {
			return c, fmt.Errorf("%s: %w", simproto.EnvCalibration, lerr)
		}
		c.Calibration, c.CalibrationFile = cal.Arm(c), path
	}
	return c, err
}

func boolFlag(flags Lookup, name string) bool {
	v, ok := flags.Bool(name)
	return ok && v
}

// parseVLLMKVTransfer reads the host tier of vLLM's --kv-transfer-config:
// the CPU offload connectors' cpu_bytes_to_use_per_rank, or their
// cpu_bytes_to_use for the whole engine (vLLM splits it over the world
// size; the per-rank figure wins when both are given). It returns the
// connector's name and its kv_connector_extra_config. Other connectors
// (LMCache's, whose L1 size its servers hold: lmcacheTier,
// Mooncake's, whose segment size is in its config file: mooncakeTier,
// disaggregation's) add no tier the engine's flags size.
func parseVLLMKVTransfer(raw string, h *HostKV) (string, json.RawMessage, error) {
	var v struct {
		Connector string          `json:"kv_connector"`
		Extra     json.RawMessage `json:"kv_connector_extra_config"`
	}
	var extra struct {
		PerRank float64 `json:"cpu_bytes_to_use_per_rank"`
		Total   float64 `json:"cpu_bytes_to_use"`
		Lazy    bool    `json:"lazy_offload"`
	}
	err := json.Unmarshal([]byte(raw), &v)
	if err == nil && len(v.Extra) > 0 {
		err = json.Unmarshal(v.Extra, &extra)
	}
	if err != nil {
		return "", nil, fmt.Errorf("--kv-transfer-config %q: %w", raw, err)
	}
	switch {
	case extra.PerRank > 0:
		h.BytesPerWorker = extra.PerRank
		h.Source = fmt.Sprintf("vLLM %s: cpu_bytes_to_use_per_rank %.4g GB", v.Connector, extra.PerRank/1e9)
	case extra.Total > 0:
		h.Bytes = extra.Total
		h.Source = fmt.Sprintf("vLLM %s: cpu_bytes_to_use %.4g GB over the engine's workers", v.Connector, extra.Total/1e9)
	}
	h.WriteBack = h.BytesPerWorker+h.Bytes > 0 && extra.Lazy
	return v.Connector, v.Extra, nil
}

// vllmSpecConfig is the subset of vLLM's --speculative-config JSON that the
// simulator honours.
type vllmSpecConfig struct {
	Method                    string    `json:"method"`
	Model                     string    `json:"model"`
	NumSpeculativeTokens      int       `json:"num_speculative_tokens"`
	RejectionSampleMethod     string    `json:"rejection_sample_method"`
	SyntheticAcceptanceLength *float64  `json:"synthetic_acceptance_length"`
	SyntheticAcceptanceRates  []float64 `json:"synthetic_acceptance_rates"`
}

func parseVLLMSpec(raw string, s *Spec) error {
	var v vllmSpecConfig
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return fmt.Errorf("--speculative-config %s: %w", raw, err)
	}
	if v.NumSpeculativeTokens <= 0 {
		return fmt.Errorf("--speculative-config: num_speculative_tokens must be > 0, got %d", v.NumSpeculativeTokens)
	}
	s.Algorithm = v.Method
	if s.Algorithm == "" {
		s.Algorithm = "draft_model"
		if v.Model == "[ngram]" {
			s.Algorithm = "ngram"
		}
	}
	s.NumSteps, s.TopK, s.NumDraftTokens = v.NumSpeculativeTokens, 1, v.NumSpeculativeTokens+1
	switch v.RejectionSampleMethod {
	case "", "standard", "block":
	case "synthetic":
		if v.SyntheticAcceptanceLength != nil {
			s.AcceptLength = *v.SyntheticAcceptanceLength
		} else if len(v.SyntheticAcceptanceRates) > 0 {
			s.AcceptRates = v.SyntheticAcceptanceRates
		} else {
			return errors.New("--speculative-config: rejection_sample_method synthetic needs synthetic_acceptance_length or synthetic_acceptance_rates")
		}
	default:
		return fmt.Errorf("--speculative-config: rejection_sample_method %q: want standard, synthetic or block", v.RejectionSampleMethod)
	}
	return nil
}

func simEnv(env map[string]string, c *Config) error {
	var errs []error
	if v, ok := env[simproto.EnvTimeScale]; ok && v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive number", simproto.EnvTimeScale, v))
		}
		c.TimeScale = f
	}
	switch v := env[simproto.EnvClock]; v {
	case "", "wall":
	case "virtual":
		c.Virtual = true
	default:
		errs = append(errs, fmt.Errorf("%s=%q: want virtual or wall", simproto.EnvClock, v))
	}
	if v, ok := env[simproto.EnvGPU]; ok && v != "" {
		c.GPU = v
	}
	c.Runner = env[simproto.EnvRunner]
	if v, ok := env[simproto.EnvSeed]; ok && v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want an unsigned integer", simproto.EnvSeed, v))
		}
		c.Seed = n
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{simproto.EnvLoadTime, &c.LoadTime}, {simproto.EnvWarmup, &c.WarmupTime}} {
		if v, ok := env[d.key]; ok && v != "" {
			t, err := time.ParseDuration(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: want a duration such as 90s", d.key, v))
			}
			*d.dst = t
			if t == 0 { // an explicit 0 means none (a zero Config field means the default)
				*d.dst = -1
			}
		}
	}
	if v, ok := env[simproto.EnvFault]; ok && v != "" {
		f, err := ParseFaults(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", simproto.EnvFault, err))
		}
		c.Faults = f
	}
	return errors.Join(errs...)
}

// GPUFromRunner picks a GPU hint out of a runner label such as
// "mi325x-amds_3" or "cluster:b300-nv".
func GPUFromRunner(runner string) string {
	runner = strings.ToLower(runner)
	names := gpuNames()
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) }) // gb200 before b200
	for _, n := range names {
		if strings.Contains(runner, n) {
			return n
		}
	}
	return ""
}

// sglangSWAFullTokensRatio is SGLang's default --swa-full-tokens-ratio.
const sglangSWAFullTokensRatio = 0.8

// HasFault reports whether the configuration injects a fault of kind k and
// returns it.
func (c Config) HasFault(k FaultKind) (Fault, bool) {
	for _, f := range c.Faults {
		if f.Kind == k {
			return f, true
		}
	}
	return Fault{}, false
}

// CalibrationArm is the arm of a calibration that calibrates c: its
// engine, model, GPU, layout, host KV tier, worker role, KV cache dtype
// ("auto" where c sets none) and draft steps (0 without speculative
// decoding), nothing fitted.
func (c *Config) CalibrationArm() ArmCalibration {
	drafts := 0
	if c.Spec.Enabled() {
		drafts = c.Spec.NumSteps
	}
	return ArmCalibration{Engine: c.Engine, Model: c.ModelPath, GPU: c.GPU, TP: c.TP, EP: max(c.EP, 1), DPAttention: c.DPAttention, HostKV: c.HostKV.Enabled(), Role: c.Disagg,
		KVCacheDType: cmp.Or(c.KVCacheDType, "auto"), DraftSteps: &drafts}
}

// Arm returns the arm of the calibration that calibrates c (normalized),
// or nil: the arm of its layout, KV cache width and draft steps
// (sameSteps) and role, else (a disaggregated worker the file has no arm
// of its role for) the arm of its layout without a role.
func (cal *Calibration) Arm(c Config) *ArmCalibration {
	want := c.CalibrationArm()
	for _, role := range []string{want.Role, ""} {
		for i := range cal.Arms {
			if a := &cal.Arms[i]; a.Role == role && a.sameLayout(&want) && a.sameSteps(&want) {
				return a
			}
		}
	}
	return nil
}
