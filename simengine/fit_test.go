package simengine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// TestFitStepScaleReadsTheEnginesSteps: a disaggregated decode worker's
// point carries its steps as the worker timed them (EngineStep over
// EngineBatch requests), which the fit reads before the client's gap: on
// the wall clock a loaded host makes the client's gap late (8 % here put
// the fitted scale at 1.50 for the planted 1.4), the engine's steps not.
func TestFitStepScaleReadsTheEnginesSteps(t *testing.T) {
	cfg, err := Config{Engine: configs.SGLang, ModelPath: "deepseek-ai/DeepSeek-V4-Pro", GPU: "mi355x", TP: 8, EP: 1}.Normalize()
	require.NoError(t, err)
	const planted, al = 1.4, 1.0
	const running, ctx, batch = 6.0, 6 * 70_000.0, 5.5
	step := planted * newCapacity(cfg).meanDecodeTime(batch, batch*ctx/running)
	tests := []struct {
		name string
		late float64 // the client's gap over the engine's step
	}{
		{name: "client on time", late: 1},
		{name: "client 8 % late", late: 1.08},
		{name: "client 30 % late", late: 1.3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := FitPoint{Conc: 8, ITL: tc.late * step / al, AL: al, Running: running, Decoding: running, CtxTokens: ctx,
				Gap: tc.late * step / al, EngineStep: step, EngineBatch: batch}
			points := []FitPoint{p}
			scale, rms, err := FitStepScale(cfg, points)
			require.NoError(t, err)
			assert.InEpsilon(t, planted, scale, 1e-6, "gap %.2f ms, engine step %.2f ms", 1e3*p.Gap, 1e3*step)
			assert.InDelta(t, 0, rms, 1e-6)
			assert.InEpsilon(t, step, points[0].MeasuredStep, 1e-9)
		})
	}
}
