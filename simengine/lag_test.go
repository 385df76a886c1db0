package simengine

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// TestLagBehindSchedule: on the wall clock GET /sim/lag says how far the
// scheduler fell behind its schedule. In a synctest bubble the timers
// fire on time, so no step is late; with late-steps:50ms (a loaded host,
// planted) every step ends 50 ms of wall time, 1 s simulated at 20x,
// behind.
func TestLagBehindSchedule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults []Fault
		late   bool
	}{
		{"on time", nil, false},
		{"late-steps:50ms", []Fault{{Kind: FaultLateSteps, Delay: 50 * time.Millisecond}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := testConfig(configs.SGLang)
				cfg.TimeScale, cfg.Faults = 20, tc.faults
				b := startBubble(t, cfg)
				<-b.Ready()
				before := readLag(t, b)
				rec := b.serve("POST", "/v1/chat/completions", chatBody{Messages: userMsg("x"), MaxTokens: intp(50), IgnoreEOS: true})
				require.Equal(t, 200, rec.Code)
				lag := readLag(t, b).Since(before)
				require.Positive(t, lag.Steps)
				assert.Positive(t, lag.Busy)
				if !tc.late {
					assert.Zero(t, lag.Late, "%+v", lag)
					assert.Zero(t, lag.Share())
					assert.LessOrEqual(t, lag.Worst, LagTolerance)
				} else {
					assert.Equal(t, lag.Steps, lag.Late, "%+v", lag)
					assert.InDelta(t, 1.0, lag.Share(), 1e-9)
					assert.InDelta(t, 1.0, lag.Worst, 1e-6, "50 ms of wall time at 20x")
				}
				b.cancel()
				<-b.done
			})
		})
	}
}

func readLag(t *testing.T, b *bubbleServer) Lag {
	t.Helper()
	rec := b.serve("GET", LagPath, nil)
	require.Equal(t, 200, rec.Code, rec.Body.String())
	var l Lag
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &l))
	return l
}
