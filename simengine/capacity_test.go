package simengine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sweep/configs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workload is a synthetic agentic workload for the virtual-time harness:
// every client runs multi-turn sessions whose prompts grow turn by turn
// and share a system prompt, with think time between turns.
type workload struct {
	system, firstUser, perTurn int     // prompt tokens
	turns                      int     // per session
	output                     int     // completion tokens per turn (ignore_eos)
	think                      float64 // seconds between turns
}

var agentic = workload{system: 3000, firstUser: 4000, perTurn: 1500, turns: 12, output: 400, think: 2}

// loopResult is what one closed-loop run measured over its window.
type loopResult struct {
	conc                  int
	tputPerGPU            float64 // total (prompt+output) tokens/s per GPU
	outPerGPU             float64 // output tokens/s per GPU
	perUser               float64 // output tokens/s per request while decoding
	hitRate               float64 // cached / prompt tokens of requests admitted in the window
	usage                 float64 // mean token usage
	queued                float64 // mean waiting requests
	requests              int
	gen, verifies, accept float64
	drafts                float64
}

// closedLoop runs conc clients against one rank in virtual time (no
// goroutines, no wall clock) for simSeconds after a warm-up.
func closedLoop(t testing.TB, cfg Config, w workload, conc int, simSeconds float64) loopResult {
	t.Helper()
	cfg, err := cfg.Normalize()
	require.NoError(t, err)
	capa := newCapacity(cfg)
	r := newRank(0, &cfg, capa)
	rng := rand.New(rand.NewPCG(7, uint64(conc)))
	block := r.cache.blockTokens
	sysBlocks := make([]uint64, w.system/block)
	for i := range sysBlocks {
		sysBlocks[i] = rng.Uint64()
	}
	type client struct {
		turn   int
		chain  []uint64 // this session's block chain so far
		ctx    int      // tokens of the conversation so far
		readyT float64
		cur    *simRequest
	}
	newSession := func(c *client) {
		c.turn, c.ctx = 0, w.system
		c.chain = append([]uint64(nil), sysBlocks...)
	}
	clients := make([]*client, conc)
	for i := range clients {
		clients[i] = &client{readyT: rng.Float64() * w.think}
		newSession(clients[i])
	}
	var id uint64
	submit := func(c *client, now float64) {
		add := w.perTurn
		if c.turn == 0 {
			add = w.firstUser
		}
		c.ctx += add
		for len(c.chain) < c.ctx/block {
			c.chain = append(c.chain, rng.Uint64())
		}
		id++
		q := &simRequest{id: id, prompt: c.ctx, blocks: slices.Clone(c.chain[:c.ctx/block]), target: w.output, reason: "length", maxTokens: w.output, logged: true}
		r.enqueue(q, now)
		c.cur = q
	}
	warm := simSeconds / 4
	end := warm + simSeconds
	var res loopResult
	res.conc = conc
	var usageInt, queueInt, promptAdm, cachedAdm float64
	var tokens, outTokens float64
	var decodeTime, decodeTok float64
	var st0 stats
	now := 0.0
	for now < end {
		for _, c := range clients {
			if c.cur == nil && c.readyT <= now {
				submit(c, now)
			}
		}
		dur, out := r.step(now)
		if dur == 0 { // idle: jump to the next client ready time
			next := math.Inf(1)
			for _, c := range clients {
				if c.cur == nil {
					next = min(next, c.readyT)
				}
			}
			require.False(t, math.IsInf(next, 1), "scheduler idle with every client waiting")
			now = next
			continue
		}
		if now < warm && now+dur >= warm {
			st0 = r.st
		}
		now += dur
		for _, d := range out {
			q := d.req
			if now >= warm {
				outTokens += float64(d.tokens)
				tokens += float64(d.tokens)
				if q.lastToken == q.firstToken && q.generated == d.tokens { // prefill completed
					tokens += float64(q.prompt)
				}
			}
			if !d.done {
				continue
			}
			for _, c := range clients {
				if c.cur == q {
					c.cur = nil
					c.ctx += q.generated
					c.turn++
					c.readyT = now + w.think
					if c.turn == w.turns {
						newSession(c)
					}
				}
			}
			if now >= warm {
				res.requests++
				promptAdm += float64(q.prompt)
				cachedAdm += float64(q.cached)
				if q.generated > 1 {
					decodeTime += q.lastToken - q.firstToken
					decodeTok += float64(q.generated - 1)
				}
			}
		}
		if now >= warm {
			usageInt += float64(r.used()) / float64(capa.poolTokens) * dur
			queueInt += float64(len(r.waiting)) * dur
		}
	}
	gpus := float64(cfg.GPUs())
	res.tputPerGPU = tokens / simSeconds / gpus
	res.outPerGPU = outTokens / simSeconds / gpus
	res.hitRate = cachedAdm / max(promptAdm, 1)
	res.usage = usageInt / simSeconds
	res.queued = queueInt / simSeconds
	if decodeTime > 0 {
		res.perUser = decodeTok / decodeTime
	}
	res.gen = r.st.genTokens - st0.genTokens
	res.verifies = r.st.verifyCalls - st0.verifyCalls
	res.accept = r.st.accepted - st0.accepted
	res.drafts = r.st.drafts - st0.drafts
	return res
}

