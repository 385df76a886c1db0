package gha

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLabels(t *testing.T) {
	cases := []struct {
		name   string
		labels []string
		want   Mode
		err    string
	}{
		{name: "none", labels: nil, want: Mode{}},
		{name: "unrelated only", labels: []string{"ci-patchwork", "skip_queue"}, want: Mode{Other: []string{"ci-patchwork", "skip_queue"}}},
		{name: "sweep-enabled trims", labels: []string{"sweep-enabled"}, want: Mode{Primary: LabelSweep, TrimConc: true}},
		{name: "full sweep has a canary", labels: []string{"full-sweep-enabled"}, want: Mode{Primary: LabelFullSweep, Canary: true}},
		{name: "non-canary", labels: []string{"non-canary-full-sweep-enabled"}, want: Mode{Primary: LabelNonCanaryFullSweep}},
		{name: "fail-fast", labels: []string{"full-sweep-fail-fast"}, want: Mode{Primary: LabelFullSweepFailFast, Canary: true, FailFast: true}},
		{name: "fail-fast no canary", labels: []string{"full-sweep-fail-fast-no-canary"}, want: Mode{Primary: LabelFullSweepFailFastNoCa, FailFast: true}},
		{name: "modifiers", labels: []string{" agentx-fast", "evals-only", "sweep-enabled", "all-evals"},
			want: Mode{Primary: LabelSweep, TrimConc: true, AgentxFast: true, EvalsOnly: true, AllEvals: true}},
		{name: "a label twice is one label", labels: []string{"sweep-enabled", "sweep-enabled"}, want: Mode{Primary: LabelSweep, TrimConc: true}},
		{name: "two primaries", labels: []string{"sweep-enabled", "full-sweep-fail-fast"}, err: "multiple conflicting sweep labels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLabels(tc.labels)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), "full-sweep-fail-fast, sweep-enabled")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want.Primary != "", got.Sweep())
		})
	}
}
