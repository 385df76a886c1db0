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
// concurrencies its journal records as skipped, as started but never
// finished, and as never reached (listed in the sweep's start only);
// searching says its adaptive search recorded no end (search_end: in an
// adaptiveFormatted journal only).
type run struct {
	pts                             []pt
	skipped, interrupted, unreached []int
	searching                       bool
}

// journal is what journal a made-up discovery keeps.
type journal int

const (
	noJournal journal = iota
	// adaptiveJournal is an adaptive discovery's, its start recording
	// the setting only (no arms, no points).
	adaptiveJournal
	// fullPlanned and adaptivePlanned start with the sweep's points and
	// arms, as sweep discover writes them.
	fullPlanned
	adaptivePlanned
	// fullUnplanned starts with the sweep's points only, as sweep
	// discover wrote it before it recorded the arms.
	fullUnplanned
	// adaptiveFormatted is adaptivePlanned with the journal's format in
	// its start, each arm's search ending with a search_end record (but
	// a run's that is searching), as sweep discover --adaptive writes it
	// now.
	adaptiveFormatted
)

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
// (runs, in the order of ids) into dir, with the journal j: its start,
// each result's point_start and point_end (failed for a failed result),
// each skipped point's point_skip, the search's end (search_end, in an
// adaptiveFormatted journal), each interrupted point's point_start; a planned
// start lists every point, the unreached ones too, and each arm's
// identity and points.
func writeDiscovery(t *testing.T, dir string, ids []result.Identity, runs []run, j journal) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	if j != noJournal {
		start := &campaign.Identity{Command: "discover", Settings: []campaign.Setting{campaign.AdaptiveSetting(j == adaptiveJournal || j == adaptivePlanned || j == adaptiveFormatted)}}
		var arms []campaign.ArmPlan
		if j != adaptiveJournal {
			for i, rn := range runs {
				a := campaign.ArmPlan{Arm: i + 1, Identity: ids[i]}
				concs := slices.Concat(rn.skipped, rn.interrupted, rn.unreached)
				for _, p := range rn.pts {
					concs = append(concs, p.conc)
				}
				slices.Sort(concs)
				for _, c := range slices.Compact(concs) {
					a.Points = append(a.Points, campaign.PointPlan{Point: pointID(i, c), Conc: c})
					start.Points = append(start.Points, pointID(i, c))
				}
				arms = append(arms, a)
			}
		}
		if j == fullUnplanned {
			arms = nil
		}
		format := 0
		if j == adaptiveFormatted {
			format = campaign.JournalFormat
		}
		writeJournal(t, dir, campaign.Record{Event: campaign.EventSweepStart, Identity: start, Format: format, Arms: arms})
	}
	for i, rn := range runs {
		var recs []campaign.Record
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
			recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: i + 1, Point: pointID(i, p.conc), Conc: p.conc, Probe: p.probe},
				campaign.Record{Event: campaign.EventPointEnd, Arm: i + 1, Point: pointID(i, p.conc),
					Conc: p.conc, Probe: p.probe, Status: status, Result: rel})
		}
		for _, c := range rn.skipped {
			recs = append(recs, campaign.Record{Event: campaign.EventPointSkip, Arm: i + 1, Point: pointID(i, c), Conc: c,
				Reason: "adaptive discovery: not needed to find the knee"})
		}
		if j == adaptiveFormatted && !rn.searching {
			recs = append(recs, campaign.Record{Event: campaign.EventSearchEnd, Arm: i + 1, Reason: "adaptive discovery: the knee search needs no more points"})
		}
		for _, c := range rn.interrupted {
			recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: i + 1, Point: pointID(i, c), Conc: c})
		}
		if j != noJournal {
			writeJournal(t, dir, recs...)
		}
	}
}

// writeJournal appends recs to dir's journal.
func writeJournal(t *testing.T, dir string, recs ...campaign.Record) {
	t.Helper()
	require.NoError(t, synth.WriteJournal(dir, recs...))
}

