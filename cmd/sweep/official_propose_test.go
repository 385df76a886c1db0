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

// TestOfficialProposeUnfinished: a discovery interrupted while tp8 ran
// c128 (its journal has the start and no end) is refused and named, as
// sweep knees names it, and nothing is written; with --allow-unfinished
// tp8's conc-list stays as it is and the other four are proposed. The
// proposal read the knees without the journal and proposed tp8 from
// c1..c64 as if its grid ended there, without a word.
func TestOfficialProposeUnfinished(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	start := campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover"}}
	var recs []campaign.Record
	for i, c := range synth.KeySweep(11) {
		arm := campaign.ArmPlan{Arm: i + 1, Identity: c.Arm.Identity}
		tp8 := c.Arm.Identity.Get("tp") == "8" && c.Arm.Identity.Get("ep") == "1"
		ran := &knee.Arm{Identity: c.Arm.Identity}
		for _, s := range c.Arm.Samples {
			if !tp8 || s.Conc < 128 {
				ran.Samples = append(ran.Samples, s)
			}
		}
		paths, err := synth.WriteDir(filepath.Join(results, c.ID), ran, true)
		require.NoError(t, err)
		for j, s := range c.Arm.Samples {
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
	files, args := proposeInputs(t, dir, results)
	args = append(args, "--allow-simulated")
	const tp8 = "qwen3.5 mi325x-amds sglang fp8 mtp tp8 c128 (interrupted)"

	var out, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, args)
	assert.Equal(t, exitUsage, code, out.String())
	assert.Contains(t, errOut.String(), results+": the discovery has not finished, so nothing is proposed from it: "+
		"its journal says the sweep has not finished 1 of its 40 points: "+tp8)
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
	assert.Contains(t, errOut.String(), "warning: --allow-unfinished: the discovery has not finished: its journal says the sweep has not finished 1 of its 40 points: "+tp8)
	assert.Contains(t, errOut.String(), "  tp8: unchanged (unfinished: the discovery has not finished c128 (interrupted or not run)")
	assert.Equal(t, 4, strings.Count(out.String(), "\n-          - {tp:"), out.String())
	assert.NotContains(t, out.String(), "- {tp: 8, ep: 1,", "tp8's conc-list stays")
	assert.Contains(t, out.String(), "left unchanged, the discovery had not finished them (the other arms' frontier was read without those points): TP8 (c128)")
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
