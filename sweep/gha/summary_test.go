package gha

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteSummary(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	write("a/x_conc8_r.json", `{"conc": 8, "valid": true, "simulated": true, "power_metric_schema_version": 2, "power_valid": 1, "joules_per_output_token": 6.104847, "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 1234.56, "output_tput_tps": 50.01}}, "latency": {"ttft": {"p50": 0.5}, "intvty": {"p50": 120}}}}`)
	write("a/x_conc2_r.json", `{"conc": 2, "valid": false, "invalid_reasons": ["error rate 20%"], "power_metric_schema_version": 2, "power_valid": 0, "request_metrics": {"throughput": {}, "latency": {}}}`)
	write("a/run.json", `{"name": "not a result"}`)
	// Python writes NaN: the file is still a row, the NaN figure a dash.
	write("c/y_conc4_r.json", `{"conc": 4, "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 99.0, "output_tput_tps": NaN}}, "latency": {"ttft": {"p50": Infinity}}}}`)
	write("b/broken.json", `{`)
	fan := &FanoutJSON{Sweep: true, Primary: LabelSweep, Counts: map[string]int{"sweep-agentic": 2},
		Skipped: []Skip{{Bucket: "sweep-agentic", Runner: "cluster:mi355x-amds", Jobs: 3, Reason: "no runner"}}}
	var b strings.Builder
	require.NoError(t, WriteSummary(&b, fan, dir))
	out := b.String()
	assert.Contains(t, out, "Label sweep-enabled: 2 jobs run.")
	assert.Contains(t, out, "- skipped 3 jobs of sweep-agentic on cluster:mi355x-amds: no runner")
	assert.Contains(t, out, `| x\_conc8\_r | 8 | 1234.6 | 50.0 | 0.500 | 120.0 | 1 | 6.105 | yes (simulated) |`)
	assert.Contains(t, out, `| x\_conc2\_r | 2 | – | – | – | – | 0 | – | no: error rate 20% |`)
	assert.Less(t, strings.Index(out, `x\_conc2\_r`), strings.Index(out, `x\_conc8\_r`), "rows by arm, then concurrency")
	assert.NotContains(t, out, "run.json")
	assert.Contains(t, out, `| y\_conc4\_r | 4 | 99.0 | – | – | – | – | – | (not stated) |`, "no power lane")

	b.Reset()
	require.NoError(t, WriteSummary(&b, &FanoutJSON{}, dir))
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
	require.NoError(t, WriteSummary(&b, fan, dir))
	out := b.String()
	for _, line := range strings.Split(out, "\n") {
		assert.False(t, strings.HasPrefix(line, "# "), "a heading broke out: %q", line)
	}
	assert.NotRegexp(t, `(^|[^\\])<(img|b)`, out, "unescaped HTML")
	assert.NotContains(t, out, "[click](")
	assert.Contains(t, out, `| x\|y\`+"`"+`z\_conc4 | 4 | – | – | – | – | – | – | no: ttft \# Approved by maintainers; \[click\](https://evil.example/x); \<img src="https://evil.example/p.png"\> |`)
	assert.Contains(t, out, "- skipped 1 job of sweep-agentic on gpu\\` \\# x: no runner \\<b\\>")
}
