package gha

import (
	"encoding/json"
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

// Config keys of the shipped masters: a single-node fixed-seq-len key
// (8k1k points and their evals) and a single-node agentic one.
const (
	fixedKey   = "dsr1-fp4-mi355x-sglang"
	agenticKey = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
)

// changelogOf processes a changelog entry of keys appended to the
// repository's perf-changelog.yaml, with the built-in configs and the
// options mode asks for, as `sweep ci matrix` does.
func changelogOf(t *testing.T, mode Mode, keys ...string) *matrix.Changelog {
	t.Helper()
	base, err := os.ReadFile(filepath.Join("..", "..", "perf-changelog.yaml"))
	require.NoError(t, err)
	entry := "\n- config-keys:\n"
	for _, k := range keys {
		entry += "    - " + k + "\n"
	}
	head := append(slices.Clone(base), entry+"  description:\n    - \"test\"\n  pr-link: XXX\n"...)
	m, err := configs.DefaultMasters()
	require.NoError(t, err)
	r, err := configs.DefaultRunners()
	require.NoError(t, err)
	g := &matrix.Generator{Masters: m, Runners: r}
	ch, err := g.ProcessChangelog(matrix.ChangelogOptions{
		Base: configs.Source{Name: "base", Data: base}, Head: configs.Source{Name: "head", Data: head},
		TrimConc: mode.TrimConc, AllEvals: mode.AllEvals, EvalsOnly: mode.EvalsOnly,
	})
	require.NoError(t, err)
	return ch
}

// TestBuildRunsAgenticPointsOnly: `sweep ci run-job` runs `sweep run`,
// which measures single-node agentic points only. Before, the
// fixed-seq-len families (sweep-single-node-8k1k, sweep-evals) had
// sweep.yml jobs that could only fail with exit 2 on a GPU runner, and
// the canary was the lowest-concurrency fixed-seq-len point, so on a pull
// request touching a fixed-seq-len key the canary failed and stopped the
// other single-node jobs. Now those families keep InferenceX's layout
// (nothing taken out for a canary) but are not run, each with its config
// keys, the reason and a ::warning::; the canary is the
// lowest-concurrency agentic point where the label asks for one.
func TestBuildRunsAgenticPointsOnly(t *testing.T) {
	const fixedReason = "fixed-seq-len points do not run in the PR sweep: `sweep run` measures agentic points only; run them with InferenceX's own workflow"
	const evalReason = "fixed-seq-len eval points do not run in the PR sweep: `sweep run --eval` runs agentic evals only; run them with InferenceX's own workflow"
	fixedNotRun := []string{"sweep-single-node-8k1k", "sweep-evals"}
	tests := []struct {
		name   string
		labels []string
		keys   []string
		canary bool     // a canary is taken (from sweep-agentic)
		notRun []string // the families not run, in order
	}{
		{"fixed-seq-len key, full-sweep-enabled", []string{LabelFullSweep}, []string{fixedKey}, false, fixedNotRun},
		{"fixed-seq-len key, fail-fast, all-evals", []string{LabelFullSweepFailFast, LabelAllEvals}, []string{fixedKey}, false, fixedNotRun},
		{"fixed-seq-len key, sweep-enabled", []string{LabelSweep}, []string{fixedKey}, false, fixedNotRun},
		{"agentic key, full-sweep-enabled", []string{LabelFullSweep}, []string{agenticKey}, true, nil},
		{"agentic key, non-canary", []string{LabelNonCanaryFullSweep}, []string{agenticKey}, false, nil},
		{"both keys, full-sweep-fail-fast", []string{LabelFullSweepFailFast}, []string{fixedKey, agenticKey}, true, fixedNotRun},
		{"both keys, fail-fast no canary", []string{LabelFullSweepFailFastNoCa}, []string{fixedKey, agenticKey}, false, fixedNotRun},
		{"both keys, non-canary", []string{LabelNonCanaryFullSweep}, []string{fixedKey, agenticKey}, false, fixedNotRun},
		{"both keys, sweep-enabled", []string{LabelSweep}, []string{agenticKey, fixedKey}, false, fixedNotRun},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mode, err := ParseLabels(tc.labels)
			require.NoError(t, err)
			ch := changelogOf(t, mode, tc.keys...)
			f := Build(ch, mode, Availability{}, PerPoint)

			// The not-run families: InferenceX's rows, every one, with
			// their keys, the reason and a warning each.
			var notices strings.Builder
			require.NoError(t, f.WriteNotices(&notices))
			var notRun []string
			for _, n := range f.NotRun {
				notRun = append(notRun, n.Family)
				want := len(ch.SingleNodeRows("8k1k"))
				reason := fixedReason
				if n.Family == "sweep-evals" {
					want, reason = len(ch.Evals), evalReason
				}
				assert.Equal(t, want, n.Jobs, "%s keeps InferenceX's rows", n.Family)
				assert.Len(t, f.Jobs(n.Family), n.Jobs, n.Family)
				assert.Equal(t, []string{fixedKey}, n.ConfigKeys, n.Family)
				assert.Equal(t, reason, n.Reason, n.Family)
				assert.Contains(t, notices.String(), fmt.Sprintf("::warning title=sweep: %s not run::%d jobs of %s not run (%s): %s\n", n.Family, n.Jobs, n.Family, fixedKey, reason))
			}
			assert.Equal(t, tc.notRun, notRun)

			// What runs: the canary and the agentic families, every
			// point of them agentic.
			agentic := ch.SingleNodeRows("agentic")
			runs := len(agentic) + len(ch.AgenticEvals)
			assert.Equal(t, runs, f.Runs())
			if !tc.canary {
				assert.Nil(t, f.Canary)
				assert.Len(t, f.Jobs("sweep-agentic"), len(agentic))
				return
			}
			require.NotNil(t, f.Canary)
			assert.Equal(t, agenticKey, f.Canary.ConfigKey)
			assert.Len(t, f.Jobs("sweep-agentic"), len(agentic)-1, "the canary is taken out of sweep-agentic")
			lowest := slices.MinFunc(agentic, func(a, b *matrix.Row) int { return a.Conc - b.Conc }).Conc
			assert.Equal(t, lowest, f.Canary.Points[0].Conc)
			assert.Contains(t, f.Canary.Points[0].Artifacts, agenticResultArtifact+f.Canary.Points[0].ResultFilename)
		})
	}
}

