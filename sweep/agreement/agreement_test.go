package agreement

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/pyjson"
	"sweep/metrics/result"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// testKey is a key of two arms: TP4/EP4 with DRAM offload on c1, c2, c4,
// c8, c10, c12 and c16, and TP8/EP8 on c1, c2 and c4.
const testKey = "glm5.2-fp4-mi355x-sglang-agentic-mtp"

// pt is one made-up result of an arm: its throughput per GPU and P90
// E2E-normalised interactivity, a probe or not, failed (no request
// succeeded) or not.
type pt struct {
	conc          int
	tput, intvty  float64
	probe, failed bool
}

// run is what an arm of a made-up discovery did: its results, and the
// concurrencies its journal records as skipped and as started but never
// finished.
type run struct {
	pts                  []pt
	skipped, interrupted []int
}

// tp4Curve knees at c8, inside TP4's window; tp8Curve flattens at c2,
// inside TP8's.
var (
	tp4Curve = map[int]pt{1: {1, 6000, 60, false, false}, 2: {2, 11000, 55, false, false}, 4: {4, 20000, 50, false, false},
		8: {8, 30000, 40, false, false}, 10: {10, 31000, 35, false, false}, 12: {12, 31500, 30, false, false}, 16: {16, 31600, 25, false, false}}
	tp8Curve = []pt{{1, 8000, 90, false, false}, {2, 15000, 70, false, false}, {4, 15200, 50, false, false}}
)

// tp4 is TP4's curve at concs, each a full-length result.
func tp4(concs ...int) []pt {
	var out []pt
	for _, c := range concs {
		out = append(out, tp4Curve[c])
	}
	return out
}

// asProbe marks p a probe; failed too when failed.
func asProbe(p pt, failed bool) pt {
	p.probe, p.failed = true, failed
	return p
}

// testArms are testKey's arm identities, TP4's first, as the matrix plans
// them, and the generator.
func testArms(t *testing.T) ([]result.Identity, *matrix.Generator) {
	t.Helper()
	m, r, err := configs.Load(nil, "")
	require.NoError(t, err)
	g := &matrix.Generator{Masters: m, Runners: r}
	planned, err := plannedArms(g, testKey)
	require.NoError(t, err)
	require.Len(t, planned, 2)
	ids := []result.Identity{planned[0].id, planned[1].id}
	slices.SortFunc(ids, func(a, b result.Identity) int { return strings.Compare(a.Get("tp"), b.Get("tp")) })
	return ids, g
}

// writeDiscovery writes a made-up simulated discovery of testKey's arms
// (runs, in the order of ids) into dir, with the journal an adaptive
// discovery keeps when adaptive: its start, each result's point_end, each
// skipped point's point_skip, each interrupted point's point_start.
func writeDiscovery(t *testing.T, dir string, ids []result.Identity, runs []run, adaptive bool) {
	t.Helper()
	var recs []campaign.Record
	if adaptive {
		recs = append(recs, campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover",
			Settings: []campaign.Setting{{Name: "--adaptive", Value: "true"}}}})
	}
	for i, rn := range runs {
		arm := &knee.Arm{Identity: ids[i], Simulated: true}
		for _, p := range rn.pts {
			tput, iv := p.tput, pyjson.Rounded(p.intvty)
			s := knee.Sample{Conc: p.conc, Simulated: true, Probe: p.probe, TotalTPS: &tput, OutputTPS: &tput, E2ENormIntvty: result.Stats{P90: &iv}}
			if p.failed {
				s = knee.Sample{Conc: p.conc, Simulated: true, Probe: p.probe, Excluded: result.ExcludedNoSuccess}
			}
			arm.Samples = append(arm.Samples, s)
		}
		paths, err := synth.WriteDir(dir, arm, true)
		require.NoError(t, err)
		for j, p := range rn.pts {
			rel, err := filepath.Rel(dir, paths[j])
			require.NoError(t, err)
			status := campaign.StatusOK
			if p.failed {
				status = campaign.StatusFailed
			}
			recs = append(recs, campaign.Record{Event: campaign.EventPointEnd, Arm: i + 1, Point: pointID(i, p.conc),
				Conc: p.conc, Probe: p.probe, Status: status, Result: rel})
		}
		for _, c := range rn.skipped {
			recs = append(recs, campaign.Record{Event: campaign.EventPointSkip, Arm: i + 1, Point: pointID(i, c), Conc: c,
				Reason: "adaptive discovery: not needed to find the knee"})
		}
		for _, c := range rn.interrupted {
			recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: i + 1, Point: pointID(i, c), Conc: c})
		}
	}
	if !adaptive {
		return
	}
	j, _, err := campaign.OpenJournal(dir)
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, j.Append(r))
	}
	require.NoError(t, j.Close())
}

