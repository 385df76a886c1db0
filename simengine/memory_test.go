package simengine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// TestVLLMPoolsMatchMeasured holds the KV pool vLLM sizes to the two
// pools InferenceX measured: vLLM's --gpu-memory-utilization budget also
// holds its profiled activation peak, CUDA graphs and memory outside
// torch (vllmReserveGB), which SGLang keeps outside --mem-fraction-static.
// With the 1 GB SGLang keeps, the pools were 52 % (MiniMax-M3) and 45 %
// (Kimi K3) above what vLLM reported.
func TestVLLMPoolsMatchMeasured(t *testing.T) {
	// MiniMax-M3 NVFP4 on B200 at TP2 with the B200 recipe's flags (its
	// notes: "the KV pool is 31.72 GiB at --gpu-memory-utilization 0.9",
	// and vLLM "estimates the max model length at TP2 as 883,840").
	arms := plannedArms(t, "minimaxm3-fp4-b200-vllm-agentic-mtp")
	var tp2 Config
	for _, a := range arms {
		if a.cfg.TP == 4 && !a.cfg.HostKV.Enabled() {
			tp2 = a.cfg
		}
	}
	require.Equal(t, 4, tp2.TP, "the recipe's resident TP4 arm")
	tp2.TP = 2
	tp2, err := tp2.Normalize()
	require.NoError(t, err)
	require.InDelta(t, 0.9, tp2.MemFraction, 1e-9)
	// Kimi K3 MXFP4 on B300 TP8, the recipe without speculation (its
	// notes: "GPU KV resolves to 42.23 GiB / 3,249,215 tokens").
	k3 := Config{Engine: configs.VLLM, ModelPath: "/scratch/models/Kimi-K3", TP: 8, GPU: "b300",
		MemFraction: 0.90, KVCacheDType: "fp8", ContextLength: 1 << 20}
	k3, err = k3.Normalize()
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		cfg      Config
		measured int
	}{
		{"MiniMax-M3 NVFP4 B200 TP2", tp2, 883_840},
		{"Kimi K3 B300 TP8", k3, 3_249_215},
	} {
		capa := newCapacity(tc.cfg)
		t.Logf("%s: %d tokens, measured %d", tc.name, capa.poolTokens, tc.measured)
		assert.InEpsilon(t, tc.measured, capa.poolTokens, 0.06, tc.name)
	}
}

// TestCPUOffloadMovesWeightsToTheHost: vLLM's --cpu-offload-gb keeps
// that many GiB of each GPU's weights in host memory (the MiniMax-M3 FP8
// H100 recipe: 26), so the pool gains them. Before, the flag was ignored
// and the H100 arm held its sessions only because vLLM's activations were
// not counted.
func TestCPUOffloadMovesWeightsToTheHost(t *testing.T) {
	a := plannedArms(t, "minimaxm3-fp8-h100-vllm-agentic-mtp")[0]
	require.InDelta(t, 26, a.cfg.CPUOffloadGiB, 1e-9, "the recipe's --cpu-offload-gb")
	with := newCapacity(a.cfg)
	without := a.cfg
	without.CPUOffloadGiB = 0
	none := newCapacity(without)
	assert.True(t, with.fits, "the arm InferenceX ran fits")
	assert.False(t, none.fits, "without the offload the weights and vLLM's reserve overflow the H100")
	// At the whole HBM both fit: the pool gains the offloaded GiB.
	full, fullNone := a.cfg, without
	full.MemFraction, fullNone.MemFraction = 1, 1
	perGPUToken := float64(with.kvBytes)/4 + shapeOf(a.cfg.ModelPath).indexBytes // 4 KV heads over TP8
	gained := float64(newCapacity(full).poolTokens-newCapacity(fullNone).poolTokens) * perGPUToken
	assert.InDelta(t, 26*gib, gained, 0.01*gib, "the pool gains the offloaded GiB")
}