// TestBuildNotRunFamilies: every family sweep.yml has no job for goes to
// NotRun with why (multi-node before fixed-seq-len: `ci run-job` runs one
// node), and only those; 1k1k and other sequence lengths as 8k1k.
func TestBuildNotRunFamilies(t *testing.T) {
	row := func(kind matrix.Kind, isl, osl, conc int) *matrix.Row {
		r := &matrix.Row{Kind: kind, ConfigKey: fmt.Sprintf("k%d-%d", kind, isl), Model: "Qwen/Qwen3.5-397B-A17B-FP8", Runner: "mi355x",
			Framework: "sglang", Precision: "fp8", Parallelism: configs.Parallelism{TP: 8, EP: 1}, ISL: isl, OSL: osl, Conc: conc}
		if kind.MultiNode() {
			r.Concs = []int{conc}
		}
		return r
	}
	ch := &matrix.Changelog{Metadata: matrix.ChangelogMetadata{}}
	for _, kind := range []matrix.Kind{matrix.FixedSingleNode, matrix.FixedMultiNode} {
		bs := &ch.SingleNode
		if kind.MultiNode() {
			bs = &ch.MultiNode
		}
		for _, sl := range [][2]int{{1024, 1024}, {8192, 1024}, {2048, 128}} {
			*bs = append(*bs, matrix.Bucket{Name: matrix.SeqLenName(sl[0], sl[1]), Rows: matrix.Matrix{row(kind, sl[0], sl[1], 4)}})
		}
	}
	ch.SingleNode = append(ch.SingleNode, matrix.Bucket{Name: "agentic", Rows: matrix.Matrix{row(matrix.AgenticSingleNode, 0, 0, 4)}})
	ch.MultiNode = append(ch.MultiNode, matrix.Bucket{Name: "agentic", Rows: matrix.Matrix{row(matrix.AgenticMultiNode, 0, 0, 4)}})
	ch.Evals = matrix.Matrix{row(matrix.FixedSingleNode, 8192, 1024, 8)}
	ch.AgenticEvals = matrix.Matrix{row(matrix.AgenticSingleNode, 0, 0, 8)}
	ch.MultinodeEvals = matrix.Matrix{row(matrix.FixedMultiNode, 8192, 1024, 8)}
	ch.MultinodeAgenticEvals = matrix.Matrix{row(matrix.AgenticMultiNode, 0, 0, 8)}
	mode, err := ParseLabels([]string{LabelNonCanaryFullSweep})
	require.NoError(t, err)
	f := Build(ch, mode, Availability{}, PerPoint)
	reasons := map[string]string{}
	for _, n := range f.NotRun {
		assert.Equal(t, 1, n.Jobs, n.Family)
		reasons[n.Family] = n.Reason
	}
	want := map[string]string{
		"sweep-single-node-1k1k":         "fixed-seq-len points do not run",
		"sweep-single-node-8k1k":         "fixed-seq-len points do not run",
		"sweep-single-node-other":        "fixed-seq-len points do not run",
		"sweep-evals":                    "fixed-seq-len eval points do not run",
		"sweep-multi-node-1k1k":          "multi-node points do not run",
		"sweep-multi-node-8k1k":          "multi-node points do not run",
		"sweep-multi-node-other":         "multi-node points do not run",
		"sweep-multi-node-agentic":       "multi-node points do not run",
		"sweep-multi-node-evals":         "multi-node points do not run",
		"sweep-multi-node-agentic-evals": "multi-node points do not run",
	}
	require.Len(t, reasons, len(want))
	for fam, r := range want {
		assert.True(t, strings.HasPrefix(reasons[fam], r), "%s: %q, want it to start %q", fam, reasons[fam], r)
	}
	assert.Equal(t, 2, f.Runs(), "sweep-agentic and sweep-agentic-evals")
	assert.Equal(t, len(families), f.Total())
}

