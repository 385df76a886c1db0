package gha

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
)

// TestBuildSkipsUntrustedModels: a point whose model comes from an
// organisation outside recipes.RemoteCodeOrgs (its recipe passes
// --trust-remote-code, which runs the repository's code) is skipped with
// the reason, in the families and as the canary; the others run.
func TestBuildSkipsUntrustedModels(t *testing.T) {
	row := func(model string, conc int) *matrix.Row {
		return &matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "k", Model: model, Runner: "mi325x-amds",
			Framework: "sglang", Precision: "fp8", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: conc}
	}
	ch := &matrix.Changelog{SingleNode: []matrix.Bucket{{Name: "agentic", Rows: []*matrix.Row{
		row("Qwen/Qwen3.5-397B-A17B-FP8", 4), row("some-org/x", 4), row("some-org/x", 8)}}}}
	mode, err := ParseLabels([]string{"non-canary-full-sweep-enabled"})
	require.NoError(t, err)
	f := Build(ch, mode, Availability{}, PerPoint)
	require.Len(t, f.Jobs("sweep-agentic"), 1)
	require.Len(t, f.Skips, 1)
	s := f.Skips[0]
	assert.Equal(t, 2, s.Jobs)
	assert.Equal(t, "sweep-agentic", s.Bucket)
	assert.Contains(t, s.Reason, `model some-org/x: its recipe runs the repository's Python code (--trust-remote-code)`)
	var notices strings.Builder
	require.NoError(t, f.WriteNotices(&notices))
	assert.Contains(t, notices.String(), "2 jobs of sweep-agentic skipped: model some-org/x")
}

// TestFanoutJSON: one line, as json.Marshal gives it; a family over
// GitHub's matrix limit is refused.
func TestFanoutJSON(t *testing.T) {
	var rows []*matrix.Row
	for c := range MaxMatrixJobs + 1 {
		rows = append(rows, &matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "k", Model: "Qwen/Qwen3.5-397B-A17B-FP8", Runner: "mi325x-amds",
			Framework: "sglang", Precision: "fp8", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: c + 1})
	}
	mode, err := ParseLabels([]string{"non-canary-full-sweep-enabled"})
	require.NoError(t, err)
	f := Build(&matrix.Changelog{SingleNode: []matrix.Bucket{{Name: "agentic", Rows: rows[:2]}}}, mode, Availability{}, PerPoint)
	b, err := f.JSON()
	require.NoError(t, err)
	want, err := json.Marshal(f)
	require.NoError(t, err)
	assert.Equal(t, string(want)+"\n", string(b))

	f = Build(&matrix.Changelog{SingleNode: []matrix.Bucket{{Name: "agentic", Rows: rows}}}, mode, Availability{}, PerPoint)
	_, err = f.JSON()
	assert.ErrorContains(t, err, "the fan-out is too large for GitHub Actions")
}
