package simengine

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/recipes"
	"sweep/sweep/knee"
)

// tracesShape is a built-in agentic trace set (loadgen's) reduced to the
// averages a closed loop needs: a system prompt shared by every session,
// a first task context, a tool result and the previous output added per
// turn, compaction near the context limit, outputs and think time, and
// the KV one live session keeps in the prefix cache.
type tracesShape struct {
	system, first, perTurn, compactAt, restart int
	output                                     int
	think                                      float64 // mean seconds
	session                                    float64 // KV tokens a live session keeps
}

// traceShape is the capped set (loadgen.AgenticTraces), which stands in
// for the 256k-capped corpus InferenceX replays to most model families.
var traceShape = tracesShape{system: 12_288, first: 72_000, perTurn: 3_400, compactAt: 124_000, restart: 72_000, output: 430, think: 2.75, session: sessionKVTokens}

// longTraceShape is the long set (loadgen.LongAgenticTraces), which stands
// in for the uncapped corpus replayed to the families with a 1M-token
// native context: the same turns with four times the context (its mean
// input is 4.3 times the capped set's, 3.9 times in the middle half of a
// trace, where the load generator's lanes start).
var longTraceShape = tracesShape{system: 12_288, first: 4 * 72_000, perTurn: 3_400, compactAt: 4 * 124_000, restart: 4 * 72_000, output: 430, think: 2.75, session: 4 * sessionKVTokens}

// armPoint is what the closed loop of one official point measured.
type armPoint struct {
	conc       int
	tputPerGPU float64 // prompt + output tokens/s per GPU
	// interactivity is output tokens per second of a request's end-to-end
	// latency (its queueing, prefill and decode; InferenceX's x-axis,
	// E2E-normalized interactivity, as a mean rather than its P90).
	interactivity float64
	cutOff        float64 // share of the requests still in flight at the end
	hitRate       float64
	usage         float64
	failed        bool // no request could be served
}

// agenticLoop runs conc clients of the trace shape against one rank of
// cfg on the virtual clock (no goroutines) for seconds after a warm-up,
// with the scheduler the engine runs. Clients start at random turns of
// their sessions, as the load generator's lanes start inside their traces.
func agenticLoop(t testing.TB, cfg Config, conc int, seconds float64) armPoint {
	t.Helper()
	capa := newCapacity(cfg)
	r := newRank(0, &cfg, capa)
	rng := rand.New(rand.NewPCG(11, uint64(conc)))
	block := r.cache.blockTokens
	sh := traceShape
	sysBlocks := make([]uint64, sh.system/block)
	for i := range sysBlocks {
		sysBlocks[i] = rng.Uint64()
	}
	type client struct {
		chain  []uint64
		ctx    int
		readyT float64
		cur    *simRequest
	}
	restart := func(c *client, ctx int) {
		c.ctx = ctx
		c.chain = slices.Clone(sysBlocks)
	}
	clients := make([]*client, conc)
	for i := range clients {
		c := &client{readyT: rng.Float64() * sh.think * 2}
		restart(c, sh.first+rng.IntN(sh.compactAt-sh.first))
		clients[i] = c
	}
	var id uint64
	submit := func(c *client, now float64) {
		if c.ctx > sh.compactAt {
			restart(c, sh.restart)
		}
		for len(c.chain) < c.ctx/block {
			c.chain = append(c.chain, rng.Uint64())
		}
		id++
		out := max(8, int(float64(sh.output)*math.Exp(0.85*rng.NormFloat64()-0.36)))
		q := &simRequest{id: id, prompt: c.ctx, blocks: slices.Clone(c.chain[:c.ctx/block]), target: out, reason: "length", maxTokens: out, logged: true}
		r.enqueue(q, now)
		c.cur = q
	}
	// Every session's first turn computes its whole context: a warm-up
	// of 300 s lets the cache fill before the window.
	warm := 300.0
	end := warm + seconds
	var tokens, promptAdm, cachedAdm, usageInt float64
	requests := 0
	now := 0.0
	for now < end {
		for _, c := range clients {
			if c.cur == nil && c.readyT <= now {
				submit(c, now)
			}
		}
		dur, out := r.step(now)
		if dur == 0 {
			next := math.Inf(1)
			for _, c := range clients {
				if c.cur == nil {
					next = min(next, c.readyT)
				}
			}
			if math.IsInf(next, 1) {
				// Every client waits on a request the pool cannot admit:
				// the point fails.
				return armPoint{conc: conc, failed: true}
			}
			now = next
			continue
		}
		now += dur
		if now >= warm {
			usageInt += float64(r.used()) / float64(capa.poolTokens) * dur
		}
		for _, d := range out {
			q := d.req
			if now >= warm {
				tokens += float64(d.tokens)
				if q.lastToken == q.firstToken && q.generated == d.tokens {
					tokens += float64(q.prompt)
				}
			}
			if !d.done {
				continue
			}
			for _, c := range clients {
				if c.cur == q {
					c.cur = nil
					c.ctx += q.generated + sh.perTurn
					c.readyT = now + sh.think*math.Exp(1.1*rng.NormFloat64()-0.6)
				}
			}
			if now >= warm {
				requests++
				promptAdm += float64(q.prompt)
				cachedAdm += float64(q.cached)
			}
		}
	}
	return armPoint{
		conc:       conc,
		tputPerGPU: tokens / seconds / float64(cfg.GPUs()),
		cutOff:     float64(conc) / float64(requests+conc),
		hitRate:    cachedAdm / max(promptAdm, 1),
		usage:      usageInt / seconds,
	}
}

