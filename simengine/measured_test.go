package simengine

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/recipes/models"
)

// sessionKVTokens is the KV one live session of the built-in agentic
// trace set keeps (mean input 68k tokens, plus its subagents' prompts and
// the outputs): what a simulated discovery's KV usage shows, usage × pool
// / concurrency, about 85k tokens at every TP of the Qwen3.5 MI325X arms.
const sessionKVTokens = 85_000

// plannedArm is one arm of a planned config key: the simulator's Config
// built from the recipe's real engine argv, and the official conc-list.
type plannedArm struct {
	name string
	cfg  Config
	// traces is the shape of the built-in trace set a simulated discovery
	// replays for the arm's client loader (the long set for an uncapped
	// corpus, as loadgen falls back).
	traces tracesShape
	concs  []int
	// points holds the Config of each official point, in concs' order
	// (the recipes set --max-running-requests and the like per point).
	points []Config
	// row is the matrix row of the arm's highest official point, which
	// at plans the arm at a concurrency outside its conc-list.
	row matrix.Row
}

// at is the arm's Config at concurrency conc: its official point's, or
// the recipe planned again for its top row at conc (the conc-dependent
// flags, such as SGLang's --max-running-requests at twice the
// concurrency, follow), as a discovery of a denser conc-list would run it.
func (a plannedArm) at(t testing.TB, conc int) Config {
	t.Helper()
	if i := slices.Index(a.concs, conc); i >= 0 {
		return a.points[i]
	}
	points, err := recipes.Plan(matrix.Matrix{a.row.AtConc(conc)}, recipes.PlanOptions{Catalog: models.Builtin(), Fast: true, ResultDir: t.TempDir()})
	require.NoError(t, err, "%s at c%d", a.name, conc)
	require.Len(t, points, 1, "%s at c%d", a.name, conc)
	_, cfg := pointConfig(t, points[0])
	return cfg
}

// plannedArms plans a key's agentic rows as sweep discover does and
// parses each arm's engine command as sim-engine does.
func plannedArms(t *testing.T, key string) []plannedArm {
	t.Helper()
	points, err := plannedArmsErr(key, t.TempDir())
	require.NoError(t, err)
	return armsOf(t, points)
}

// armsOf groups planned points into arms and parses each point's engine
// command as sim-engine does.
func armsOf(t testing.TB, points []recipes.Point) []plannedArm {
	t.Helper()
	var arms []plannedArm
	index := map[string]int{}
	for _, p := range points {
		name, cfg := pointConfig(t, p)
		i, ok := index[name]
		if !ok {
			i = len(arms)
			index[name] = i
			arms = append(arms, plannedArm{name: name, cfg: cfg, traces: tracesFor(p.Client), row: p.Row})
		}
		arms[i].concs = append(arms[i].concs, p.Row.Conc)
		arms[i].points = append(arms[i].points, cfg)
		if p.Row.Conc >= arms[i].row.Conc {
			arms[i].row = p.Row
		}
	}
	return arms
}

// pointConfig names a planned point's arm and builds its simulated
// engine's Config as a simulated run does: the command line
// PlannedCommandLine plans (sweep run's), with the point's sidecar files
// (a Mooncake store's config, which MOONCAKE_CONFIG_PATH names) read
// from the plan, as the engine reads them once the point runner wrote
// them. Before, this helper wrote them itself, a second copy of the
// runner's step.
func pointConfig(t testing.TB, p recipes.Point) (string, Config) {
	t.Helper()
	// As sweep knees and sweep sim agreement name it (an offload arm is
	// an arm of its own).
	name := result.RowIdentity(&p.Row).Parallelism()
	cl, err := PlannedCommandLine(&p)
	require.NoError(t, err, name)
	cfg, err := cl.Config(nil)
	require.NoError(t, err, name)
	cfg, err = cfg.Normalize()
	require.NoError(t, err, name)
	return name, cfg
}

// tracesFor is the trace set shape a point's client replays: loadgen
// falls back to its long built-in set for a cc-traces corpus without the
// 256k cap (the corpus InferenceX replays to 1M-context families).
func tracesFor(client *recipes.Command) tracesShape {
	if client != nil {
		if i := slices.Index(client.Argv, "--public-dataset"); i >= 0 && i+1 < len(client.Argv) {
			if l := client.Argv[i+1]; strings.HasPrefix(l, "semianalysis_cc_traces_weka") && !strings.HasSuffix(l, "256k") {
				return longTraceShape
			}
		}
	}
	return traceShape
}

