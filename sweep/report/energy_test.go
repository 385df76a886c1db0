package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/markdown"
	"sweep/metrics/power"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// TestEnergy: results with valid power of the versioned schema give each
// point its energy per output token and tokens per joule, in the knee
// table's energy section, the report's energy table and chart; a result
// with power_valid 0 or without power_metric_schema_version gives none.
func TestEnergy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	c := synth.KeySweep(11)[0]
	_, err := synth.WriteDir(dir, c.Arm, true)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) == 0 {
		files, err = filepath.Glob(filepath.Join(dir, "*.json"))
	}
	require.NoError(t, err)
	require.NotEmpty(t, files)
	want := map[int]float64{}
	for i, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		conc := int(m["conc"].(float64))
		j := 1000.0 / float64(conc+10)
		switch {
		case i == 0: // invalid telemetry: no energy
			m["power_metric_schema_version"], m["power_valid"], m["joules_per_output_token"] = 2, 0, j
		case i == 1: // unversioned: fail closed
			m["power_valid"], m["joules_per_output_token"] = 1, j
		default:
			m["power_metric_schema_version"], m["power_valid"], m["joules_per_output_token"] = 2, 1, j
			want[conc] = j
		}
		out, err := json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(f, out, 0o644))
	}
	arms, err := knee.Read(t.Context(), dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	r := knee.Analyze(arms[0], knee.Options{})
	got := 0
	for _, p := range r.Points {
		if p.JoulesPerOutputToken == nil {
			continue
		}
		got++
		if w, ok := want[p.Conc]; assert.True(t, ok, "c%d has energy from an invalid or unversioned result", p.Conc) {
			assert.InDelta(t, w, *p.JoulesPerOutputToken, 1e-9*w)
			assert.InDelta(t, 1/w, *p.TokensPerJoule, 1e-9/w)
		}
	}
	assert.Positive(t, got)

	var table bytes.Buffer
	require.NoError(t, knee.WriteTable(&table, []*knee.Result{r}))
	assert.Contains(t, table.String(), "energy per output token (GPU power, valid points):")
	assert.Contains(t, table.String(), " J/tok ")

	rep, err := Build([]*knee.Result{r}, knee.MetricTotal)
	require.NoError(t, err)
	var names []string
	for _, c := range rep.Charts {
		names = append(names, c.Name)
	}
	assert.Contains(t, names, "g1-energy")
	md := rep.Markdown(ChartsDir)
	assert.Contains(t, md, "## Energy (GPU power, valid points)")
	assert.Equal(t, got, strings.Count(md[strings.Index(md, "## Energy"):strings.Index(md, "## Charts")], "\n| ")-2, "header and separator rows, then one row per point with energy")
	assert.Contains(t, rep.HTML(), `<table id="energy">`)
}

// TestEnergyNamesPointsLeftOut: the packed TP2/TP4 arms of a simulated
// discovery had power_valid false (expected_gpu_count_mismatch: the
// monitor records the node's 8 GPUs) and the energy section left them
// out without a word (h-au6 O1). Each measured point whose power lane ran
// and whose measurement is invalid is named under the energy table with
// its reasons, its GPU counts and, for a point sharing its node, the fix;
// a point whose lane did not run or whose measurement is valid is not.
func TestEnergyNamesPointsLeftOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	c := synth.KeySweep(11)[0]
	_, err := synth.WriteDir(dir, c.Arm, true)
	require.NoError(t, err)
	arms, err := knee.Read(t.Context(), dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	var files []string // the measured points' results (the power lane is read when the report is built)
	for _, s := range arms[0].Samples {
		if s.Excluded == "" && !s.Superseded {
			files = append(files, s.File)
		}
	}
	require.GreaterOrEqual(t, len(files), 4)
	verdict := func(f string, valid bool, reasons ...string) int {
		t.Helper()
		require.NoError(t, synth.WritePowerLane(filepath.Dir(f), valid, 4, []string{"0", "1", "2", "3", "4", "5", "6", "7"}, reasons...))
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		return int(m["conc"].(float64))
	}
	shared := verdict(files[0], false, power.ReasonGPUCountMismatch)
	missing := verdict(files[1], false, "telemetry_file_missing")
	valid := verdict(files[2], true)
	r := knee.Analyze(arms[0], knee.Options{})
	rep, err := Build([]*knee.Result{r}, knee.MetricTotal)
	require.NoError(t, err)
	label := r.Arm.Identity.Label()
	md := rep.Markdown(ChartsDir)
	require.Contains(t, md, "## Energy (GPU power, valid points)", "the section names the points it leaves out even when no point has energy")
	energy := md[strings.Index(md, "## Energy"):strings.Index(md, "## Charts")]
	assert.Contains(t, energy, "- "+markdown.Cell(label+" "+r.PointName(shared)+": expected_gpu_count_mismatch (expected 4 GPUs, observed 8: GPUs 4, 5, 6, 7 not expected); --power-gpus allocated (sweep run, discover, official) or SWEEP_POWER_GPUS=allocated integrates only the point's 4 GPUs")+"\n")
	assert.Contains(t, energy, "- "+markdown.Cell(label+" "+r.PointName(missing)+": telemetry_file_missing")+"\n")
	assert.Equal(t, 2, strings.Count(energy, "\n- "), "a point whose measurement is valid, or whose lane did not run, is not listed (valid c%d):\n%s", valid, energy)
	assert.Contains(t, rep.HTML(), `<ul id="energy-left-out">`)
}
