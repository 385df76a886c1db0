package simengine

import (
	"regexp"
	"strconv"
	"strings"
)

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