// TestDraftKVSharesThePool: Kimi K3's DSpark draft keeps its KV in the
// target's pool, "~25% of GPU KV regardless of K" (InferenceX's notes), so
// with speculation the pool holds three quarters of the tokens.
func TestDraftKVSharesThePool(t *testing.T) {
	a := plannedArms(t, "kimik3-fp4-mi355x-vllm-agentic-mtp")[0]
	require.True(t, a.cfg.Spec.Enabled())
	spec := newCapacity(a.cfg)
	plain := a.cfg
	plain.Spec = Spec{}
	plainCapa := newCapacity(plain)
	// Without the draft's weights (1.03) the free memory differs a little
	// too; compare tokens per free byte.
	assert.InDelta(t, 0.75, float64(spec.poolTokens)/float64(plainCapa.poolTokens)*freeOf(plain)/freeOf(a.cfg), 0.005)
	// A draft of one layer among many (DeepSeek's MTP) is not counted.
	assert.Zero(t, shapeOf("deepseek-ai/DeepSeek-V4-Pro").draftKVShare)
}

// freeOf is the memory a GPU of cfg has for the KV pool, GB.
func freeOf(cfg Config) float64 {
	s := shapeOf(cfg.ModelPath)
	w := s.totalB * s.weightBytes
	if cfg.Spec.Enabled() && cfg.Engine == configs.VLLM {
		w *= 1.03
	}
	return gpuSpecs[cfg.GPU].hbmGB*cfg.MemFraction - w/float64(cfg.GPUs()) - vllmReserveGB
}

// TestPlannedArmsReadTheEnginesEnvironment: the agreement test parses a
// point's engine with the environment the engine gets, as sim-engine does
// in a discovery: SGLang reads its golden acceptance length from
// SGLANG_SIMULATE_ACC_LEN. Before, the test left the environment out and
// judged the SGLang MTP arms at the default acceptance (2.61 tokens a step
// for 3 drafts) instead of the recipes' 3.39.
func TestPlannedArmsReadTheEnginesEnvironment(t *testing.T) {
	a := plannedArms(t, "qwen3.5-fp4-mi355x-sglang-agentic-mtp")[0]
	assert.InDelta(t, 3.39, a.cfg.Spec.AcceptLength, 1e-9)
}

// TestSGLangSpecDecodingCapsRunningRequests: SGLang sets
// --max-running-requests to 48 when EAGLE-family speculative decoding
// (EAGLE, EAGLE3, NEXTN, MTP) runs without the flag (server_args'
// speculative-decoding handling: "Max running requests is reset to 48 for
// speculative decoding"), and each DP worker takes max_running_requests
// // dp_size of it when DP attention runs (given or defaulted; plain DP
// runs whole engines, each with all of it). The
// H200 and H100 Qwen3.5 MTP recipes leave the flag unset; the simulated
// engine used to run them with the pool's default (1,517 and 228
// requests a rank).
func TestSGLangSpecDecodingCapsRunningRequests(t *testing.T) {
	h200 := plannedArms(t, "qwen3.5-fp8-h200-sglang-agentic-mtp")[0].cfg
	require.Zero(t, h200.MaxRunningRequests, "the recipe leaves --max-running-requests unset")
	require.True(t, h200.Spec.Enabled())
	with := func(f func(*Config)) Config {
		c := h200
		f(&c)
		c, err := c.Normalize()
		require.NoError(t, err)
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want int
	}{
		{"H200 TP8 EAGLE, flag unset", h200, 48},
		{"NEXTN", with(func(c *Config) { c.Spec.Algorithm = "NEXTN" }), 48},
		{"DP attention over 8 ranks: 48 // 8 a rank", with(func(c *Config) { c.DP, c.DPAttention = 8, true }), 6},
		{"plain DP: each engine its own 48", with(func(c *Config) { c.DP, c.DPAttention = 2, false }), 48},
		{"the flag wins", with(func(c *Config) { c.MaxRunningRequests = 32 }), 32},
		{"the flag over 8 DP-attention workers", with(func(c *Config) { c.MaxRunningRequests, c.DP, c.DPAttention = 32, 8, true }), 4},
		{"the flag, plain DP", with(func(c *Config) { c.MaxRunningRequests, c.DP, c.DPAttention = 32, 2, false }), 32},
	} {
		assert.Equal(t, tc.want, newCapacity(tc.cfg).maxRunning, tc.name)
	}
	// Without speculative decoding SGLang sizes the limit from the pool.
	plain := with(func(c *Config) { c.Spec = Spec{} })
	assert.Greater(t, newCapacity(plain).maxRunning, 48, "no speculative decoding")
}

