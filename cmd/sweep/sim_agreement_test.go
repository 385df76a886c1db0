package main

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

// agreementKey is a key of two arms: TP4/EP4 with DRAM offload on
// c1-c16 and TP8/EP8 on c1, c2 and c4.
const agreementKey = "glm5.2-fp4-mi355x-sglang-agentic-mtp"

// agreementArms are the identities of agreementKey's arms by TP, as the
// matrix plans them.
func agreementArms(t *testing.T) map[int]result.Identity {
	t.Helper()
	m, r, err := configs.Load(nil, "")
	require.NoError(t, err)
	rows, _, err := (&matrix.Generator{Masters: m, Runners: r}).AgenticRows([]string{agreementKey}, nil, matrix.EvalOptions{NoEvals: true})
	require.NoError(t, err)
	ids := map[int]result.Identity{}
	for _, row := range rows {
		ids[row.TP] = result.RowIdentity(row)
	}
	require.Len(t, ids, 2)
	return ids
}

// writeCurve writes one simulated result file per point of an arm under
// dir: conc → throughput per GPU and P90 E2E-normalised interactivity; a
// negative throughput is a point whose requests all failed.
func writeCurve(t *testing.T, dir string, id result.Identity, pts map[int][2]float64) {
	t.Helper()
	a := &knee.Arm{Identity: id, Simulated: true}
	for c, p := range pts {
		tput, iv := p[0], pyjson.Rounded(p[1])
		s := knee.Sample{Conc: c, Simulated: true, TotalTPS: &tput, OutputTPS: &tput, E2ENormIntvty: result.Stats{P90: &iv}}
		if tput < 0 {
			s = knee.Sample{Conc: c, Simulated: true, Excluded: result.ExcludedNoSuccess}
		}
		a.Samples = append(a.Samples, s)
	}
	_, err := synth.WriteDir(dir, a, true)
	require.NoError(t, err)
}