func qwenConfig(engine configs.Engine, tp, ep int) Config {
	return Config{
		Engine: engine, ModelPath: "Qwen/Qwen3.5-397B-A17B-FP8", TP: tp, EP: ep, GPU: "mi325x",
		MemFraction: 0.8, PageSize: 16, ChunkSize: 32768, KVCacheDType: "fp8_e4m3", MaxRunningRequests: 512,
		Spec: Spec{Algorithm: "EAGLE", NumSteps: 3, TopK: 1, NumDraftTokens: 4, AcceptLength: 3.39},
	}
}

func TestCapacityCurveRisesSaturatesThenFallsOffTheCliff(t *testing.T) {
	cfg := qwenConfig(configs.SGLang, 8, 1)
	cfg.MaxTotalTokens = 1_500_000 // knee near 40 agentic sessions
	concs := []int{1, 2, 4, 8, 16, 32, 48, 96, 160}
	res := make([]loopResult, len(concs))
	for i, c := range concs {
		res[i] = closedLoop(t, cfg, agentic, c, 600)
		t.Logf("conc %3d: %8.1f tok/s/gpu  out %7.1f  per-user %6.1f  hit %.3f  usage %.2f  queued %5.1f  reqs %d",
			c, res[i].tputPerGPU, res[i].outPerGPU, res[i].perUser, res[i].hitRate, res[i].usage, res[i].queued, res[i].requests)
	}
	peak := 0
	for i := range res {
		if res[i].tputPerGPU > res[peak].tputPerGPU {
			peak = i
		}
	}
	// Rising, with diminishing gains per doubling before the knee.
	for i := 1; i <= 4; i++ {
		assert.Greater(t, res[i].tputPerGPU, res[i-1].tputPerGPU*1.3, "throughput must rise with concurrency (conc %d vs %d)", concs[i], concs[i-1])
	}
	gainLow := res[1].tputPerGPU / res[0].tputPerGPU
	gainHigh := res[5].tputPerGPU / res[4].tputPerGPU
	assert.Less(t, gainHigh, gainLow, "gains per doubling must shrink (saturation)")
	// Interactivity falls as the batch grows.
	assert.Greater(t, res[0].perUser, res[5].perUser*1.4)
	// The knee is inside the grid, and past it the cliff: throughput drops,
	// the pool is full, requests queue and the prefix cache collapses.
	assert.Greater(t, peak, 3, "knee too early")
	assert.Less(t, peak, len(concs)-1, "no cliff inside the grid")
	last := res[len(res)-1]
	assert.Less(t, last.tputPerGPU, 0.85*res[peak].tputPerGPU, "throughput past the knee")
	assert.Greater(t, last.usage, 0.9, "token usage past the knee")
	assert.Greater(t, last.queued, 1.0, "queue past the knee")
	assert.Less(t, last.hitRate, 0.6*res[3].hitRate, "cache hit rate past the knee")
	assert.Greater(t, res[3].hitRate, 0.8, "multi-turn sessions hit the prefix cache below the knee")
}