// TestCapacityMatchesMeasuredQwen35MI325X holds the KV pools of the
// MI325X Qwen3.5 FP8 MTP recipe to what the cluster measured (the
// InferenceX PR that added it; configs/amd-master.yaml: "TP2 peaks at c4,
// TP4/TEP4 at c40, and TP8/TEP8 at c64; the next point beyond each knee is
// retained to document the throughput cliff"): each arm's pool holds the
// sessions of its peak and not those of the next official point. The
// simulated discovery of the key (README, go doc) then peaks and falls
// where the hardware did.
func TestCapacityMatchesMeasuredQwen35MI325X(t *testing.T) {
	measuredPeak := map[string]int{
		"tp2 ep2": 4, "tp4": 40, "tp4 ep4": 40,
		"tp8": 64, "tp8 ep8": 64,
	}
	arms := plannedArms(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	require.Len(t, arms, len(measuredPeak))
	for _, a := range arms {
		t.Run(a.name, func(t *testing.T) {
			peak, ok := measuredPeak[a.name]
			require.True(t, ok, "an arm the measurement does not have")
			capa := newCapacity(a.cfg)
			require.True(t, capa.fits)
			sessions := float64(capa.poolTokens) / sessionKVTokens
			t.Logf("pool %d tokens per rank, %.1f sessions; official %v", capa.poolTokens, sessions, a.concs)
			assert.GreaterOrEqual(t, sessions, float64(peak), "the measured peak's sessions must fit the pool")
			for _, c := range a.concs {
				if c > peak {
					assert.Less(t, sessions, float64(c), "the point after the measured peak (conc %d) is its cliff", c)
					break
				}
			}
		})
	}
}

// TestKVPerGPUStopsShrinkingAtKVHeads checks the per-GPU account the pools
// above rest on: with the memory fraction fixed, twice the TP beyond the
// model's KV heads buys only the weights' share of memory, not twice the
// pool; below them the pool more than doubles.
func TestKVPerGPUStopsShrinkingAtKVHeads(t *testing.T) {
	pool := func(tp int) float64 {
		cfg := qwenConfig(configs.SGLang, tp, 1)
		cfg.MaxRunningRequests = 0
		cfg, err := cfg.Normalize()
		require.NoError(t, err)
		return float64(newCapacity(cfg).poolTokens)
	}
	p2, p4, p8 := pool(2), pool(4), pool(8)
	t.Logf("pools: tp2 %.0f, tp4 %.0f, tp8 %.0f", p2, p4, p8)
	// Qwen3.5 has 2 KV heads: from TP2 on, each GPU keeps a whole head.
	assert.Less(t, p8/p4, 2.0, "past the KV heads, more TP adds only the weights' share")
	assert.Greater(t, p8/p4, 1.2)
	// The family is known by its pre-staged weights' directory too.
	for _, name := range []string{"Qwen/Qwen3.5-397B-A17B-FP8", "/scratch/models/Qwen3.5-397B-A17B-FP8"} {
		assert.Equal(t, 2, shapeOf(name).kvHeads, name)
	}
	// A model whose KV heads are not known shards the KV over every GPU.
	unknown := qwenConfig(configs.SGLang, 4, 1)
	unknown.ModelPath = "example/Unknown-397B-A17B-FP8"
	unknown, err := unknown.Normalize()
	require.NoError(t, err)
	unknown8 := unknown
	unknown8.TP = 8
	assert.Greater(t, float64(newCapacity(unknown8).poolTokens)/float64(newCapacity(unknown).poolTokens), 2.0)
}

// TestMLAKeepsTheLatentOnEveryAttentionGPU: DeepSeek's MLA keeps one
// latent per token on every GPU of a rank's attention, so a GPU holds as
// many tokens whether the rank's attention spans TP 8 or one GPU (DP
// attention); with DP attention each of the 8 ranks has that pool. Before,
// the latent counted as a 400B-class model's sharded KV: a DP-attention
// rank of DeepSeek-V4 on B300 held 1.1 sessions of the agentic traces.
func TestMLAKeepsTheLatentOnEveryAttentionGPU(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kvBytes float64
	}{
		{"deepseek-ai/DeepSeek-R1-0528", 35_136},   // 61 × (512 + 64)
		{"deepseek-ai/DeepSeek-V4-Pro", 5_511},     // compressed rows
		{"/scratch/models/DeepSeek-V4-Pro", 5_511}, // pre-staged weights
		{"zai-org/GLM-5.2-FP8", 54_912},            // 78 × (576 + 128)
		{"/data/models/GLM-5.2-NVFP4", 54_912},
		{"moonshotai/Kimi-K3", 13_955}, // vLLM's pool: 24 MLA latents and the KDA states' share
	} {
		s := shapeOf(tc.name)
		assert.Equal(t, 1, s.kvHeads, tc.name)
		assert.Equal(t, tc.kvBytes, s.kvBytes, tc.name)
	}
	assert.Equal(t, 744.0, shapeOf("amd/GLM-5.2-MXFP4").totalB)
	assert.Equal(t, 0.5, shapeOf("amd/GLM-5.2-MXFP4").weightBytes)
	assert.Equal(t, 2800.0, shapeOf("/scratch/models/Kimi-K3").totalB)
	pool := func(dpa bool) capacity {
		cfg := Config{Engine: configs.SGLang, ModelPath: "deepseek-ai/DeepSeek-V4-Pro", TP: 8, EP: 8, GPU: "b300",
			MemFraction: 0.9, PageSize: 64, KVCacheDType: "fp8_e4m3"}
		if dpa {
			cfg.DP, cfg.DPAttention = 8, true
		}
		cfg, err := cfg.Normalize()
		require.NoError(t, err)
		return newCapacity(cfg)
	}
	tp, dp := pool(false), pool(true)
	assert.Equal(t, tp.poolTokens, dp.poolTokens, "tokens per rank")
	assert.Equal(t, 8, dp.ranks)
	assert.Greater(t, float64(dp.poolTokens), 10.0*sessionKVTokens)
}

