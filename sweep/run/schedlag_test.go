package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/metrics/result"
)

// TestLagBases: the schedule lag is read from every engine of a point on
// the wall clock, a disaggregated point's first prefill worker (its
// Engine) with the others; on the virtual clock from none.
func TestLagBases(t *testing.T) {
	wall := &result.Simulation{Clock: "wall"}
	disagg := Spec{ServerSpec: ServerSpec{HealthURL: "http://127.0.0.1:9001/health", Workers: []Worker{{HealthURL: "http://127.0.0.1:9002/health"}}}}
	for _, tc := range []struct {
		name string
		spec Spec
		sim  *result.Simulation
		want []string
	}{
		{"one engine", Spec{ServerSpec: ServerSpec{HealthURL: "http://127.0.0.1:9001/health"}}, wall, []string{"http://127.0.0.1:9001"}},
		{"disaggregated", disagg, wall, []string{"http://127.0.0.1:9001", "http://127.0.0.1:9002"}},
		{"virtual clock", disagg, &result.Simulation{Clock: "virtual"}, nil},
		{"not simulated", disagg, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Simulation = tc.sim
			r := &runner{spec: tc.spec}
			assert.Equal(t, tc.want, r.lagBases())
		})
	}
}

// TestLagVerdict: a lag under 1 % of the busy time says nothing, one past
// it warns, and one past the point's limit (InvalidShare) is also its
// invalid reason.
func TestLagVerdict(t *testing.T) {
	for _, tc := range []struct {
		share, limit     float64
		warns, invalidOK bool
	}{
		{0.005, 0.10, false, false},
		{0.05, 0.10, true, false},
		{0.20, 0.10, true, true},
		{0.20, 1, true, false},
	} {
		w, invalid := lagVerdict(&result.ScheduleLag{Share: tc.share, InvalidShare: tc.limit, Steps: 10, LateSteps: 1, ToleranceSeconds: 0.1}, 20)
		assert.Equal(t, tc.warns, w != "", "share %g", tc.share)
		assert.Equal(t, tc.invalidOK, invalid != "", "share %g limit %g", tc.share, tc.limit)
	}
}