func TestCapacityTPTradeoff(t *testing.T) {
	// More TP: faster per user, fewer tokens per GPU.
	cfg2 := qwenConfig(configs.SGLang, 2, 1)
	cfg2.MemFraction = 0.95 // what the recipe uses at TP2
	tp2 := closedLoop(t, cfg2, agentic, 2, 300)
	tp8 := closedLoop(t, qwenConfig(configs.SGLang, 8, 1), agentic, 2, 300)
	t.Logf("tp2: %.1f tok/s/gpu, %.1f tok/s/user; tp8: %.1f tok/s/gpu, %.1f tok/s/user", tp2.tputPerGPU, tp2.perUser, tp8.tputPerGPU, tp8.perUser)
	assert.Greater(t, tp8.perUser, tp2.perUser*1.3)
	assert.Greater(t, tp2.tputPerGPU, tp8.tputPerGPU*1.5)
}

func TestCapacityEPTradeoff(t *testing.T) {
	// EP pays an all-to-all per step (slower at low batch) but cheaper
	// expert compute per sequence (ahead at high batch).
	w := workload{system: 500, firstUser: 500, perTurn: 200, turns: 4, output: 300, think: 0}
	for _, tc := range []struct {
		conc    int
		epAhead bool
	}{{1, false}, {512, true}} {
		t.Run(fmt.Sprint("conc", tc.conc), func(t *testing.T) {
			tp := closedLoop(t, qwenConfig(configs.VLLM, 8, 1), w, tc.conc, 120)
			tep := closedLoop(t, qwenConfig(configs.VLLM, 8, 8), w, tc.conc, 120)
			t.Logf("tp8 %.1f tok/s/gpu, tep8 %.1f tok/s/gpu", tp.outPerGPU, tep.outPerGPU)
			assert.Equal(t, tc.epAhead, tep.outPerGPU > tp.outPerGPU)
		})
	}
}

func TestAcceptanceLengthFromCounters(t *testing.T) {
	w := workload{system: 200, firstUser: 300, perTurn: 100, turns: 3, output: 2000, think: 0.5}
	for _, tc := range []struct {
		name   string
		engine configs.Engine
		steps  int
		al     float64
		method string
	}{
		{"sglang qwen3.5 mtp 3 tokens", configs.SGLang, 3, 3.39, AcceptMatchExpected},
		{"sglang glm 3 tokens", configs.SGLang, 3, 3.61, AcceptMatchExpected},
		{"sglang per-request drafts", configs.SGLang, 3, 3.39, ""},
		{"vllm dsv4 mtp 3 tokens", configs.VLLM, 3, 2.49, ""},
		{"vllm glm 5 tokens", configs.VLLM, 5, 3.61, ""},
		{"sglang every draft accepted", configs.SGLang, 3, 4, AcceptMatchExpected},
		{"sglang nothing accepted", configs.SGLang, 2, 1, AcceptMatchExpected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := qwenConfig(tc.engine, 8, 1)
			cfg.Spec = Spec{Algorithm: "EAGLE", NumSteps: tc.steps, TopK: 1, NumDraftTokens: tc.steps + 1, AcceptLength: tc.al, AcceptMethod: tc.method}
			res := closedLoop(t, cfg, w, 16, 300)
			var got float64
			if tc.engine == configs.SGLang {
				// engines.md E.1: Δgeneration / Δverify, first token of each request from prefill.
				got = (res.gen - float64(res.requests)) / res.verifies
			} else {
				// engines.md E.2: 1 + Δaccepted / Δdrafts.
				got = 1 + res.accept/res.drafts
			}
			assert.InDelta(t, tc.al, got, 0.03, "AL from counters over %d requests", res.requests)
		})
	}
}

