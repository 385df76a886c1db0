package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/simproto"
	"sweep/metrics/result"
)

// TestCheckCalibrationReach: a calibration that calibrates none of a run's
// simulated engines is refused, naming the file's arms, the run's and how
// it was given; one that calibrates some engine, a run whose engines are
// not known, or no calibration, is not.
func TestCheckCalibrationReach(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cal.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1, "arms": [{"engine": "sglang", "model": "Org/M", "gpu": "mi325x", "tp": 8, "ep": 1, "kv_cache_dtype": "fp8_e4m3", "draft_steps": 3, "step_scale": 1.5}]}`), 0o644))
	on := &result.SimCalibration{File: path, Engines: []result.CalibratedEngine{{Name: "engine", Calibrated: true, StepScale: 1.5}}}
	off := &result.SimCalibration{File: path, Engines: []result.CalibratedEngine{{Name: "engine"}}}
	for _, tc := range []struct {
		name  string
		setup Setup
		cals  []*result.SimCalibration
		want  string // "" for none
	}{
		{"one arm calibrated", Setup{Simulate: true, SimCalibration: path}, []*result.SimCalibration{off, on}, ""},
		{"none", Setup{Simulate: true, SimCalibration: path}, []*result.SimCalibration{off, off},
			"--sim-calibration " + path + " calibrates none of this run's simulated engines, which would all run on the model's step costs and pool: its arms are sglang Org/M mi325x tp8 ep1 (KV dtype \"fp8_e4m3\", 3 draft steps); the run's are a; b (an arm calibrates"},
		{"none, given by the environment", Setup{Simulate: true, SimCalibration: path, SimCalibrationFrom: simproto.EnvCalibration}, []*result.SimCalibration{off, off},
			"or unset SWEEP_SIM_CALIBRATION to run the model's"},
		{"an arm not read", Setup{Simulate: true, SimCalibration: path}, []*result.SimCalibration{off, nil}, ""},
		{"engines not known", Setup{Simulate: true, SimCalibration: path}, []*result.SimCalibration{{File: path}}, ""},
		{"no calibration", Setup{Simulate: true}, []*result.SimCalibration{off, off}, ""},
		{"not simulated", Setup{SimCalibration: path}, []*result.SimCalibration{off, off}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := []string{"a", "b"}[:len(tc.cals)]
			err := tc.setup.CheckCalibrationReach(names, tc.cals)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
