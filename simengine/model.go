package simengine

import (
	"math"
	"slices"
	"strings"
	"sweep/configs"
)

// capacity is the derived performance model of one configuration. All
// times are simulated seconds.
type capacity struct {
	ranks         int
	poolTokens    int     // KV pool per rank, tokens
	maxRunning    int     // per rank
	fixedStep     float64 // per decode step, independent of batch
	perSeq        float64 // per sequence per step
	perCtxToken   float64 // attention read per context token per step
	perPrefill    float64 // per uncached prompt token
	perPrefillCtx float64 // share of perPrefill added per token of context before it (attention)
	specOverhead  float64 // multiplier on the step for draft + verify
	fits          bool    // the weights fit in the memory fraction
	hostTokens    int     // host-tier KV per rank beyond the device pool, tokens
	hostTier      int     // host-tier KV per rank, tokens, whatever the device pool holds
	perLoadToken  float64 // per token loaded from the host tier
	kvBytes       float64 // KV of one token, all layers and ranks (kvBytesPerToken)
}

// kvBytesPerToken is the KV footprint of one token (all layers, all
// ranks): about 256 KiB for a 400B-class model with an FP8 KV cache, scaled
// with model size.
func kvBytesPerToken(c Config, s modelShape) float64 {
	if c.KVBytesPerToken > 0 {
		return float64(c.KVBytesPerToken)
	}
	if c.Engine == configs.SGLang && s.swa != nil {
		// SGLang's DSV4 pool keeps one row layout whatever
		// --kv-cache-dtype says (DeepSeekV4SingleKVPool: 584 bytes).
		return s.kvBytes
	}
	b := 256 * 1024 * math.Sqrt(s.totalB/400)
	if s.kvBytes > 0 {
		b = s.kvBytes
	}
	return b * float64(kvBits(c.KVCacheDType)) / 8
}