// armCurve runs the closed loop at each distinct official concurrency of
// an arm, in ascending order.
func armCurve(t testing.TB, a plannedArm, seconds float64) []armPoint {
	idx := make([]int, len(a.concs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return a.concs[i] - a.concs[j] })
	var pts []armPoint
	for _, i := range idx {
		if len(pts) > 0 && pts[len(pts)-1].conc == a.concs[i] {
			continue
		}
		pts = append(pts, agenticLoop(t, a.points[i], a.concs[i], seconds))
	}
	return pts
}

// steadyPoint is the closed loop's steady state computed from the same
// capacity model the scheduler steps with (mean-value analysis, no
// simulation): conc clients each keep a session of sessionKVTokens in the
// prefix cache and send a turn of the trace shape (the context so far
// cached, a tool result and the previous output computed, an output
// decoded at the acceptance length) after a think time. A decode step of
// the requests in flight, stretched by the other requests' prefills, is
// what a request waits per step; Little's law gives how many decode at
// once. Past the pool (and the host tier), sessions evict each other: a
// turn computes its whole prompt and the pool holds only the sessions
// that fit.
func steadyPoint(cfg Config, conc int, sh tracesShape) armPoint {
	capa := newCapacity(cfg)
	// The mean prompt of the shape (its contexts run from first to
	// compactAt); what a session keeps in the pool is sessionKVTokens,
	// the measured figure.
	prompt := float64(sh.first+sh.compactAt) / 2
	// A turn computes its tool result and the previous output; a session
	// compacted near the context limit computes its restarted context
	// once every (compactAt-first)/growth turns.
	growth := float64(sh.perTurn + sh.output)
	restarts := growth / float64(sh.compactAt-sh.first) // per turn
	uncached := growth
	perTok := newAcceptor(cfg.Spec).expectedLength()
	steps := float64(sh.output) / perTok
	// Sessions per rank: the load balancer spreads clients over ranks.
	n := float64(conc) / float64(capa.ranks)
	inFlight := n
	load := 0.0
	hit := 1 - uncached/prompt
	if fit := float64(capa.poolTokens) / sh.session; n > fit {
		if n > fit+float64(capa.hostTokens)/sh.session {
			uncached, hit = prompt, 0
			inFlight = math.Max(math.Floor(fit), 1)
		} else {
			load = (prompt - uncached) * capa.perLoadToken
		}
	}
	if capa.maxRunning > 0 {
		inFlight = min(inFlight, float64(capa.maxRunning))
	}
	prefill := capa.prefillTime(int(uncached), int(prompt-uncached))
	if hit > 0 {
		prefill += restarts * capa.prefillTime(sh.restart, 0)
		hit = 1 - (uncached+restarts*float64(sh.restart))/prompt
	}
	// serveTime is a request's time in the rank when it serves x requests
	// a second: each prefill occupies the rank (the others' decode steps
	// stretch by the share of the time it takes), and nd requests decode
	// at once (Little's law).
	serveTime := func(x float64) float64 {
		busy := x * prefill
		nd, stretched := 1.0, 0.0
		for range 50 {
			step := capa.decodeTime(max(int(math.Round(nd)), 1), int(math.Round(nd*prompt)))
			stretched = step / (1 - busy)
			nd = math.Max(1, math.Min(inFlight, x*steps*stretched))
		}
		// A turn's prefill waits for the prefills ahead of it (M/D/1).
		wait := busy * prefill / (2 * (1 - busy))
		return wait + prefill/(1-busy) + steps*stretched
	}
	// rate is the request rate the clients would send if the rank served
	// x requests a second. The steady state is where the two rates meet;
	// rate falls as x grows, so bisect.
	rate := func(x float64) float64 {
		serve := serveTime(x)
		if hit == 0 {
			// Only the sessions that fit are served.
			return inFlight / serve
		}
		return math.Min(n/(sh.think+load+serve), inFlight/serve)
	}
	lo, hi := 0.0, 1/prefill
	for range 60 {
		mid := (lo + hi) / 2
		if rate(mid) > mid {
			lo = mid
		} else {
			hi = mid
		}
	}
	x := lo
	tokens := x * (prompt + float64(sh.output)) * float64(capa.ranks)
	// A client's cycle is n/x (Little's law): its think time and the
	// request's latency, which includes any wait for a running slot.
	latency := math.Max(n/x-sh.think, serveTime(x)+load)
	return armPoint{conc: conc, tputPerGPU: tokens / float64(cfg.GPUs()), interactivity: float64(sh.output) / latency, hitRate: hit}
}

