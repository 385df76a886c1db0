package simengine

import (
	"fmt"
	"strings"
	"sweep/internal/simproto"
	"sweep/recipes/models"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
)

// sessionKVTokens is the KV one live session of the built-in agentic
// trace set keeps (mean input 68k tokens, plus its subagents' prompts and
// the outputs): what a simulated discovery's KV usage shows, usage × pool
// / concurrency, about 85k tokens at every TP of the Qwen3.5 MI325X arms.
const sessionKVTokens = 85_000

// plannedArm is one arm of a planned config key: the simulator's Config
// built from the recipe's real engine argv, and the official conc-list.
type plannedArm struct {
	name  string
	cfg   Config
	concs []int
}

// plannedArms plans a key's agentic rows as sweep discover does and
// parses each arm's engine command as sim-engine does.
func plannedArms(t *testing.T, key string) []plannedArm {
	t.Helper()
	points, err := plannedArmsErr(key)
	require.NoError(t, err)
	var arms []plannedArm
	index := map[string]int{}
	for _, p := range points {
		name := fmt.Sprintf("tp%d ep%d dpa=%t", p.Row.TP, p.Row.EP, p.Row.DPAttn)
		i, ok := index[name]
		if !ok {
			cmd, err := ParseCommand(p.Engine.Argv, ParseOptions{Unchecked: p.Escapes})
			require.NoError(t, err, name)
			gpu, _, _ := strings.Cut(strings.TrimPrefix(p.Row.Runner, "cluster:"), "-")
			cfg, err := ConfigFromArgs(cmd.Engine, cmd.Flags, map[string]string{simproto.EnvGPU: gpu})
			require.NoError(t, err, name)
			cfg, err = cfg.Normalize()
			require.NoError(t, err, name)
			i = len(arms)
			index[name] = i
			arms = append(arms, plannedArm{name: name, cfg: cfg})
		}
		arms[i].concs = append(arms[i].concs, p.Row.Conc)
	}
	return arms
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
		"tp2 ep2 dpa=false": 4, "tp4 ep1 dpa=false": 40, "tp4 ep4 dpa=false": 40,
		"tp8 ep1 dpa=false": 64, "tp8 ep8 dpa=false": 64,
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
	for _, name := range []string{"deepseek-ai/DeepSeek-V4-Pro", "/scratch/models/DeepSeek-V4-Pro", "deepseek-ai/DeepSeek-R1-0528"} {
		s := shapeOf(name)
		assert.Equal(t, 1, s.kvHeads, name)
		assert.Equal(t, 35_136.0, s.kvBytes, name)
	}
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
		if _, err := plannedArmsErr(m.Key); err != nil {
			continue // not planned (ATOM, TRT-LLM, multi-node): sweep plan --coverage says why
		}
		planned++
		for _, a := range plannedArms(t, m.Key) {
			capa := newCapacity(a.cfg)
			assert.True(t, capa.fits, "%s %s: %s on %d x %s at memory fraction %g", m.Key, a.name, a.cfg.ModelPath, a.cfg.GPUs(), a.cfg.GPU, a.cfg.MemFraction)
			if capa.poolTokens < sessionKVTokens {
				// Known disagreement (the report of issue 19): tight fits
				// keep little for KV beside the draft.
				t.Logf("%s %s: a pool of %d tokens per rank holds no whole session", m.Key, a.name, capa.poolTokens)
			}
		}
	}
	assert.Greater(t, planned, 20)
}

// plannedArmsErr plans a key's agentic rows, returning the error.
func plannedArmsErr(key string) ([]recipes.Point, error) {
	masters, err := configs.DefaultMasters()
	if err != nil {
		return nil, err
	}
	runners, err := configs.DefaultRunners()
	if err != nil {
		return nil, err
	}
	g := &matrix.Generator{Masters: masters, Runners: runners}
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	if err != nil {
		return nil, err
	}
	return recipes.Plan(rows, recipes.PlanOptions{Catalog: models.Builtin(), Fast: true})
}
