package loadgen

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
)

// SummaryCSV is the tabular twin of profile_export_aiperf.json that aiperf
// 0.12.0 writes: the profiling phase's metrics by display name.
const SummaryCSV = "profile_export_aiperf.csv"

// summaryCSVStats are the statistics columns of the CSV's first table.
var summaryCSVStats = []string{"avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

// metricDisplayNames are aiperf 0.12.0's display names of its summary
// metrics, units included (as its profile_export_aiperf.csv prints them);
// a tag not listed is shown title-cased with its unit.
var metricDisplayNames = map[string]string{
	"active_decode_throughput":              "Active Decode Throughput (tokens/sec)",
	"active_decode_throughput_per_user":     "Active Decode Throughput Per User (tokens/sec/user)",
	"active_prefill_throughput":             "Active Prefill Throughput (tokens/sec)",
	"active_prefill_throughput_per_user":    "Active Prefill Throughput Per User (tokens/sec/user)",
	"active_total_throughput":               "Active Total Throughput (tokens/sec)",
	"effective_concurrency":                 "Effective Concurrency",
	"effective_decode_concurrency":          "Effective Decode Concurrency",
	"effective_decode_throughput":           "Effective Decode Throughput (tokens/sec)",
	"effective_decode_throughput_per_user":  "Effective Decode Throughput Per User (tokens/sec/user)",
	"effective_prefill_concurrency":         "Effective Prefill Concurrency",
	"effective_prefill_throughput":          "Effective Prefill Throughput (tokens/sec)",
	"effective_prefill_throughput_per_user": "Effective Prefill Throughput Per User (tokens/sec/user)",
	"effective_total_throughput":            "Effective Total Throughput (tokens/sec)",
	"http_req_blocked":                      "HTTP Blocked (ms)",
	"http_req_chunks_received":              "HTTP Chunks Received",
	"http_req_chunks_sent":                  "HTTP Chunks Sent",
	"http_req_connecting":                   "HTTP Connecting (ms)",
	"http_req_connection_overhead":          "HTTP Connection Overhead (ms)",
	"http_req_connection_reused":            "HTTP Connection Reused (ratio)",
	"http_req_data_received":                "HTTP Data Received (KB)",
	"http_req_data_sent":                    "HTTP Data Sent (KB)",
	"http_req_dns_lookup":                   "HTTP DNS Lookup (ms)",
	"http_req_duration":                     "HTTP Duration (excl. conn) (ms)",
	"http_req_receiving":                    "HTTP Receiving (ms)",
	"http_req_sending":                      "HTTP Sending (ms)",
	"http_req_total":                        "HTTP Total Time (ms)",
	"http_req_waiting":                      "HTTP Waiting (TTFB) (ms)",
	"tokens_in_flight":                      "Tokens In Flight (tokens)",
	"benchmark_duration":                    "Benchmark Duration (sec)",
	"credit_to_start_latency":               "Credit-to-Start Latency (ms)",
	"decode_duration":                       "Decode Duration (ms)",
	"e2e_output_token_throughput":           "E2E Output Token Throughput (tokens/sec/user)",
	"effective_latency":                     "Effective Latency (CO-aware) (ms)",
	"input_sequence_length":                 "Input Sequence Length (tokens)",
	"input_token_throughput":                "Input Token Throughput (tokens/sec)",
	"inter_chunk_latency":                   "Inter Chunk Latency (ms)",
	"inter_token_latency":                   "Inter Token Latency (ms)",
	"osl_mismatch_count":                    "OSL Mismatch Count",
	"osl_mismatch_diff_pct":                 "OSL Mismatch Diff % (%)",
	"output_sequence_length":                "Output Sequence Length (tokens)",
	"output_token_count":                    "Output Token Count (tokens)",
	"output_token_throughput":               "Output Token Throughput (tokens/sec)",
	"output_token_throughput_per_user":      "Output Token Throughput Per User (tokens/sec/user)",
	"overall_usage_prompt_cache_read_pct":   "Overall Usage Prompt Cache Read % (%)",
	"prefill_throughput_per_user":           "Prefill Throughput Per User (tokens/sec/user)",
	"request_count":                         "Request Count",
	"request_error_rate":                    "Request Error Rate (%)",
	"request_latency":                       "Request Latency (ms)",
	"request_throughput":                    "Request Throughput (requests/sec)",
	"theoretical_prefix_cache_hit":          "Theoretical Prefix Cache Hit (%)",
	"time_to_first_output_token":            "Time to First Output Token (ms)",
	"time_to_first_token":                   "Time to First Token (ms)",
	"time_to_second_token":                  "Time to Second Token (ms)",
	"total_isl":                             "Total Input Sequence Length (tokens)",
	"total_osl":                             "Total Output Sequence Length (tokens)",
	"total_output_tokens":                   "Total Output Tokens (tokens)",
	"total_token_throughput":                "Total Token Throughput (tokens/sec)",
	"total_usage_completion_tokens":         "Total Usage Completion Tokens (tokens)",
	"total_usage_prompt_cache_read_tokens":  "Total Usage Prompt Cache Read Tokens (tokens)",
	"total_usage_prompt_tokens":             "Total Usage Prompt Tokens (tokens)",
	"total_usage_total_tokens":              "Total Usage Total Tokens (tokens)",
	"usage_completion_tokens":               "Usage Completion Tokens (tokens)",
	"usage_prompt_cache_read_tokens":        "Usage Prompt Cache Read Tokens (tokens)",
	"usage_prompt_tokens":                   "Usage Prompt Tokens (tokens)",
	"usage_total_tokens":                    "Usage Total Tokens (tokens)",
}

// displayName is a metric's name in aiperf's tables.
func displayName(tag, unit string) string {
	if n, ok := metricDisplayNames[tag]; ok {
		return n
	}
	words := strings.Split(tag, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	n := strings.Join(words, " ")
	if unit != "" && unit != "requests" {
		n += " (" + unit + ")"
	}
	return n
}

// summaryCSV renders the profiling metric blocks of the summary as aiperf
// 0.12.0 does: a table of the distributions (Metric, then summaryCSVStats,
// 2 decimals, empty where a block lacks the statistic), a blank line, and
// a Metric,Value table of the single values, each sorted by metric tag;
// lines end in CRLF.
func summaryCSV(blocks object) ([]byte, error) {
	type row struct {
		tag, name string
		block     object
	}
	var dists, singles []row
	for _, f := range blocks {
		b, ok := f.Value.(object)
		if !ok || b.get("avg") == nil {
			continue
		}
		unit, _ := b.get("unit").(string)
		r := row{f.Key, displayName(f.Key, unit), b}
		if b.get("p50") != nil || b.get("max") != nil {
			dists = append(dists, r)
		} else {
			singles = append(singles, r)
		}
	}
	byTag := func(a, b row) int { return strings.Compare(a.tag, b.tag) }
	slices.SortStableFunc(dists, byTag)
	slices.SortStableFunc(singles, byTag)
	two := func(v any) string {
		if f, ok := statNumber(v); ok {
			return strconv.FormatFloat(f, 'f', 2, 64)
		}
		return ""
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true // Python's csv module
	_ = w.Write(append([]string{"Metric"}, summaryCSVStats...))
	for _, r := range dists {
		line := []string{r.name}
		for _, st := range summaryCSVStats {
			line = append(line, two(r.block.get(st)))
		}
		_ = w.Write(line)
	}
	_ = w.Write(nil)
	_ = w.Write([]string{"Metric", "Value"})
	for _, r := range singles {
		_ = w.Write([]string{r.name, two(r.block.get("avg"))})
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}
