package run

import (
	"fmt"
	"strings"

	"sweep/internal/pyjson"
	"sweep/metrics/result"
)

// Summary is the headline of an aggregate result, for a person reading a
// terminal: request counts, per-GPU throughput and latency percentiles.
type Summary struct {
	// Requests counts the client's records: ok and measured, warm-up,
	// failed (its String says so).
	Requests         result.RequestAccounting
	TotalPerGPU      float64 // tokens/s/GPU
	OutputPerGPU     float64 // output tokens/s/GPU
	TTFTP50, TTFTP90 float64 // seconds
	IntvtyP50        float64 // tokens/s per user
	// Valid and InvalidReasons are the result's verdict, as written.
	Valid          bool
	InvalidReasons []string
	// Client names the load client (empty in results without one).
	Client string
	// Simulated says how a point run against sweep's simulated engine ran
	// (engineKind and the seed: "simulated on mi325x, virtual clock, seed
	// 0"); empty for a measured one.
	Simulated string
	// Submission is "valid <scenario> submission" or why not (and, for an
	// invalid point the client stamped valid, that the stamp is the
	// client's rules only; for a simulated point, that it is no
	// submission); empty when the client stamped no scenario.
	Submission string
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
		Requests: f.RequestAccounting,
		TTFTP50:  zeroIfNil(rm.Latency.TTFT.P50), TTFTP90: zeroIfNil(rm.Latency.TTFT.P90),
		IntvtyP50: zeroIfNil(rm.Latency.Intvty.P50),
		Valid:     f.Valid, InvalidReasons: f.InvalidReasons,
	}
	if pg := rm.Throughput.PerGPU; pg != nil {
		s.TotalPerGPU, s.OutputPerGPU = zeroIfNil(pg.TotalTputTPS), zeroIfNil(pg.OutputTputTPS)
	}
	if f.Client != nil {
		s.Client = f.Client.Name
	}
	if f.Simulated {
		s.Simulated = "simulated"
		if sim := f.Simulation; sim != nil {
			s.Simulated = fmt.Sprintf("%s, seed %d", engineKind(sim), sim.Seed)
		}
	}
	if sub := f.Submission; sub != nil {
		s.Submission = "valid " + sub.Scenario + " submission"
		switch {
		case sub.Valid && !f.Valid:
			// aiperf's stamp judges its own rules (the run's length and
			// settings), not the engine's failures or the AL check.
			s.Submission = "the client stamped it a valid " + sub.Scenario + " submission, but the point is invalid (above)"
		case !sub.Valid:
			s.Submission = "not a valid " + sub.Scenario + " submission: " + strings.Join(sub.InvalidReasons, ", ")
		case f.Simulated:
			// The stamp judges the run's length and settings; the numbers
			// are the simulated engine's, which no submission may hold.
			s.Submission = "the client's " + sub.Scenario + " rules pass, but a simulated point is no submission"
		}
	}
	return s, nil
}

func zeroIfNil(v *pyjson.Rounded) float64 {
	if v == nil {
		return 0
	}
	return float64(*v)
}
