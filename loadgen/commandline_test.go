package loadgen

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/simproto"
)

// TestCommandLineOptions: the time scale given wins over the
// environment, $SWEEP_LOADGEN_TIME_SCALE over $SWEEP_SIM_TIME_SCALE, and
// a bad value or clock origin is refused naming the variable.
func TestCommandLineOptions(t *testing.T) {
	argv := []string{"profile", "--model", "m", "--concurrency", "1", "--request-count", "1"}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name      string
		scale     float64
		env       map[string]string
		want      float64
		origin    time.Time
		wantError string
	}{
		{name: "default", want: 1},
		{name: "given", scale: 7, env: map[string]string{simproto.EnvLoadgenTimeScale: "3"}, want: 7},
		{name: "loadgen variable first", env: map[string]string{simproto.EnvLoadgenTimeScale: "3", simproto.EnvTimeScale: "5"}, want: 3},
		{name: "simulation's variable", env: map[string]string{simproto.EnvTimeScale: "5"}, want: 5},
		{name: "bad variable", env: map[string]string{simproto.EnvTimeScale: "nope"}, wantError: `$SWEEP_SIM_TIME_SCALE="nope": want a positive number`},
		{name: "clock origin", env: map[string]string{simproto.EnvLoadgenClockOrigin: "1000000000"}, want: 1, origin: time.Unix(1, 0)},
		{name: "bad clock origin", env: map[string]string{simproto.EnvLoadgenClockOrigin: "-1"}, wantError: "want Unix nanoseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &CommandLine{Argv: argv, Schema: DefaultSchema, TimeScale: tc.scale, VirtualClock: true, Getenv: env(tc.env)}
			o, err := c.Options(&bytes.Buffer{})
			if tc.wantError != "" {
				require.ErrorContains(t, err, tc.wantError)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tc.want, o.TimeScale, 0)
			assert.True(t, o.ClockOrigin.Equal(tc.origin), "%v", o.ClockOrigin)
			assert.True(t, o.VirtualClock)
			assert.Equal(t, "sweep loadgen -- profile --model m --concurrency 1 --request-count 1", o.CLICommand)
		})
	}
}
