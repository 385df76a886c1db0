package simfit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sweep/metrics/aiperf"
	"sweep/simengine"
	"sweep/sweep/knee"
)

// retractCounters are the engines' counters of the requests they took off
// a full KV pool to recompute later, as aiperf's server metrics export
// names them (a counter without its _total; the name with it is read
// too): SGLang's sglang:num_retracted_requests_total (not the gauge
// num_retracted_reqs, the last batch's) and vLLM's
// vllm:num_preemptions_total.
var retractCounters = []string{"sglang:num_retracted_requests", "vllm:num_preemptions"}

// retractions is what a point's server metrics export (aiperf's
// server_metrics_export.json beside its result) records of the requests
// the engine retracted or preempted over the profiling window: the
// counter read (metric, "" when the export records none, or there is no
// export) and its total over every rank and endpoint (count).
type retractions struct {
	metric string
	count  float64
}

// readRetractions reads the retractions recorded beside resultFile. No
// export, or none of retractCounters in it, is the zero value: nothing
// recorded.
func readRetractions(resultFile string) (retractions, error) {
	path := filepath.Join(aiperf.ResolveArtifactDir(filepath.Dir(resultFile)), "server_metrics_export.json")
	if _, err := os.Stat(path); err != nil {
		return retractions{}, nil
	}
	exp, err := aiperf.ReadServerMetricsFile(path)
	if err != nil {
		return retractions{}, err
	}
	var r retractions
	for _, family := range retractCounters {
		for _, name := range []string{family, family + "_total"} {
			f, ok := exp.Metrics[name]
			if !ok {
				continue
			}
			for i := range f.Series {
				if v, ok := f.Series[i].Stat("total"); ok {
					r.metric = family + "_total"
					r.count += v
				}
			}
		}
	}
	return r, nil
}

// deviceJudged is a point of an arm with a host KV tier whose device
// pool's usage did not decide whether it is fitted: its index among the
// arm's points, its name (pointName), the device pool its result
// reports, over every rank, and the retractions recorded beside it.
type deviceJudged struct {
	i       int
	name    string
	pool    int
	retract retractions
}

// judged is the sample s of an arm with a host KV tier, the arm's i-th
// point, whose result reports a device pool of pool tokens over every
// rank, as pinned judges it, with the retractions recorded beside it; or
// why it is left out (its server metrics export does not read).
func judged(s knee.Sample, i, pool int) (deviceJudged, string) {
	r, err := readRetractions(s.File)
	if err != nil {
		return deviceJudged{}, "its server metrics export does not read: " + err.Error()
	}
	return deviceJudged{i, pointName(s), pool, r}, ""
}

// pinned says why the point j of an arm of ranks DP ranks is left out as
// past its device pool, and which evidence decided it ("" when it is
// fitted). The retractions its results record decide where they record
// them: the engine retracts (preempts) requests when the requests in
// flight no longer fit the device pool, and recomputes them, which the
// step model does not describe. Only where none is recorded (InferenceX's
// own results carry no export) does the estimate of the requests' own
// context decide (pastDevicePool): it counts every running request's
// whole context, while the engine keeps a prefix the requests share (an
// agentic subagent's parent's) once, so it can overcount: the B300
// DeepSeek-V4 HiCache TP4 DP-attention arm's c64 was estimated at 130 %
// of a rank's pool, and its engine retracted no request.
func pinned(j deviceJudged, p simengine.FitPoint, ranks int) string {
	switch {
	case j.retract.metric != "" && j.retract.count > 0:
		return fmt.Sprintf("the engine retracted %.0f requests over the window (%s in its server metrics export): it recomputes them, which the step model does not describe", j.retract.count, j.retract.metric)
	case j.retract.metric != "":
		return ""
	}
	why := pastDevicePool(p, perRank(j.pool, ranks), ranks)
	if why == "" {
		return ""
	}
	return fmt.Sprintf("estimated, no retractions recorded (no %s beside it): %s", strings.Join(counterNames(), " or "), why)
}

// counterNames is retractCounters as the engines export them.
func counterNames() []string {
	out := make([]string, len(retractCounters))
	for i, c := range retractCounters {
		out[i] = c + "_total"
	}
	return out
}

// leaveOutPastDevicePool is points without those of judge past a rank's
// share of their device pool over ranks DP ranks (pinned), which are
// named, with why, in arm.LeftOut.
func leaveOutPastDevicePool(arm *simengine.ArmCalibration, ranks int, points []simengine.FitPoint, judge []deviceJudged) []simengine.FitPoint {
	out := map[int]bool{}
	for _, j := range judge {
		if why := pinned(j, points[j.i], ranks); why != "" {
			arm.LeftOut = append(arm.LeftOut, j.name+": "+why)
			out[j.i] = true
		}
	}
	var kept []simengine.FitPoint
	for i, p := range points {
		if !out[i] {
			kept = append(kept, p)
		}
	}
	return kept
}
