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
// is left out; a probe says so, a second point at a concurrency is a
// replicate), columns aligned, and the points the fit
// left out with why; an arm without a pool keeps the model's.
func TestWriteFits(t *testing.T) {
	c := &Calibration{Arms: []ArmCalibration{{Engine: configs.SGLang, Model: "Org/M", GPU: "mi325x", TP: 8, EP: 1, StepScale: 1.5, PoolTokens: 2000000, RMSErrorPct: 3.25, Basis: BasisCommand,
		Points:  []FitPoint{{Conc: 4, Running: 3.96, MeasuredStep: 0.01234, FittedStep: 0.0125, ErrorPct: 1.3}, {Conc: 64}, {Conc: 16, ProbeSeconds: 181.4, Running: 15.5, MeasuredStep: 0.02, FittedStep: 0.019, ErrorPct: -5}, {Conc: 4, Running: 4, MeasuredStep: 0.0123, FittedStep: 0.0125, ErrorPct: 1.6}},
		LeftOut: []string{"c80: KV usage 99.8 %"}},
		{Engine: configs.VLLM, Model: "Org/N", GPU: "h200", TP: 4, EP: 4, DPAttention: true, HostKV: true, StepScale: 0.9, Basis: BasisIdentity,
			Points: []FitPoint{{Conc: 2, Running: 2, MeasuredStep: 0.01, FittedStep: 0.01}}}}}
	var b bytes.Buffer
	require.NoError(t, c.WriteFits(&b))
	assert.Equal(t, "sglang Org/M mi325x tp8 ep1: step scale 1.5, pool 2000000 tokens per rank, rms error 3.2%\n"+
		"  the model's configuration: the engine command beside the results\n"+
		"  conc              in flight  measured step (ms)  fitted (ms)  error\n"+
		"  4                 4.0        12.34               12.50        +1.3%\n"+
		"  16 (181 s probe)  15.5       20.00               19.00        -5.0%\n"+
		"  4 (replicate 2)   4.0        12.30               12.50        +1.6%\n"+
		"  left out: c80: KV usage 99.8 %\n"+
		"vllm Org/N h200 tp4 ep4 dpa host kv: step scale 0.9, the model's pool (the results report none), rms error 0.0%\n"+
		"  the model's configuration: rebuilt from the results' identity\n"+
		"  conc  in flight  measured step (ms)  fitted (ms)  error\n"+
		"  2     2.0        10.00               10.00        +0.0%\n", b.String())
}
