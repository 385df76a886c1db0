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
