package run

import (
	"encoding/json"

	"sweep/internal/inputfile"
)

// Summary is the headline of an aggregate result, for a person reading a
// terminal: request counts, per-GPU throughput and latency percentiles.
type Summary struct {
	Total, Successful int
	TotalPerGPU       float64 // tokens/s/GPU
	OutputPerGPU      float64 // output tokens/s/GPU
	TTFTP50, TTFTP90  float64 // seconds
	IntvtyP50         float64 // tokens/s per user
}

// Summarize reads the headline numbers from an aggregate result file.
func Summarize(path string) (Summary, error) {
	b, err := inputfile.Read(path, inputfile.Result)
	if err != nil {
		return Summary{}, err
	}
	var r struct {
		NumRequestsTotal      int `json:"num_requests_total"`
		NumRequestsSuccessful int `json:"num_requests_successful"`
		RequestMetrics        struct {
			Latency    map[string]map[string]float64 `json:"latency"`
			Throughput struct {
				PerGPU struct {
					Total  float64 `json:"total_tput_tps"`
					Output float64 `json:"output_tput_tps"`
				} `json:"per_gpu"`
			} `json:"throughput"`
		} `json:"request_metrics"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return Summary{}, err
	}
	lat := r.RequestMetrics.Latency
	return Summary{
		Total: r.NumRequestsTotal, Successful: r.NumRequestsSuccessful,
		TotalPerGPU: r.RequestMetrics.Throughput.PerGPU.Total, OutputPerGPU: r.RequestMetrics.Throughput.PerGPU.Output,
		TTFTP50: lat["ttft"]["p50"], TTFTP90: lat["ttft"]["p90"], IntvtyP50: lat["intvty"]["p50"],
	}, nil
}
