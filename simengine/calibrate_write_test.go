package simengine

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

// TestWriteFits: one line per arm and the configuration it was fitted
// against, then the points the fit used (a point without a measured step
// is left out; a probe says so), columns aligned.
func TestWriteFits(t *testing.T) {
	c := &Calibration{Arms: []ArmCalibration{{Engine: configs.SGLang, Model: "Org/M", GPU: "mi325x", TP: 8, EP: 1, StepScale: 1.5, PoolTokens: 2000000, RMSErrorPct: 3.25, Basis: BasisCommand,
		Points: []FitPoint{{Conc: 4, Running: 3.96, MeasuredStep: 0.01234, FittedStep: 0.0125, ErrorPct: 1.3}, {Conc: 64}, {Conc: 16, ProbeSeconds: 181.4, Running: 15.5, MeasuredStep: 0.02, FittedStep: 0.019, ErrorPct: -5}}}}}
	var b bytes.Buffer
	require.NoError(t, c.WriteFits(&b))
	assert.Equal(t, "sglang Org/M mi325x tp8 ep1 dpa=false: step scale 1.500, pool 2000000 tokens per rank, rms error 3.2%\n"+
		"  fitted against the configuration the engine command beside the results\n"+
		"  conc              in flight  measured step (ms)  fitted (ms)  error\n"+
		"  4                 4.0        12.34               12.50        +1.3%\n"+
		"  16 (181 s probe)  15.5       20.00               19.00        -5.0%\n", b.String())
}
