package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// TestOfficialPropose runs the proposal on the shipped MI325X Qwen3.5 key
// (copies of the repository's configs and changelog) with a seeded
// discovery sweep: the dry run writes nothing, the real run changes only
// the five conc-list lines and appends one entry, and sweep validate with
// the old changelog as base accepts the result.
func TestOfficialPropose(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	for _, c := range synth.KeySweep(11) {
		_, err := synth.WriteDir(filepath.Join(results, c.ID), c.Arm, true)
		require.NoError(t, err)
	}
	copyFile := func(src string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", src))
		require.NoError(t, err)
		dst := filepath.Join(dir, filepath.Base(src))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
		return dst
	}
	amd, nv, runners, log := copyFile("configs/amd-master.yaml"), copyFile("configs/nvidia-master.yaml"),
		copyFile("configs/runners.yaml"), copyFile("perf-changelog.yaml")
	oldAMD, _ := os.ReadFile(amd)
	oldLog, _ := os.ReadFile(log)
	args := []string{"official", "--propose", "--from", results, "--config-files", amd + "," + nv,
		"--runner-config", runners, "--changelog", log, "--allow-simulated"}

	var out, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, append(args, "--dry-run"))
	require.Equal(t, 0, code, errOut.String())
	assert.Contains(t, errOut.String(), "qwen3.5-fp8-mi325x-sglang-agentic-mtp:")
	assert.Equal(t, 5, strings.Count(out.String(), "\n-          - {tp:"), out.String())
	now, _ := os.ReadFile(amd)
	assert.Equal(t, oldAMD, now, "dry run wrote nothing")

	out.Reset()
	errOut.Reset()
	code = mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, args)
	require.Equal(t, 0, code, errOut.String())
	newAMD, _ := os.ReadFile(amd)
	oldLines, newLines := strings.Split(string(oldAMD), "\n"), strings.Split(string(newAMD), "\n")
	require.Equal(t, len(oldLines), len(newLines))
	var changed []int
	for i := range oldLines {
		if oldLines[i] != newLines[i] {
			changed = append(changed, i+1)
			assert.Contains(t, newLines[i], "conc-list: [")
		}
	}
	assert.Len(t, changed, 5, "only the five conc-list lines change")
	newLog, _ := os.ReadFile(log)
	assert.True(t, bytes.HasPrefix(newLog, oldLog), "the changelog is only appended to")
	assert.Contains(t, string(newLog[len(oldLog):]), "- config-keys:\n    - qwen3.5-fp8-mi325x-sglang-agentic-mtp\n")
	assert.Contains(t, string(newLog[len(oldLog):]), "from a SIMULATED fast discovery sweep", "the entry says the results were simulated")

	base := filepath.Join(dir, "changelog-base.yaml")
	require.NoError(t, os.WriteFile(base, oldLog, 0o644))
	out.Reset()
	errOut.Reset()
	code = mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, []string{"validate", "--config-files", amd + "," + nv,
		"--runner-config", runners, "--changelog", log, "--changelog-base", base})
	assert.Equal(t, 0, code, out.String()+errOut.String())
}

// TestOfficialProposeRefuses: a simulated discovery without
// --allow-simulated, and a result with conc 1e18, write nothing and say
// why (both edited the master config and the changelog before), and exit
// 2, the refused input's code (they exited 1).
func TestOfficialProposeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name      string
		simulated bool
		absurd    bool
		want      string
	}{
		{"simulated", true, false, `a simulated result ("simulated": true)`},
		{"conc 1e18", false, true, "conc 1000000000000000000 is not a concurrency a sweep runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			results := filepath.Join(dir, "results")
			for _, c := range synth.KeySweep(11) {
				paths, err := synth.WriteDir(filepath.Join(results, c.ID), c.Arm, tc.simulated)
				require.NoError(t, err)
				if tc.absurd && c.Arm.Identity.Get("tp") == "8" && c.Arm.Identity.Get("ep") == "8" {
					data, err := os.ReadFile(paths[len(paths)-1])
					require.NoError(t, err)
					var obj map[string]any
					require.NoError(t, json.Unmarshal(data, &obj))
					obj["conc"] = 1_000_000_000_000_000_000
					data, err = json.Marshal(obj)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(paths[0]), "forged.json"), data, 0o644))
				}
			}
			files, args := proposeInputs(t, dir, results)
			var out, errOut bytes.Buffer
			code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, args)
			assert.Equal(t, exitUsage, code, out.String()) // it was 1, as for a proposal that failed
			assert.Contains(t, errOut.String(), tc.want)
			for f, data := range files {
				now, err := os.ReadFile(f)
				require.NoError(t, err)
				assert.Equal(t, string(data), string(now), "%s is unchanged", f)
			}
		})
	}
}

