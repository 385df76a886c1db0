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
	write("a/x_conc8_r.json", `{"conc": 8, "valid": true, "simulated": true, "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 1234.56, "output_tput_tps": 50.01}}, "latency": {"ttft": {"p50": 0.5}, "intvty": {"p50": 120}}}}`)
	write("a/x_conc2_r.json", `{"conc": 2, "valid": false, "invalid_reasons": ["error rate 20%"], "request_metrics": {"throughput": {}, "latency": {}}}`)
	write("a/run.json", `{"name": "not a result"}`)
	// Python writes NaN: the file is still a row, the NaN figure a dash.
	write("c/y_conc4_r.json", `{"conc": 4, "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": 99.0, "output_tput_tps": NaN}}, "latency": {"ttft": {"p50": Infinity}}}}`)
	write("b/broken.json", `{`)
	fan := &FanoutJSON{Sweep: true, Primary: LabelSweep, Counts: map[string]int{"sweep-agentic": 2},
		Skipped: []Skip{{Bucket: "sweep-agentic", Runner: "cluster:mi355x-amds", Jobs: 3, Reason: "no runner"}}}
	var b strings.Builder
	require.NoError(t, WriteSummary(&b, fan, dir))
	out := b.String()
	assert.Contains(t, out, "Label `sweep-enabled`: 2 jobs.")
	assert.Contains(t, out, "- skipped 3 jobs of sweep-agentic on `cluster:mi355x-amds`: no runner")
	assert.Contains(t, out, "| `x_conc8_r` | 8 | 1234.6 | 50.0 | 0.500 | 120.0 | yes (simulated) |")
	assert.Contains(t, out, "| `x_conc2_r` | 2 | – | – | – | – | no: error rate 20% |")
	assert.Less(t, strings.Index(out, "x_conc2_r"), strings.Index(out, "x_conc8_r"), "rows by arm, then concurrency")
	assert.NotContains(t, out, "run.json")
	assert.Contains(t, out, "| `y_conc4_r` | 4 | 99.0 | – | – | – | (not stated) |")

	b.Reset()
	require.NoError(t, WriteSummary(&b, &FanoutJSON{}, dir))
	assert.Contains(t, b.String(), "No sweep label")
}