// pointID names a made-up point; a probe and the full-length run after it
// are one point.
func pointID(arm, conc int) string { return fmt.Sprintf("arm%d-c%d", arm+1, conc) }

// judgeDiscovery writes a made-up discovery of testKey (writeDiscovery)
// and judges it: the key's line after its window provenance (unlisted:
// no Options.Windows) and the counts line.
func judgeDiscovery(t *testing.T, ids []result.Identity, g *matrix.Generator, runs []run, j journal) (line, tally string) {
	t.Helper()
	out := t.TempDir()
	writeDiscovery(t, filepath.Join(out, testKey), ids, runs, j)
	var lines []string
	tl, err := Judge(t.Context(), Options{Dir: out, Keys: []string{testKey}, Generator: g}, func(k Key) { lines = append(lines, k.Line()) })
	require.NoError(t, err)
	require.Len(t, lines, 1)
	line, ok := strings.CutPrefix(lines[0], "unlisted  ")
	require.True(t, ok, "the key's line starts with its window provenance: %s", lines[0])
	return line, tl.String()
}

// TestJudgeByWindowProvenance: each key's line starts with where its
// official windows came from (Options.Windows), and the counts add a
// line that counts the keys whose windows InferenceX chose at a measured
// knee apart from the others; a key without a row is unlisted.
func TestJudgeByWindowProvenance(t *testing.T) {
	ids, g := testArms(t)
	out := t.TempDir()
	writeDiscovery(t, filepath.Join(out, testKey), ids, []run{{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, {pts: tp8Curve}}, noJournal)
	const other = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	for _, tc := range []struct {
		name    string
		windows []configs.WindowSource
		want    []string
	}{
		{name: "at a knee", windows: []configs.WindowSource{{Key: testKey, Provenance: configs.WindowAtKnee}, {Key: other, Provenance: "cap"}}, want: []string{
			"knee      agree             " + testKey,
			"cap       skip              " + other + ": no discovery in " + filepath.Join(out, other),
			"1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier",
			"1 of 1 keys whose windows InferenceX chose at a measured knee agree (1 by the peak, 1 by the frontier); of the other 0, 0 agree (0 by the peak, 0 by the frontier)",
		}},
		{name: "a cap", windows: []configs.WindowSource{{Key: testKey, Provenance: "cap"}}, want: []string{
			"cap       agree             " + testKey,
			"unlisted  skip              " + other + ": no discovery in " + filepath.Join(out, other),
			"1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier",
			"0 of 0 keys whose windows InferenceX chose at a measured knee agree (0 by the peak, 0 by the frontier); of the other 1 (1 cap), 1 agree (1 by the peak, 1 by the frontier)",
		}},
		{name: "unlisted", want: []string{
			"unlisted  agree             " + testKey,
			"unlisted  skip              " + other + ": no discovery in " + filepath.Join(out, other),
			"1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier",
			"0 of 0 keys whose windows InferenceX chose at a measured knee agree (0 by the peak, 0 by the frontier); of the other 1 (1 unlisted), 1 agree (1 by the peak, 1 by the frontier)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			tl, err := Judge(t.Context(), Options{Dir: out, Keys: []string{testKey, other}, Generator: g, Windows: tc.windows}, func(k Key) { lines = append(lines, k.Line()) })
			require.NoError(t, err)
			assert.Equal(t, tc.want, append(lines, tl.Lines()...))
		})
	}
}

// TestJudgeRepeatedKey: a key given twice was judged twice ("2 of 2
// keys agree" on one discovery); it is judged once, as sweep discover
// --config-keys K,K runs K once.
func TestJudgeRepeatedKey(t *testing.T) {
	ids, g := testArms(t)
	out := t.TempDir()
	writeDiscovery(t, filepath.Join(out, testKey), ids[:1], []run{{pts: tp4(1, 2, 4, 8, 10, 12, 16)}}, fullPlanned)
	var lines []string
	tl, err := Judge(t.Context(), Options{Dir: out, Keys: []string{testKey, testKey}, Generator: g}, func(k Key) { lines = append(lines, k.Line()) })
	require.NoError(t, err)
	assert.Len(t, lines, 1)
	assert.True(t, strings.HasPrefix(tl.String(), "1 of 1 keys agree;"), tl.String())
}

// TestJudgeAdaptiveDiscoveries judges made-up discoveries of testKey. A
// full discovery agrees. An adaptive one is judged on what it measured:
// the points its journal records as skipped are not measured (neither
// green nor failed), its probe-only points are named, and the counts
// tell it from a full discovery; a measured point that failed (a probe
// too) still fails its arm. Without a journal nothing says a missing
// point was skipped: it is failed, as before.
func TestJudgeAdaptiveDiscoveries(t *testing.T) {
	ids, g := testArms(t)
	supersededAt16 := append(tp4(1, 4, 16), asProbe(tp4Curve[8], false), asProbe(tp4Curve[12], false), asProbe(tp4Curve[16], false))
	const fullTally = "1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier"
	for _, tc := range []struct {
		name    string
		tp4     run
		journal journal
		line    string
		tally   string
	}{
		{"full discovery", run{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, noJournal,
			"agree             " + testKey, fullTally},
		{"adaptive: skipped points not measured, probes named", run{pts: supersededAt16, skipped: []int{2, 10}}, adaptiveJournal,
			"agree             " + testKey + ": tp4 ep4 kv:dram: ambiguous knee c12 peak c16 on window c1 c2 c4 c8 c10 c12 c16: 5 green (probe only: c8 c12), 2 not measured (adaptive: c2 c10)",
			fullTally + "; 0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 1 agree, 1 by the peak, 1 by the frontier)"},
		{"adaptive, a probe failed", run{pts: append(tp4(1, 4, 8, 16), asProbe(tp4Curve[12], true)), skipped: []int{2, 10}}, adaptiveJournal,
			"disagree          " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 4 green, 1 failed (c12 probe only), 2 not measured (adaptive: c2 c10) (frontier: 1 of 5 measured window points failed)",
			"0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier; 0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 0 agree, 0 by the peak, 0 by the frontier)"},
		{"no journal: missing points failed", run{pts: supersededAt16}, noJournal,
			"disagree          " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 5 green (probe only: c8 c12), 2 failed (c2, c10) (frontier: 2 of 7 measured window points failed)",
			"0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, tally := judgeDiscovery(t, ids, g, []run{tc.tp4, {pts: tp8Curve}}, tc.journal)
			assert.Equal(t, tc.line, line)
			assert.Equal(t, tc.tally, tally)
		})
	}
}

// TestJudgeUnfinishedDiscoveries judges made-up discoveries of testKey
// killed before they finished: a point started and never ended, or never
// reached (an arm never started too: its identity comes from the
// journal's start), is not finished, not failed, and the key is not
// judged but "unfinished", its points named per arm and counted apart;
// a point that ran and failed stays failed. A finished discovery with a
// journal reads as one without. An adaptive discovery killed between two
// steps of its search, every point run (some as probes), is unfinished
// when its journal says so (a format, no search_end for the arm): its
// probes are not finished, but for one that failed the way a
// full-length run fails too (no successful request), which the search
// never runs again: it stays failed, and with no other probe left the
// key is judged; with the search's end recorded, or from a journal
// without a format, it is judged on what it measured.
func TestJudgeUnfinishedDiscoveries(t *testing.T) {
	ids, g := testArms(t)
	const notJudged = "0 of 0 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier; 1 key not judged (its discovery has not finished: resume it)"
	const resume = ": resume the discovery (the sweep discover command that started it) and judge it again"
	failedAt16 := append(tp4(1, 2, 4, 8, 10, 12), pt{conc: 16, failed: true})
	probed := append(tp4(1, 4, 16), asProbe(tp4Curve[2], false), asProbe(tp4Curve[8], false), asProbe(tp4Curve[10], false), asProbe(tp4Curve[12], false))
	// failedProbe is probed with c12's probe failed (no successful
	// request: a full-length run fails too); onlyFailedProbe has it the
	// one probe, every other point run at the full length.
	failedProbe := append(tp4(1, 4, 16), asProbe(tp4Curve[2], false), asProbe(tp4Curve[8], false), asProbe(tp4Curve[10], false), asProbe(tp4Curve[12], true))
	onlyFailedProbe := append(tp4(1, 2, 4, 8, 10, 16), asProbe(tp4Curve[12], true))
	const probedJudged = "agree             " + testKey + ": tp4 ep4 kv:dram: ambiguous knee c10 peak c16 on window c1 c2 c4 c8 c10 c12 c16: 7 green (probe only: c2 c8 c10 c12)"
	const adaptiveTally = "1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier; 0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 1 agree, 1 by the peak, 1 by the frontier)"
	for _, tc := range []struct {
		name     string
		tp4, tp8 run
		journal  journal
		line     string
		tally    string
	}{
		{"adaptive killed mid-point, an arm not started", run{pts: tp4(1, 4), interrupted: []int{16}, unreached: []int{2, 8, 10, 12}}, run{unreached: []int{1, 2, 4}}, adaptivePlanned,
			"unfinished        " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 2 green, 5 not finished (c2 c8 c10 c12 c16); tp8 ep8: window c1 c2 c4: 0 green, 3 not finished (c1 c2 c4)" + resume, notJudged},
		{"adaptive killed in a probe's full-length run", run{pts: append(tp4(1, 4, 16), asProbe(tp4Curve[8], false)), skipped: []int{2, 10, 12}, interrupted: []int{8}}, run{pts: tp8Curve}, adaptivePlanned,
			"unfinished        " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 3 green, 3 not measured (adaptive: c2 c10 c12), 1 not finished (c8)" + resume, notJudged},
		{"adaptive journal without the arms, a point interrupted", run{pts: tp4(1, 4, 8, 12, 16), skipped: []int{10}, interrupted: []int{2}}, run{pts: tp8Curve}, adaptiveJournal,
			"unfinished        " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 5 green, 1 not measured (adaptive: c10), 1 not finished (c2)" + resume, notJudged},
		{"full killed mid-way", run{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, run{pts: tp8Curve[:1], interrupted: []int{2}, unreached: []int{4}}, fullPlanned,
			"unfinished        " + testKey + ": tp8 ep8: window c1 c2 c4: 1 green, 2 not finished (c2 c4)" + resume, notJudged},
		{"full killed, a point ran and failed", run{pts: failedAt16}, run{pts: tp8Curve[:2], unreached: []int{4}}, fullPlanned,
			"unfinished        " + testKey + ": tp4 ep4 kv:dram: 1 of 7 points failed; tp8 ep8: window c1 c2 c4: 2 green, 1 not finished (c4)" + resume, notJudged},
		{"full journal without the arms, a point not reached", run{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, run{pts: tp8Curve[:2], unreached: []int{4}}, fullUnplanned,
			"unfinished        " + testKey + ": tp8 ep8: window c1 c2 c4: 2 green, 1 not finished (c4); 1 point of the discovery not finished with no arm named in its journal" + resume, notJudged},
		{"full finished, a point failed", run{pts: failedAt16}, run{pts: tp8Curve}, fullPlanned,
			"disagree          " + testKey + ": tp4 ep4 kv:dram: 1 of 7 points failed (frontier: 1 of 7 window points failed)",
			"0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier"},
		{"adaptive killed between two steps of its search, every point run", run{pts: probed, searching: true}, run{pts: tp8Curve}, adaptiveFormatted,
			"unfinished        " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 3 green, 4 not finished (c2 c8 c10 c12)" + resume, notJudged},
		{"adaptive killed between two steps of its search, a probe failed for good", run{pts: failedProbe, searching: true}, run{pts: tp8Curve}, adaptiveFormatted,
			"unfinished        " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 3 green, 1 failed (c12 probe only), 3 not finished (c2 c8 c10)" + resume, notJudged},
		{"adaptive killed between two steps of its search, its only probe failed for good", run{pts: onlyFailedProbe, searching: true}, run{pts: tp8Curve}, adaptiveFormatted,
			"disagree          " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 6 green, 1 failed (c12 probe only) (frontier: 1 of 7 measured window points failed)",
			"0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier; 0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 0 agree, 0 by the peak, 0 by the frontier)"},
		{"adaptive, every point run, its search ended", run{pts: probed}, run{pts: tp8Curve}, adaptiveFormatted, probedJudged, adaptiveTally},
		{"adaptive, every point run, a journal without a format", run{pts: probed}, run{pts: tp8Curve}, adaptivePlanned, probedJudged, adaptiveTally},
		{"full finished", run{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, run{pts: tp8Curve}, fullPlanned,
			"agree             " + testKey,
			"1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, tally := judgeDiscovery(t, ids, g, []run{tc.tp4, tc.tp8}, tc.journal)
			assert.Equal(t, tc.line, line)
			assert.Equal(t, tc.tally, tally)
		})
	}
}

// TestJudgeReadsALinkedDiscovery: OUT_DIR/KEY may be a link to the
// discovery (sweep discover --out elsewhere); it is read where it lies.
func TestJudgeReadsALinkedDiscovery(t *testing.T) {
	ids, g := testArms(t)
	elsewhere := filepath.Join(t.TempDir(), "disc")
	writeDiscovery(t, elsewhere, ids, []run{{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, {pts: tp8Curve}}, noJournal)
	out := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(out, testKey)))
	var lines []string
	_, err := Judge(t.Context(), Options{Dir: out, Keys: []string{testKey}, Generator: g}, func(k Key) { lines = append(lines, k.Line()) })
	require.NoError(t, err)
	assert.Equal(t, []string{"unlisted  agree             " + testKey}, lines)
}

// TestJudgeDiscoveriesOfSomeArms judges made-up discoveries of one of
// testKey's two arms. When the journal's start records the arms it ran,
// the other arm is not in the discovery, neither measured nor failed:
// the key is judged on the arm it ran, the line says on how many and
// names the other arm, and the counts tell such keys apart; an arm with
// no other arm of its key in the discovery is read at its frontier step
// only for the peak of a window still climbing to its top (here no
// point is there, so its peak is not judged). Killed, such a discovery is unfinished as before, the arm not in
// it named. A directory without a journal, or a journal that records no
// arms, is read as before: the other arm's points are failed. A
// discovery whose journal records none of the key's arms is not judged.
func TestJudgeDiscoveriesOfSomeArms(t *testing.T) {
	ids, g := testArms(t)
	const resume = ": resume the discovery (the sweep discover command that started it) and judge it again"
	const oneAgrees = "1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier"
	const onSome = "1 key judged on part of its arms (on the arms its discovery ran: "
	const failedTally = "0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier"
	tp8Rising := []pt{{1, 8000, 90, false, false}, {2, 15000, 70, false, false}, {4, 22000, 50, false, false}}
	for _, tc := range []struct {
		name    string
		tp8     bool // the run is TP8's, else TP4's
		run     run
		journal journal
		line    string
		tally   string
	}{
		{"full, TP4 only", false, run{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, fullPlanned,
			"agree             " + testKey + ": judged on 1 of 2 arms; tp8 ep8: not in this discovery",
			oneAgrees + "; " + onSome + "1 agree, 1 by the peak, 1 by the frontier)"},
		{"full, TP8 only, still rising", true, run{pts: tp8Rising}, fullPlanned,
			"disagree          " + testKey + ": judged on 1 of 2 arms; tp4 ep4 kv:dram: not in this discovery; tp8 ep8: unsaturated no knee window 1-4, its peak not judged (c8 beyond not measured) (frontier: no other arm in this discovery)",
			failedTally + "; " + onSome + "0 agree, 0 by the peak, 0 by the frontier)"},
		{"adaptive, TP4 only", false, run{pts: tp4(1, 4, 8, 12, 16), skipped: []int{2, 10}}, adaptivePlanned,
			"agree             " + testKey + ": judged on 1 of 2 arms; tp4 ep4 kv:dram: ambiguous knee c12 peak c16 on window c1 c2 c4 c8 c10 c12 c16: 5 green, 2 not measured (adaptive: c2 c10); tp8 ep8: not in this discovery",
			oneAgrees + "; 0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 1 agree, 1 by the peak, 1 by the frontier); " + onSome + "1 agree, 1 by the peak, 1 by the frontier)"},
		{"adaptive, TP4 only, killed mid-point", false, run{pts: tp4(1, 4), interrupted: []int{16}, unreached: []int{2, 8, 10, 12}}, adaptivePlanned,
			"unfinished        " + testKey + ": tp4 ep4 kv:dram: window c1 c2 c4 c8 c10 c12 c16: 2 green, 5 not finished (c2 c8 c10 c12 c16); tp8 ep8: not in this discovery" + resume,
			"0 of 0 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier; 1 key not judged (its discovery has not finished: resume it)"},
		// A discovery of part of the conc-list (--conc-list 1,4,8,12,16):
		// the points it did not plan are not measured, not failed.
		{"full, TP4 only, part of its conc-list", false, run{pts: tp4(1, 4, 8, 12, 16)}, fullPlanned,
			"agree             " + testKey + ": judged on 1 of 2 arms; tp4 ep4 kv:dram: ambiguous knee c12 peak c16 on window c1 c2 c4 c8 c10 c12 c16: 5 green, 2 not measured (not among the discovery's points: c2 c10); tp8 ep8: not in this discovery",
			oneAgrees + "; " + onSome + "1 agree, 1 by the peak, 1 by the frontier)"},
		{"no journal, TP4 only: TP8 failed", false, run{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, noJournal,
			"disagree          " + testKey + ": tp8 ep8: 3 of 3 points failed (frontier: 3 of 3 window points failed)", failedTally},
		{"journal without the arms, TP4 only: TP8 failed", false, run{pts: tp4(1, 2, 4, 8, 10, 12, 16)}, fullUnplanned,
			"disagree          " + testKey + ": tp8 ep8: 3 of 3 points failed (frontier: 3 of 3 window points failed)", failedTally},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := ids[0]
			if tc.tp8 {
				id = ids[1]
			}
			line, tally := judgeDiscovery(t, []result.Identity{id}, g, []run{tc.run}, tc.journal)
			assert.Equal(t, tc.line, line)
			assert.Equal(t, tc.tally, tally)
		})
	}

	other, err := plannedArms(g, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	require.NoError(t, err)
	out := t.TempDir()
	dir := filepath.Join(out, testKey)
	writeDiscovery(t, dir, []result.Identity{other[0].id}, []run{{pts: tp8Curve}}, fullPlanned)
	var lines []string
	tl, err := Judge(t.Context(), Options{Dir: out, Keys: []string{testKey}, Generator: g}, func(k Key) { lines = append(lines, k.Line()) })
	require.NoError(t, err)
	assert.Equal(t, []string{"unlisted  skip              " + testKey + ": none of its 2 arms is in the discovery in " + dir + " (its journal records 1 arm: " + other[0].id.Label() + ")"}, lines)
	assert.Equal(t, "0 of 0 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier", tl.String())

	// A key's directory with neither a journal nor a result is no
	// discovery (it was judged "3 of 3 points failed"); a missing OUT_DIR
	// is an error (it was "0 of 0 keys agree", exit 0).
	empty := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(empty, testKey), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(empty, testKey, "notes.txt"), []byte("x"), 0o644))
	lines = nil
	_, err = Judge(t.Context(), Options{Dir: empty, Keys: []string{testKey}, Generator: g}, func(k Key) { lines = append(lines, k.Line()) })
	require.NoError(t, err)
	assert.Equal(t, []string{"unlisted  skip              " + testKey + ": no discovery in " + filepath.Join(empty, testKey) + ": neither a sweep journal nor a result"}, lines)
	_, err = Judge(t.Context(), Options{Dir: filepath.Join(empty, "missing"), Keys: []string{testKey}, Generator: g}, func(Key) {})
	assert.ErrorContains(t, err, "no such file or directory")
}
