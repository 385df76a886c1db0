package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/metrics/power"
)

// TestAllocatedHint: a point whose telemetry holds GPUs it does not use
// (a TP4 point on an 8-GPU node, expected_gpu_count_mismatch) is told
// that --power-gpus allocated integrates only its GPUs; the line named
// the mismatch and no fix. Where that does not help (a GPU absent, other
// reasons, the filter already on, a disaggregated point) nothing is
// added.
func TestAllocatedHint(t *testing.T) {
	extra := &power.GPUCount{Expected: 4, Observed: []string{"0", "1", "2", "3", "4", "5", "6", "7"}, Extra: []string{"4", "5", "6", "7"}}
	absent := &power.GPUCount{Expected: 8, Observed: []string{"0", "1", "2", "4", "5", "6", "7"}, Missing: []string{"3"}}
	mismatch := []string{power.ReasonGPUCountMismatch}
	for _, tc := range []struct {
		name string
		ps   *PowerSpec
		out  power.Outcome
		want string
	}{
		{"tp4 on 8 GPUs", &PowerSpec{ExpectedGPUs: 4}, power.Outcome{Reasons: mismatch, GPUs: extra},
			"; --power-gpus allocated (sweep run, discover, official) or SWEEP_POWER_GPUS=allocated integrates only the point's 4 GPUs"},
		{"with another reason", &PowerSpec{ExpectedGPUs: 4}, power.Outcome{Reasons: []string{"sampling_gap_exceeded", power.ReasonGPUCountMismatch}, GPUs: extra},
			"; --power-gpus allocated (sweep run, discover, official) or SWEEP_POWER_GPUS=allocated integrates only the point's 4 GPUs"},
		{"a GPU absent", &PowerSpec{ExpectedGPUs: 8}, power.Outcome{Reasons: mismatch, GPUs: absent}, ""},
		{"other reason", &PowerSpec{ExpectedGPUs: 4}, power.Outcome{Reasons: []string{"sampling_gap_exceeded"}, GPUs: extra}, ""},
		{"not counted", &PowerSpec{ExpectedGPUs: 4}, power.Outcome{Reasons: mismatch}, ""},
		{"already allocated", &PowerSpec{ExpectedGPUs: 4, AllocatedGPUs: true}, power.Outcome{Reasons: mismatch, GPUs: extra}, ""},
		{"disaggregated", &PowerSpec{Nodes: []PowerNode{{Name: "prefill0"}}}, power.Outcome{Reasons: mismatch, GPUs: extra}, ""},
		{"no lane", nil, power.Outcome{Reasons: mismatch, GPUs: extra}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, allocatedHint(tc.ps, tc.out))
		})
	}
}
