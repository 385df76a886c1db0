package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"sweep/metrics/result"
	"sweep/simengine"
)

// A simulated engine on the wall clock that falls behind its schedule
// (simengine.Lag: the host too loaded for the time scale) stretches every
// latency the client measures. Past LagWarnShare of its busy time in late
// steps the point warns; past LagInvalidShare (or SWEEP_SIM_MAX_LAG,
// LoadSpec.MaxLag) it is invalid, its validate stage failing. Measured
// on an idle 2-core host (DefaultTimeScale's figures): a TP8 c64 point
// 1 % behind read its TTFT p50 24 % above the virtual clock's (0.54 s,
// 0.44 s), a TP4 c32 point 7 % behind 55 % above (1.25 s, 0.81 s), 64 %
// behind six times (4.8 s); the throughputs within 0.3 %, but 4 % low at
// 64 %. So a point past 5 % is invalid, where 10 % let the 7 % point's
// latencies through.
const (
	LagWarnShare    = 0.01
	LagInvalidShare = 0.05
)

// lagBases are the simulated engines whose schedule lag the point
// records: on the wall clock only (the virtual clock keeps no schedule
// to fall behind), every engine, each disaggregated worker with it.
func (r *runner) lagBases() []string {
	if sim := r.spec.Simulation; sim == nil || sim.Clock != "wall" {
		return nil
	}
	var out []string
	for _, u := range r.spec.engineHealthURLs() {
		out = append(out, baseURL(u))
	}
	return out
}

// readLags reads each engine's schedule lag (GET simengine.LagPath).
func readLags(ctx context.Context, bases []string) ([]simengine.Lag, error) {
	out := make([]simengine.Lag, len(bases))
	for i, base := range bases {
		l, err := readLag(ctx, base)
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}

func readLag(ctx context.Context, base string) (simengine.Lag, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var l simengine.Lag
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+simengine.LagPath, nil)
	if err != nil {
		return l, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return l, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return l, fmt.Errorf("GET %s%s: %s", base, simengine.LagPath, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&l); err != nil {
		return l, fmt.Errorf("GET %s%s: %w", base, simengine.LagPath, err)
	}
	return l, nil
}

// scheduleLag is the engines' lag over the load, from the readings
// before and after it: their late steps' share of their busy time and
// the worst step.
func scheduleLag(before, after []simengine.Lag) *result.ScheduleLag {
	var sum simengine.Lag
	for i := range after {
		d := after[i].Since(before[i])
		sum.Busy += d.Busy
		sum.Behind += d.Behind
		sum.Steps += d.Steps
		sum.Late += d.Late
		sum.Worst = max(sum.Worst, d.Worst)
	}
	return &result.ScheduleLag{Share: sum.Share(), WorstSeconds: sum.Worst, Steps: sum.Steps, LateSteps: sum.Late, ToleranceSeconds: simengine.LagTolerance}
}

// lagVerdict is the point's warning and invalid reason for its
// schedule lag at the time scale ("" each when on schedule).
func lagVerdict(l *result.ScheduleLag, scale float64) (warning, invalid string) {
	if l == nil || l.Share < LagWarnShare {
		return "", ""
	}
	msg := fmt.Sprintf("the simulated engine fell %.0f %% behind its schedule (%d of %d steps ended more than %g s late, the worst %.2f s): the host was too loaded for time scale %g; rerun with a lower --time-scale or on an idle host",
		100*l.Share, l.LateSteps, l.Steps, l.ToleranceSeconds, l.WorstSeconds, scale)
	if l.Share > l.InvalidShare {
		return msg, msg
	}
	return msg, ""
}
