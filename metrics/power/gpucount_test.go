package power

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOutcomeExplained: a REQUIRE_POWER failure said only
// "expected_gpu_count_mismatch"; which GPUs were expected and which the
// telemetry held were in power_validation.json alone.
func TestOutcomeExplained(t *testing.T) {
	const mismatch = "expected_gpu_count_mismatch"
	ids := func(s ...string) []string { return s }
	for _, tc := range []struct {
		name     string
		observed []string
		expected int
		filter   []string
		label    string
		reasons  []string
		want     []string
	}{
		{name: "a GPU absent", observed: ids("0", "1", "2", "4", "5", "6", "7"), expected: 8, reasons: ids(mismatch),
			want: ids(mismatch + " (expected 8 GPUs, observed 7: GPU 3 absent)")},
		{name: "the whole node for a TP4 point", observed: ids("0", "1", "2", "3", "4", "5", "6", "7"), expected: 4, reasons: ids(mismatch),
			want: ids(mismatch + " (expected 4 GPUs, observed 8: GPUs 4, 5, 6, 7 not expected)")},
		{name: "the filter's GPUs", observed: ids("4", "6", "7"), expected: 4, filter: ids("4", "5", "6", "7"), reasons: ids("sampling_gap_exceeded", mismatch),
			want: ids("sampling_gap_exceeded", mismatch+" (expected 4 GPUs, observed 3: GPU 5 absent)")},
		{name: "ids that are not indexes", observed: ids("GPU-a", "GPU-b"), expected: 4, reasons: ids(mismatch),
			want: ids(mismatch + " (expected 4 GPUs, observed 2)")},
		{name: "a node of a disaggregated point", observed: ids("0", "2", "3"), expected: 4, filter: ids("0", "1", "2", "3"), label: "decode0/", reasons: ids(mismatch),
			want: ids(mismatch + " (expected 4 GPUs, observed 3: GPU decode0/1 absent)")},
		{name: "counts right", observed: ids("0", "1"), expected: 2, reasons: ids("sampling_gap_exceeded"),
			want: ids("sampling_gap_exceeded")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &Integration{ObservedGPUs: tc.observed}
			out := Outcome{Reasons: tc.reasons, GPUs: newGPUCount(in, tc.expected, tc.filter, tc.label)}
			assert.Equal(t, tc.want, out.Explained())
			assert.Equal(t, tc.reasons, out.Reasons, "Reasons stay InferenceX's")
		})
	}
	assert.Equal(t, ids(mismatch), Outcome{Reasons: ids(mismatch)}.Explained(), "not counted")
}