// TestSGLangSplitsDeepSeekV4Pool: SGLang (v0.5.17's DSV4PoolConfigurator)
// sizes DeepSeek-V4's full pool by what a full token costs with the
// sliding window pool beside it: the compressed rows (5,511 bytes),
// --swa-full-tokens-ratio window rows of 584 bytes in each of the 61
// layers, the 30 ratio-4 layers' compressor state (10,240 bytes a ring
// row, 16 rows per 128-token window page with MTP) for those window
// tokens, and 62/61 of it all for the MTP draft layer; the 31 ratio-128
// layers' state (256 rows of 4,096 bytes with MTP) per request slot comes
// off the memory first. The recipe's --kv-cache-dtype does not change the
// 584-byte rows. Before, the pool counted the compressed rows alone (and
// twice that with a 16-bit cache): 2.4 times the tokens on MI355X.
func TestSGLangSplitsDeepSeekV4Pool(t *testing.T) {
	var resident Config
	for _, a := range plannedArms(t, "dsv4-fp4-mi355x-sglang-agentic-mtp") {
		if !a.cfg.HostKV.Enabled() {
			resident = a.points[len(a.points)-1]
		}
	}
	require.InDelta(t, 0.10, resident.SWAFullTokensRatio, 1e-9, "the recipe's --swa-full-tokens-ratio")
	require.Equal(t, 32, resident.MaxRunningRequests, "2×conc at c16")
	// HBM × fraction − an eighth of 1.6T parameters at 0.55 bytes − 1 GB,
	// less 33 request slots of ratio-128 state.
	free := 288*0.85 - 1600*0.55/8 - 1 - 33*256*4096*31/1e9
	for _, tc := range []struct {
		name  string
		ratio float64
		dtype string
		bytes float64 // a full token, per GPU
	}{
		{"recipe: ratio 0.1, FP8 cache", 0.1, "fp8_e4m3", 13_125.5},
		{"ratio 0.1, the 16-bit default cache", 0.1, "", 13_125.5},
		{"ratio 0.02 (the B200 DP-attention arm's)", 0.02, "fp8_e4m3", 7_106.5},
		{"SGLang's default ratio 0.8", 0, "fp8_e4m3", 65_791.8},
	} {
		c := resident
		c.SWAFullTokensRatio, c.KVCacheDType = tc.ratio, tc.dtype
		c, err := c.Normalize()
		require.NoError(t, err, tc.name)
		want := free * 1e9 / tc.bytes
		assert.InDelta(t, want, newCapacity(c).poolTokens, float64(c.PageSize)+want*1e-4, tc.name)
	}
	// vLLM keeps its own accounting: the ratio is SGLang's.
	v := resident
	v.Engine, v.SWAFullTokensRatio = configs.VLLM, 0.02
	v0 := v
	v0.SWAFullTokensRatio = 0.5
	assert.Equal(t, newCapacity(v).poolTokens, newCapacity(v0).poolTokens)
}

