package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/proc"
	"sweep/internal/simproto"
	"sweep/metrics/result"
)

// TestCalibratedEngine: a point's result records what its calibration
// file sets for the simulated engine, read as the engine reads it: the
// matching arm's scale and pool, no arm for another layout, and an
// engine command the engine would reject is an error before it starts.
func TestCalibratedEngine(t *testing.T) {
	cal := filepath.Join(t.TempDir(), "cal.json")
	require.NoError(t, os.WriteFile(cal, []byte(`{"version": 1, "arms": [{"engine": "sglang", "model": "Qwen/Qwen3.5-397B-A17B-FP8",
		"gpu": "mi325x", "tp": 8, "ep": 8, "dp_attention": false, "step_scale": 1.25, "pool_tokens": 3000000, "rms_error_pct": 2}]}`), 0o644))
	engine := func(extra ...string) []string {
		return append([]string{"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-397B-A17B-FP8", "--port", "8888"}, extra...)
	}
	tests := []struct {
		name      string
		argv      []string
		unchecked []string
		gpu       string
		want      result.CalibratedEngine
		err       string
	}{
		{name: "the matching arm", argv: engine("--tp", "8", "--ep-size", "8"), gpu: "mi325x",
			want: result.CalibratedEngine{Name: "engine", Calibrated: true, StepScale: 1.25, PoolTokens: 3000000}},
		{name: "an unchecked flag as the engine gets it", argv: engine("--tp", "8", "--ep-size", "8", "--not-in-the-schema", "x"), unchecked: []string{"--unchecked", "--not-in-the-schema:1"}, gpu: "mi325x",
			want: result.CalibratedEngine{Name: "engine", Calibrated: true, StepScale: 1.25, PoolTokens: 3000000}},
		{name: "the same flag not passed unchecked", argv: engine("--tp", "8", "--ep-size", "8", "--not-in-the-schema", "x"), gpu: "mi325x", err: "--not-in-the-schema"},
		{name: "another layout", argv: engine("--tp", "4"), gpu: "mi325x", want: result.CalibratedEngine{Name: "engine"}},
		{name: "another GPU", argv: engine("--tp", "8", "--ep-size", "8"), gpu: "mi355x", want: result.CalibratedEngine{Name: "engine"}},
		{name: "a command the engine rejects", argv: engine("--tp", "8", "--no-such-flag"), gpu: "mi325x", err: "--no-such-flag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Setup{Executable: "sweep", Simulate: true, SimCalibration: cal}
			ps := proc.Spec{Name: "engine", Argv: tc.argv, Env: map[string]string{}}
			s.simulateEngine(&ps, tc.unchecked, tc.gpu, "", true)
			assert.Equal(t, cal, ps.Env[simproto.EnvCalibration], "the engine is handed the file")
			got, err := calibratedEngine(ps, nil)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := calibratedEngine(proc.Spec{Name: "engine", Argv: engine("--tp", "8")}, nil)
	assert.ErrorContains(t, err, "is not a simulated engine's command")
}