// TestKVReadsFollowThePerGPUAccount: a decode step reads, on each
// attention GPU, the KV that GPU keeps, so past the model's KV heads (and
// for an MLA latent) more TP no longer divides the read per context
// token. Before, the read shrank with every GPU of TP: DeepSeek's latent
// at TP 8 cost an eighth of what one GPU reads.
func TestKVReadsFollowThePerGPUAccount(t *testing.T) {
	read := func(model string, tp int) float64 {
		cfg := qwenConfig(configs.SGLang, tp, 1)
		cfg.ModelPath = model
		cfg, err := cfg.Normalize()
		require.NoError(t, err)
		return newCapacity(cfg).perCtxToken
	}
	for _, tc := range []struct {
		model         string
		tp, sameAs    int
		halvesFromTP1 bool
	}{
		{"deepseek-ai/DeepSeek-R1-0528", 8, 1, false}, // one latent head
		{"Qwen/Qwen3.5-397B-A17B-FP8", 8, 2, true},    // 2 KV heads
		{"MiniMaxAI/MiniMax-M3-MXFP8", 8, 4, false},   // 4 KV heads (and index keys on every GPU)
	} {
		assert.InDelta(t, read(tc.model, tc.sameAs), read(tc.model, tc.tp), 1e-15, "%s TP%d reads as TP%d", tc.model, tc.tp, tc.sameAs)
		if tc.halvesFromTP1 {
			assert.InDelta(t, read(tc.model, 1)/2, read(tc.model, 2), 1e-15, tc.model)
		}
	}
}

// TestMiniMaxM3KVMatchesVLLMsAccount: MiniMax-M3 keeps, per token and
// GPU, its share of the KV heads and a whole copy of the sparse-attention
// indexer's key. vLLM's own figure (InferenceX's minimaxm3-fp4-b200 notes:
// one 1,048,576-token request needs 37.62 GiB at TP 2, FP8 KV) is what
// the account gives; without the index keys it was 20 % short, and the
// indexer's share does not halve from TP 2 to TP 4.
func TestMiniMaxM3KVMatchesVLLMsAccount(t *testing.T) {
	perGPU := func(tp int) float64 {
		cfg := Config{Engine: configs.VLLM, ModelPath: "amd/MiniMax-M3-MXFP4", TP: tp, GPU: "b200", MemFraction: 0.9, KVCacheDType: "fp8", PageSize: 128}
		cfg, err := cfg.Normalize()
		require.NoError(t, err)
		return newCapacity(cfg).perCtxToken * gpuSpecs["b200"].hbmTBps * 1e12 * 0.35
	}
	assert.InEpsilon(t, 37.62*(1<<30)/1_048_576, perGPU(2), 0.005)
	assert.InDelta(t, 57*136, perGPU(4)-(perGPU(2)-perGPU(4)), 1e-6, "the index keys are whole on every GPU")
}