// newCapacity derives the performance model of a normalized Config.
//
// The shape, not the absolute numbers, is the point: a decode step costs
// a fixed part (weights, kernels, collectives; shrinking with TP but with
// growing communication), a part per sequence, and a part per context
// token (KV reads, spread over the attention GPUs). Throughput per GPU
// therefore rises with concurrency and flattens as KV reads dominate;
// more TP lowers step latency but spends more GPUs. EP trades a larger
// fixed all-to-all cost for cheaper per-sequence expert compute.
func newCapacity(c Config) capacity {
	g := gpuSpecs[c.GPU]
	s := shapeOf(c.ModelPath)
	tp, ep, ranks := float64(c.TP), float64(c.EP), c.Ranks()
	moe := s.activeB < s.totalB
	// Plain DP replicates the model; SGLang DP attention, and vLLM DP on an
	// MoE model, shard one copy over every GPU (attention per rank, experts
	// over all ranks).
	replicated := ranks > 1 && !(c.Engine == configs.SGLang && c.DPAttention) && !(c.Engine == configs.VLLM && moe)
	mp, attnTP := tp, tp // GPUs sharing the weights; GPUs holding one rank's KV
	switch {
	case c.Engine == configs.SGLang && c.DPAttention:
		attnTP = tp / float64(ranks)
	case c.Engine == configs.VLLM && moe:
		mp = tp * float64(ranks)
	}
	m := s.activeB / 17 // relative to a 17B-active MoE

	capa := capacity{ranks: ranks}
	capa.fixedStep = (8e-3+20e-3*m/math.Pow(mp, 0.8))/g.speed + 0.5e-3*math.Log2(mp)
	capa.perSeq = 0.4e-3 * m / (mp * g.speed)
	if ep > 1 {
		capa.fixedStep = capa.fixedStep*0.92 + 0.45e-3*math.Log2(ep)
		capa.perSeq *= 0.75
	}
	kvb := kvBytesPerToken(c, s)
	capa.kvBytes = kvb
	// A decode step reads, on each attention GPU, the KV that GPU keeps
	// per token (the same per-GPU account as the pool below): once TP
	// exceeds the model's KV heads, or for an MLA latent, every GPU reads
	// its whole head for every token.
	shards := attnTP
	if s.kvHeads > 0 {
		shards = min(attnTP, float64(s.kvHeads))
	}
	perGPUToken := kvb/shards + s.indexBytes
	capa.perCtxToken = perGPUToken / (g.hbmTBps * 1e12 * 0.35)
	// What a host tier keeps per token: the attention KV alone (a hybrid
	// model's pool figure also carries its recurrent state's share).
	attnGPUToken := perGPUToken
	if s.attnKVBytes > 0 && s.kvBytes > 0 {
		attnGPUToken = kvb*s.attnKVBytes/s.kvBytes/shards + s.indexBytes
	}
	// Prefill: 2 FLOPs per active parameter per token at 10% of the
	// GEMMs' peak (MoE prefill with long-context attention is far from
	// peak; the measured MI325X key pins the 10 %). A W4A4 checkpoint's
	// MoE layers run at the FP4 rate, the rest at FP8's.
	rate := prefillPFLOPS(g, s)
	capa.perPrefill = 2 * s.activeB * 1e9 / (mp * rate * 1e15 * 0.10)
	// Attention grows with the context: the family's FLOPs per token of
	// context against its other compute per token (the same efficiency),
	// or the generic 2 % per 1,000 tokens; attention runs at the FP8 rate
	// whatever the weights' precision.
	capa.perPrefillCtx = 0.02 / 1000
	if s.attnFLOPs > 0 {
		capa.perPrefillCtx = s.attnFLOPs / (2 * s.activeB * 1e9)
	}
	capa.perPrefillCtx *= rate / g.pflops
	if ranks > 1 && !replicated {
		// DP attention (and vLLM's DP over an MoE) keeps one copy of the
		// experts over every GPU: each rank attends to its own requests,
		// but its step waits for the experts to process every rank's
		// tokens, so a sequence's expert and prefill compute is shared with
		// the other ranks' (balanced load: ranks times a rank's own).
		capa.perSeq *= float64(ranks)
		capa.perPrefill *= float64(ranks)
	}
	capa.specOverhead = 1
	if c.Spec.Enabled() {
		capa.specOverhead = 1 + 0.08*float64(c.Spec.NumSteps)
		capa.perSeq *= float64(c.Spec.NumDraftTokens)
	}

	// KV pool, per GPU: its memory fraction, minus its share of the
	// weights (vLLM loads the draft's weights beside the target's) and its
	// activations and graphs. SGLang's aiter attention backend (AMD) takes
	// 15 % off the memory fraction for a context above 8,192 tokens
	// (server_args: mem_fraction_static *= 0.85), whatever the speculative
	// settings: InferenceX's MI325X Qwen3.5 recipe runs TP2 at 0.95 for "an
	// effective 0.8075" budget. A rank's pool is what one of its GPUs
	// holds divided by the KV one GPU keeps per token: the token's KV
	// over the rank's attention GPUs, but never less than one KV head's
	// worth (heads are replicated once TP exceeds them).
	g0 := float64(c.GPUs())
	perGPU := g.hbmGB * c.MemFraction
	if c.Engine == configs.SGLang && c.AttentionBackend == "aiter" && c.ContextLength > 8192 {
		perGPU *= aiterMemFraction
	}
	weightsGB := s.totalB * s.weightBytes
	if c.Spec.Enabled() && c.Engine == configs.VLLM {
		weightsGB *= 1.03
	}
	if replicated {
		weightsGB *= float64(ranks)
	}
	// vLLM's --cpu-offload-gb keeps that many GiB of each GPU's weights in
	// host memory. Every forward pass reads them over the host link; that
	// cost is not modelled (see the package doc).
	offloadGB := min(c.CPUOffloadGiB*gib/1e9, weightsGB/g0)
	reserveGB := perGPUReserveGB
	if c.Engine == configs.VLLM {
		reserveGB = vllmReserveGB
	}
	freeGB := perGPU - weightsGB/g0 + offloadGB - reserveGB
	// A speculative draft's KV shares the pool, token for token.
	poolGPUToken := perGPUToken
	if c.Spec.Enabled() {
		poolGPUToken *= 1 + s.draftKVShare
	}
	if s.swa != nil {
		freeGB, poolGPUToken = s.swa.enginePool(c, ranks, freeGB, poolGPUToken)
	}
	capa.fits = freeGB > 0
	pool := int(math.Max(freeGB, 1.0/g0) * 1e9 / poolGPUToken)
	if c.MaxTotalTokens > 0 {
		pool = c.MaxTotalTokens
	}
	capa.poolTokens = max(pool/c.PageSize*c.PageSize, 4*c.PageSize)
	if c.Calibration != nil {
		c.Calibration.apply(&capa, c.PageSize)
	}
	if c.HostKV.Enabled() {
		// Each worker keeps its own GPU's share of a token's KV in host
		// memory, so the host tier holds as many tokens per rank as one
		// worker's bytes over that share. A write-through tier (HiCache
		// write_through, vLLM's eager CPU offload) copies blocks as they
		// are computed: the host copy includes what the device still
		// holds, so only the rest extends the cache. A write-back tier
		// (HiCache write_back, vLLM's lazy_offload: GLM-5.2 and
		// MiniMax-M3 on Blackwell) takes blocks as the device evicts them,
		// so all of it extends the cache. A load moves each GPU's share
		// over its host link.
		host := c.HostKV.Ratio * float64(capa.poolTokens)
		switch {
		case c.HostKV.BytesPerWorker > 0 && c.HostKV.Shared:
			// One store of the rank's attnTP segments keeps each of the
			// `shards` distinct KV shards once: ranks replicating a KV
			// head (TP above the KV heads) share one key.
			host = c.HostKV.BytesPerWorker * attnTP / shards / attnGPUToken
		case c.HostKV.BytesPerWorker > 0:
			host = c.HostKV.BytesPerWorker / attnGPUToken
		case c.HostKV.Bytes > 0:
			// vLLM splits cpu_bytes_to_use over the workers of one engine
			// (its parallel_config.world_size, TP × PP): each data-parallel
			// rank is an engine of its own and takes all of it.
			host = c.HostKV.Bytes / float64(max(c.TP, 1)*max(c.PP, 1)) / attnGPUToken
		}
		capa.hostTokens, capa.hostTier = int(host), int(host)
		if !c.HostKV.WriteBack {
			capa.hostTokens = max(int(host)-capa.poolTokens, 0)
		}
		capa.perLoadToken = attnGPUToken / hostLinkBytesPerSec
	}

	capa.maxRunning = maxRunning(c, ranks, func() int {
		if c.Engine == configs.VLLM {
			return 1024
		}
		return min(4096, max(capa.poolTokens/2048, 32))
	})
	return capa
}