// TestVLLMLaysOutDeepSeekV4Pool: vLLM (the nightlies InferenceX runs,
// 311b3513 and 426e59f) keeps DeepSeek-V4's caches in one pool of blocks
// shared by its KV cache groups (kv_cache_utils'
// group_and_unify_kv_cache_specs). The compressed group holds, per 256
// tokens, a ratio-4 layer's 64 rows (64 × 584 bytes, padded to a multiple
// of 576: 37,440), its indexer's 64 keys (64 × 132: 8,640) and a
// ratio-128 layer's 2 rows (1,168: 1,728): 47,808 bytes a layer tuple.
// vLLM picks the number of tuples a block holds as the count from the
// largest kind of compressed layer up that pads the groups' layer counts
// least (_approximate_gcd): 31 for 30 or 31 compressing layers of a kind
// and 62 window layers (the 61 and the MTP layer's), so a block is 31 ×
// 47,808 = 1,482,048 bytes, 5,789.25 a token, and the window rows form 2
// groups, the ratio-4 and the ratio-128 compressor states one each. Every
// window group's block takes a whole block of the pool, and a request
// computing a chunk of b tokens holds each group's window before the chunk
// and the chunk (SlidingWindowSpec's max_admission_blocks_per_request):
// 2 × (⌈(127+b)/64⌉+1) + ⌈(7+b)/4⌉+1 + ⌈(127+b)/8⌉+1 blocks, 3,354 at
// 8,192 tokens (4.97 GB), 6,682 at 16,384. vLLM's "GPU KV cache size"
// log is max_model_len × the pool's blocks over a max_model_len request's
// (4,096 compressed blocks and a chunk's window blocks): InferenceX's
// 8,524,228 tokens for MI355X TP8 at 8,192 batched tokens is 60,563
// blocks, 15.5M tokens of prefix cache. Before, the pool counted the
// compressed rows alone, 5,502 bytes a token, and no window blocks.
func TestVLLMLaysOutDeepSeekV4Pool(t *testing.T) {
	assert.Equal(t, 31, leastPaddingDivisor([]int{31, 62, 30, 31}, 31), "DeepSeek-V4-Pro's layers")
	assert.Equal(t, 31, leastPaddingDivisor([]int{30, 62, 30, 29}, 30), "31 pads 4 layers, 30 pads 29")

	var resident Config
	for _, a := range plannedArms(t, "dsv4-fp4-mi355x-vllm-agentic-mtp") {
		if a.name == "tp8" {
			resident = a.points[len(a.points)-1]
		}
	}
	require.Equal(t, configs.VLLM, resident.Engine)
	require.Equal(t, 8192, resident.ChunkSize, "the recipe's --max-num-batched-tokens")
	require.True(t, resident.Spec.Enabled(), "MTP")

	l := shapeOf(resident.ModelPath).swa.vllmLayout(resident)
	assert.Equal(t, 256, l.blockTokens)
	assert.InDelta(t, 31*(37_440+8_640+1_728), l.blockBytes, 1e-6)
	assert.Equal(t, 3_354, l.windowBlocks(8192))
	assert.Equal(t, 6_682, l.windowBlocks(16384))
	const logged, maxModelLen = 8_524_228, 1 << 20
	assert.InDelta(t, 60_563, float64(logged)*float64(4096+l.windowBlocks(8192))/maxModelLen, 1, "the log's blocks")

	// HBM × utilization − an eighth of 1.6T parameters at 0.55 bytes with
	// the draft's 3 % − vLLM's 19.5 GB, less a chunk's window blocks, over
	// a block's bytes a token.
	free := 288*0.86 - 1600*0.55*1.03/8 - 19.5
	want := (free*1e9 - 3_354*1_482_048) / (1_482_048.0 / 256)
	assert.InDelta(t, want, newCapacity(resident).poolTokens, float64(resident.PageSize)+1, "was %.0f", free*1e9/shapeOf(resident.ModelPath).kvBytes)

	// Without speculative decoding the MTP layer's window is gone; the 61
	// window layers still make 2 groups of 31.
	plain := resident
	plain.Spec = Spec{}
	assert.Equal(t, 3_354, shapeOf(plain.ModelPath).swa.vllmLayout(plain).windowBlocks(8192))
}
