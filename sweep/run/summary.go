package run

import (
	"encoding/json"
	"strings"

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
	// Valid and InvalidReasons are the result's verdict, as written.
	Valid          bool
	InvalidReasons []string
	// Client names the load client (empty in results without one).
	Client string
	// Submission is "valid <scenario> submission" or why not; empty when
	// the client stamped no scenario.
	Submission string
}

// Summarize reads the headline numbers from an aggregate result file.
func Summarize(path string) (Summary, error) {
	b, err := inputfile.Read(path, inputfile.Result)
	if err != nil {
		return Summary{}, err
	}
	var r struct {
		NumRequestsTotal      int      `json:"num_requests_total"`
		NumRequestsSuccessful int      `json:"num_requests_successful"`
		Valid                 bool     `json:"valid"`
		InvalidReasons        []string `json:"invalid_reasons"`
		Client                *struct {
			Name string `json:"name"`
		} `json:"client"`
		Submission *struct {
			Scenario       string   `json:"scenario"`
			Valid          bool     `json:"valid"`
			InvalidReasons []string `json:"invalid_reasons"`
		} `json:"submission"`
		RequestMetrics struct {
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
	s := Summary{
		Total: r.NumRequestsTotal, Successful: r.NumRequestsSuccessful,
		TotalPerGPU: r.RequestMetrics.Throughput.PerGPU.Total, OutputPerGPU: r.RequestMetrics.Throughput.PerGPU.Output,
		TTFTP50: lat["ttft"]["p50"], TTFTP90: lat["ttft"]["p90"], IntvtyP50: lat["intvty"]["p50"],
		Valid: r.Valid, InvalidReasons: r.InvalidReasons,
	}
	if r.Client != nil {
		s.Client = r.Client.Name
	}
	if sub := r.Submission; sub != nil {
		s.Submission = "valid " + sub.Scenario + " submission"
		if !sub.Valid {
			s.Submission = "not a valid " + sub.Scenario + " submission: " + strings.Join(sub.InvalidReasons, ", ")
		}
	}
	return s, nil
}