// keyDiscovery writes synth.KeySweep(11) (five arms of
// qwen3.5-fp8-mi325x-sglang-agentic-mtp, each on c1..c128) into results as
// a discovery with its journal: per arm the concurrencies plan keeps are
// planned (on the arm's grid, the whole c1..c128, as the journal records
// it), and of those the ones run keeps ran to their end; the others were
// started and not ended (interrupted).
func keyDiscovery(t *testing.T, results string, plan, run func(id result.Identity, conc int) bool) {
	t.Helper()
	start := campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover"}}
	var recs []campaign.Record
	for i, c := range synth.KeySweep(11) {
		arm := campaign.ArmPlan{Arm: i + 1, Identity: c.Arm.Identity}
		ran := &knee.Arm{Identity: c.Arm.Identity}
		var planned []knee.Sample
		for _, s := range c.Arm.Samples {
			arm.Grid = append(arm.Grid, s.Conc)
			if plan(c.Arm.Identity, s.Conc) {
				planned = append(planned, s)
				if run(c.Arm.Identity, s.Conc) {
					ran.Samples = append(ran.Samples, s)
				}
			}
		}
		paths, err := synth.WriteDir(filepath.Join(results, c.ID), ran, true)
		require.NoError(t, err)
		for j, s := range planned {
			id := fmt.Sprintf("%s-c%d", c.ID, s.Conc)
			arm.Points = append(arm.Points, campaign.PointPlan{Point: id, Conc: s.Conc})
			start.Identity.Points = append(start.Identity.Points, id)
			recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: i + 1, Point: id, Conc: s.Conc})
			if j < len(paths) {
				rel, err := filepath.Rel(results, paths[j])
				require.NoError(t, err)
				recs = append(recs, campaign.Record{Event: campaign.EventPointEnd, Arm: i + 1, Point: id, Conc: s.Conc, Status: campaign.StatusOK, Result: rel})
			}
		}
		start.Arms = append(start.Arms, arm)
	}
	require.NoError(t, synth.WriteJournal(results, append([]campaign.Record{start}, recs...)...))
}

// setConcLists gives the key's five arms in the copied master config
// (proposeInputs' files) the conc-lists lists names by "tp/ep", the
// others c1..c128 (keyDiscovery's grid), as a discovery of the config
// would have planned them.
func setConcLists(t *testing.T, files map[string][]byte, dir string, lists map[string]string) {
	t.Helper()
	path := filepath.Join(dir, "amd-master.yaml")
	text := string(files[path])
	i := strings.Index(text, "\nqwen3.5-fp8-mi325x-sglang-agentic-mtp:\n")
	require.GreaterOrEqual(t, i, 0)
	j := i + strings.Index(text[i:], "\n\n")
	block := strings.Split(text[i:j], "\n")
	for n, line := range block {
		a, b, ok := strings.Cut(line, "conc-list: [")
		if !ok {
			continue
		}
		var tp, ep int
		_, err := fmt.Sscanf(strings.TrimSpace(a), "- {tp: %d, ep: %d,", &tp, &ep)
		require.NoError(t, err, line)
		list, ok := lists[fmt.Sprintf("%d/%d", tp, ep)]
		if !ok {
			list = "1, 2, 4, 8, 16, 32, 64, 128"
		}
		block[n] = a + "conc-list: [" + list + b[strings.Index(b, "]"):]
	}
	text = text[:i] + strings.Join(block, "\n") + text[j:]
	files[path] = []byte(text)
	require.NoError(t, os.WriteFile(path, files[path], 0o644))
}

// TestOfficialProposeUnfinished: a discovery interrupted while tp8 ran
// c128 (its journal has the start and no end) is refused and named, as
// sweep knees names it, and nothing is written; with --allow-unfinished
// tp8's conc-list stays as it is and the other four are proposed. The
// proposal read the knees without the journal and proposed tp8 from
// c1..c64 as if its grid ended there, without a word.
func TestOfficialProposeUnfinished(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	tp8 := func(id result.Identity) bool { return id.Get("tp") == "8" && id.Get("ep") == "1" }
	keyDiscovery(t, results, func(result.Identity, int) bool { return true },
		func(id result.Identity, conc int) bool { return !tp8(id) || conc < 128 })
	files, args := proposeInputs(t, dir, results)
	setConcLists(t, files, dir, nil)
	args = append(args, "--allow-simulated")
	const tp8c128 = "qwen3.5 mi325x-amds sglang fp8 mtp tp8 c128 (interrupted)"

	var out, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, args)
	assert.Equal(t, exitUsage, code, out.String())
	assert.Contains(t, errOut.String(), results+": the discovery has not finished, so nothing is proposed from it: "+
		"its journal says the sweep has not finished 1 of its 40 points: "+tp8c128)
	assert.Contains(t, errOut.String(), "pass --allow-unfinished")
	assert.Empty(t, out.String(), "no diff")
	for f, data := range files {
		now, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Equal(t, string(data), string(now), "%s is unchanged", f)
	}

	out.Reset()
	errOut.Reset()
	code = mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, append(args, "--allow-unfinished"))
	require.Equal(t, 0, code, errOut.String())
	assert.Contains(t, errOut.String(), "warning: --allow-unfinished: the discovery has not finished: its journal says the sweep has not finished 1 of its 40 points: "+tp8c128)
	assert.Contains(t, errOut.String(), "  tp8: unchanged (unfinished: the discovery has not finished c128 (interrupted or not run)")
	assert.Equal(t, 4, strings.Count(out.String(), "\n-          - {tp:"), out.String())
	assert.NotContains(t, out.String(), "- {tp: 8, ep: 1,", "tp8's conc-list stays")
	assert.Contains(t, out.String(), "left unchanged, the discovery had not finished them (the other arms' frontier was read without those points): TP8 (c128)")
}