var update = flag.Bool("update", false, "rewrite testdata/simengine/agreement.golden")

// simulatedKeys lists the planned agentic config keys a simulated
// discovery runs (single-node, aggregated: what scripts/sim-agreement.sh
// discovers and sweep sim agreement counts), in the masters' order, with their planned points.
func simulatedKeys(t *testing.T) ([]string, map[string][]recipes.Point) {
	t.Helper()
	masters, _, err := defaultConfigs()
	require.NoError(t, err)
	ms, err := matrix.ResolveKeys(masters, []string{"*"})
	require.NoError(t, err)
	var keys []string
	planned := map[string][]recipes.Point{}
	dir := t.TempDir()
	for _, m := range ms {
		if len(m.Scenarios.AgenticCoding) == 0 {
			continue
		}
		points, err := plannedArmsErr(m.Key, dir)
		if err != nil || len(points) == 0 {
			continue
		}
		single := true
		for _, p := range points {
			single = single && p.Row.Prefill == nil && !p.Row.Disagg
		}
		if single {
			keys = append(keys, m.Key)
			planned[m.Key] = points
		}
	}
	return keys, planned
}

// TestWindowProvenanceCoversPlannedKeys: configs/window-provenance.csv has one
// row for each key TestAgreementWithOfficialWindows judges, in the same
// order, and no other: a planned key added to the masters needs its
// windows' provenance read from InferenceX before it is counted.
func TestWindowProvenanceCoversPlannedKeys(t *testing.T) {
	keys, _ := simulatedKeys(t)
	sources, err := configs.DefaultWindowProvenance()
	require.NoError(t, err)
	var rows []string
	for _, s := range sources {
		rows = append(rows, s.Key)
	}
	assert.Equal(t, keys, rows, "%s: its keys (got) against the planned single-node agentic keys (want), in the masters' order", configs.DefaultWindowProvenanceFile)
}

