package simengine

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sweep/configs"
)

// gpuSpec is the little the capacity model needs to know about a GPU.
type gpuSpec struct {
	hbmGB   float64 // memory per GPU
	hbmTBps float64 // memory bandwidth per GPU
	pflops  float64 // dense FP8 peak per GPU
	// fp4PFLOPS is the dense FP4 peak per GPU (NVFP4, MXFP4), 0 where the
	// GPU has no FP4 tensor cores.
	fp4PFLOPS float64
	speed     float64 // relative step-overhead speed (kernel launch, comm)
}

// gpuSpecs is read-only: rough public figures per GPU model. The peaks
// are dense (without 2:4 sparsity, which doubles the datasheets' figures):
// MI300X and MI325X 2.6 PF FP8 (AMD's datasheets: 2,614.9 TFLOPS, 5,229.8
// with sparsity); MI355X 5.0 PF FP8 and 10 PF MXFP4 (AMD: 20.1 PF FP4
// with sparsity; ISSCC 2026, five petaflops FP8); H100 and H200 1.98 PF
// FP8; B200 4.5 PF FP8 and 9 PF FP4 (HGX B200: 72 PF FP8 with sparsity
// and 72 PF FP4 dense for 8 GPUs); B300 4.5 PF FP8, as B200, and 13.5 PF
// FP4 (HGX B300: 72 PF FP8 with sparsity, 108 PF FP4 dense for 8 GPUs;
// Blackwell Ultra's 15 PF dense NVFP4 is at GB300's clocks); GB200 5 PF
// FP8 and 10 PF FP4 (GB200 NVL72: 720 PF FP4 dense for 72 GPUs).
// MI355X's 10 PF is left out of the table (its MXFP4 checkpoints'
// prefill stays at the FP8 rate): with it Qwen3.5 MXFP4 MI355X's TP4 arm
// still gains at the top of its window (c40), and the simulated corpora
// of sweep/knee, which hold the MI355X keys, would have to be made again.
var gpuSpecs = map[string]gpuSpec{
	"mi300x": {hbmGB: 192, hbmTBps: 5.3, pflops: 2.6, speed: 1.0},
	"mi325x": {hbmGB: 256, hbmTBps: 6.0, pflops: 2.6, speed: 1.05},
	"mi355x": {hbmGB: 288, hbmTBps: 8.0, pflops: 5.0, speed: 1.4},
	"h100":   {hbmGB: 80, hbmTBps: 3.35, pflops: 2.0, speed: 1.0},
	"h200":   {hbmGB: 141, hbmTBps: 4.8, pflops: 2.0, speed: 1.05},
	"b200":   {hbmGB: 180, hbmTBps: 8.0, pflops: 4.5, fp4PFLOPS: 9, speed: 1.4},
	"b300":   {hbmGB: 288, hbmTBps: 8.0, pflops: 4.5, fp4PFLOPS: 13.5, speed: 1.5},
	"gb200":  {hbmGB: 186, hbmTBps: 8.0, pflops: 5.0, fp4PFLOPS: 10, speed: 1.5},
}

