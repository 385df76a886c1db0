package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/sweep/compare"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// writeDeployment writes a synthetic curve as the results of a
// disaggregated dsv4 arm of prefill and decode tp8 workers under dir,
// its throughputs scaled by scale.
func writeDeployment(t *testing.T, dir string, prefill, decode int, scale float64) {
	t.Helper()
	role := func(n int) result.WorkerShape {
		return result.WorkerShape{NumWorkers: n, TP: 8, PP: 1, DCP: 1, PCP: 1, EP: 1, DPAttention: "false"}
	}
	a := &knee.Arm{Identity: result.RunFacts{RunnerType: "mi355x-amds", ModelPrefix: "dsv4", Framework: "sglang-disagg", Precision: "fp4",
		SpecDecoding: "mtp", Disagg: true, Multinode: true, KVOffloading: "dram", Prefill: role(prefill), Decode: role(decode)}.Identity()}
	for _, s := range synth.Corpus(3, 1)[0].Arm.Samples {
		if s.TotalTPS != nil {
			total, output := *s.TotalTPS*scale, *s.OutputTPS*scale
			s.TotalTPS, s.OutputTPS = &total, &output
		}
		a.Samples = append(a.Samples, s)
	}
	_, err := synth.WriteDir(dir, a, true)
	require.NoError(t, err)
}

// TestKneesCompareMultiNodeDeployments: a 1P1D and a 1P2D deployment of
// one disaggregated key (both "tp16" in InferenceX's fields) are two arms
// in the knees, and compare pairs each only with its own deployment: BASE
// with both against HEAD with the 1P1D one is INCOMPLETE, the 1P2D arm
// missing in HEAD and named as another deployment.
func TestKneesCompareMultiNodeDeployments(t *testing.T) {
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	writeDeployment(t, filepath.Join(base, "1p1d"), 1, 1, 1)
	writeDeployment(t, filepath.Join(base, "1p2d"), 1, 2, 0.65)
	writeDeployment(t, filepath.Join(head, "1p1d"), 1, 1, 0.99)

	code, stdout, stderr := runCLI(t, "knees", base, "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	var arms []struct {
		Arm result.Identity `json:"arm"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &arms))
	var labels []string
	for _, a := range arms {
		labels = append(labels, a.Arm.Parallelism())
	}
	assert.Equal(t, []string{"1P×tp8 1D×tp8 kv:dram disagg", "1P×tp8 2D×tp8 kv:dram disagg"}, labels)
	code, stdout, stderr = runCLI(t, "knees", base)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "dsv4 mi355x-amds sglang-disagg fp4 mtp 1P×tp8 2D×tp8 kv:dram disagg ")

	code, stdout, stderr = runCLI(t, "compare", base, head)
	assert.Equal(t, exitABIncomplete, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "- missing-arm: arm dsv4 mi355x-amds sglang-disagg fp4 mtp 1P×tp8 2D×tp8 kv:dram disagg: HEAD has no result of this arm; "+
		"it has 1P×tp8 1D×tp8 kv:dram disagg, another multi-node deployment")
	code, stdout, stderr = runCLI(t, "compare", base, head, "--format", "json")
	require.Equal(t, exitABIncomplete, code, stderr)
	var rep compare.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Len(t, rep.Arms, 2)
	var missing []string
	for _, p := range rep.Problems {
		if p.Kind == compare.MissingArm {
			missing = append(missing, p.Arm)
		}
	}
	assert.Equal(t, []string{"dsv4 mi355x-amds sglang-disagg fp4 mtp 1P×tp8 2D×tp8 kv:dram disagg"}, missing)
	require.NotEmpty(t, rep.Arms[0].Points)
	for _, p := range rep.Arms[0].Points {
		assert.Equal(t, 1, p.BaseN, "c%d: BASE's 1P1D result alone, not averaged with 1P2D's", p.Conc)
		assert.InDelta(t, -1, p.DeltaPct, 1e-6, "c%d: %v → %v", p.Conc, p.Base, p.Head)
	}
}
