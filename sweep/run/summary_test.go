package run_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/run"
	"sweep/sweep/testkit/synth"
)

// TestSummarizeSubmission: the client's scenario stamp is shown as its
// own verdict, and an invalid point the client stamped valid (an engine
// that crashed, an acceptance length out of tolerance) is never
// announced as a valid submission, nor is a simulated point.
func TestSummarizeSubmission(t *testing.T) {
	paths, err := synth.WriteDir(t.TempDir(), synth.KeySweep(11)[0].Arm, true)
	require.NoError(t, err)
	path := paths[0]
	for _, tc := range []struct {
		name      string
		valid     bool
		simulated bool
		stamp     map[string]any
		want      string
		wantValid bool
	}{
		{"valid point, valid stamp", true, false, map[string]any{"scenario": "inferencex-agentx-mvp", "valid": true, "invalid_reasons": []string{}},
			"valid inferencex-agentx-mvp submission", true},
		{"invalid point, valid stamp", false, false, map[string]any{"scenario": "inferencex-agentx-mvp", "valid": true, "invalid_reasons": []string{}},
			"the client stamped it a valid inferencex-agentx-mvp submission, but the point is invalid (above)", false},
		{"short run", true, false, map[string]any{"scenario": "inferencex-agentx-mvp", "valid": false, "invalid_reasons": []string{"unsafe_override"}},
			"not a valid inferencex-agentx-mvp submission: unsafe_override", true},
		{"simulated point, valid stamp", true, true, map[string]any{"scenario": "inferencex-agentx-mvp", "valid": true, "invalid_reasons": []string{}},
			"the client's inferencex-agentx-mvp rules pass, but a simulated point is no submission", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var obj map[string]any
			require.NoError(t, json.Unmarshal(data, &obj))
			obj["valid"], obj["submission"] = tc.valid, tc.stamp
			obj["simulated"], obj["simulation"] = tc.simulated, nil
			if tc.simulated {
				obj["simulation"] = map[string]any{"time_scale": 0, "seed": 3, "gpu": "mi325x", "clock": "virtual"}
			}
			if !tc.valid {
				obj["invalid_reasons"] = []string{"acceptance length not measured"}
			}
			data, err = json.Marshal(obj)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data, 0o644))
			s, err := run.Summarize(path)
			require.NoError(t, err)
			assert.Equal(t, tc.wantValid, s.Valid)
			assert.Equal(t, tc.want, s.Submission)
			if tc.simulated {
				assert.Equal(t, "simulated on mi325x, virtual clock, seed 3", s.Simulated)
			} else {
				assert.Empty(t, s.Simulated)
			}
		})
	}
}