// TestOfficialProposeNotPlanned: a discovery narrowed with --conc-list
// 1,2,4,8,16,32 where tp4's official conc-list goes on to c128. The
// proposal read tp4's grid as ending at c32 and shrank its conc-list to
// points up to c32 (an unsaturated arm's "extend it upward" among them);
// tp4 now stays as it is, saying why, and the changelog entry names it,
// while the arms whose official points all ran are proposed. Without
// the journal's start the points are not known to be left out: as
// before.
func TestOfficialProposeNotPlanned(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	keyDiscovery(t, results, func(_ result.Identity, conc int) bool { return conc <= 32 },
		func(result.Identity, int) bool { return true })
	files, args := proposeInputs(t, dir, results)
	upTo32 := "1, 2, 4, 8, 16, 32"
	setConcLists(t, files, dir, map[string]string{"2/2": upTo32, "4/4": upTo32, "8/1": upTo32, "8/8": upTo32})
	args = append(args, "--allow-simulated", "--dry-run")

	var out, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, args)
	require.Equal(t, 0, code, errOut.String())
	assert.Contains(t, errOut.String(), "  tp4: unchanged (not among the discovery's points: its official c64, c128 (")
	assert.Contains(t, errOut.String(), "warning: qwen3.5-fp8-mi325x-sglang-agentic-mtp: the discovery did not plan every official point")
	assert.NotContains(t, out.String(), "- {tp: 4, ep: 1,", "tp4's conc-list stays")
	assert.Contains(t, out.String(), "the discovery did not run these official points (the other arms' frontier was read without them): TP4 (c64, c128)")
	assert.Positive(t, strings.Count(out.String(), "\n-          - {tp:"), "the other arms are proposed: %s", out.String())

	// Results gathered by hand (no journal): nothing says c64 and c128
	// were left out.
	require.NoError(t, os.Remove(filepath.Join(results, campaign.JournalFile)))
	out.Reset()
	errOut.Reset()
	code = mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, args)
	require.Equal(t, 0, code, errOut.String())
	assert.NotContains(t, errOut.String(), "not among the discovery's points")
	assert.Contains(t, out.String(), "- {tp: 4, ep: 1,")
}

func TestOfficialFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"official", "--from", "d"}, "unknown flag: --from"},
		{[]string{"official", "--out", "d"}, "missing --config-keys or --changelog-base"},
		{[]string{"official", "--propose"}, "--propose needs --from DIR"},
		{[]string{"official", "--propose", "--from", "d", "--max", "0"}, "--max 0: want at least 1"},
		{[]string{"official", "--adaptive", "--config-keys", "k", "--out", "d"}, "--adaptive is sweep discover's: sweep official runs every point of the official conc-lists"},
	} {
		var out, errOut bytes.Buffer
		code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, tc.args)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, errOut.String(), tc.want)
	}
}

// proposeInputs copies the shipped master configs, runners and changelog
// into dir, and returns their contents by path (to check what a proposal
// left unchanged) and "sweep official --propose --from results" on them.
func proposeInputs(t *testing.T, dir, results string) (map[string][]byte, []string) {
	t.Helper()
	files := map[string][]byte{}
	for _, src := range []string{"configs/amd-master.yaml", "configs/nvidia-master.yaml", "configs/runners.yaml", "perf-changelog.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", src))
		require.NoError(t, err)
		dst := filepath.Join(dir, filepath.Base(src))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
		files[dst] = data
	}
	return files, []string{"official", "--propose", "--from", results, "--config-files",
		filepath.Join(dir, "amd-master.yaml") + "," + filepath.Join(dir, "nvidia-master.yaml"),
		"--runner-config", filepath.Join(dir, "runners.yaml"), "--changelog", filepath.Join(dir, "perf-changelog.yaml")}
}