func gpuNames() []string {
	names := make([]string, 0, len(gpuSpecs))
	for n := range gpuSpecs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// modelShape is what the capacity model derives from a model name such as
// "Qwen/Qwen3.5-397B-A17B-FP8".
type modelShape struct {
	totalB, activeB float64 // parameters, billions
	weightBytes     float64 // per parameter
	// kvHeads is the number of KV heads of the attention layers: once
	// more GPUs than that share a rank's attention (TP), each GPU holds a
	// whole head, so the KV a GPU keeps per token stops shrinking. 0 when
	// not known (the KV is taken to shard over every attention GPU).
	kvHeads int
	// kvBytes, when positive, is the family's KV footprint per token with
	// an 8-bit cache, all heads and layers (see kvBytesPerToken).
	kvBytes float64
	// indexBytes is what a sparse-attention indexer caches per token
	// beside the KV, replicated on every attention GPU (one key for all
	// its heads, so it does not shard with them).
	indexBytes float64
	// attnKVBytes, when positive, is the part of kvBytes that is attention
	// KV (8-bit, all heads): what a decode step reads per token of context
	// and what a host tier keeps per token. A hybrid model's kvBytes is
	// the pool's figure per token, its recurrent state's share included.
	attnKVBytes float64
	// stateBytes is a recurrent layer stack's state per sequence (16-bit,
	// all heads), read once a decode step and sharded over the attention
	// GPUs.
	stateBytes float64
	// context is the native context length, what an engine serves when
	// no flag sets it.
	context int
	// draftKVShare is the KV a speculative draft keeps per token beside
	// the target's, as a share of the target's: its layers' KV sits in
	// the same pool. 0 when the draft's KV is a small part (one layer of
	// many) or not known.
	draftKVShare float64
	// attnFLOPs, when positive, is what attention computes per prompt
	// token per token of context before it, all layers (16-bit FLOPs
	// counted twice, as they run at half the 8-bit rate): the prefill's
	// cost growing with the context. 0 keeps the generic 2 % of a token's
	// other compute per 1,000 tokens of context, which the MI325X Qwen3.5
	// measurements were fitted with.
	attnFLOPs float64
	// swa, when set, is an attention stack whose every layer keeps a
	// sliding window of uncompressed rows beside rows compressed over
	// several tokens (DeepSeek-V4): SGLang sizes its pools by it
	// (sglangBytesPerToken), vLLM its block pool (vllmLayout), and
	// kvBytes is its compressed rows.
	swa *swaStack
	// fp4GEMMs: the checkpoint quantizes its MoE layers' weights and
	// activations to 4 bits (NVIDIA ModelOpt's NVFP4 checkpoints, AMD
	// Quark's MXFP4 ones: W4A4), so their GEMMs run at the GPU's FP4
	// rate where it has one. A checkpoint with FP4 expert weights and
	// 8-bit activations (DeepSeek-V4's, Kimi K3's) computes at the FP8
	// rate: an FP4 × FP8 MMA runs at FP8's.
	fp4GEMMs bool
	// expertB, when positive, is the routed experts' share of totalB
	// (billions): what a 4-bit checkpoint quantizes. NVIDIA ModelOpt's
	// NVFP4 and AMD Quark's MXFP4 checkpoints quantize the routed experts
	// alone and keep attention, linear attention, shared experts, router,
	// embeddings and the MTP layer in BF16, so such a checkpoint weighs
	// the experts at fp4Bits a parameter (the 4-bit values and their block
	// scales) plus the rest at 2 bytes, not half the FP8 one.
	expertB float64
	// fp4Bits is the bits a 4-bit checkpoint stores per quantized
	// parameter: 4.5 for NVFP4 (an FP8 scale per 16 values), 4.25 for
	// MXFP4 (an 8-bit exponent per 32); 0 for any other checkpoint.
	fp4Bits float64
}

// families holds the architecture facts the name alone does not give,
// per model family (a lower-case prefix of the name's last path element).
var families = []struct {
	prefix string
	shape  func(*modelShape)
}{
	// Qwen3.5's hybrid stack keeps full attention with 2 KV heads in one
	// layer of four (Gated DeltaNet in the others): a small KV per token
	// that stops sharding beyond TP 2, plus the linear-attention state the
	// radix cache keeps per cached prefix. 40 KB per token (all heads,
	// FP8 KV, the state included) is what the MI325X discovery of the
	// MTP recipe measured: about 1.7 GB per GPU per 85k-token session from
	// TP 2 to TP 8.
	//
	// Its routed experts are 386.5B of the 397B parameters (60 layers of
	// 512 experts of 3 × 4,096 × 1,024): a 4-bit checkpoint weighs about
	// 238 GB in NVFP4, 226 GB in MXFP4 (expertB), where a community NVFP4
	// checkpoint quantized the same way (routed experts only) is ~233 GB
	// on disk (huggingface.co/lukealonso/Qwen3.5-397B-A17B-NVFP4).
	{"qwen3.5-", func(s *modelShape) {
		s.expertB = 60 * 512 * 3 * 4096 * 1024 / 1e9
		s.kvHeads, s.kvBytes = 2, 40e3
		s.attnKVBytes = 15 * 2 * 256 * 2
		s.stateBytes = 45 * (64*128*128 + (2*16*128+64*128)*3) * 2
	}},
	// DeepSeek's MLA caches one latent per layer and token, the same on
	// every attention GPU (one KV head): kv_lora_rank 512 + rope dim 64 in
	// each of 61 layers (DeepSeek-V3/R1 config.json), 35,136 bytes at FP8.
	// V4 keeps one shared K=V head of 512 too, in compressed rows (below).
	{"deepseek-", func(s *modelShape) { s.kvHeads, s.kvBytes = 1, 61*576 }},
	// DeepSeek-V4-Pro: 1.6T parameters, 49B active (its model card); the
	// checkpoint keeps the routed experts in FP4 (expert_dtype fp4 in its
	// config), 4 bits and an 8-bit scale per 32 values, the rest in FP8:
	// about 0.55 bytes a parameter (an estimate: the experts' share of the
	// parameters is not published beside the totals).
	//
	// Its attention keeps compressed rows of that head rather than one per
	// token (the DeepSeek-V4 model card's CSA + HCA; config.json's
	// compress_ratios): of its 61 layers, the two first and the odd ones
	// from 3 on keep one row per 128 tokens (31), the even ones from 2 on
	// one row per 4 tokens plus the indexer's 128-dim key (30); the MTP
	// layer's entry (0) keeps its window alone. A row is the 512-dim head
	// at FP8 with its 64 rope dims in BF16 and scales (vLLM's fp8_ds_mla
	// layout, SGLang's DSV4 pool: 584 bytes), an indexer key 132 bytes:
	// 30 × (584+132)/4 + 31 × 584/128 ≈ 5,511 bytes a token. Every layer also keeps its last 128 tokens
	// uncompressed (config.json's sliding_window), and a compressing
	// layer the compressor's running state: 32-bit (kv, score) pairs of
	// the 512-dim head, and of the indexer's 128 dims in a ratio-4 layer
	// (SGLang's DSV4PoolConfigurator and DeepSeekV4TokenToKVPool).
	// Its native context is 1M tokens (the model card), as are GLM-5.2's,
	// Kimi K3's and MiniMax-M3's (InferenceX's resolve_trace_source replays
	// the uncapped corpus to these four families for that reason; the
	// MiniMax-M3 notes: "the model's 1,048,576-token max_model_len").
	//
	// Its attention scores only the compressed rows: the CSA layers' indexer
	// (DeepSeek-V3.2's lightning indexer, 64 heads of 128 at FP8) over one
	// row per 4 tokens, the HCA layers attend densely to one row per 128
	// (taken as V3's 128 heads, not published beside V4's totals; the
	// 512-dim head for QK and V, 16-bit): 30 × 64 × 128 ×
	// 2 / 4 + 2 × 31 × 128 × 2 × 1024 / 128 FLOPs per token of context.
	{"deepseek-v4", func(s *modelShape) {
		s.swa = &swaStack{
			layers: 61, window: 128, rowBytes: 584, indexRowBytes: 132,
			c4Layers: 30, c128Layers: 31,
			c4StateBytes: 2 * 2 * (512 + 128) * 4, c128StateBytes: 2 * 512 * 4,
		}
		// 5,511 bytes (compressedBytes, what SGLang charges, is 5,511.4;
		// vLLM's blocks hold 5,789.25 a token, vllmLayout).
		s.kvBytes, s.context = 30*(584+132)/4+31*584/128, 1<<20
		s.attnFLOPs = 30*64*128*2/4 + 2*31*128*2*1024/128
	}},
	{"deepseek-v4-pro", func(s *modelShape) { s.totalB, s.activeB, s.weightBytes = 1600, 49, 0.55 }},
	// GLM-5, 5.1 and 5.2 (GlmMoeDsaForCausalLM): 744B parameters, 40B
	// active (GLM-5's model card); 78 layers of MLA with DeepSeek Sparse
	// Attention (NVIDIA Megatron Bridge's GLM-5 page): one latent of
	// kv_lora_rank 512 + rope 64 per layer and token, kept whole on every
	// attention GPU, plus the DSA indexer's key (128 per layer in
	// DeepSeek-V3.2's layout, which GLM-5 adopts): 78 × 704 bytes at FP8.
	//
	// DSA attends to the top 2,048 tokens only; what grows with the
	// context is the indexer scoring every token: 32 heads of 128 at FP8
	// in each layer (GLM-5's index_n_heads, index_head_dim).
	{"glm-5", func(s *modelShape) {
		s.totalB, s.activeB = 744, 40
		s.kvHeads, s.kvBytes = 1, 78*(576+128)
		s.attnFLOPs = 78 * 32 * 128 * 2
	}},
	{"glm-5.2", func(s *modelShape) { s.context = 1 << 20 }},
	// Kimi K3: 2.8T parameters, about 104B active, routed experts in
	// MXFP4 (4.25 bits) and the rest in 8 bits: about 0.55 bytes a
	// parameter, as DeepSeek-V4-Pro. Of its 93 layers, 24 are gated MLA
	// without RoPE (one latent of kv_lora_rank 512, Kimi K2's, kept whole
	// on every attention GPU) and 69 Kimi Delta Attention, whose
	// recurrent state is per request, not per token. vLLM's hybrid pool
	// counts 13,955 bytes a token at FP8 (InferenceX's
	// kimik3-fp4-b300-vllm-agentic notes: 42.23 GiB for 3,249,215 tokens
	// on B300 TP8), 14 % above the 24 latents' 12,288: the KDA states'
	// blocks share the pool. Only
	// the MLA layers' attention grows with the context: Kimi K2's 64 heads
	// of 192 (QK) and 128 (V) dimensions, 16-bit.
	//
	// Its DSpark draft keeps a BF16 KV (the recipes' speculative config:
	// kv_cache_dtype auto) in the target's pool: "the drafter's KV
	// footprint costs ~25% of GPU KV regardless of K" (InferenceX's
	// kimik3-fp4-b300-vllm-agentic-dspark notes), a third of the target's.
	{"kimi-k3", func(s *modelShape) {
		s.totalB, s.activeB, s.weightBytes = 2800, 104, 0.55
		s.kvHeads, s.kvBytes, s.context = 1, 13_955, 1<<20
		s.attnFLOPs = 2 * 24 * 64 * 2 * (192 + 128)
		s.draftKVShare = 1.0 / 3
	}},
	// MiniMax-M3: 428B parameters, about 23B active; 60 layers of GQA with
	// 4 KV heads of dimension 128 (NVIDIA Megatron Bridge's MiniMax-M3
	// page): 60 × 4 × 128 × 2 (K and V) bytes at FP8. Layers 3 to 59 are
	// block-sparse: a lightning indexer keeps one 128-dim key per token,
	// replicated for all heads (TensorRT-LLM's MiniMaxM3SparseAttentionConfig:
	// a paged side index-K cache of [slots, 1, 128]), 57 × 136 bytes at FP8
	// with its scale. Together they are vLLM's own account: one request at
	// the 1,048,576-token max_model_len needs 37.62 GiB per GPU at TP 2
	// (InferenceX's minimaxm3-fp4-b200 notes), 38.5 KB a token = 30,720 of
	// KV + 7.8 KB of index keys.
	// Its sparse layers attend to 16 blocks of 128 tokens; what grows with
	// the context is their indexer (4 heads of 128 over every token) and
	// the 3 dense layers' attention (64 heads of 128, QK and V, 16-bit).
	{"minimax-m3", func(s *modelShape) {
		s.totalB, s.activeB = 428, 23
		s.kvHeads, s.kvBytes, s.indexBytes, s.context = 4, 60*4*128*2, 57*136, 1<<20
		s.attnFLOPs = 57*4*128*2 + 2*3*64*2*256
	}},
}

var (
	reTotal  = regexp.MustCompile(`(?i)(?:^|[-_/])(\d+(?:\.\d+)?)b(?:$|[-_])`)
	reActive = regexp.MustCompile(`(?i)(?:^|[-_])a(\d+(?:\.\d+)?)b(?:$|[-_])`)
)

// shapeOf guesses the size of a model from its name; unknown names get the
// shape of a 400B-class MoE with 17B active parameters in FP8.
func shapeOf(name string) modelShape {
	s := modelShape{totalB: 397, activeB: 17, weightBytes: 1, context: 262144}
	base := strings.ToLower(name)
	if m := reTotal.FindStringSubmatch(base); m != nil {
		s.totalB, _ = strconv.ParseFloat(m[1], 64)
		s.activeB = s.totalB // dense unless an A<n>B part says otherwise
	}
	if m := reActive.FindStringSubmatch(base); m != nil {
		s.activeB, _ = strconv.ParseFloat(m[1], 64)
	}
	if strings.Contains(base, "deepseek") && reTotal.FindStringSubmatch(base) == nil {
		s.totalB, s.activeB = 671, 37
	}
	switch {
	case strings.Contains(base, "nvfp4"):
		s.weightBytes, s.fp4GEMMs, s.fp4Bits = 0.5, true, 4.5
	case strings.Contains(base, "mxfp4"):
		s.weightBytes, s.fp4GEMMs, s.fp4Bits = 0.5, true, 4.25
	case strings.Contains(base, "fp4"):
		s.weightBytes = 0.5
	case strings.Contains(base, "fp8"), strings.Contains(base, "int8"):
		s.weightBytes = 1
	case reTotal.FindStringSubmatch(base) != nil:
		s.weightBytes = 2
	}
	s.totalB, s.activeB = max(s.totalB, 0.1), max(min(s.activeB, s.totalB), 0.1)
	// The family by the name's last path element: a model id
	// (Qwen/Qwen3.5-...) or the directory of pre-staged weights
	// (/scratch/models/Qwen3.5-...).
	file := modelFile(base)
	for _, f := range families {
		if strings.HasPrefix(file, f.prefix) {
			f.shape(&s)
		}
	}
	if s.expertB > 0 && s.fp4Bits > 0 {
		e := min(s.expertB, s.totalB)
		s.weightBytes = (e*s.fp4Bits/8 + (s.totalB-e)*2) / s.totalB
	}
	return s
}

// modelFile is the element of a lower-case model name that names the
// model: the last path element, or the repository of a Hugging Face hub
// cache path (/hub/models--org--name/snapshots/REVISION).
func modelFile(name string) string {
	for _, el := range strings.Split(name, "/") {
		if repo, ok := strings.CutPrefix(el, "models--"); ok {
			return repo[strings.LastIndex(repo, "--")+2:]
		}
	}
	return name[strings.LastIndex(name, "/")+1:]
}

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
	switch strings.ToLower(c.KVCacheDType) {
	case "", "auto", "bf16", "bfloat16", "float16":
		// 16-bit KV. "auto" is the model's activation dtype, BF16 for
		// FP8 and FP4 checkpoints too (SGLang's quantized KV cache page:
		// FP8 or FP4 "instead of the default model precision in BF16";
		// vLLM: "auto" uses the model data type).
		b *= 2
	case "fp4_e2m1", "nvfp4", "fp4_mx_block16":
		b /= 2
	}
	return b
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
		capa.hostTokens = int(host)
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

// swaStack is an attention stack whose every layer keeps a sliding window
// of uncompressed KV rows, and whose compressing layers keep rows over 4
// or 128 tokens each (DeepSeek-V4's CSA and HCA layers), with a
// compressor's running state beside them.
type swaStack struct {
	layers   int     // layers keeping the window (every layer)
	window   int     // tokens of the window
	rowBytes float64 // one row of one layer in the cache's layout
	// indexRowBytes is a ratio-4 layer's indexer key per row.
	indexRowBytes        float64
	c4Layers, c128Layers int // layers compressing 4 and 128 tokens a row
	// c4StateBytes and c128StateBytes are a layer's compressor state per
	// row of its ring (32-bit; a ratio-4 layer's with its indexer's).
	c4StateBytes, c128StateBytes float64
}

// compressedBytes is what the compressed rows and indexer keys of one
// token cost, every layer: the KV a token keeps past the window.
func (w *swaStack) compressedBytes() float64 {
	return float64(w.c4Layers)*(w.rowBytes+w.indexRowBytes)/4 + float64(w.c128Layers)*w.rowBytes/128
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

// sglangSWAFullTokensRatio is SGLang's default --swa-full-tokens-ratio.
const sglangSWAFullTokensRatio = 0.8

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