// maxRunning is the running requests one scheduler admits (a DP
// attention worker's, an engine's): SGLang's --max-running-requests is
// the whole engine's, and each DP-attention worker takes
// max_running_requests // dp_size of it (its TP worker's limit); plain DP
// runs whole engines side by side, as vLLM's --max-num-seqs is each
// engine's own. Unset, SGLang's EAGLE-family speculative decoding sets it
// to 48 (server_args' speculative-decoding handling), else the engine's
// default (fallback).
func maxRunning(c Config, ranks int, fallback func() int) int {
	share := 1
	if c.Engine == configs.SGLang && c.DPAttention {
		share = max(ranks, 1)
	}
	switch {
	case c.MaxRunningRequests > 0:
		return max(c.MaxRunningRequests/share, 1)
	case c.Engine == configs.SGLang && c.Spec.Enabled() && sglangEagleFamily(c.Spec.Algorithm):
		return max(sglangSpecMaxRunning/share, 1)
	}
	return fallback()
}

// moeGEMMShare is the MoE layers' share of a token's linear FLOPs, what a
// W4A4 checkpoint computes in FP4 (attention's projections stay 8- or
// 16-bit): 23B of DeepSeek-V3's 37B active parameters are its experts
// (8 routed and 1 shared of 3 × 7,168 × 2,048 in 58 layers), 14B of
// Qwen3-235B-A22B's 22B (8 of 3 × 4,096 × 1,536 in 94 layers).
const moeGEMMShare = 0.6

