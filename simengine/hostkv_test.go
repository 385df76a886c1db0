package simengine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sweep/configs"
	"sweep/internal/simproto"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostTierKeepsEvictedBlocks(t *testing.T) {
	c := newPrefixCache(64, 128) // room for two blocks on the host
	blocks := []uint64{1, 2, 3, 4}
	var nodes []*cacheNode
	for _, h := range blocks {
		n, _ := c.insert(h)
		nodes = append(nodes, n)
	}
	c.release(nodes)
	require.Equal(t, 256, c.evict(256))
	// Evicted oldest first (the deepest block first), so the host keeps
	// the two evicted last: the prompt's first two blocks.
	assert.Empty(t, c.match(blocks), "nothing left on the device")
	assert.Equal(t, 2, c.onHost(blocks))
	assert.Equal(t, 0, c.onHost(blocks[2:]))
	assert.Equal(t, 2, c.load(blocks))
	assert.Equal(t, 0, c.onHost(blocks), "a load moves the blocks back to the device")
	assert.Equal(t, 0, c.hostUsed)

	c.toHost(9)
	c.flush()
	assert.Equal(t, 0, c.onHost([]uint64{9}), "flush_cache empties the host tier too")

	none := newPrefixCache(64, 0)
	n, _ := none.insert(1)
	none.release([]*cacheNode{n})
	none.evict(64)
	assert.Equal(t, 0, none.onHost([]uint64{1}), "no tier, nothing kept")
}

func TestHostKVFromEngineFlags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		engine configs.Engine
		flags  mapLookup
		want   HostKV
	}{
		{"sglang hicache default ratio", configs.SGLang, mapLookup{"--model-path": "m", "--enable-hierarchical-cache": true}, HostKV{Ratio: 2}},
		{"sglang hicache ratio", configs.SGLang, mapLookup{"--model-path": "m", "--enable-hierarchical-cache": true, "--hicache-ratio": 3.0}, HostKV{Ratio: 3}},
		{"sglang hicache size", configs.SGLang, mapLookup{"--model-path": "m", "--enable-hierarchical-cache": true, "--hicache-size": 144.0}, HostKV{Ratio: 2, BytesPerWorker: 144e9}},
		{"sglang hicache write back", configs.SGLang, mapLookup{"--model-path": "m", "--enable-hierarchical-cache": true, "--hicache-ratio": 0.75, "--hicache-write-policy": "write_back"}, HostKV{Ratio: 0.75, WriteBack: true}},
		{"sglang hicache write through", configs.SGLang, mapLookup{"--model-path": "m", "--enable-hierarchical-cache": true, "--hicache-write-policy": "write_through"}, HostKV{Ratio: 2}},
		{"sglang size without hicache", configs.SGLang, mapLookup{"--model-path": "m", "--hicache-size": 144.0}, HostKV{}},
		{"vllm simple cpu offload", configs.VLLM, mapLookup{"--model": "m", "--kv-transfer-config": `{"kv_connector":"SimpleCPUOffloadConnector","kv_role":"kv_both","kv_connector_extra_config":{"cpu_bytes_to_use_per_rank":187375000000,"lazy_offload":false}}`}, HostKV{BytesPerWorker: 187375000000}},
		{"vllm simple cpu offload for the engine", configs.VLLM, mapLookup{"--model": "m", "--kv-transfer-config": `{"kv_connector":"SimpleCPUOffloadConnector","kv_role":"kv_both","kv_connector_extra_config":{"cpu_bytes_to_use":2199023255552,"lazy_offload":true}}`}, HostKV{Bytes: 2199023255552, WriteBack: true}},
		{"vllm per rank wins", configs.VLLM, mapLookup{"--model": "m", "--kv-transfer-config": `{"kv_connector":"SimpleCPUOffloadConnector","kv_connector_extra_config":{"cpu_bytes_to_use":8e11,"cpu_bytes_to_use_per_rank":1e11}}`}, HostKV{BytesPerWorker: 1e11}},
		// Its server holds the size: one `lmcache server` a rank
		// (recipes.LMCache), its command handed over in a simulated run.
		{"vllm lmcache sized by its server", configs.VLLM, mapLookup{"--model": "m", "--kv-transfer-config": `{"kv_connector":"LMCacheMPConnector","kv_role":"kv_both","kv_connector_extra_config":{"lmcache.mp.server_urls":"tcp://127.0.0.1:5555","lmcache.mp.mq_timeout":6000.0}}`}, HostKV{BytesPerWorker: 24 << 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{simproto.EnvSidecars: sidecarsEnv(t, lmcacheServerArgv(5555, "24"))}
			c, err := ConfigFromArgs(tc.engine, tc.flags, env)
			require.NoError(t, err)
			c.HostKV.Source = "" // TestHostTierLog
			assert.Equal(t, tc.want, c.HostKV)
		})
	}
	_, err := ConfigFromArgs(configs.VLLM, mapLookup{"--model": "m", "--kv-transfer-config": "{"}, nil)
	assert.ErrorContains(t, err, "--kv-transfer-config")
}

