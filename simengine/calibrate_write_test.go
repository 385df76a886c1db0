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
// left out with why; an arm without a pool keeps the model's. An arm
// fitted to one point says its error is not measured: it read "rms error
// 0.0%", a perfect fit, where the scale is that point's ratio.
func TestWriteFits(t *testing.T) {
	c := &Calibration{Arms: []ArmCalibration{{Engine: configs.SGLang, Model: "Org/M", GPU: "mi325x", TP: 8, EP: 1, StepScale: 1.5, PoolTokens: 2000000, RMSErrorPct: 3.25, Basis: BasisCommand, PoolFrom: "c64's",
		Points:  []FitPoint{{Conc: 4, Gap: 0.005, Running: 3.96, MeasuredStep: 0.01234, FittedStep: 0.0125, ErrorPct: 1.3}, {Conc: 64}, {Conc: 16, Gap: 0.008, ProbeSeconds: 181.4, Running: 15.5, MeasuredStep: 0.02, FittedStep: 0.019, ErrorPct: -5}, {Conc: 4, Gap: 0.005, Running: 4, MeasuredStep: 0.0123, FittedStep: 0.0125, ErrorPct: 1.6}},
		LeftOut: []string{"c80: KV usage 99.8 %"}},
		{Engine: configs.VLLM, Model: "Org/N", GPU: "h200", TP: 4, EP: 4, DPAttention: true, HostKV: true, StepScale: 0.9, Basis: BasisIdentity,
			Points: []FitPoint{{Conc: 2, Running: 2, MeasuredStep: 0.01, FittedStep: 0.01}}}}}
	var b bytes.Buffer
	require.NoError(t, c.WriteFits(&b))
	assert.Equal(t, "sglang Org/M mi325x tp8 ep1: step scale 1.5, pool 2000000 tokens per rank, rms error 3.2%\n"+
		"  the model's configuration: the engine command beside the results\n"+
		"  the pool: c64's\n"+
		"  conc              in flight  measured step (ms)  fitted (ms)  error\n"+
		"  4                 4.0        12.34               12.50        +1.3%\n"+
		"  16 (181 s probe)  15.5       20.00               19.00        -5.0%\n"+
		"  4 (replicate 2)   4.0        12.30               12.50        +1.6%\n"+
		"  left out: c80: KV usage 99.8 %\n"+
		"vllm Org/N h200 tp4 ep4 dpa host kv: step scale 0.9, the model's pool (the results report none), rms error not measured (1 point: the scale is its ratio, the error 0 by construction; fit more concurrencies to check the fit)\n"+
		"  the model's configuration: rebuilt from the results' identity\n"+
		"  conc  in flight  measured step (ms)  fitted (ms)  error\n"+
		"  2     2.0        10.00               10.00        +0.0%\n"+
		"  fitted on the median ITL at c2: the results have no mean latency and TTFT to read the mean gap between tokens from\n", b.String())
}

// TestWriteFitsSaysWhereItFellBack: results copied without their
// per-request records (profile_export.jsonl) were fitted on the means, a
// scale 3-4 % off, and sim calibrate's output did not say so (h-au6 F8).
// Each point whose prefill context came from the means is named, once
// however many replicates it has; a point with its records, or without
// prefills, is not.
func TestWriteFitsSaysWhereItFellBack(t *testing.T) {
	withRecords := FitPoint{Conc: 8, Gap: 0.01, PrefillPerSecond: 5000, PrefillTokens: 3000, PrefillContext: 60000, PrefillMidContext: 52000, Running: 8, MeasuredStep: 0.02, FittedStep: 0.02}
	means := withRecords
	means.Conc, means.PrefillMidContext = 16, 0
	noPrefill := means
	noPrefill.Conc, noPrefill.PrefillPerSecond, noPrefill.PrefillTokens = 32, 0, 0
	c := &Calibration{Arms: []ArmCalibration{{Engine: configs.SGLang, Model: "Org/M", GPU: "mi325x", TP: 8, EP: 1, StepScale: 0.969, RMSErrorPct: 3.8,
		Points: []FitPoint{withRecords, means, means, noPrefill}}}}
	var b bytes.Buffer
	require.NoError(t, c.WriteFits(&b))
	assert.Contains(t, b.String(), "\n  fitted on the means at c16: no per-request record says how much of its prompt was cached (profile_export.jsonl is missing beside the results, or its records have no usage_prompt_cache_read_tokens), so the prefills' context is the means' (on the simulated MI325X Qwen3.5 SGLang arm that put the scale 4.5 % low)\n")
	assert.NotContains(t, b.String(), "median ITL", "every point has its mean gap")
}