// prefillPFLOPS is the dense peak a prefill's GEMMs run at on g, in
// PFLOPS: the FP8 peak, with a W4A4 checkpoint's MoE layers at the FP4
// peak where the GPU has FP4 tensor cores (the time of the two shares
// added).
func prefillPFLOPS(g gpuSpec, s modelShape) float64 {
	if !s.fp4GEMMs || g.fp4PFLOPS <= 0 {
		return g.pflops
	}
	return 1 / ((1-moeGEMMShare)/g.pflops + moeGEMMShare/g.fp4PFLOPS)
}

// sglangSpecMaxRunning is the --max-running-requests SGLang sets for
// EAGLE-family speculative decoding when the flag is not given.
const sglangSpecMaxRunning = 48

// sglangEagleFamily reports whether SGLang runs a --speculative-algorithm
// on its EAGLE worker (NEXTN and MTP are EAGLE with the model's own
// draft layers), the algorithms its 48-request default applies to.
func sglangEagleFamily(algorithm string) bool {
	switch strings.ToUpper(algorithm) {
	case "EAGLE", "EAGLE3", "NEXTN", "MTP", "STANDALONE":
		return true
	}
	return false
}

// aiterMemFraction is what SGLang's aiter attention backend keeps of
// --mem-fraction-static for a context above 8,192 tokens.
const aiterMemFraction = 0.85

// perGPUReserveGB is what a GPU keeps inside SGLang's
// --mem-fraction-static beside the weights and the KV pool: SGLang's
// activations and graphs live outside the fraction.
const perGPUReserveGB = 1.0

// vllmReserveGB is what vLLM's --gpu-memory-utilization keeps beside the
// weights and the KV pool: the profiled activation peak, CUDA graphs and
// memory outside torch. InferenceX measured the pool vLLM sized, and what
// its budget leaves beside this model's weights is 17.7 GB for MiniMax-M3
// NVFP4 on B200 TP2 at 0.9 (a 31.72 GiB pool, its minimaxm3-fp4-b200
// notes) and 21.4 GB for Kimi K3 on B300 TP8 at 0.90 (42.23 GiB, its
// kimik3-fp4-b300-vllm-agentic notes); DeepSeek-V4's activation peak
// alone is 8.9 GiB at 8,192 batched tokens on MI355X TP8 (its
// dsv4-fp4-mi355x-vllm notes). 19.5 GB is the two pools' mean.
const vllmReserveGB = 19.5

// gib is a GiB in bytes.
const gib = 1 << 30

// hostLinkBytesPerSec is what a GPU's host link moves per second: PCIe 5.0
// x16 (every GPU the model knows), 64 GB/s per direction nominal, at 80 %.
const hostLinkBytesPerSec = 0.8 * 64e9

// decodeTime is the duration of one step with n decoding sequences whose
// contexts sum to ctx tokens (verifying draft tokens when spec is on).
func (c capacity) decodeTime(n, ctx int) float64 {
	if n == 0 {
		return 0
	}
	return c.meanDecodeTime(float64(n), float64(ctx))
}

// meanDecodeTime is decodeTime over n sequences and ctx tokens on average
// (a fit's requests in flight): the step is linear in both.
func (c capacity) meanDecodeTime(n, ctx float64) float64 {
	return c.fixedStep*c.specOverhead + n*c.perSeq + ctx*c.perCtxToken
}

