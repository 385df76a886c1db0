package run

import (
	"sweep/internal/pyjson"
	"sweep/metrics/result"
)

// Summary is the headline of an aggregate result, for a person reading a
// terminal: request counts, per-GPU throughput and latency percentiles
// (0 when the result does not hold the figure).
type Summary struct {
	Total, Successful int
	TotalPerGPU       float64 // tokens/s/GPU
	OutputPerGPU      float64 // output tokens/s/GPU
	TTFTP50, TTFTP90  float64 // seconds
	IntvtyP50         float64 // tokens/s per user
}

// Summarize reads the headline numbers from an aggregate result file
// (result.ReadFile).
func Summarize(path string) (Summary, error) {
	f, err := result.ReadFile(path)
	if err != nil {
		return Summary{}, err
	}
	rm := &f.RequestMetrics
	s := Summary{
		Total: f.NumRequestsTotal, Successful: f.NumRequestsSuccessful,
		TTFTP50: zeroIfNil(rm.Latency.TTFT.P50), TTFTP90: zeroIfNil(rm.Latency.TTFT.P90),
		IntvtyP50: zeroIfNil(rm.Latency.Intvty.P50),
	}
	if pg := rm.Throughput.PerGPU; pg != nil {
		s.TotalPerGPU, s.OutputPerGPU = zeroIfNil(pg.TotalTputTPS), zeroIfNil(pg.OutputTputTPS)
	}
	return s, nil
}

func zeroIfNil(v *pyjson.Rounded) float64 {
	if v == nil {
		return 0
	}
	return float64(*v)
}
