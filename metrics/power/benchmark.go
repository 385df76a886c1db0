package power

import (
	"math"
	"os"
	"strconv"
)

// Benchmark is the window file as aggregate_power reads it.
type Benchmark struct {
	Start, End        float64
	ReportedDuration  float64
	Completed         int64
	TotalInputTokens  int64
	TotalOutputTokens int64
}

// LoadBenchmark is _load_benchmark_data: the window file's numbers, or
// nil and the reason; counts that are not positive integers are reasons
// too (the count is then 0).
func LoadBenchmark(path string) (*Benchmark, []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, []string{"invalid_benchmark_result"}
	}
	doc, err := parseValue(data)
	if err != nil {
		return nil, []string{"invalid_benchmark_result"}
	}
	if doc.kind != kindObject {
		return nil, []string{"invalid_benchmark_window"}
	}
	nums := make([]float64, 3)
	for i, k := range []string{"benchmark_start_time_unix", "benchmark_end_time_unix", "duration"} {
		v := doc.get(k)
		if v == nil || v.kind != kindNumber {
			return nil, []string{"invalid_benchmark_window"}
		}
		f, err := jsonNumber(v.num)
		if err != nil {
			return nil, []string{"invalid_benchmark_window"}
		}
		nums[i] = f
	}
	start, end, duration := nums[0], nums[1], nums[2]
	if isNonFinite(start) || isNonFinite(end) || isNonFinite(duration) || end <= start || duration <= 0 {
		return nil, []string{"invalid_benchmark_window"}
	}
	var reasons []string
	tolerance := math.Max(0.5, (end-start)*0.01)
	if math.Abs(duration-(end-start)) > tolerance {
		reasons = appendReason(reasons, "benchmark_duration_mismatch")
	}
	count := func(key, reason string) int64 {
		v := doc.get(key)
		if v != nil && v.kind == kindNumber {
			if n, err := strconv.ParseInt(v.num, 10, 64); err == nil && n > 0 {
				return n
			}
		}
		reasons = appendReason(reasons, reason)
		return 0
	}
	b := &Benchmark{Start: start, End: end, ReportedDuration: duration}
	b.Completed = count("completed", "invalid_successful_query_count")
	b.TotalInputTokens = count("total_input_tokens", "invalid_input_token_count")
	b.TotalOutputTokens = count("total_output_tokens", "invalid_output_token_count")
	return b, reasons
}

// round is Python's round(x, n): the exact binary value rounded half
// to even at the n-th decimal.
func round(x float64, n int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	if err != nil {
		return x
	}
	return r
}
