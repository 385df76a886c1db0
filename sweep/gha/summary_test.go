package gha

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/usage"
)

func TestWriteSummary(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	write("a/x_conc8_r.json", `{"conc": 8, "valid": true, "simulated": true, "client": {"name": "built-in (aiperf fork artifacts)", "aiperf_version": "0.12.0"}, "power_metric_schema_version": 2, "power_valid": 1, "joules_per_output_token": 6.104847, "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 1234.56, "output_tput_tps": 50.01}}, "latency": {"ttft": {"p50": 0.5}, "intvty": {"p50": 120}}}}`)
	write("a/x_conc2_r.json", `{"conc": 2, "valid": false, "invalid_reasons": ["stage client failed: engine exited during the load (exit code 7)", "error rate 20%"], "simulated": false, "client": {"name": "aiperf 0.12.0", "program": "/opt/aiperf", "aiperf_version": "0.12.0"}, "power_metric_schema_version": 2, "power_valid": 0, "request_metrics": {"throughput": {}, "latency": {}}}`)
	write("a/run.json", `{"name": "not a result"}`)
	// Python writes NaN: the file is still a row, the NaN figure a dash.
	write("c/y_conc4_r.json", `{"conc": 4, "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 99.0, "output_tput_tps": NaN}}, "latency": {"ttft": {"p50": Infinity}}}}`)
	write("b/broken.json", `{`)
	fan := &FanoutJSON{Sweep: true, Primary: LabelSweep, Counts: map[string]int{"sweep-agentic": 2},
		Skipped: []Skip{{Bucket: "sweep-agentic", Runner: "cluster:mi355x-amds", Jobs: 3, Reason: "no runner"}}}
	var b strings.Builder
	_, err := WriteSummary(&b, fan, dir)
	require.NoError(t, err)
	out := b.String()
	assert.Contains(t, out, "Label sweep-enabled: 2 jobs run.")
	assert.Contains(t, out, "- skipped 3 jobs of sweep-agentic on cluster:mi355x-amds: no runner")
	// Each row says which client made it, on which engine, and whether it
	// counts with its first reason: the summary said neither the client
	// nor (for a real run) the engine, and a reviewer read the built-in
	// client's numbers as aiperf's.
	assert.Contains(t, out, `| x\_conc8\_r | 8 | built-in (aiperf fork artifacts), aiperf\_version 0.12.0 | simulated | 1234.6 | 50.0 | 0.500 | 120.0 | 1 | 6.105 | yes |`)
	assert.Contains(t, out, `| x\_conc2\_r | 2 | aiperf 0.12.0 | real | – | – | – | – | 0 | – | no: stage client failed: engine exited during the load (exit code 7) (and 1 more in its invalid\_reasons) |`)
	assert.Less(t, strings.Index(out, `x\_conc2\_r`), strings.Index(out, `x\_conc8\_r`), "rows by arm, then concurrency")
	assert.NotContains(t, out, "run.json")
	assert.Contains(t, out, `| y\_conc4\_r | 4 | not stated | real | 99.0 | – | – | – | – | – | not stated |`, "no power lane")
	assert.Contains(t, out, "\n- client built-in: sweep's own load generator")
	assert.Contains(t, out, "\n- engine simulated: sweep's simulated engine, not the hardware")

	b.Reset()
	_, err = WriteSummary(&b, &FanoutJSON{}, dir)
	require.NoError(t, err)
	assert.Contains(t, b.String(), "No sweep label")
}