// pointID names a made-up point; a probe and the full-length run after it
// are one point.
func pointID(arm, conc int) string { return fmt.Sprintf("arm%d-c%d", arm+1, conc) }

// TestJudgeAdaptiveDiscoveries judges made-up discoveries of testKey. A
// full discovery agrees. An adaptive one is judged on what it measured:
// the points its journal records as skipped are not measured (neither
// green nor failed), its probe-only points are named, and the counts
// tell it from a full discovery; a measured point that failed (a probe
// too) still fails its arm, and so does a point the journal started but
// never finished. Without a journal nothing says a missing point was
// skipped: it is failed, as before.
func TestJudgeAdaptiveDiscoveries(t *testing.T) {
	ids, g := testArms(t)
	supersededAt16 := append(tp4(1, 4, 16), asProbe(tp4Curve[8], false), asProbe(tp4Curve[12], false), asProbe(tp4Curve[16], false))
	const fullTally = "1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier"
	for _, tc := range []struct {
		name     string
		tp4      run
		adaptive bool
		line     string
		tally    string
	}{
		{"full discovery", run{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, false,
			"agree             " + testKey, fullTally},
		{"adaptive: skipped points not measured, probes named", run{pts: supersededAt16, skipped: []int{2, 10}}, true,
			"agree             " + testKey + ": tp4 ep4 kv:dram: ambiguous knee c12 peak c16 on window c1 c2 c4 c8 c10 c12 c16: 5 green (probe only: c8 c12), 2 not measured (adaptive: c2 c10)",
			fullTally + "; 0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 1 agree, 1 by the peak, 1 by the frontier)"},
		{"adaptive, a probe failed", run{pts: append(tp4(1, 4, 8, 16), asProbe(tp4Curve[12], true)), skipped: []int{2, 10}}, true,
			"disagree          " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 4 green, 1 failed (c12 probe only), 2 not measured (adaptive: c2 c10) (frontier: 1 of 5 measured window points failed)",
			"0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier; 0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 0 agree, 0 by the peak, 0 by the frontier)"},
		{"adaptive, a point interrupted", run{pts: tp4(1, 4, 8, 12, 16), skipped: []int{10}, interrupted: []int{2}}, true,
			"disagree          " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 5 green, 1 failed (c2), 1 not measured (adaptive: c10) (frontier: 1 of 6 measured window points failed)",
			"0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier; 0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 0 agree, 0 by the peak, 0 by the frontier)"},
		{"no journal: missing points failed", run{pts: supersededAt16}, false,
			"disagree          " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 5 green (probe only: c8 c12), 2 failed (c2, c10) (frontier: 2 of 7 measured window points failed)",
			"0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			writeDiscovery(t, filepath.Join(out, testKey), ids, []run{tc.tp4, {pts: tp8Curve}}, tc.adaptive)
			var lines []string
			tally, err := Judge(t.Context(), Options{Dir: out, Keys: []string{testKey}, Generator: g}, func(k Key) { lines = append(lines, k.Line()) })
			require.NoError(t, err)
			assert.Equal(t, []string{tc.line}, lines)
			assert.Equal(t, tc.tally, tally.String())
		})
	}
}

// TestJudgeReadsALinkedDiscovery: OUT_DIR/KEY may be a link to the
// discovery (sweep discover --out elsewhere); it is read where it lies.
func TestJudgeReadsALinkedDiscovery(t *testing.T) {
	ids, g := testArms(t)
	elsewhere := filepath.Join(t.TempDir(), "disc")
	writeDiscovery(t, elsewhere, ids, []run{{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, {pts: tp8Curve}}, false)
	out := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, testKey)))
	var lines []string
	_, err := Judge(t.Context(), Options{Dir: out, Keys: []string{testKey}, Generator: g}, func(k Key) { lines = append(lines, k.Line()) })
	require.NoError(t, err)
	assert.Equal(t, []string{"agree             " + testKey}, lines)
}