func TestHostTierCapacity(t *testing.T) {
	cfg := qwenConfig(configs.SGLang, 8, 1)
	cfg, err := cfg.Normalize()
	require.NoError(t, err)
	device := newCapacity(cfg)
	require.Zero(t, device.hostTokens)

	// Write-through: a host pool twice the device's adds one device pool.
	cfg.HostKV = HostKV{Ratio: 2}
	capa := newCapacity(cfg)
	assert.Equal(t, device.poolTokens, capa.poolTokens, "the tier leaves the device pool alone")
	assert.Equal(t, device.poolTokens, capa.hostTokens)
	// Sized in bytes per worker: the host pool keeps a hybrid model's
	// attention KV alone (SGLang sizes Qwen3.5's KV and Mamba host pools
	// each by --hicache-size), 15 layers × 2 heads × 256 × 2 bytes at
	// FP8 over the 2 KV heads: 7,680 bytes a GPU at TP8, where the device
	// pool counts 20 KB a token with the state's share. Before, the host
	// pool was counted at the device's 20 KB, 2.6 times too few tokens. 400e9 / 7,680 = 52,083,333.
	cfg.HostKV = HostKV{BytesPerWorker: 400e9}
	capa = newCapacity(cfg)
	assert.Equal(t, 52_083_333-device.poolTokens, capa.hostTokens)
	assert.InDelta(t, 7680/(0.8*64e9), capa.perLoadToken, 1e-15)
	// Sized for the whole engine (vLLM's cpu_bytes_to_use): split over
	// its 8 workers. Before, only the per-rank key gave a tier, and the
	// MiniMax-M3 B300 offload points ran with none.
	cfg.HostKV = HostKV{Bytes: 8 * 400e9}
	capa = newCapacity(cfg)
	assert.Equal(t, 52_083_333-device.poolTokens, capa.hostTokens)
	// A model without a recurrent state keeps the same KV per token on
	// the host as on the device.
	mm := Config{Engine: configs.VLLM, ModelPath: "MiniMaxAI/MiniMax-M3-MXFP8", TP: 8, GPU: "h200", KVCacheDType: "fp8",
		HostKV: HostKV{BytesPerWorker: 100e9}}
	mm, err = mm.Normalize()
	require.NoError(t, err)
	mcap := newCapacity(mm)
	perGPU := 60*4*128*2/4.0 + 57*136 // KV over 4 heads, the index key whole
	assert.Equal(t, int(100e9/perGPU)-mcap.poolTokens, mcap.hostTokens)
	// A shared store (Mooncake's, through vLLM's MooncakeStoreConnector)
	// keeps each distinct KV shard once: at TP8 over MiniMax-M3's 4 KV
	// heads two ranks hold each head and write one key between them, so
	// the 8 segments hold twice the tokens of 8 private copies. Before,
	// the store was counted as one copy per rank, half its capacity, and
	// the H200 offload points c12 and c14 (green on the cluster) failed.
	mm.HostKV = HostKV{BytesPerWorker: 100e9, Shared: true}
	assert.Equal(t, int(2*100e9/perGPU)-mcap.poolTokens, newCapacity(mm).hostTokens)
	// At TP4 every rank holds its own head: nothing is shared.
	mm4 := mm
	mm4.TP = 4
	mm4, err = mm4.Normalize()
	require.NoError(t, err)
	m4 := newCapacity(mm4)
	perGPU4 := 60*4*128*2/4.0 + 57*136
	assert.Equal(t, int(100e9/perGPU4)-m4.poolTokens, m4.hostTokens)
	// Write-back: the tier holds what the device evicted, so all of it
	// extends the device pool, even a pool smaller than the device's
	// (the GLM-5.2 B200 script's --hicache-ratio 0.75 below c12, which
	// write-through accounting left with no tier at all).
	cfg.HostKV = HostKV{Ratio: 0.75, WriteBack: true}
	capa = newCapacity(cfg)
	assert.Equal(t, int(0.75*float64(device.poolTokens)), capa.hostTokens)
	cfg.HostKV = HostKV{Ratio: 0.75}
	assert.Zero(t, newCapacity(cfg).hostTokens)
}

// TestEngineHostBytesPerDataParallelRank: vLLM divides cpu_bytes_to_use
// by the engine's world size (TP × PP, SimpleCPUOffloadConnector), and
// with data parallelism every DP rank runs an engine of its own, so each
// rank's workers share all of it. InferenceX's DeepSeek-V4 B300 DEP8
// arm (-tp 1 -dp 8) gives each DP rank 356 GB that way ("356 GB per DP
// rank, 2,849 GB total"). Before, the bytes were split over all 8 GPUs:
// 44.5 GB a rank, fewer tokens than the rank's device pool, so the
// write-through tier added nothing and the arm ran without one.
func TestEngineHostBytesPerDataParallelRank(t *testing.T) {
	const bytes = 356.125e9
	dep := Config{Engine: configs.VLLM, ModelPath: "deepseek-ai/DeepSeek-V4-Pro", TP: 1, DP: 8, EP: 8, GPU: "b300",
		MemFraction: 0.92, KVCacheDType: "fp8", HostKV: HostKV{Bytes: bytes}}
	dep, err := dep.Normalize()
	require.NoError(t, err)
	capa := newCapacity(dep)
	perToken := float64(30*(584+132)/4 + 31*584/128) // DeepSeek-V4's compressed rows (5,511 bytes), one latent head on every GPU
	require.Greater(t, int(bytes/perToken), capa.poolTokens)
	assert.Equal(t, int(bytes/perToken)-capa.poolTokens, capa.hostTokens, "each DP rank's engine keeps all of cpu_bytes_to_use")
	// One engine over TP4 splits it over its four workers.
	tp := dep
	tp.TP, tp.DP, tp.EP = 4, 1, 1
	tp.HostKV.WriteBack = true
	tp, err = tp.Normalize()
	require.NoError(t, err)
	assert.Equal(t, int(bytes/4/perToken), newCapacity(tp).hostTokens)
}