// TestDPAttentionRanksShareTheExperts: DP attention gives each rank its
// own requests' attention, but one copy of the experts serves every
// rank, so 8 ranks do not make 8 times a TP rank's expert compute. Before,
// each rank stepped as a whole TP 8 engine: DeepSeek-V4 on 8 B300 at c64
// made 4.3 times the tokens per GPU with DP attention as without (80,314
// against 18,873 tok/s/GPU; now 18,516). The pools are sized at the
// recipes' --swa-full-tokens-ratio 0.1: at SGLang's default 0.8, with
// 1,024 request slots' state on every GPU, the TP8 pool holds 21 sessions
// and c64 falls off its cliff.
func TestDPAttentionRanksShareTheExperts(t *testing.T) {
	tput := func(dpa bool) float64 {
		cfg := Config{Engine: configs.SGLang, ModelPath: "deepseek-ai/DeepSeek-V4-Pro", TP: 8, EP: 8, GPU: "b300",
			MemFraction: 0.9, PageSize: 64, KVCacheDType: "fp8_e4m3", MaxRunningRequests: 1024, SWAFullTokensRatio: 0.1,
			Spec: Spec{Algorithm: "EAGLE", NumSteps: 3, TopK: 1, NumDraftTokens: 4, AcceptLength: 2.49}}
		if dpa {
			cfg.DP, cfg.DPAttention = 8, true
		}
		cfg, err := cfg.Normalize()
		require.NoError(t, err)
		return steadyPoint(cfg, 64, traceShape).tputPerGPU
	}
	tp, dp := tput(false), tput(true)
	t.Logf("c64: TP8 %.0f tok/s/GPU, DP attention %.0f", tp, dp)
	assert.InEpsilon(t, tp, dp, 0.5, "DP attention spares the attention's KV reads, not the experts' compute")
}

// TestEveryPlannedAgenticArmFits: the weights of every arm InferenceX
// runs fit its simulated GPUs (a real engine started there, so a
// simulated one must not fail every point), whether the model is named by
// its id or by the directory of pre-staged weights.
func TestEveryPlannedAgenticArmFits(t *testing.T) {
	masters, err := configs.DefaultMasters()
	require.NoError(t, err)
	ms, err := matrix.ResolveKeys(masters, []string{"*"})
	require.NoError(t, err)
	planned := 0
	for _, m := range ms {
		if len(m.Scenarios.AgenticCoding) == 0 {
			continue
		}
		if _, err := plannedArmsErr(m.Key, t.TempDir()); err != nil {
			continue // not planned (ATOM, TRT-LLM, multi-node): sweep plan --coverage says why
		}
		planned++
		for _, a := range plannedArms(t, m.Key) {
			capa := newCapacity(a.cfg)
			assert.True(t, capa.fits, "%s %s: %s on %d x %s at memory fraction %g", m.Key, a.name, a.cfg.ModelPath, a.cfg.GPUs(), a.cfg.GPU, a.cfg.MemFraction)
			if capa.poolTokens < sessionKVTokens {
				// Known disagreement (the report of issue 19): tight fits
				// keep little for KV beside the weights.
				t.Logf("%s %s: a pool of %d tokens per rank holds no whole session", m.Key, a.name, capa.poolTokens)
			}
		}
	}
	assert.Greater(t, planned, 20)
}

// plannedArmsErr plans a key's agentic rows into the result directory
// dir (where pointConfig writes their sidecar files), returning the
// error.
func plannedArmsErr(key, dir string) ([]recipes.Point, error) {
	masters, runners, err := defaultConfigs()
	if err != nil {
		return nil, err
	}
	g := &matrix.Generator{Masters: masters, Runners: runners}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	if err != nil {
		return nil, err
	}
	return recipes.Plan(rows, recipes.PlanOptions{Catalog: models.Builtin(), Fast: true, ResultDir: dir})
}