// prefillTime is the duration of computing tokens new prompt tokens that
// attend to ctxBefore tokens already present.
func (c capacity) prefillTime(tokens, ctxBefore int) float64 {
	if tokens == 0 {
		return 0
	}
	mid := float64(ctxBefore) + float64(tokens)/2
	return c.fixedStep + float64(tokens)*c.perPrefill*(1+mid*c.perPrefillCtx)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// enginePool is what the engine's layout of the stack leaves of a GPU's
// free memory (freeGB) for its KV pool and what a pool token costs
// there, for a GPU whose plain pool would cost perToken a token.
func (w *swaStack) enginePool(c Config, ranks int, freeGB, perToken float64) (float64, float64) {
	switch c.Engine {
	case configs.SGLang:
		// SGLang splits the memory between the full (compressed) pool
		// and the sliding window pool, which holds
		// --swa-full-tokens-ratio tokens per full token: a full token
		// costs its compressed rows, the ratio's share of a window row
		// in every layer and of the compressor state, and the request
		// slots' ratio-128 state comes off first.
		perToken = w.sglangBytesPerToken(c)
		running := sglangRunning(c, ranks, freeGB*1e9/perToken)
		freeGB -= w.sglangRequestBytes(c, running) / 1e9
	case configs.VLLM:
		// vLLM's hybrid allocator keeps DeepSeek-V4's compressed rows,
		// windows and compressor states in one pool of blocks, each
		// holding a page of every layer of a group: a token costs its
		// block's bytes over the block's tokens, and a batched chunk's
		// window and state blocks (a prefill's whole chunk needs them at
		// once) come off first.
		l := w.vllmLayout(c)
		freeGB -= float64(l.windowBlocks(c.ChunkSize)) * l.blockBytes / 1e9
		perToken = l.blockBytes / float64(l.blockTokens)
	}
	return freeGB, perToken
}

// sglangBytesPerToken is what SGLang v0.5.17's DSV4PoolConfigurator
// charges a token of the full pool (bytes_per_full_token): the compressed
// rows and indexer keys, plus --swa-full-tokens-ratio window rows in every
// layer and the ratio-4 layers' compressor state for that many window
// tokens (a ring of 8 rows per 128-token window page, 16 with speculative
// decoding), times (layers+1)/layers with speculative decoding for the
// draft layer's pools.
func (w *swaStack) sglangBytesPerToken(c Config) float64 {
	r := c.SWAFullTokensRatio
	ring := 8.0
	if c.Spec.Enabled() {
		ring = 16
	}
	b := w.compressedBytes() + r*w.rowBytes*float64(w.layers) +
		r*ring/float64(w.window)*w.c4StateBytes*float64(w.c4Layers)
	if c.Spec.Enabled() {
		b *= float64(w.layers+1) / float64(w.layers)
	}
	return b
}

// sglangRequestBytes is the ratio-128 layers' compressor state SGLang
// keeps per request slot (running + 1) whatever the context: a ring of
// 128 rows, 256 with speculative decoding (SGLang PR 28612 made it
// per request; it had grown with the pool).
func (w *swaStack) sglangRequestBytes(c Config, running int) float64 {
	ring := 128.0
	if c.Spec.Enabled() {
		ring = 256
	}
	return float64(running+1) * ring * w.c128StateBytes * float64(w.c128Layers)
}

// sglangRunning is the running requests one SGLang scheduler (a DP
// attention worker) sizes request state for (maxRunning), where neither
// --max-running-requests nor the EAGLE family sets it: SGLang's DSV4
// estimate from the token capacity (512 requests per context length of
// tokens, 2,048 to 4,096, at most half the tokens).
func sglangRunning(c Config, ranks int, tokens float64) int {
	return maxRunning(c, ranks, func() int {
		est := min(max(tokens/float64(max(c.ContextLength, 1))*512, 2048), 4096)
		return int(min(est, tokens/2))
	})
}

// vllmSWALayout is how vLLM's hybrid KV cache manager lays an swaStack
// out (kv_cache_utils' group_and_unify_kv_cache_specs and
// _get_kv_cache_groups_uniform_groups, and the DeepSeek-V4 tensor layout
// after them; the specs of DeepseekV4SWACache, CompressorStateCache and
// the compressed MLA cache). The compressed rows and indexer keys of
// every compressing layer form one full-attention group of blockTokens a
// block; the window rows (every layer, and the MTP draft's layer, which
// keeps only its window) and each ratio's compressor states form window
// groups of smaller blocks. One block of the shared pool is a layer
// tuple's pages (a ratio-4 layer's rows, its indexer keys, a ratio-128
// layer's rows, each padded to FlashMLA's 576 bytes) times a number of
// tuples chosen at least the compressed group's largest kind of layer,
// the one that pads the groups' layer counts least; a window group's
// block takes a whole block of the pool, so each kind of window layer is
// split into groups of at most that many layers.
type vllmSWALayout struct {
	blockTokens int     // tokens of a compressed-group block
	blockBytes  float64 // bytes of one block of the pool, per GPU
	// Groups of each kind of window layer: window rows, ratio-4 and
	// ratio-128 compressor states.
	swaGroups, c4Groups, c128Groups int
	window                          int // the window rows' tokens
}

const (
	vllmSWABlockTokens  = 64  // DeepseekV4SWACache's block
	vllmC4StateBlock    = 4   // CompressorStateCache's blocks
	vllmC128StateBlock  = 8   //
	vllmC4StateWindow   = 8   // a ratio-4 compressor's two overlapping groups of 4
	vllmC128StateWindow = 128 // a ratio-128 compressor's one group
	vllmPageAlign       = 576 // FlashMLA's page alignment (fp8_ds_mla)
	vllmDSV4BlockTokens = 256 // the DeepSeek-V4 backends' preferred block
)

// vllmLayout is the stack's vLLM layout for c: the compressed group's
// block is the recipe's --block-size when it holds a whole ratio-128 row
// (the recipes pass 256), else the backends' 256; with speculative
// decoding the MTP layer adds its window rows.
func (w *swaStack) vllmLayout(c Config) vllmSWALayout {
	bt := c.PageSize
	if bt <= 0 || bt%128 != 0 {
		bt = vllmDSV4BlockTokens
	}
	align := func(b float64) float64 { return math.Ceil(b/vllmPageAlign) * vllmPageAlign }
	tuple := align(float64(bt/4)*w.rowBytes) + align(float64(bt/4)*w.indexRowBytes) + align(float64(bt/128)*w.rowBytes)
	windowLayers := w.layers
	if c.Spec.Enabled() {
		windowLayers++
	}
	full := max(w.c4Layers, w.c128Layers)
	tuples := leastPaddingDivisor([]int{full, windowLayers, w.c4Layers, w.c128Layers}, full)
	groups := func(n int) int { return (n + tuples - 1) / tuples }
	return vllmSWALayout{
		blockTokens: bt,
		blockBytes:  float64(tuples) * tuple,
		swaGroups:   groups(windowLayers), c4Groups: groups(w.c4Layers), c128Groups: groups(w.c128Layers),
		window: w.window,
	}
}

// leastPaddingDivisor is the d from lower to the largest value that pads
// the values up to multiples of d least, the larger on a tie (vLLM's
// _approximate_gcd).
func leastPaddingDivisor(values []int, lower int) int {
	best, bestPad := lower, -1
	for d := lower; d <= slices.Max(values); d++ {
		pad := 0
		for _, x := range values {
			pad += (d - x%d) % d
		}
		if bestPad < 0 || pad <= bestPad {
			best, bestPad = d, pad
		}
	}
	return best
}

// windowBlocks is the pool blocks one request's window groups hold while
// a chunk of that many tokens is computed: each group keeps its window
// before the chunk and the chunk itself, plus a block the window may
// straddle (SlidingWindowSpec's max_admission_blocks_per_request).
func (l vllmSWALayout) windowBlocks(chunk int) int {
	blocks := func(window, block int) int { return (window-1+chunk+block-1)/block + 1 }
	return l.swaGroups*blocks(l.window, vllmSWABlockTokens) +
		l.c4Groups*blocks(vllmC4StateWindow, vllmC4StateBlock) +
		l.c128Groups*blocks(vllmC128StateWindow, vllmC128StateBlock)
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