// TestWriteBackLoadKeepsTheHostCopy: a write-back tier (HiCache
// write_back) keeps a loaded block's host copy, newest, so evicting the
// block again writes nothing and drops nothing; a write-through tier's
// load takes the block out (the device's pool is part of its size).
func TestWriteBackLoadKeepsTheHostCopy(t *testing.T) {
	for _, wb := range []bool{false, true} {
		c := newPrefixCache(64, 4*64)
		c.keepOnLoad = wb
		park := func(blocks ...uint64) {
			var nodes []*cacheNode
			for _, h := range blocks {
				n, _ := c.insert(h)
				nodes = append(nodes, n)
			}
			c.release(nodes)
			c.evict(len(blocks) * 64)
		}
		park(1, 2)
		park(3, 4) // the tier is full: 1, 2, 3, 4
		require.Equal(t, 2, c.load([]uint64{1, 2}))
		if !wb {
			assert.Equal(t, 2*64, c.hostUsed, "write-through: the loaded blocks left the tier")
			continue
		}
		assert.Equal(t, 4*64, c.hostUsed, "write-back: the loaded blocks keep their copies")
		park(1, 2) // the device evicts them again: nothing to write
		assert.Equal(t, 2, c.onHost([]uint64{3, 4}), "nothing was dropped for them")
		park(5, 6) // new blocks drop the oldest, 3 and 4, not the reloaded 1 and 2
		assert.Equal(t, 2, c.onHost([]uint64{1, 2}))
		assert.Equal(t, 0, c.onHost([]uint64{3, 4}))
	}
}

// TestHostTierSoftensTheCliff: past the device pool, sessions whose
// prefixes went to host memory load them back instead of recomputing
// them, so the cache keeps hitting and throughput holds up.
func TestHostTierSoftensTheCliff(t *testing.T) {
	cfg := qwenConfig(configs.SGLang, 8, 1)
	cfg.MaxTotalTokens = 300_000 // about 12 agentic sessions
	const conc = 32
	without := closedLoop(t, cfg, agentic, conc, 600)
	cfg.HostKV = HostKV{BytesPerWorker: 100e9} // 5M tokens at 20 KB a GPU
	with := closedLoop(t, cfg, agentic, conc, 600)
	t.Logf("conc %d: device only %.0f tok/s/GPU, hit %.2f; with the host tier %.0f tok/s/GPU, hit %.2f",
		conc, without.tputPerGPU, without.hitRate, with.tputPerGPU, with.hitRate)
	assert.Less(t, without.hitRate, 0.6, "the device pool alone thrashes")
	assert.Greater(t, with.hitRate, 0.85, "the host tier keeps the prefixes")
	assert.Greater(t, with.tputPerGPU, 1.5*without.tputPerGPU)
}

// TestSixteenBitKVOfQuantizedCheckpoints: an FP8 or FP4 checkpoint's KV
// is 16-bit unless a quantized KV dtype is asked for ("auto" is the
// model's BF16 activations); the name's precision is the weights'. Before,
// an FP8 name kept 8-bit KV even with --kv-cache-dtype bfloat16.
func TestSixteenBitKVOfQuantizedCheckpoints(t *testing.T) {
	for _, model := range []string{"Qwen/Qwen3.5-397B-A17B-FP8", "amd/Qwen3.5-397B-A17B-MXFP4", "Qwen/Qwen3.5-397B-A17B"} {
		kv := func(dtype string) float64 {
			c := Config{ModelPath: model, KVCacheDType: dtype}
			return kvBytesPerToken(c, shapeOf(model))
		}
		fp8 := kv("fp8_e4m3")
		for _, d := range []string{"", "auto", "bfloat16", "bf16"} {
			assert.Equal(t, 2*fp8, kv(d), "%s with %q", model, d)
		}
		assert.Equal(t, fp8/2, kv("fp4_e2m1"), model)
	}
}

// TestAdmissionLoadsItsOwnHostBlocks: the prompt at the head of the queue
// is the one whose blocks went to the host tier longest ago, so they are
// the tier's oldest; making room on the device for it pushes more
// blocks to the host, and those must drop other blocks, not the ones it
// is about to load (SGLang's prefix match stamps the host nodes it walks
// as just used). Before, the admission dropped them and recomputed the
// whole prompt.
func TestAdmissionLoadsItsOwnHostBlocks(t *testing.T) {
	cfg, err := qwenConfig(configs.SGLang, 8, 1).Normalize()
	require.NoError(t, err)
	capa := newCapacity(cfg)
	const block = 64
	capa.poolTokens = 5 * block // room for one session of 4 blocks and change
	capa.hostTokens = 8 * block // two sessions
	r := newRank(0, &cfg, capa)
	require.Equal(t, block, r.cache.blockTokens)
	session := func(first uint64) []uint64 { return []uint64{first, first + 1, first + 2, first + 3} }
	park := func(blocks []uint64) { // computed, released, then pushed to the host
		var nodes []*cacheNode
		for _, h := range blocks {
			n, _ := r.cache.insert(h)
			nodes = append(nodes, n)
		}
		r.cache.release(nodes)
	}
	a, b, c := session(10), session(20), session(30)
	park(a)
	r.cache.evict(4 * block)
	park(b)
	r.cache.evict(4 * block)
	require.Equal(t, 4, r.cache.onHost(a), "a is on the host, its oldest blocks")
	require.Equal(t, 4, r.cache.onHost(b))
	park(c) // c stays on the device, evictable: a's admission evicts it

	q := &simRequest{id: 1, prompt: 4*block + 10, blocks: a, target: 1, maxTokens: 1, reason: "length"}
	r.enqueue(q, 0)
	r.admit(0)
	require.Len(t, r.running, 1, "a is admitted")
	assert.Equal(t, 4*block, q.cached, "a's prefix is loaded from the host, not recomputed")
	assert.Equal(t, 4*block, q.fromHost, "all of it from the host tier (vLLM's external_kv_transfer)")
	assert.Equal(t, 0, r.cache.onHost(b), "b's blocks were the ones dropped for c's")
	assert.Equal(t, 4, r.cache.onHost(c))
}

