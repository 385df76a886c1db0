package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/report"
	"sweep/sweep/testkit/synth"
)

func TestKneesFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		want    kneesOptions
	}{
		{name: "defaults", args: []string{"d"}, want: kneesOptions{Dir: "d", Format: "table", Options: knee.Options{Threshold: 0.9, Metric: "total"}}},
		{name: "json output", args: []string{"d", "--format", "json", "--threshold", "0.95", "--metric", "output"},
			want: kneesOptions{Dir: "d", Format: "json", Options: knee.Options{Threshold: 0.95, Metric: "output"}}},
		{name: "no dir", args: nil, wantErr: "knees takes one directory, got 0 arguments"},
		{name: "bad format", args: []string{"d", "--format", "yaml"}, wantErr: `--format "yaml": want table or json`},
		{name: "bad threshold", args: []string{"d", "--threshold", "90"}, wantErr: `"--threshold" flag: 90: want a fraction in (0, 1), e.g. 0.9`},
		{name: "bad metric", args: []string{"d", "--metric", "input"}, wantErr: `metric "input": want total or output`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOptions(t, newKneesCmd, tc.args...)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			got.IO = nil
			assert.Equal(t, tc.want, *got)
		})
	}
}

// TestKneesRunJSON runs the command on a seeded sweep directory of two
// arms and checks the JSON contract.
func TestKneesRunJSON(t *testing.T) {
	dir := t.TempDir()
	cases := synth.Corpus(7, 2)
	for i, c := range cases {
		_, err := synth.WriteDir(filepath.Join(dir, c.ID), c.Arm, i == 0)
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"run_id":"x"}`), 0o644))
	var out, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, []string{"knees", dir, "--format", "json"})
	require.Equal(t, 0, code, errOut.String())
	var got []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	require.Len(t, got, 2)
	for _, a := range got {
		keys := make([]string, 0, len(a))
		for k := range a {
			keys = append(keys, k)
		}
		assert.ElementsMatch(t, []string{"arm", "status", "knee_conc", "peak_conc", "points"}, keys)
		var arm map[string]any
		require.NoError(t, json.Unmarshal(a["arm"], &arm))
		assert.Len(t, arm, 13)
	}
}

// TestKneesMixedSimulation: one arm with simulated and real files fails
// with both files named, an input error (exit 2, as sweep report's).
func TestKneesMixedSimulation(t *testing.T) {
	dir := t.TempDir()
	c := synth.Corpus(3, 1)[0]
	_, err := synth.WriteDir(filepath.Join(dir, "sim"), c.Arm, true)
	require.NoError(t, err)
	_, err = synth.WriteDir(filepath.Join(dir, "real"), c.Arm, false)
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, []string{"knees", dir})
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut.String(), "simulated and real results in one arm")
	assert.Contains(t, errOut.String(), filepath.Join(dir, "sim"))
	assert.Contains(t, errOut.String(), filepath.Join(dir, "real"))
}

var updateKnees = flag.Bool("update", false, "rewrite the goldens under testdata/ this package owns (knee/*.golden, configs/one-pass/validate.golden)")

// TestKneesGolden prints the verdicts on all 24 conformance cases read as
// one directory (arms with the same identity merge across cases, as they
// would in one download folder) and compares with the goldens.
func TestKneesGolden(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "knee")
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, []string{"knees", "../../testdata/knee/cases", "--format", format})
			require.Equal(t, 0, code, errOut.String())
			golden := filepath.Join(dir, "knees-"+format+".golden")
			if *updateKnees {
				require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), out.String())
		})
	}
}

// TestReportUnplottableValue: `sweep report` and discover's closing report
// on a result whose ITL p50 is 1e307 s (finite, +Inf in ms) write the
// report with the value left out and named, instead of panicking inside
// gonum/plot.
func TestReportUnplottableValue(t *testing.T) {
	dir := t.TempDir()
	c := synth.Corpus(7, 1)[0]
	paths, err := synth.WriteDir(filepath.Join(dir, c.ID), c.Arm, true)
	require.NoError(t, err)
	patched := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		var obj map[string]any
		require.NoError(t, json.Unmarshal(data, &obj))
		if obj["conc"] != 8.0 || patched > 0 {
			continue
		}
		obj["request_metrics"].(map[string]any)["latency"].(map[string]any)["itl"].(map[string]any)["p50"] = 1e307
		data, err = json.Marshal(obj)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		patched++
	}
	require.Equal(t, 1, patched)

	var out, errOut bytes.Buffer
	code := mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, []string{"report", dir, "--out", filepath.Join(dir, "r1")})
	require.Equal(t, 0, code, errOut.String())
	md, err := os.ReadFile(filepath.Join(dir, "r1", "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "1 value left out (beyond ±1e+12)")

	out.Reset()
	require.NoError(t, report.WriteSweep(t.Context(), &out, dir))
	assert.FileExists(t, filepath.Join(dir, "report", "summary.md"))
}

// interruptedSweep writes a discovery of the key sweep's tp8 ep8 arm
// (c1..c128) interrupted while it ran c32: c1..c16 ran, c32 started and
// never ended, c64 and c128 never ran.
func interruptedSweep(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	arm := synth.KeySweep(11)[4].Arm
	plan := campaign.ArmPlan{Arm: 1, Identity: arm.Identity}
	recs := []campaign.Record{{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover"}}}
	for _, s := range arm.Samples {
		id := fmt.Sprintf("c%d", s.Conc)
		plan.Points = append(plan.Points, campaign.PointPlan{Point: id, Conc: s.Conc})
		switch {
		case s.Conc <= 16:
			paths, err := synth.WriteDir(filepath.Join(dir, id), &knee.Arm{Identity: arm.Identity, Samples: []knee.Sample{s}}, true)
			require.NoError(t, err)
			rel, err := filepath.Rel(dir, paths[0])
			require.NoError(t, err)
			recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: id, Conc: s.Conc},
				campaign.Record{Event: campaign.EventPointEnd, Arm: 1, Point: id, Conc: s.Conc, Status: campaign.StatusOK, Result: rel})
		case s.Conc == 32:
			recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: id, Conc: s.Conc})
		}
	}
	recs[0].Arms = []campaign.ArmPlan{plan}
	require.NoError(t, synth.WriteJournal(dir, recs...))
	return dir
}

// interruptedSweepIncomplete is what is said of interruptedSweep's
// points not finished.
const interruptedSweepIncomplete = "its journal says the sweep has not finished 3 of its 8 points: qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8 c32 (interrupted), c64 (not run), c128 (not run); rerun its command to resume it"

// TestKneesOfAnInterruptedSweep: sweep knees on a discovery interrupted
// while it ran c32 of c1..c128 says that it has not finished and which
// points, and does not advise extending its grid ("still gaining ...:
// extend the grid upward" was all it said).
func TestKneesOfAnInterruptedSweep(t *testing.T) {
	dir := interruptedSweep(t)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, []string{"knees", dir}), errOut.String())
	assert.Contains(t, out.String(), "still gaining 82% per doubling at c16 (gate 10%): the sweep has not finished c32, c64, c128 above it")
	assert.Contains(t, out.String(), "\nincomplete: "+interruptedSweepIncomplete)
	assert.NotContains(t, out.String(), "extend the grid upward")

	out.Reset()
	require.Equal(t, 0, mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, []string{"knees", dir, "--format", "json"}), errOut.String())
	assert.Contains(t, out.String(), `"unfinished_conc": [`)
}

// TestReportOfAnInterruptedSweep: sweep report and a discovery's closing
// report (report.WriteSweep) on the same discovery say so first.
func TestReportOfAnInterruptedSweep(t *testing.T) {
	dir := interruptedSweep(t)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, mainRun(t.Context(), &IOStreams{Out: &out, ErrOut: &errOut}, []string{"report", dir, "--out", filepath.Join(dir, "r1")}), errOut.String())
	md, err := os.ReadFile(filepath.Join(dir, "r1", "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "> **Incomplete: "+interruptedSweepIncomplete)
	assert.NotContains(t, string(md), "extend the grid upward")

	out.Reset()
	require.NoError(t, report.WriteSweep(t.Context(), &out, dir))
	assert.Contains(t, out.String(), "\nincomplete: "+interruptedSweepIncomplete)
}
