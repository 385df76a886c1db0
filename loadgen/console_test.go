package loadgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/aiperf"
)

// TestConsoleMatchesAiperf: aiperf 0.12.0's own summary renders to the
// same LLM tables it wrote to profile_export_console.txt: titles, header,
// rows and cells, in order, with the same borders. aiperf's rich tables
// wrap long metric names to fit its console ("... Per User" /
// "(tokens/sec/user)"), and its server-metrics table follows: the rows
// are compared with the wrapped name parts joined, the server table left
// out.
func TestConsoleMatchesAiperf(t *testing.T) {
	ref := filepath.Join(realAiperf, "c4")
	sum := readJSON(t, filepath.Join(ref, aiperf.SummaryFile))
	var blocks object
	for _, k := range keys(sum) {
		b, ok := sum[k].(jsonObj)
		if !ok || k == "warmup_metrics" || b["unit"] == nil {
			continue
		}
		var block object
		for _, sk := range keys(b) {
			block = append(block, field{sk, b[sk]})
		}
		blocks = append(blocks, field{k, block})
	}
	want, err := os.ReadFile(filepath.Join(ref, ConsoleExport))
	require.NoError(t, err)
	llm, _, ok := strings.Cut(string(want), "\n\n NVIDIA AIPerf | Server Metrics")
	require.True(t, ok)
	cells := tableCells(llm + "\n")
	require.Len(t, cells, 4*5+10+5+9+16, "4 tables: title, 3 borders, header and the rows")
	assert.Equal(t, cells, tableCells(consoleText(blocks)))
	assert.True(t, strings.HasPrefix(consoleText(blocks), "\n\n"))
}

// tableCells reads the console tables as titles, borders and rows of
// trimmed cells, a wrapped row's continuation lines joined to it.
func tableCells(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		switch {
		case strings.HasPrefix(l, "│"):
			cells := strings.Split(strings.Trim(l, "│"), "│")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			if cells[1] == "" && len(out) > 0 { // a wrapped name's next line
				prev := strings.Split(out[len(out)-1], "|")
				prev[0] += " " + cells[0]
				out[len(out)-1] = strings.Join(prev, "|")
				continue
			}
			out = append(out, strings.Join(cells, "|"))
		case strings.HasPrefix(l, "┃"):
			out = append(out, strings.Join(strings.Fields(strings.ReplaceAll(l, "┃", " ")), "|"))
		case strings.HasPrefix(l, "┏"), strings.HasPrefix(l, "┡"), strings.HasPrefix(l, "└"):
			out = append(out, l[:3])
		default:
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}