// TestMooncakeStoreSizedByItsConfigFile: vLLM's MooncakeStoreConnector
// puts each worker's blocks in a global segment whose size is in the file
// MOONCAKE_CONFIG_PATH names (InferenceX's MiniMax-M3 Hopper recipes:
// "87GB" a rank at 1,234 GB of DRAM). Before, the simulated engine read no
// file and ran the Mooncake points with no tier; then it read the file but
// took a missing one for no tier, silently (a plan whose sidecar files
// were not written) or the variable unset: now the engine refuses to
// start, naming the variable and the path, as the real connector fails to
// load its config. A file without global_segment_size then gave no tier,
// silently; vLLM mounts its default of 4 GiB a worker (rows 4 and 5), and
// the values vLLM or Mooncake refuse fail the start at their line and
// column (rows 9 on), as the real engine fails.
func TestMooncakeStoreSizedByItsConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := dir + "/" + name
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		return path
	}
	// store is a config with what recipes.Mooncake writes besides the
	// sizes, and body's members first.
	store := func(body string) string {
		return `{` + body + `"metadata_server": "P2PHANDSHAKE", "master_server_address": "127.0.0.1:20000", "protocol": "rdma", "device_name": ""}`
	}
	transfer := `{"kv_connector":"MooncakeStoreConnector","kv_role":"kv_both","kv_connector_extra_config":{"load_async":true}}`
	flags := mapLookup{"--model": "MiniMaxAI/MiniMax-M3-MXFP8", "--kv-transfer-config": transfer}
	const fromFile, byDefault = "the file's", "vLLM's default, not in the file"
	for i, tc := range []struct {
		name       string
		body       string  // the file's contents, "" for no file
		segment    float64 // the tier's bytes per worker
		from       string  // where the segment's and the buffer's sizes came from
		bufferFrom string
		err        string // the error's text after the path, when the engine does not start
	}{
		{name: "the recipe's file", body: store(`"mode": "embedded", "global_segment_size": "87GB", "local_buffer_size": "4GB", `), segment: 87 << 30, from: fromFile, bufferFrom: fromFile},
		{name: "bytes", body: store(`"global_segment_size": 1000000, `), segment: 1e6, from: fromFile, bufferFrom: byDefault},
		{name: "megabytes, a space before the unit, any case", body: store(`"global_segment_size": " 512 mB ", `), segment: 512 << 20, from: fromFile, bufferFrom: byDefault},
		{name: "no global_segment_size: vLLM's 4 GiB", body: store(`"mode": "embedded", "local_buffer_size": "4GB", `), segment: 4 << 30, from: byDefault, bufferFrom: fromFile},
		{name: "no sizes, no mode: vLLM's defaults", body: store(``), segment: 4 << 30, from: byDefault, bufferFrom: byDefault},
		{name: "a fraction of a GB, truncated to whole bytes", body: store(`"global_segment_size": "1.5GB", `), segment: 1.5 * (1 << 30), from: fromFile, bufferFrom: byDefault},
		{name: "a JSON number with a fraction, truncated as int() does", body: store(`"global_segment_size": 8.9e9, `), segment: 8.9e9, from: fromFile, bufferFrom: byDefault},
		{name: "a bare number string is bytes", body: store(`"global_segment_size": "2048", `), segment: 2048, from: fromFile, bufferFrom: byDefault},
		{name: "no file: the engine does not start", err: ": no such file"},
		{name: "not JSON", body: `{`, err: ":1:2: the JSON ends early"},
		{name: "not an object", body: `null`, err: ":1:1: not a JSON object"},
		{name: "a unit vLLM does not know", body: store(`"global_segment_size": "87GiB", `), err: `:1:25: global_segment_size: "87GiB": vLLM's _parse_size raises ValueError (Invalid format)`},
		{name: "a terabyte string", body: store(`"global_segment_size": "1TB", `), err: `:1:25: global_segment_size: "1TB": vLLM's _parse_size raises ValueError (Invalid format)`},
		{name: "an exponent in a string", body: store(`"global_segment_size": "1e9", `), err: `:1:25: global_segment_size: "1e9": vLLM's _parse_size raises ValueError (Invalid format)`},
		{name: "two dots", body: store(`"global_segment_size": "1.2.3GB", `), err: `:1:25: global_segment_size: "1.2.3GB": vLLM's _parse_size raises ValueError (Invalid numeric value)`},
		{name: "an empty string", body: store(`"global_segment_size": " ", `), err: `:1:25: global_segment_size: " ": an empty string`},
		{name: "zero in embedded mode", body: store(`"global_segment_size": "0", `), err: `:1:25: global_segment_size: "0": vLLM's MooncakeStoreConfig raises ValueError (embedded mode requires global_segment_size > 0)`},
		{name: "zero bytes as a number", body: store(`"mode": "embedded", "global_segment_size": 0, `), err: `:1:45: global_segment_size: 0: vLLM's MooncakeStoreConfig raises ValueError (embedded mode requires`},
		{name: "negative", body: store(`"global_segment_size": -1, `), err: `:1:25: global_segment_size: -1: negative`},
		{name: "beyond size_t", body: store(`"global_segment_size": 18446744073709551616, `), err: `:1:25: global_segment_size: 18446744073709551616: beyond 2^64 - 1 bytes`},
		{name: "null", body: store(`"global_segment_size": null, `), err: `:1:25: global_segment_size: null: vLLM's _parse_size raises TypeError`},
		{name: "a list", body: store(`"global_segment_size": [87], `), err: `:1:25: global_segment_size: [87]: vLLM's _parse_size raises TypeError`},
		{name: "true", body: store(`"global_segment_size": true, `), err: `:1:25: global_segment_size: true: true and false are no size`},
		{name: "a zero local buffer", body: store(`"local_buffer_size": "0GB", `), err: `:1:23: local_buffer_size: "0GB": vLLM's MooncakeStoreConfig raises ValueError (local_buffer_size must be > 0)`},
		{name: "a negative local buffer", body: store(`"local_buffer_size": -4, `), err: `:1:23: local_buffer_size: -4: vLLM's MooncakeStoreConfig raises ValueError (local_buffer_size must be > 0)`},
		{name: "a bad local buffer", body: store(`"local_buffer_size": {}, `), err: `:1:23: local_buffer_size: {}: vLLM's _parse_size raises TypeError`},
		{name: "an unknown mode", body: store(`"mode": "Embedded", `), err: `:1:10: mode: "Embedded": vLLM's MooncakeStoreConfig raises ValueError (unknown Mooncake mode)`},
		{name: "standalone-store takes no segment", body: store(`"mode": "standalone-store", `), err: `: global_segment_size: left out in standalone-store mode: vLLM's MooncakeStoreConfig raises ValueError`},
		{name: "standalone-store is not modelled", body: store(`"mode": "standalone-store", "global_segment_size": 0, `), err: `:1:10: mode: "standalone-store": the workers mount no memory`},
		{name: "no master", body: `{"global_segment_size": "87GB", "metadata_server": "P2PHANDSHAKE"}`, err: `: master_server_address: left out: vLLM passes "" to Mooncake's store setup, which connects to no master`},
		{name: "an empty master", body: `{"master_server_address": ""}`, err: `:1:27: master_server_address: "": vLLM passes ""`},
		{name: "a master that is no string", body: `{"master_server_address": 20000}`, err: `:1:27: master_server_address: 20000: vLLM passes it to Mooncake's store setup, which takes a string only (TypeError)`},
		{name: "a protocol that is no string", body: `{"master_server_address": "127.0.0.1:20000", "protocol": null}`, err: `:1:58: protocol: null: vLLM passes it to Mooncake's store setup, which takes a string only`},
	} {
		t.Run(fmt.Sprintf("%02d %s", i+1, tc.name), func(t *testing.T) {
			path := dir + "/missing.json"
			if tc.body != "" {
				path = write(fmt.Sprintf("%02d.json", i+1), tc.body)
			}
			c, err := ConfigFromArgs(configs.VLLM, flags, map[string]string{"MOONCAKE_CONFIG_PATH": path})
			if tc.err != "" {
				require.Error(t, err, tc.body)
				assert.Contains(t, err.Error(), "MOONCAKE_CONFIG_PATH")
				assert.Contains(t, err.Error(), path+tc.err, tc.body)
				return
			}
			require.NoError(t, err, tc.body)
			want := HostKV{BytesPerWorker: tc.segment, Shared: true}
			assert.Equal(t, want, HostKV{BytesPerWorker: c.HostKV.BytesPerWorker, Shared: c.HostKV.Shared}, tc.body)
			assert.Equal(t, fmt.Sprintf("Mooncake store (%s): global_segment_size %.4g GiB per worker (%s), local_buffer_size 4 GiB (%s; a transfer buffer, not storage), one store, each KV shard once",
				path, tc.segment/(1<<30), tc.from, tc.bufferFrom), c.HostKV.Source)
		})
	}
	t.Run("no variable: the engine does not start", func(t *testing.T) {
		_, err := ConfigFromArgs(configs.VLLM, flags, map[string]string{"MOONCAKE_CONFIG_PATH": ""})
		assert.ErrorContains(t, err, "MOONCAKE_CONFIG_PATH is not set")
	})
	t.Run("every problem at once", func(t *testing.T) {
		path := write("all.json", "{\n  \"global_segment_size\": \"lots\",\n  \"local_buffer_size\": 0\n}\n")
		_, err := ConfigFromArgs(configs.VLLM, flags, map[string]string{"MOONCAKE_CONFIG_PATH": path})
		var got []string
		for _, e := range configs.Errors(err) {
			got = append(got, fmt.Sprintf("%d:%d %s", e.Line, e.Col, e.Key))
		}
		assert.Equal(t, []string{"2:26 global_segment_size", "3:24 local_buffer_size", "0:0 master_server_address"}, got, "%v", err)
	})
	// Another connector does not read the file: LMCache's takes its
	// server's size.
	c, err := ConfigFromArgs(configs.VLLM, mapLookup{"--model": "m", "--kv-transfer-config": `{"kv_connector":"LMCacheMPConnector","kv_role":"kv_both"}`},
		map[string]string{"MOONCAKE_CONFIG_PATH": write("g.json", store(`"global_segment_size": "87GB", `)), simproto.EnvSidecars: sidecarsEnv(t, lmcacheServerArgv(5555, "10"))})
	require.NoError(t, err)
	assert.Equal(t, HostKV{BytesPerWorker: 10 << 30, Source: "LMCache: 1 server × 10 GiB L1 (1 worker a server), LRU"}, c.HostKV)
}