// TestAgreementWithOfficialWindows counts the planned agentic keys whose
// official windows the capacity model agrees with: each arm's
// steady-state curve over its official concurrencies (steadyPoint, the
// scheduler's capacity model without the simulation) has its knee inside
// the window, as sweep sim agreement judges a full simulated discovery,
// with the same rules (knee.JudgeKey). The count and every key's verdict
// are a golden, with a second count by the peak (knee.Window.Judge's
// byPeak; "by peak" lines) and a third by the frontier
// (knee.FrontierVerdict, for each arm whose knee misses its window; "by
// frontier" lines, and every such arm says why the rule does or does not
// take it): a change of the model that moves them must say so
// (go test ./simengine -run TestAgreementWithOfficialWindows -update).
// Not every window was chosen at a knee measured on the hardware: each
// line starts with its key's window provenance (configs/window-provenance.csv:
// knee, or a hard cap, a grid mirrored from another key, a KV-cache dtype
// the key no longer ships, nothing said), and a second summary line
// counts the keys whose windows InferenceX chose at a measured knee, the
// ones where agreement is a test of the model, apart from the others.
func TestAgreementWithOfficialWindows(t *testing.T) {
	var buf bytes.Buffer
	keys, planned := simulatedKeys(t)
	sources, err := configs.DefaultWindowProvenance()
	require.NoError(t, err)
	provenance := map[string]string{}
	for _, s := range sources {
		provenance[s.Key] = s.Provenance
	}
	var tally knee.Tally
	var windows knee.WindowTally
	// A header over the columns: Line pads its label to the key's column.
	fmt.Fprintf(&buf, "%-*s%-*s%s\n", knee.WindowColumn, "window", len(knee.KeyVerdict{}.Line("")), "verdict", "key")
	for _, key := range keys {
		v := judgeKey(t, armsOf(t, planned[key]))
		p, ok := provenance[key]
		require.True(t, ok, "%s: no row in %s (TestWindowProvenanceCoversPlannedKeys)", key, configs.DefaultWindowProvenanceFile)
		v.Window = p
		tally.Add(v)
		windows.Add(v)
		fmt.Fprintln(&buf, v.WindowLine(key))
	}
	fmt.Fprintln(&buf, tally)
	fmt.Fprintln(&buf, windows)
	t.Log("\n" + buf.String())
	golden := filepath.Join("..", "testdata", "simengine", "agreement.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String(), "run go test ./simengine -run TestAgreementWithOfficialWindows -update and review the diff")
	assert.Contains(t, buf.String(), "agree             qwen3.5-fp8-mi325x-sglang-agentic-mtp\n", "the measured key must agree")
}

// TestClosedLoopPeaksWhereMeasuredQwen35MI325X runs the scheduler itself
// (agenticLoop) over the official points of the measured MI325X Qwen3.5
// MTP key: each arm peaks within one grid step of the concurrency the
// cluster measured, and the official point after the measured peak falls
// off the cliff (below half the peak), as the simulated discovery does
// (go doc ./simengine).
func TestClosedLoopPeaksWhereMeasuredQwen35MI325X(t *testing.T) {
	measuredPeak := map[string]int{
		"tp2 ep2": 4, "tp4": 40, "tp4 ep4": 40,
		"tp8": 64, "tp8 ep8": 64,
	}
	for _, a := range plannedArms(t, "qwen3.5-fp8-mi325x-sglang-agentic-mtp") {
		t.Run(a.name, func(t *testing.T) {
			// The official points from the one before the measured peak
			// to the one after it.
			concs := slices.Sorted(slices.Values(a.concs))
			concs = slices.Compact(concs)
			at := slices.Index(concs, measuredPeak[a.name])
			require.GreaterOrEqual(t, at, 0, "the measured peak is an official point")
			near := plannedArm{name: a.name}
			for i, c := range a.concs {
				if j := slices.Index(concs, c); j >= at-1 && j <= at+1 {
					near.concs, near.points = append(near.concs, c), append(near.points, a.points[i])
				}
			}
			pts := armCurve(t, near, 300)
			peak := 0
			for i, p := range pts {
				t.Logf("c%d %.0f tok/s/GPU, hit rate %.2f, usage %.2f", p.conc, p.tputPerGPU, p.hitRate, p.usage)
				if p.tputPerGPU > pts[peak].tputPerGPU {
					peak = i
				}
			}
			want := slices.IndexFunc(pts, func(p armPoint) bool { return p.conc == measuredPeak[a.name] })
			assert.LessOrEqual(t, max(peak-want, want-peak), 1, "peak at c%d, measured c%d", pts[peak].conc, pts[want].conc)
			if want+1 < len(pts) {
				assert.Less(t, pts[want+1].tputPerGPU, 0.5*pts[peak].tputPerGPU, "c%d is past the cliff", pts[want+1].conc)
			}
		})
	}
}