// TestSimulatedAcceptanceSharedByTheBatch: SGLang's simulated acceptance
// (generate_simulated_accept_index) draws one length per verify step that
// every request of the batch takes: match-expected the length rounded
// down or up, up with the probability of its fraction (so its mean is
// the length), multinomial a rounded normal draw clamped to [1, drafts +
// 1]; vLLM's synthetic sampler (no method) draws per request.
func TestSimulatedAcceptanceSharedByTheBatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		al       float64
		steps    int
		method   string
		lengths  []int   // the lengths a step may take
		meanFrom float64 // the mean's tolerance (0: no check)
	}{
		{"match-expected 3.61", 3.61, 3, AcceptMatchExpected, []int{3, 4}, 0.01},
		{"match-expected 2.49", 2.49, 3, AcceptMatchExpected, []int{2, 3}, 0.01},
		{"match-expected whole", 4, 3, AcceptMatchExpected, []int{4}, 1e-12},
		{"match-expected clamped to the drafts", 3.5, 2, AcceptMatchExpected, []int{3}, 0},
		{"multinomial", 3.39, 3, AcceptMultinomial, []int{1, 2, 3, 4}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAcceptor(Spec{Algorithm: "EAGLE", NumSteps: tc.steps, TopK: 1, NumDraftTokens: tc.steps + 1, AcceptLength: tc.al, AcceptMethod: tc.method})
			rng := rand.New(rand.NewPCG(1, 2))
			seen := map[int]int{}
			const n = 40_000
			sum := 0
			for range n {
				accepted, shared := a.batch(rng)
				require.True(t, shared, "one draw for the whole batch")
				seen[accepted+1]++
				sum += accepted + 1
			}
			for l := range seen {
				assert.Contains(t, tc.lengths, l, "a step's length")
			}
			if tc.meanFrom > 0 {
				assert.InDelta(t, tc.al, float64(sum)/n, tc.meanFrom, "mean length")
			}
		})
	}
	a := newAcceptor(Spec{Algorithm: "mtp", NumSteps: 3, NumDraftTokens: 4, AcceptLength: 2.49})
	_, shared := a.batch(rand.New(rand.NewPCG(1, 2)))
	assert.False(t, shared, "vLLM's synthetic sampler draws per request")
}

// TestSyntheticRatesPerDraft: vLLM's unconditional rates give the mean
// 1 + their sum; a Spec built in code with fewer rates than drafts
// accepts no draft past them (a config is refused: TestConfigFromArgs),
// one with more reads the first per draft.
func TestSyntheticRatesPerDraft(t *testing.T) {
	for _, tc := range []struct {
		rates []float64
		want  float64
	}{
		{[]float64{0.9, 0.6, 0.3}, 2.8},
		{[]float64{0.9}, 1.9},
		{[]float64{0.9, 0.6, 0.3, 0.2}, 2.8},
	} {
		a := newAcceptor(Spec{Algorithm: "mtp", NumSteps: 3, TopK: 1, NumDraftTokens: 4, AcceptRates: tc.rates})
		assert.Len(t, a.rates, 3, "%v", tc.rates)
		assert.InDelta(t, tc.want, a.expectedLength(), 1e-12, "%v", tc.rates)
	}
}