// TestPlannedMooncakeArmsHaveTheirTier: the agreement and capacity tests
// build each planned point's engine as a simulated run does (pointConfig:
// PlannedCommandLine, with the sidecars' files written where the plan
// puts them). Before, they built it their own way and wrote no Mooncake
// config, so the MiniMax-M3 H100 and H200 Mooncake arms were judged with
// no host tier (H100 c6: 1,388 tok/s/GPU at 2.1 tok/s/user in the steady
// state, 19,612 at 35.1 with it) while sweep discover --simulate gives
// them one: each rank's global segment, the recipe's 119 GB and 87 GB.
func TestPlannedMooncakeArmsHaveTheirTier(t *testing.T) {
	for _, tc := range []struct {
		key       string
		segmentGB float64
	}{
		{"minimaxm3-fp8-h100-vllm-agentic-mtp", 119},
		{"minimaxm3-fp8-h200-vllm-agentic-mtp", 87},
	} {
		arms := 0
		for _, a := range plannedArms(t, tc.key) {
			if !strings.HasSuffix(a.name, "kv:dram") {
				assert.Equal(t, HostKV{}, a.cfg.HostKV, "%s %s: no offload, no tier", tc.key, a.name)
				continue
			}
			arms++
			for i, cfg := range a.points {
				assert.Contains(t, cfg.HostKV.Source, "global_segment_size "+strconv.FormatFloat(tc.segmentGB, 'g', -1, 64)+" GiB per worker (the file's), local_buffer_size 4 GiB (the file's;", cfg.HostKV.Source)
				cfg.HostKV.Source = "" // TestHostTierLog
				assert.Equal(t, HostKV{BytesPerWorker: tc.segmentGB * (1 << 30), Shared: true}, cfg.HostKV, "%s %s c%d", tc.key, a.name, a.concs[i])
			}
		}
		assert.Equal(t, 1, arms, "%s: its one Mooncake arm", tc.key)
	}
}