// defaultConfigs parses the built-in masters and runners once for the
// package's tests (planning every key parsed them again each time).
func defaultConfigs() (*configs.Masters, *configs.Runners, error) {
	builtinOnce.Do(func() {
		builtin.masters, builtin.err = configs.DefaultMasters()
		if builtin.err == nil {
			builtin.runners, builtin.err = configs.DefaultRunners()
		}
	})
	return builtin.masters, builtin.runners, builtin.err
}

var (
	builtinOnce sync.Once
	builtin     struct {
		masters *configs.Masters
		runners *configs.Runners
		err     error
	}
)

// TestAiterTakesFifteenPercentNotTheDraft: SGLang's aiter attention
// backend (AMD) multiplies --mem-fraction-static by 0.85 for a context
// above 8,192 tokens, with or without speculative decoding (server_args:
// `if attention_backend == "aiter": if context_len > 8192:
// mem_fraction_static *= 0.85`; InferenceX's MI325X Qwen3.5 recipe: TP2 at
// 0.95 for "an effective 0.8075"). Before, the model took the same 15 % off
// every SGLang engine with a speculative draft, so the NVIDIA recipes
// (trtllm_mha, flashinfer) lost it too: Qwen3.5 FP8 on H100 TP8 held 0.6
// sessions and on B300 TP2 3.2, against official windows to c16 and c32.
func TestAiterTakesFifteenPercentNotTheDraft(t *testing.T) {
	freeGB := func(backend string, spec bool, ctx int) float64 {
		cfg := qwenConfig(configs.SGLang, 8, 1)
		cfg.AttentionBackend, cfg.ContextLength = backend, ctx
		if !spec {
			cfg.Spec = Spec{}
		}
		cfg, err := cfg.Normalize()
		require.NoError(t, err)
		return float64(newCapacity(cfg).poolTokens) * 20e3 / 1e9 // 20 KB a GPU a token
	}
	const hbm, weights = 256.0, 397.0 / 8 // MI325X; Qwen3.5 FP8 over TP8
	for _, spec := range []bool{false, true} {
		assert.InDelta(t, hbm*0.8-weights-perGPUReserveGB, freeGB("trtllm_mha", spec, 0), 0.01, "no cut without aiter (spec %t)", spec)
		assert.InDelta(t, hbm*0.8-weights-perGPUReserveGB, freeGB("", spec, 0), 0.01, "no backend named: no cut (spec %t)", spec)
		assert.InDelta(t, hbm*0.8*0.85-weights-perGPUReserveGB, freeGB("aiter", spec, 0), 0.01, "aiter at the native context (spec %t)", spec)
		assert.InDelta(t, hbm*0.8-weights-perGPUReserveGB, freeGB("aiter", spec, 8192), 0.01, "aiter at 8,192 tokens keeps the fraction (spec %t)", spec)
	}
	// The flag reaches the Config from the engine's argv.
	c, err := ConfigFromArgs(configs.SGLang, mapLookup{"--model-path": "m", "--attention-backend": "aiter"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "aiter", c.AttentionBackend)
	// The planned recipes: the AMD Qwen3.5 keys name aiter, the NVIDIA
	// ones do not, and a Hopper TP8 pool now holds whole sessions.
	for key, want := range map[string]string{
		"qwen3.5-fp8-mi325x-sglang-agentic-mtp": "aiter",
		"qwen3.5-fp4-mi355x-sglang-agentic-mtp": "aiter",
		"qwen3.5-fp8-h100-sglang-agentic-mtp":   "flashinfer",
		"qwen3.5-fp8-b300-sglang-agentic-mtp":   "trtllm_mha",
	} {
		a := plannedArms(t, key)[0]
		assert.Equal(t, want, a.cfg.AttentionBackend, key)
	}
	h100 := plannedArms(t, "qwen3.5-fp8-h100-sglang-agentic-mtp")[0]
	assert.Greater(t, float64(newCapacity(h100.cfg).poolTokens), 5*float64(sessionKVTokens), "H100 TP8 at 0.75")
}