// TestSimAgreementJudgesDiscoveries judges a made-up discovery of
// agreementKey: TP4 knees at c8 inside its window (1-16); TP8 still rises
// at the top of its window (1-4), so its frontier step is c8, TP4's next
// point. Without a result there the key's frontier verdict is open; with
// one that TP4's c8 dominates, the key agrees by the frontier; with TP4's
// c16 failed it disagrees. A multi-node key and a key without a discovery
// are skipped.
func TestSimAgreementJudgesDiscoveries(t *testing.T) {
	ids := agreementArms(t)
	out := t.TempDir()
	disc := filepath.Join(out, agreementKey)
	tp4 := map[int][2]float64{1: {6000, 60}, 2: {11000, 55}, 4: {20000, 50}, 8: {30000, 40}, 10: {31000, 35}, 12: {31500, 30}, 16: {31600, 25}}
	writeCurve(t, disc, ids[4], tp4)
	writeCurve(t, disc, ids[8], map[int][2]float64{1: {8000, 90}, 2: {15000, 70}, 4: {22000, 50}})
	args := []string{"sim", "agreement", out, agreementKey, "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp", "qwen3.5-fp8-mi325x-sglang-agentic-mtp"}

	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, `unknown   disagree          glm5.2-fp4-mi355x-sglang-agentic-mtp: tp8 ep8: unsaturated no knee window 1-4 (frontier: c8 not measured)
unlisted  skip              dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp: no single-node agentic arm (multi-node and disaggregated keys are not judged)
knee      skip              qwen3.5-fp8-mi325x-sglang-agentic-mtp: no discovery in `+filepath.Join(out, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")+`
0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier (1 key open: an arm's point at its frontier step is not measured)
0 of 0 keys whose windows InferenceX chose at a measured knee agree (0 by the peak, 0 by the frontier); of the other 1 (1 unknown), 0 agree (0 by the peak, 0 by the frontier)
`, stdout)

	writeCurve(t, filepath.Join(out, agreementKey+".frontier", "tp8-ep8-c8"), ids[8], map[int][2]float64{8: {25000, 38}})
	code, stdout, stderr = runCLI(t, args[:4]...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, `unknown   by frontier       glm5.2-fp4-mi355x-sglang-agentic-mtp: tp8 ep8: unsaturated no knee window 1-4 (frontier: c8 (25000 tok/s/GPU, 38.0 tok/s/user) dominated by tp4 ep4 kv:dram c8 (30000 tok/s/GPU, 40.0 tok/s/user))
0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier
0 of 0 keys whose windows InferenceX chose at a measured knee agree (0 by the peak, 0 by the frontier); of the other 1 (1 unknown), 0 agree (0 by the peak, 1 by the frontier)
`, stdout)

	tp4[16] = [2]float64{-1, 0}
	require.NoError(t, os.RemoveAll(disc))
	writeCurve(t, disc, ids[4], tp4)
	writeCurve(t, disc, ids[8], map[int][2]float64{1: {8000, 90}, 2: {15000, 70}, 4: {22000, 50}})
	code, stdout, stderr = runCLI(t, args[:4]...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "unknown   disagree          glm5.2-fp4-mi355x-sglang-agentic-mtp: tp4 ep4 kv:dram: 1 of 7 points failed (frontier: 1 of 7 window points failed); tp8 ep8: unsaturated no knee window 1-4 (frontier: c8 (25000 tok/s/GPU, 38.0 tok/s/user) dominated by tp4 ep4 kv:dram c8 (30000 tok/s/GPU, 40.0 tok/s/user))\n", strings.SplitAfter(stdout, "\n")[0])
}

// TestSimAgreementRunsTheFrontierPoint: with --frontier the arm's point
// at its frontier step runs simulated into OUT_DIR/KEY.frontier/ARM-cN
// (the recipe planned at c8, named so) and decides the key; run again,
// the result there is reused.
func TestSimAgreementRunsTheFrontierPoint(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	ids := agreementArms(t)
	out := t.TempDir()
	disc := filepath.Join(out, agreementKey)
	// TP4's c8 and c10 dominate what TP8 gives at c8 in the model (about
	// 26000 tok/s/GPU at 33 tok/s/user).
	writeCurve(t, disc, ids[4], map[int][2]float64{1: {6000, 60}, 2: {11000, 55}, 4: {20000, 50}, 8: {90000, 100}, 10: {93000, 35}, 12: {94000, 30}, 16: {94500, 25}})
	writeCurve(t, disc, ids[8], map[int][2]float64{1: {8000, 900}, 2: {15000, 700}, 4: {22000, 500}})
	code, stdout, stderr := runCLI(t, "sim", "agreement", "--frontier", out, agreementKey)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "unknown   by frontier       glm5.2-fp4-mi355x-sglang-agentic-mtp: tp8 ep8: unsaturated no knee window 1-4 (frontier: c8 (")
	assert.Contains(t, stdout, "dominated by tp4 ep4 kv:dram c10 (93000 tok/s/GPU, 35.0 tok/s/user))\n", "the dominating point with the most throughput")
	files, err := filepath.Glob(filepath.Join(out, agreementKey+".frontier", "tp8-ep8-c8", "glm5.2_tp8_conc8_*.json"))
	require.NoError(t, err)
	assert.Len(t, files, 1, "the point's result, named for c8")

	_, again, stderr := runCLI(t, "sim", "agreement", "--frontier", out, agreementKey)
	assert.Equal(t, stdout, again)
	assert.NotContains(t, stderr, "point glm5.2", "the result is reused, not run again")
}

func TestSimAgreementArgs(t *testing.T) {
	code, _, stderr := runCLI(t, "sim", "agreement", t.TempDir())
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "sim agreement takes OUT_DIR and at least one KEY, got 1 arguments")
	code, _, stderr = runCLI(t, "sim", "agreement", t.TempDir(), "no-such-key")
	assert.Equal(t, exitUsage, code, "an unknown key is a usage error")
	assert.Contains(t, stderr, "no-such-key")
}

// TestSimAgreementUnfinishedDiscovery: a simulated discovery cut as a
// kill during its second point cuts it (its journal ends at that point's
// start, the point's directory gone) is unfinished: the points not run
// are named, not failed, and the counts leave the key out; resumed with
// the same command, the key reads as before the cut. The key's other
// arms, outside the discovery's selection, are not in the discovery
// throughout: neither failed nor judged.
func TestSimAgreementUnfinishedDiscovery(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	out := t.TempDir()
	dir := filepath.Join(out, key)
	discover := []string{"discover", "--simulate", "--builtin-client", "--no-report", "--config-keys", key, "--tp", "2", "--ep", "2", "--out", dir}
	code, _, stderr := runCLI(t, discover...)
	require.Equal(t, 0, code, stderr)
	code, finished, stderr := runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, finished, "agree             "+key+": judged on 1 of 5 arms; tp4: not in this discovery; ", "tp2 ep2 agrees, the arms not run are not judged")

	recs := journalOf(t, dir)
	var cut int
	var started []string
	data, err := os.ReadFile(filepath.Join(dir, campaign.JournalFile))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	for i, r := range recs {
		if r.Event == campaign.EventPointStart {
			started = append(started, r.Point)
			if len(started) == 2 {
				cut = i + 1
				break
			}
		}
	}
	require.Positive(t, cut)
	require.NoError(t, os.WriteFile(filepath.Join(dir, campaign.JournalFile), []byte(strings.Join(lines[:cut], "")), 0o644))
	for _, id := range recs[0].Identity.Points[1:] {
		require.NoError(t, os.RemoveAll(result.PointDir(dir, id)))
	}

	code, stdout, stderr := runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "unfinished        "+key+": tp2 ep2: window c1 c4 c6: 1 green, 2 not finished (c4 c6); tp4: not in this discovery; ")
	assert.Contains(t, stdout, ": resume the discovery (the sweep discover command that started it) and judge it again\n")
	assert.NotContains(t, stdout, "no arm named", "the journal's start places the point never started")
	assert.Contains(t, stdout, "; 1 key not judged (its discovery has not finished: resume it)\n")

	code, _, stderr = runCLI(t, discover...)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, finished, stdout)
}

// TestSimAgreementDiscoveryOfOneArm: a simulated discovery of one of
// agreementKey's two arms (--tp 8 --ep 8), whose journal records the arm
// it ran, is judged on that arm: TP4/EP4 is not in it, neither failed
// nor measured, and the line and the counts say the key was judged on
// part of its arms. TP8/EP8 still rises at the top of its window; with
// no other arm of the key in the discovery no point at its frontier
// step could be dominated, and the key's frontier verdict is not open,
// but --frontier runs that point for the peak (OUT_DIR/KEY.frontier):
// it does not fall off a cliff, so the peak is not at the window's top.
func TestSimAgreementDiscoveryOfOneArm(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := t.TempDir()
	code, _, stderr := runCLI(t, "discover", "--simulate", "--builtin-client", "--no-report", "--config-keys", agreementKey, "--tp", "8", "--ep", "8", "--out", filepath.Join(out, agreementKey))
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := runCLI(t, "sim", "agreement", "--frontier", out, agreementKey)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "unknown   disagree          "+agreementKey+": judged on 1 of 2 arms; tp4 ep4 kv:dram: not in this discovery; tp8 ep8: unsaturated no knee window 1-4 (frontier: no other arm in this discovery)\n"+
		"0 of 1 keys agree; 0 with InferenceX's knee, the peak, inside every window; 0 with each arm whose knee misses its window a segment of the simulated frontier; "+
		"1 key judged on part of its arms (on the arms its discovery ran: 0 agree, 0 by the peak, 0 by the frontier)\n"+
		"0 of 0 keys whose windows InferenceX chose at a measured knee agree (0 by the peak, 0 by the frontier); of the other 1 (1 unknown), 0 agree (0 by the peak, 0 by the frontier)\n", stdout)
	assert.DirExists(t, filepath.Join(out, agreementKey+".frontier", "tp8-ep8-c8"), "the point at the frontier step run for the peak")
}

// TestSimAgreementKilledAdaptiveDiscovery: an adaptive discovery whose
// search ran every point of its arm as a probe, cut as a kill after the
// last probe cuts it (every point done, the search's end not recorded),
// is unfinished: its probes, which the search may still run at the full
// length, are named. Resumed with the same command, the search records
// its end and the key reads as before the cut.
func TestSimAgreementKilledAdaptiveDiscovery(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	out := t.TempDir()
	dir := filepath.Join(out, key)
	discover := []string{"discover", "--simulate", "--adaptive", "--builtin-client", "--no-report", "--config-keys", key, "--tp", "4", "--ep", "4", "--out", dir}
	code, _, stderr := runCLI(t, discover...)
	require.Equal(t, 0, code, stderr)
	code, finished, stderr := runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "knee      agree             "+key+": judged on 1 of 5 arms; tp2 ep2: not in this discovery; tp4: not in this discovery; "+
		"tp4 ep4: ambiguous knee c32 peak c40 on window c4 c16 c32 c40 c48: 5 green (probe only: c4 c16 c32 c40 c48); tp8: not in this discovery; tp8 ep8: not in this discovery\n"+
		"1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier; "+
		"0 judged on full discoveries, 1 on adaptive ones (on the points they measured: 1 agree, 1 by the peak, 1 by the frontier); "+
		"1 key judged on part of its arms (on the arms its discovery ran: 1 agree, 1 by the peak, 1 by the frontier)\n"+
		"1 of 1 keys whose windows InferenceX chose at a measured knee agree (1 by the peak, 1 by the frontier); of the other 0, 0 agree (0 by the peak, 0 by the frontier)\n", finished,
		"the arms outside the discovery's selection are not in it, not failed")

	data, err := os.ReadFile(filepath.Join(dir, campaign.JournalFile))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	cut := -1
	for i, r := range journalOf(t, dir) {
		if r.Event == campaign.EventSearchEnd {
			cut = i
			break
		}
		require.NotEqual(t, campaign.EventPointSkip, r.Event, "the search ran every point")
	}
	require.Positive(t, cut)
	require.NoError(t, os.WriteFile(filepath.Join(dir, campaign.JournalFile), []byte(strings.Join(lines[:cut], "")), 0o644))
	code, stdout, stderr := runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "unfinished        "+key+": tp2 ep2: not in this discovery; tp4: not in this discovery; tp4 ep4: window c4 c16 c32 c40 c48: 0 green, 5 not finished (c4 c16 c32 c40 c48); ")
	assert.Contains(t, stdout, "; 1 key not judged (its discovery has not finished: resume it)\n")

	code, _, stderr = runCLI(t, discover...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 1, countEvents(journalOf(t, dir), campaign.EventSearchEnd)[""], "the resume records the search's end")
	code, stdout, stderr = runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, finished, stdout)
}

// TestSimAgreementResumedOlderDiscovery: an adaptive discovery that an
// older binary started (its journal's start without a format) and that
// was killed before its search's last point, resumed by this binary and
// killed again after that point, before the search's end was recorded,
// is unfinished: the resume's start gives its format, so the arm the
// resume ran needs its search's end. Resumed again, it reads as the
// uninterrupted discovery.
func TestSimAgreementResumedOlderDiscovery(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	out := t.TempDir()
	dir := filepath.Join(out, key)
	path := filepath.Join(dir, campaign.JournalFile)
	discover := []string{"discover", "--simulate", "--adaptive", "--builtin-client", "--no-report", "--config-keys", key, "--tp", "4", "--ep", "4", "--out", dir}
	code, _, stderr := runCLI(t, discover...)
	require.Equal(t, 0, code, stderr)
	code, finished, stderr := runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(finished, "knee      agree "), finished)
	// cut keeps the journal's records before the first that last says
	// is one to cut.
	cut := func(last func(campaign.Record) bool) string {
		t.Helper()
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := strings.SplitAfter(string(data), "\n")
		i := slices.IndexFunc(journalOf(t, dir), last)
		require.Positive(t, i)
		return strings.Join(lines[:i], "")
	}

	lastPoint := journalOf(t, dir)[slices.IndexFunc(journalOf(t, dir), func(r campaign.Record) bool { return r.Event == campaign.EventSearchEnd })-1].Point
	older := strings.Replace(cut(func(r campaign.Record) bool { return r.Event == campaign.EventPointStart && r.Point == lastPoint }),
		fmt.Sprintf(`"format":%d,`, campaign.JournalFormat), "", 1)
	require.NoError(t, os.WriteFile(path, []byte(older), 0o644))
	require.Zero(t, journalOf(t, dir)[0].Format, "an older binary's start")
	code, _, stderr = runCLI(t, discover...)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, os.WriteFile(path, []byte(cut(func(r campaign.Record) bool { return r.Event == campaign.EventSearchEnd })), 0o644))
	code, stdout, stderr := runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "unfinished        "+key+": tp2 ep2: not in this discovery; tp4: not in this discovery; tp4 ep4: window c4 c16 c32 c40 c48: 0 green, 5 not finished (c4 c16 c32 c40 c48); ")

	code, _, stderr = runCLI(t, discover...)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = runCLI(t, "sim", "agreement", out, key)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, finished, stdout)
}