// TestBuildCanaryIsRunnable: the canary is the lowest-concurrency agentic
// point whose job can run; a lower one whose model the PR sweep does not
// run stays in sweep-agentic, skipped there with the reason, instead of
// taking the canary (and with it the fail-fast check) away.
func TestBuildCanaryIsRunnable(t *testing.T) {
	row := func(model string, conc int) *matrix.Row {
		return &matrix.Row{Kind: matrix.AgenticSingleNode, ConfigKey: "k", Model: model, Runner: "mi325x-amds",
			Framework: "sglang", Precision: "fp8", Parallelism: configs.Parallelism{TP: 8, EP: 1}, Conc: conc}
	}
	ch := &matrix.Changelog{SingleNode: []matrix.Bucket{{Name: "agentic", Rows: []*matrix.Row{
		row("Qwen/Qwen3.5-397B-A17B-FP8", 8), row("some-org/x", 1), row("Qwen/Qwen3.5-397B-A17B-FP8", 2), row("Qwen/Qwen3.5-397B-A17B-FP8", 4)}}}}
	mode, err := ParseLabels([]string{LabelFullSweepFailFast})
	require.NoError(t, err)
	f := Build(ch, mode, Availability{}, PerPoint)
	require.NotNil(t, f.Canary)
	assert.Equal(t, 2, f.Canary.Points[0].Conc)
	var concs []int
	for _, j := range f.Jobs("sweep-agentic") {
		concs = append(concs, j.Points[0].Conc)
	}
	assert.Equal(t, []int{8, 4}, concs)
	require.Len(t, f.Skips, 1)
	assert.Equal(t, Skip{Bucket: "sweep-agentic", Runner: "mi325x-amds", Jobs: 1, Reason: f.Skips[0].Reason}, f.Skips[0])
	assert.Contains(t, f.Skips[0].Reason, "model some-org/x")
}
