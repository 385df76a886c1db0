package power

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLoadBenchmark covers the window file's reasons, which the adapter
// itself never produces (it writes the file it reads) but aggregate_power
// checks for any window file.
func TestLoadBenchmark(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		reasons    []string
		ok         bool
	}{
		{"valid", `{"benchmark_start_time_unix": 10, "benchmark_end_time_unix": 20.5, "duration": 10.5, "completed": 3, "total_input_tokens": 9, "total_output_tokens": 4}`, nil, true},
		{"not json", `{`, []string{"invalid_benchmark_result"}, false},
		{"string start", `{"benchmark_start_time_unix": "10", "benchmark_end_time_unix": 20, "duration": 10}`, []string{"invalid_benchmark_window"}, false},
		{"bool end", `{"benchmark_start_time_unix": 10, "benchmark_end_time_unix": true, "duration": 10}`, []string{"invalid_benchmark_window"}, false},
		{"end before start", `{"benchmark_start_time_unix": 20, "benchmark_end_time_unix": 10, "duration": 10}`, []string{"invalid_benchmark_window"}, false},
		{"zero duration", `{"benchmark_start_time_unix": 10, "benchmark_end_time_unix": 20, "duration": 0}`, []string{"invalid_benchmark_window"}, false},
		{"duration mismatch and counts", `{"benchmark_start_time_unix": 10, "benchmark_end_time_unix": 20, "duration": 10.6, "completed": 2.0, "total_input_tokens": 0, "total_output_tokens": false}`,
			[]string{"benchmark_duration_mismatch", "invalid_successful_query_count", "invalid_input_token_count", "invalid_output_token_count"}, true},
		{"within 0.5 s", `{"benchmark_start_time_unix": 10, "benchmark_end_time_unix": 20, "duration": 10.5, "completed": 1, "total_input_tokens": 1, "total_output_tokens": 1}`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.json")
			if err := os.WriteFile(path, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			b, reasons := LoadBenchmark(path)
			if (b != nil) != tc.ok || !slices.Equal(reasons, tc.reasons) {
				t.Errorf("got %v %v, want ok=%v %v", b, reasons, tc.ok, tc.reasons)
			}
		})
	}
}

// TestIntegrateGuards covers the integration's own argument checks.
func TestIntegrateGuards(t *testing.T) {
	two := 2
	csv := filepath.Join("testdata", "cases", "base-valid", "gpu_metrics.csv")
	if in := Integrate(csv, 5, 5, &two, MaxSampleGap, nil); !slices.Equal(in.Reasons, []string{"invalid_benchmark_window"}) {
		t.Errorf("empty window: %v", in.Reasons)
	}
	if in := Integrate(csv, 1, 5, &two, 0, nil); !slices.Equal(in.Reasons, []string{"invalid_max_sample_gap"}) {
		t.Errorf("zero gap: %v", in.Reasons)
	}
}
