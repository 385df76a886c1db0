package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// deployment is a disaggregated dsv4 arm of prefill and decode tp8
// workers with one sample per value at the given concs.
func deployment(prefill, decode int, pts map[int][]float64) *knee.Arm {
	role := func(n int) result.WorkerShape {
		return result.WorkerShape{NumWorkers: n, TP: 8, PP: 1, DCP: 1, PCP: 1, EP: 1, DPAttention: "false"}
	}
	id := result.RunFacts{RunnerType: "mi355x-amds", ModelPrefix: "dsv4", Framework: "sglang-disagg", Precision: "fp4",
		SpecDecoding: "mtp", Disagg: true, Multinode: true, KVOffloading: "dram", Prefill: role(prefill), Decode: role(decode)}.Identity()
	a := &knee.Arm{Identity: id}
	for c, vs := range pts {
		for _, v := range vs {
			a.Samples = append(a.Samples, knee.Sample{Conc: c, TotalTPS: &v, File: "f"})
		}
	}
	return a
}

// Two multi-node deployments whose InferenceX fields agree (1P1D and 1P2D
// of tp8 workers: "tp16" both) are two arms: compare never pairs one with
// the other nor averages them as replicates of one point, and says what
// HEAD has instead.
func TestCompareMultiNodeDeployments(t *testing.T) {
	p1d1 := deployment(1, 1, map[int][]float64{4: {9000}, 8: {18000}})
	p1d2 := deployment(1, 2, map[int][]float64{4: {6000}, 8: {12000}})

	rep := Compare([]*knee.Arm{p1d1}, []*knee.Arm{p1d2}, Options{Tolerance: 5})
	assert.Equal(t, Incomplete, rep.Verdict)
	require.Len(t, rep.Problems, 1, "%v", rep.Problems)
	assert.Equal(t, MissingArm, rep.Problems[0].Kind)
	assert.Contains(t, rep.Problems[0].String(), "arm dsv4 mi355x-amds sglang-disagg fp4 mtp 1P×tp8 1D×tp8 kv:dram disagg: HEAD has no result of this arm; "+
		"it has 1P×tp8 2D×tp8 kv:dram disagg, another multi-node deployment")
	assert.Empty(t, rep.Arms[0].Points, "nothing paired")
	assert.Equal(t, []string{"dsv4 mi355x-amds sglang-disagg fp4 mtp 1P×tp8 2D×tp8 kv:dram disagg"}, rep.OnlyInHead)

	// BASE holds both deployments, HEAD one: its points pair with BASE's
	// same deployment alone (18000, not the mean 15000 of the two).
	rep = Compare([]*knee.Arm{p1d1, p1d2}, []*knee.Arm{deployment(1, 1, map[int][]float64{4: {9000}, 8: {18000}})}, Options{Tolerance: 5})
	require.Len(t, rep.Arms, 2)
	require.Len(t, rep.Arms[0].Points, 2)
	for _, p := range rep.Arms[0].Points {
		assert.Equal(t, 1, p.BaseN, "c%d", p.Conc)
		assert.InDelta(t, 0, p.DeltaPct, 1e-9, "c%d: %v → %v", p.Conc, p.Base, p.Head)
	}
	require.Len(t, rep.Problems, 1, "%v", rep.Problems)
	assert.Contains(t, rep.Problems[0].String(), "1P×tp8 2D×tp8 kv:dram disagg: HEAD has no result of this arm; it has 1P×tp8 1D×tp8 kv:dram disagg")
}
