package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/internal/simproto"
	"sweep/metrics/power"
)

// env is an environment of the given variables (os.LookupEnv's form).
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// TestMeasuredEnv: a resumed sweep mixed SWEEP_SIM_SEED=0 and =7 points
// (the seed was no part of its identity); the variables that change what
// a point measures are listed, each at its effective value, only when
// set to other than its default.
func TestMeasuredEnv(t *testing.T) {
	sim := Mode{Simulate: true, SimClock: ClockVirtual}
	for _, tc := range []struct {
		name string
		mode Mode
		vars map[string]string
		want []EnvValue
	}{
		{"none set", sim, nil, nil},
		{"the seed", sim, map[string]string{simproto.EnvSeed: "7"}, []EnvValue{{simproto.EnvSeed, "7"}}},
		{"the seed as the engine reads it", sim, map[string]string{simproto.EnvSeed: "007"}, []EnvValue{{simproto.EnvSeed, "7"}}},
		{"the default seed", sim, map[string]string{simproto.EnvSeed: "0"}, nil},
		{"a seed the engine refuses, as given", sim, map[string]string{simproto.EnvSeed: "x"}, []EnvValue{{simproto.EnvSeed, "x"}}},
		{"the engine's faults", sim, map[string]string{simproto.EnvFault: "slow-steps:50"}, []EnvValue{{simproto.EnvFault, "slow-steps:50"}}},
		{"--sim-fault overrides them", Mode{Simulate: true, SimFault: "crash:3"}, map[string]string{simproto.EnvFault: "slow-steps:50"}, nil},
		{"a calibration", sim, map[string]string{simproto.EnvCalibration: "/c.json"}, []EnvValue{{simproto.EnvCalibration, "/c.json"}}},
		{"--sim-calibration overrides it", Mode{Simulate: true, SimCalib: "/d.json"}, map[string]string{simproto.EnvCalibration: "/c.json"}, nil},
		{"the GPU tools' node and faults", sim, map[string]string{simproto.EnvSMINodeGPUs: "4", simproto.EnvSMIFault: "missing-gpu=3"},
			[]EnvValue{{simproto.EnvSMINodeGPUs, "4"}, {simproto.EnvSMIFault, "missing-gpu=3"}}},
		{"the default node", sim, map[string]string{simproto.EnvSMINodeGPUs: "8"}, nil},
		{"the power lane off", sim, map[string]string{power.EnvEnable: "false"}, []EnvValue{{power.EnvEnable, "0"}}},
		{"the power lane on", sim, map[string]string{power.EnvEnable: "yes"}, nil},
		{"a real engine: the power lane only", Mode{}, map[string]string{simproto.EnvSeed: "7", power.EnvEnable: "0"}, []EnvValue{{power.EnvEnable, "0"}}},
		{"not what changes only how long a point takes", sim, map[string]string{simproto.EnvWarmup: "1s", simproto.EnvLoadTime: "2s"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.mode.MeasuredEnv(env(tc.vars)), "%v", tc.vars)
		})
	}
}

// TestPowerGPUsIn: a resume compared only --power-gpus (SWEEP_POWER_GPUS
// set recorded ""); the choice is the one the points read.
func TestPowerGPUsIn(t *testing.T) {
	for _, tc := range []struct {
		flag, env, want string
	}{
		{"", "", PowerGPUsAll},
		{"", PowerGPUsAllocated, PowerGPUsAllocated},
		{PowerGPUsAll, PowerGPUsAllocated, PowerGPUsAll},
		{PowerGPUsAllocated, "", PowerGPUsAllocated},
	} {
		m := Mode{PowerGPUs: tc.flag}
		vars := map[string]string{}
		if tc.env != "" {
			vars[EnvPowerGPUs] = tc.env
		}
		assert.Equal(t, tc.want, m.PowerGPUsIn(env(vars)), "--power-gpus %q, %s=%q", tc.flag, EnvPowerGPUs, tc.env)
	}
}

func TestTimeScaleMatters(t *testing.T) {
	assert.False(t, (&Mode{Simulate: true, SimClock: ClockVirtual}).TimeScaleMatters(), "the virtual clock ignores it")
	assert.True(t, (&Mode{Simulate: true, SimClock: ClockWall}).TimeScaleMatters())
	assert.False(t, (&Mode{SimClock: ClockWall}).TimeScaleMatters(), "a real engine")
}
