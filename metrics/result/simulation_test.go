package result

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSimCalibrationString(t *testing.T) {
	tests := []struct {
		name string
		cal  SimCalibration
		want string
	}{
		{"calibrated", SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "engine", Calibrated: true, StepScale: 0.9555, PoolTokens: 6172736}}},
			"calibrated by cal.json (step costs x0.956, pool 6172736 tokens per rank)"},
		{"the pool alone", SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "engine", Calibrated: true, PoolTokens: 2000000}}},
			"calibrated by cal.json (the model's step costs, pool 2000000 tokens per rank)"},
		{"no arm", SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "engine"}}},
			"calibration cal.json has no arm for this engine (the model's step costs and pool)"},
		// A fit's 1.00105 read "step costs x1": the header, compare's
		// "differs" line and the report's banner all said the step costs
		// were the model's.
		{"a scale near 1", SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "engine", Calibrated: true, StepScale: 1.00105, PoolTokens: 5300000}}},
			"calibrated by cal.json (step costs x1.001, pool 5300000 tokens per rank)"},
		{"a scale just under 1", SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "engine", Calibrated: true, StepScale: 0.99996}}},
			"calibrated by cal.json (step costs x0.99996, the model's pool)"},
		// A fit's 1.00576 read "step costs x1.01" where sweep sim
		// calibrate printed "step scale 1.006".
		{"a scale sim calibrate printed to 3 decimals", SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "engine", Calibrated: true, StepScale: 1.00576, PoolTokens: 3691488}}},
			"calibrated by cal.json (step costs x1.006, pool 3691488 tokens per rank)"},
		{"a scale of 1", SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "engine", Calibrated: true, StepScale: 1}}},
			"calibrated by cal.json (step costs x1, the model's pool)"},
		{"workers", SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "prefill-0", Calibrated: true, StepScale: 1.5}, {Name: "decode-0"}}},
			"calibration cal.json: prefill-0: step costs x1.5, the model's pool; decode-0: no arm (the model's step costs and pool)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.cal.String())
		})
	}
}

func TestSimCalibrationSetting(t *testing.T) {
	tests := []struct {
		name string
		cal  *SimCalibration
		want string
	}{
		{"none", nil, ""},
		{"no arm: the model's values", &SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "engine"}}}, ""},
		{"calibrated, whatever the file's name", &SimCalibration{File: "other.json", Engines: []CalibratedEngine{{Name: "engine", Calibrated: true, StepScale: 0.9555, PoolTokens: 6172736}}},
			"step costs x0.956, pool 6172736 tokens per rank"},
		{"workers", &SimCalibration{File: "cal.json", Engines: []CalibratedEngine{{Name: "prefill-0", Calibrated: true, StepScale: 1.5}, {Name: "decode-0"}}},
			"prefill-0: step costs x1.5, the model's pool; decode-0: no arm (the model's step costs and pool)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.cal.Setting())
		})
	}
}