// TestMinVarianceRates: a synthetic acceptance length resolves as vLLM's
// SpeculativeConfig._acceptance_length_to_rates does (its own test's
// cases), to unconditional rates whose draws accept al-1 rounded down or
// up; the acceptor's conditional chain keeps the mean, al.
func TestMinVarianceRates(t *testing.T) {
	for _, tc := range []struct {
		al   float64
		k    int
		want []float64
	}{
		{2.6, 3, []float64{1, 0.6, 0}},
		{1, 3, []float64{0, 0, 0}},
		{4, 3, []float64{1, 1, 1}},
		{2, 3, []float64{1, 0, 0}},
		{3.5, 4, []float64{1, 1, 0.5, 0}},
	} {
		got := minVarianceRates(tc.al, tc.k)
		require.Len(t, got, tc.k)
		for i := range got {
			assert.InDelta(t, tc.want[i], got[i], 1e-12, "AL %g over %d drafts: %v", tc.al, tc.k, got)
		}
		a := newAcceptor(Spec{Algorithm: "mtp", NumSteps: tc.k, TopK: 1, NumDraftTokens: tc.k + 1, AcceptLength: tc.al})
		assert.InDelta(t, tc.al, a.expectedLength(), 1e-9, "AL %g with %d drafts", tc.al, tc.k)
		rng := rand.New(rand.NewPCG(3, 4))
		lo := int(tc.al - 1)
		for range 2000 {
			n := a.draw(rng)
			require.True(t, n == lo || n == lo+1 && n <= tc.k, "AL %g: a request accepts %d drafts, want %d or %d", tc.al, n, lo, lo+1)
		}
	}
}

// TestPrefillRateByPrecision checks what a prefill's GEMMs run at: a
// W4A4 checkpoint's (NVFP4, MXFP4) MoE layers at the GPU's dense FP4
// peak where it has FP4 tensor cores, the rest and attention at FP8's; a
// checkpoint with FP4 expert weights and 8-bit activations (DeepSeek-V4)
// and every checkpoint on a GPU without FP4 at FP8's; B300's FP8 peak is
// B200's.
func TestPrefillRateByPrecision(t *testing.T) {
	capa := func(model, gpu string) capacity {
		cfg, err := Config{Engine: configs.SGLang, ModelPath: model, TP: 4, GPU: gpu}.Normalize()
		require.NoError(t, err)
		return newCapacity(cfg)
	}
	const fp8, nvfp4 = "Qwen/Qwen3.5-397B-A17B-FP8", "nvidia/Qwen3.5-397B-A17B-NVFP4"
	for _, tc := range []struct {
		gpu     string
		speedup float64 // FP8 checkpoint's per-token prefill over NVFP4's
	}{
		{"b300", 1 / (0.4 + 0.6*4.5/13.5)},
		{"b200", 1 / (0.4 + 0.6*4.5/9)},
		{"gb200", 1 / (0.4 + 0.6*5.0/10)},
		{"h200", 1},
		{"mi325x", 1},
	} {
		t.Run(tc.gpu, func(t *testing.T) {
			a, b := capa(fp8, tc.gpu), capa(nvfp4, tc.gpu)
			assert.InDelta(t, tc.speedup, a.perPrefill/b.perPrefill, 1e-9, "linear layers")
			// Attention per token of context costs the same at either precision.
			assert.InDelta(t, 1, a.perPrefill*a.perPrefillCtx/(b.perPrefill*b.perPrefillCtx), 1e-9, "attention")
		})
	}
	// 2 FLOPs per active parameter at 10 % of the FP8 peak over TP 4.
	assert.InDelta(t, 2*17e9/(4*4.5e15*0.10), capa(fp8, "b300").perPrefill, 1e-15, "B300 FP8 at 4.5 PF dense")
	assert.Equal(t, capa(fp8, "b200").perPrefill, capa(fp8, "b300").perPrefill)
	assert.InDelta(t, 2*49e9/(4*4.5e15*0.10), capa("deepseek-ai/DeepSeek-V4-Pro", "b300").perPrefill, 1e-15,
		"FP4 expert weights with 8-bit activations compute at the FP8 rate")
}
