package loadgen

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"sweep/internal/atomicfile"
	"sweep/internal/pyjson"
)

// ConsoleExport is the text of the metric tables aiperf 0.12.0 prints at
// the end of a run, which it also writes to the artifact directory.
const ConsoleExport = "profile_export_console.txt"

// consoleTables are aiperf 0.12.0's LLM metric tables, in its order.
var consoleTables = []struct {
	title string
	tags  []string
}{
	{"Effective", []string{
		"effective_concurrency", "effective_decode_throughput", "effective_prefill_throughput",
		"effective_decode_concurrency", "effective_prefill_concurrency", "effective_total_throughput",
		"effective_decode_throughput_per_user", "effective_prefill_throughput_per_user", "tokens_in_flight",
		"effective_latency",
	}},
	{"Active", []string{
		"active_decode_throughput", "active_prefill_throughput", "active_decode_throughput_per_user",
		"active_prefill_throughput_per_user", "active_total_throughput",
	}},
	{"Usage", []string{
		"usage_prompt_tokens", "usage_prompt_cache_read_tokens", "usage_completion_tokens", "usage_total_tokens",
		"total_usage_prompt_tokens", "total_usage_prompt_cache_read_tokens", "overall_usage_prompt_cache_read_pct",
		"total_usage_completion_tokens", "total_usage_total_tokens",
	}},
	{"", []string{
		"time_to_first_token", "time_to_second_token", "time_to_first_output_token", "request_latency",
		"decode_duration", "inter_token_latency", "output_token_throughput_per_user", "e2e_output_token_throughput",
		"output_sequence_length", "input_sequence_length", "output_token_throughput", "input_token_throughput",
		"request_throughput", "request_error_rate", "request_count", "theoretical_prefix_cache_hit",
	}},
}

// consoleStats are the tables' statistic columns.
var consoleStats = []string{"avg", "min", "max", "p99", "p90", "p50", "std"}

// consoleText renders the profiling metric blocks as aiperf's tables:
// a centred title, box-drawn borders, right-aligned cells, values with
// thousands separators and 2 decimals, N/A where a metric has no such
// statistic; a table none of whose metrics was measured is left out.
// (aiperf's rich tables also wrap long metric names to fit its console;
// these do not.) aiperf's server-metrics tables are not written.
func consoleText(blocks object) string {
	var b strings.Builder
	b.WriteString("\n\n")
	for _, tbl := range consoleTables {
		rows := [][]string{append([]string{"Metric"}, consoleStats...)}
		for _, tag := range tbl.tags {
			blk, ok := blocks.get(tag).(object)
			if !ok {
				continue
			}
			unit, _ := blk.get("unit").(string)
			name := strings.TrimSuffix(displayName(tag, unit), " ("+unit+")")
			if unit != "" {
				name += " (" + unit + ")"
			}
			row := []string{name}
			for _, st := range consoleStats {
				v, ok := statNumber(blk.get(st))
				if !ok {
					row = append(row, "N/A")
					continue
				}
				row = append(row, thousands(v))
			}
			rows = append(rows, row)
		}
		if len(rows) == 1 {
			continue
		}
		title := "NVIDIA AIPerf | LLM Metrics"
		if tbl.title != "" {
			title += ": " + tbl.title
		}
		writeTable(&b, title, rows)
	}
	return b.String()
}

// writeTable draws rows (the first the header) with a centred title.
func writeTable(b *strings.Builder, title string, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := 1
	for _, w := range widths {
		total += w + 3
	}
	pad := max(0, total-utf8.RuneCountInString(title))
	fmt.Fprintf(b, "%s%s%s\n", strings.Repeat(" ", pad/2), title, strings.Repeat(" ", pad-pad/2))
	rule := func(left, mid, right, line string) {
		b.WriteString(left)
		for i, w := range widths {
			if i > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat(line, w+2))
		}
		b.WriteString(right + "\n")
	}
	row := func(r []string, bar string) {
		for i, c := range r {
			b.WriteString(bar + " " + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)) + c + " ")
		}
		b.WriteString(bar + "\n")
	}
	rule("┏", "┳", "┓", "━")
	row(rows[0], "┃")
	rule("┡", "╇", "┩", "━")
	for _, r := range rows[1:] {
		row(r, "│")
	}
	rule("└", "┴", "┘", "─")
}

// thousands formats v with 2 decimals and comma thousands separators.
func thousands(v float64) string {
	return pyjson.Thousands(strconv.FormatFloat(v, 'f', 2, 64))
}

// writeConsole writes profile_export_console.txt.
func (r *runner) writeConsole(blocks object) error {
	if err := atomicfile.Write(filepath.Join(r.o.ArtifactDir, ConsoleExport), []byte(consoleText(blocks)), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ConsoleExport, err)
	}
	return nil
}