// lmcacheServerArgv is the command recipes.LMCache starts for one rank's
// LMCache server, listening on port with an L1 of gb GB.
func lmcacheServerArgv(port int, gb string) []string {
	return []string{"lmcache", "server", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-host", "127.0.0.1", "--http-port", strconv.Itoa(port + 2525),
		"--l1-size-gb", gb, "--l1-init-size-gb", "10", "--l1-read-ttl-seconds", "7200",
		"--chunk-size", "256", "--max-workers", "2", "--eviction-policy", "LRU",
		"--supported-transfer-mode", "lmcache_driven"}
}

// sidecarsEnv is simproto.EnvSidecars' value for argvs.
func sidecarsEnv(t testing.TB, argvs ...[]string) string {
	t.Helper()
	v, err := simproto.Sidecars(argvs)
	require.NoError(t, err)
	return v
}

// TestLMCacheTierFromItsServers: vLLM's LMCacheMPConnector keeps each
// worker's KV in the LMCache server its lmcache.mp.server_urls names,
// whose --l1-size-gb (GB of 2^30 bytes) is the tier's size, as InferenceX's
// MiniMax-M3 MI300X and MI355X DRAM arms run one server a TP rank. The
// simulated engine reads the servers' commands from the point's sidecars
// (SWEEP_SIM_SIDECARS). Before, the connector gave no tier at all: the
// LMCache arms ran GPU-resident in simulation.
func TestLMCacheTierFromItsServers(t *testing.T) {
	transfer := func(extra string) string {
		return `{"kv_connector":"LMCacheMPConnector","kv_connector_module_path":"lmcache.integration.vllm.lmcache_mp_connector","kv_role":"kv_both","kv_connector_extra_config":` + extra + `}`
	}
	eight := `{"lmcache.mp.server_urls":"tcp://127.0.0.1:5555,tcp://127.0.0.1:5556,tcp://127.0.0.1:5557,tcp://127.0.0.1:5558,tcp://127.0.0.1:5559,tcp://127.0.0.1:5560,tcp://127.0.0.1:5561,tcp://127.0.0.1:5562","lmcache.mp.mq_timeout":6000.0}`
	var servers [][]string
	for i := range 8 {
		servers = append(servers, lmcacheServerArgv(5555+i, "24"))
	}
	mooncake := []string{"mooncake_master", "--port", "20000"}
	for _, tc := range []struct {
		name     string
		tp       int
		extra    string
		sidecars [][]string
		want     float64 // HostKV.BytesPerWorker
		err      string
	}{
		{name: "the recipe: a server a rank", tp: 8, extra: eight, sidecars: servers, want: 24 << 30},
		{name: "other sidecars are no servers", tp: 8, extra: eight, sidecars: append([][]string{mooncake, {"lmcache", "kvcache", "clear"}}, servers...), want: 24 << 30},
		{name: "the smallest server bounds the tier", tp: 8, extra: eight, sidecars: append(slices.Clone(servers[:7]), lmcacheServerArgv(5562, "12.5")), want: 12.5 * (1 << 30)},
		{name: "one server for four workers", tp: 4, extra: `{"lmcache.mp.server_urls":["127.0.0.1:5555"]}`, sidecars: servers[:1], want: 6 << 30},
		{name: "host and port", tp: 1, extra: `{"lmcache.mp.host":"tcp://localhost","lmcache.mp.port":5556}`, sidecars: servers[:2], want: 24 << 30},
		{name: "the default server", tp: 1, extra: `{}`, sidecars: servers[:1], want: 24 << 30},
		{name: "a URL without a server", tp: 8, extra: eight, sidecars: servers[:7], err: "no LMCache server for tcp://127.0.0.1:5562: the real engine would fail to connect"},
		{name: "no sidecars given", tp: 8, extra: eight, err: "no LMCache server for tcp://127.0.0.1:5555"},
		{name: "uneven workers", tp: 8, extra: `{"lmcache.mp.server_urls":"tcp://a:5555,tcp://b:5556,tcp://c:5557"}`, sidecars: servers, err: "3 LMCache servers for 8 workers"},
		{name: "a server the schema rejects", tp: 1, extra: `{}`, sidecars: [][]string{{"lmcache", "server", "--port", "5555", "--l1-size-gb", "lots", "--eviction-policy", "LRU"}}, err: `lmcache 0.5.3: --l1-size-gb: could not convert string to float: "lots"`},
		{name: "a flag the partial schema does not list", tp: 1, extra: `{}`, sidecars: [][]string{append(lmcacheServerArgv(5555, "8"), "--l1-use-lazy")}, err: "lmcache@0.5.3 lists only the flags sweep's recipes pass"},
		{name: "a server without its size", tp: 1, extra: `{}`, sidecars: [][]string{{"lmcache", "server", "--port", "5555", "--eviction-policy", "LRU"}}, err: "the L1 size is required"},
		{name: "a policy the tier does not model", tp: 1, extra: `{}`, sidecars: [][]string{{"lmcache", "server", "--l1-size-gb", "8", "--eviction-policy", "noop"}}, err: "--eviction-policy noop"},
		{name: "two servers on one port", tp: 1, extra: `{}`, sidecars: [][]string{servers[0], servers[0]}, err: "both listen on port 5555"},
		{name: "a port out of range", tp: 1, extra: `{"lmcache.mp.server_urls":"tcp://h:70000"}`, sidecars: servers, err: `server URL "tcp://h:70000"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags := mapLookup{"--model": "MiniMaxAI/MiniMax-M3", "--tensor-parallel-size": tc.tp, "--kv-transfer-config": transfer(tc.extra)}
			env := map[string]string{}
			if tc.sidecars != nil {
				env[simproto.EnvSidecars] = sidecarsEnv(t, tc.sidecars...)
			}
			c, err := ConfigFromArgs(configs.VLLM, flags, env)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			c.HostKV.Source = "" // TestHostTierLog
			assert.Equal(t, HostKV{BytesPerWorker: tc.want}, c.HostKV, "write-through, a worker's own server")
		})
	}
	_, err := ConfigFromArgs(configs.VLLM, mapLookup{"--model": "m", "--kv-transfer-config": transfer(`{}`)}, map[string]string{simproto.EnvSidecars: "lmcache server"})
	assert.ErrorContains(t, err, "SWEEP_SIM_SIDECARS: want a JSON array of argv arrays")
}

// TestHostTierLog: the engine's log said only "host KV tier: 7040765
// tokens per rank beyond the device pool (write-back false)", not that
// the tier was LMCache's, of how many servers of what size; a tier of
// 8 PB (--l1-size-gb 999999 on 8 servers) or of 0 tokens (0.001) passed
// without a word, and FP4 MI355X's 4 × 74 GiB write-through tier, inside
// its device pool, ran as the resident engine with no word either. The
// node's host memory is the engine's runner's (SWEEP_SIM_RUNNER): the
// largest of its GPU's runners, which a MiniMax MI300X point on
// cluster:mi300x-amds was checked against, let an H200 tier that fits
// cluster:h200-cw's nodes but not cluster:h200-dgxc's pass on the latter.
func TestHostTierLog(t *testing.T) {
	lmcache := func(tp int, gb string) (mapLookup, map[string]string) {
		var urls []string
		var servers [][]string
		for i := range tp {
			urls = append(urls, fmt.Sprintf("tcp://127.0.0.1:%d", 5555+i))
			servers = append(servers, lmcacheServerArgv(5555+i, gb))
		}
		return mapLookup{"--model": "MiniMaxAI/MiniMax-M3", "--tensor-parallel-size": tp,
				"--kv-transfer-config": `{"kv_connector":"LMCacheMPConnector","kv_role":"kv_both","kv_connector_extra_config":{"lmcache.mp.server_urls":"` + strings.Join(urls, ",") + `"}}`},
			map[string]string{simproto.EnvSidecars: sidecarsEnv(t, servers...), simproto.EnvGPU: "mi355x"}
	}
	// on is an LMCache tier of 8 servers of gb GiB on gpu, told runner.
	on := func(gpu, runner, gb string) func() (mapLookup, map[string]string) {
		return func() (mapLookup, map[string]string) {
			flags, env := lmcache(8, gb)
			env[simproto.EnvGPU], env[simproto.EnvRunner] = gpu, runner
			return flags, env
		}
	}
	mooncakeConfig := filepath.Join(t.TempDir(), "mooncake.json")
	type want struct {
		line     string // the first line, %[1]d the tier's tokens, %[2]d those beyond the pool, %[3]d the pool's, %[4]s mooncakeConfig
		warnings []string
	}
	for _, tc := range []struct {
		name   string
		engine configs.Engine
		flags  func() (mapLookup, map[string]string)
		want   want
	}{
		{"lmcache beyond the device pool", configs.VLLM, func() (mapLookup, map[string]string) { return lmcache(8, "243") },
			want{line: "host KV tier (LMCache: 8 servers × 243 GiB L1 (1 worker a server), LRU, write-through): %[1]d tokens per rank, %[2]d beyond the device pool's %[3]d (a write-through tier copies the device's blocks)"}},
		{"lmcache within the device pool adds nothing", configs.VLLM, func() (mapLookup, map[string]string) { return lmcache(4, "24") },
			want{line: "host KV tier (LMCache: 4 servers × 24 GiB L1 (1 worker a server), LRU, write-through): %[1]d tokens per rank, within the device pool's %[3]d: a write-through tier copies the device's blocks, so it adds nothing"}},
		{"lmcache above the node's host memory", configs.VLLM, func() (mapLookup, map[string]string) { return lmcache(8, "999999") },
			want{line: "host KV tier (LMCache: 8 servers × 999999 GiB L1 (1 worker a server), LRU, write-through): %[1]d tokens per rank, %[2]d beyond",
				warnings: []string{"warning: host KV tier takes 7999992 GiB of host memory on a node (999999 GiB a GPU), above the 3023 GiB a mi355x node gives to KV offload at most (available-cpu-dram-mib of cluster:mi355x-amds, the largest of mi355x's runners in configs/runners.yaml; the engine was not told its runner (SWEEP_SIM_RUNNER)): a real node could not hold it"}}},
		{"above its own runner's node", configs.VLLM, on("h200", "cluster:h200-dgxc", "190"),
			want{line: "host KV tier (LMCache: 8 servers × 190 GiB L1 (1 worker a server), LRU, write-through): %[1]d tokens per rank",
				warnings: []string{"warning: host KV tier takes 1520 GiB of host memory on a node (190 GiB a GPU), above the 1437 GiB a node of its runner cluster:h200-dgxc gives to KV offload (available-cpu-dram-mib of cluster:h200-dgxc in configs/runners.yaml): a real node could not hold it"}}},
		{"within its own runner's node", configs.VLLM, on("h200", "cluster:h200-cw", "190"),
			want{line: "host KV tier (LMCache: 8 servers × 190 GiB L1 (1 worker a server), LRU, write-through): %[1]d tokens per rank"}},
		{"runner not told: the largest node of the GPU", configs.VLLM, on("h200", "", "190"),
			want{line: "host KV tier (LMCache: 8 servers × 190 GiB L1 (1 worker a server), LRU, write-through): %[1]d tokens per rank"}},
		{"a runner of another GPU (--sim-gpu)", configs.VLLM, on("h200", "cluster:mi300x-amds", "250"),
			want{line: "host KV tier (LMCache: 8 servers × 250 GiB L1 (1 worker a server), LRU, write-through): %[1]d tokens per rank",
				warnings: []string{"warning: host KV tier takes 2000 GiB of host memory on a node (250 GiB a GPU), above the 1952 GiB a h200 node gives to KV offload at most (available-cpu-dram-mib of cluster:h200-cw, the largest of h200's runners in configs/runners.yaml; its runner cluster:mi300x-amds has no h200 node under hardware there): a real node could not hold it"}}},
		{"lmcache below one block", configs.VLLM, func() (mapLookup, map[string]string) { return lmcache(8, "0.00001") },
			want{line: "host KV tier (LMCache: 8 servers × 1e-05 GiB L1 (1 worker a server), LRU, write-through): %[1]d tokens per rank, within",
				warnings: []string{"warning: host KV tier of %[1]d tokens per rank is less than one block (page size 16): it holds nothing"}}},
		{"hicache size, write back", configs.SGLang, func() (mapLookup, map[string]string) {
			return mapLookup{"--model-path": "m", "--enable-hierarchical-cache": true, "--hicache-size": 144.0, "--hicache-write-policy": "write_back"}, nil
		}, want{line: "host KV tier (SGLang HiCache: --hicache-size 144 GB per rank, write-back): %[1]d tokens per rank, all beyond the device pool"}},
		{"hicache ratio", configs.SGLang, func() (mapLookup, map[string]string) {
			return mapLookup{"--model-path": "m", "--enable-hierarchical-cache": true, "--hicache-ratio": 3.0}, nil
		}, want{line: "host KV tier (SGLang HiCache: --hicache-ratio 3 of the device pool, write-through): %[1]d tokens per rank, %[2]d beyond the device pool's %[3]d"}},
		{"mooncake store", configs.VLLM, func() (mapLookup, map[string]string) {
			require.NoError(t, os.WriteFile(mooncakeConfig, []byte(`{"global_segment_size": "87GB", "master_server_address": "127.0.0.1:20000"}`), 0o644))
			return mapLookup{"--model": "MiniMaxAI/MiniMax-M3", "--tensor-parallel-size": 8, "--kv-transfer-config": `{"kv_connector":"MooncakeStoreConnector","kv_role":"kv_both"}`},
				map[string]string{"MOONCAKE_CONFIG_PATH": mooncakeConfig}
		}, want{line: "host KV tier (Mooncake store (%[4]s): global_segment_size 87 GiB per worker (the file's), local_buffer_size 4 GiB (vLLM's default, not in the file; a transfer buffer, not storage), one store, each KV shard once, write-through): %[1]d tokens per rank"}},
		{"vllm simple cpu offload", configs.VLLM, func() (mapLookup, map[string]string) {
			return mapLookup{"--model": "m", "--kv-transfer-config": `{"kv_connector":"SimpleCPUOffloadConnector","kv_connector_extra_config":{"cpu_bytes_to_use":2199023255552,"lazy_offload":true}}`}, nil
		}, want{line: "host KV tier (vLLM SimpleCPUOffloadConnector: cpu_bytes_to_use 2199 GB over the engine's workers, write-back): %[1]d tokens per rank, all beyond the device pool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags, env := tc.flags()
			c, err := ConfigFromArgs(tc.engine, flags, env)
			require.NoError(t, err)
			capa := newCapacity(c)
			got := hostTierLog(c, capa)
			require.NotEmpty(t, got)
			line := fmt.Sprintf(tc.want.line, capa.hostTier, capa.hostTokens, capa.poolTokens, mooncakeConfig)
			assert.True(t, strings.HasPrefix(got[0], line), "got  %s\nwant %s...", got[0], line)
			warnings := []string{}
			for _, w := range tc.want.warnings {
				if strings.Contains(w, "%[1]d") {
					w = fmt.Sprintf(w, capa.hostTier)
				}
				warnings = append(warnings, w)
			}
			assert.Equal(t, warnings, got[1:])
		})
	}
	c, err := ConfigFromArgs(configs.VLLM, mapLookup{"--model": "m"}, nil)
	require.NoError(t, err)
	assert.Empty(t, hostTierLog(c, newCapacity(c)), "no tier, no line")
}