// TestWriteSummaryEscapes: result fields and file names are escaped into
// their table cell; none starts a heading, a link, an image or HTML, and
// every row stays on its line.
func TestWriteSummaryEscapes(t *testing.T) {
	dir := t.TempDir()
	body := `{"conc": 4, "valid": false, "invalid_reasons": ["ttft\n# Approved by maintainers", "[click](https://evil.example/x)", "<img src=\"https://evil.example/p.png\">"], "request_metrics": {"throughput": {}, "latency": {}}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x|y`z_conc4.json"), []byte(body), 0o644))
	fan := &FanoutJSON{Sweep: true, Primary: LabelSweep, Counts: map[string]int{"sweep-agentic": 1},
		Skipped: []Skip{{Bucket: "sweep-agentic", Runner: "gpu`\n# x", Jobs: 1, Reason: "no runner <b>"}}}
	var b strings.Builder
	_, err := WriteSummary(&b, fan, dir)
	require.NoError(t, err)
	out := b.String()
	for _, line := range strings.Split(out, "\n") {
		assert.False(t, strings.HasPrefix(line, "# "), "a heading broke out: %q", line)
	}
	assert.NotRegexp(t, `(^|[^\\])<(img|b)`, out, "unescaped HTML")
	assert.NotContains(t, out, "[click](")
	assert.Contains(t, out, `| x\|y\`+"`"+`z\_conc4 | 4 | not stated | real | – | – | – | – | – | – | no: ttft \# Approved by maintainers (and 2 more in its invalid\_reasons) |`)
	assert.Contains(t, out, "- skipped 1 job of sweep-agentic on gpu\\` \\# x: no runner \\<b\\>")
}

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with the golden file path (under testdata/),
// rewritten with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}

// TestWriteSummaryChecksTheFanout: the summary is checked against the
// fan-out. Before, "Label sweep-enabled: 3 jobs run." stood above one row
// with the missing points unnamed, a result downloaded into two
// directories was two rows, a run with only an unreadable result said
// "No result files were collected.", and the text ended without a
// newline (it is appended to $GITHUB_STEP_SUMMARY). Every point of a run
// job (the canary and sweep-agentic here) with a result artifact is
// checked. Then the fixed-seq-len points had run jobs, which could only
// fail, and each was named missing, so a complete run of the agentic
// points exited 1; now their family is not run, listed once with its
// keys and why, and no point of it is expected.
func TestWriteSummaryChecksTheFanout(t *testing.T) {
	const result = `{"conc": %d, "valid": true, "simulated": true, "client": {"name": "built-in (aiperf fork artifacts)", "aiperf_version": "0.12.0"}, "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 1000, "output_tput_tps": 40}}, "latency": {"ttft": {"p50": 0.3}, "intvty": {"p50": 90}}}}`
	pt := func(conc int, kind string) Point {
		switch kind {
		case "eval":
			rf := fmt.Sprintf("m_tp8_conc%d_{runner}_recipe-ab", conc)
			return Point{Conc: conc, ResultFilename: rf, Artifacts: []string{"eval_m_" + rf, "server_logs_" + rf}}
		case "fixed":
			rf := fmt.Sprintf("f_8k1k_tp4_conc%d_{runner}_recipe-cd", conc)
			return Point{Conc: conc, ResultFilename: rf, Artifacts: []string{"bmk_" + rf, "server_logs_" + rf, "gpu_metrics_" + rf, "power_audit_" + rf}}
		}
		rf := fmt.Sprintf("m_tp8_conc%d_{runner}_recipe-ab", conc)
		return Point{Conc: conc, ResultFilename: rf, Artifacts: []string{"bmk_agentic_" + rf, "agentic_" + rf, "server_logs_" + rf}}
	}
	fan := &FanoutJSON{Sweep: true, Primary: LabelFullSweep,
		Canary: []Job{{ConfigKey: "k", Points: []Point{pt(1, "")}}},
		Counts: map[string]int{"canary": 1, "sweep-single-node-8k1k": 2, "sweep-agentic": 1, "sweep-agentic-evals": 1},
		Jobs: map[string][]Job{
			"sweep-single-node-8k1k": {{ConfigKey: "f", Points: []Point{pt(2, "fixed")}}, {ConfigKey: "f", Points: []Point{pt(4, "fixed")}}},
			"sweep-agentic":          {{ConfigKey: "k", Points: []Point{pt(4, ""), pt(8, "")}}},
			"sweep-agentic-evals":    {{ConfigKey: "k", Points: []Point{pt(16, "eval")}}},
		},
		NotRun: []NotRun{{Family: "sweep-single-node-8k1k", Jobs: 2, ConfigKeys: []string{"f"}, Reason: notRunReason("sweep-single-node-8k1k")}},
	}
	const (
		conc1 = "k conc 1 (canary): m_tp8_conc1_{runner}_recipe-ab.json"
		conc4 = "k conc 4 (sweep-agentic): m_tp8_conc4_{runner}_recipe-ab.json"
		conc8 = "k conc 8 (sweep-agentic): m_tp8_conc8_{runner}_recipe-ab.json"
	)
	tests := []struct {
		name    string
		files   map[string]string
		missing []string
		bad     int
	}{
		{"incomplete", map[string]string{
			"a/m_tp8_conc1_mi355x-amds_03_recipe-ab.json":      fmt.Sprintf(result, 1),
			"b/m_tp8_conc1_mi355x-amds_03_recipe-ab.json":      fmt.Sprintf(result, 1),  // the same bytes
			"c/m_tp8_conc4_mi355x-amds_01_recipe-ab.json":      `{"conc": 4, "request_`, // unreadable, not missing
			"d/other_conc8_x.json":                             fmt.Sprintf(result, 8),  // no point's
			"e/f_8k1k_tp4_conc4_mi355x-amds_02_recipe-cd.json": fmt.Sprintf(result, 4),  // a not-run point's
		}, []string{conc8}, 1},
		{"only unreadable", map[string]string{
			"c/m_tp8_conc4_mi355x-amds_01_recipe-ab.json": `{"conc": 4, "request_`,
		}, []string{conc1, conc8}, 1},
		{"complete", map[string]string{
			"a/m_tp8_conc1_r_recipe-ab.json": fmt.Sprintf(result, 1),
			"a/m_tp8_conc4_r_recipe-ab.json": `{"conc": 4, "valid": true, "request_metrics": {"throughput": {}, "latency": {}}}`, // not conc 1's bytes
			"a/m_tp8_conc8_r_recipe-ab.json": fmt.Sprintf(result, 8),
		}, nil, 0},
	}
	testdata, err := filepath.Abs("testdata")
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir()) // the summary names the files under "results/"
			dir := "results"
			for name, body := range tc.files {
				p := filepath.Join(dir, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
			}
			var b strings.Builder
			out, err := WriteSummary(&b, fan, dir)
			require.NoError(t, err)
			assert.Equal(t, tc.missing, out.Missing)
			assert.Equal(t, tc.bad, out.Unreadable)
			assert.Equal(t, len(tc.missing) > 0 || tc.bad > 0, out.Incomplete())
			golden(t, filepath.Join(testdata, "summary-"+strings.ReplaceAll(tc.name, " ", "-")+".golden"), b.String())
		})
	}

	// No results downloaded: every point is missing, with a fan-out to
	// name them; without one, the directory is a usage error.
	var b strings.Builder
	out, err := WriteSummary(&b, fan, filepath.Join(t.TempDir(), "results"))
	require.NoError(t, err)
	assert.Equal(t, []string{conc1, conc4, conc8}, out.Missing)
	assert.Contains(t, b.String(), "No result files were collected (")
	_, err = WriteSummary(&b, nil, filepath.Join(t.TempDir(), "results"))
	_, isUsage := errors.AsType[*usage.Error](err)
	assert.True(t, isUsage, "%v", err)
}
