package knee_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"sweep/sweep/knee"
)

// TestNextStepWhy: each step of the adaptive search says which rule asks
// for each of its points, with the numbers the rule read (Step.Why), and
// its last step why each grid point it did not measure is not needed
// (Step.Skipped) and what it ends on (Step.Done). The reasons are outputs
// only: the steps are those search_test.go's tables ask for.
func TestNextStepWhy(t *testing.T) {
	probe := func(c int, v float64) knee.Sample {
		return knee.Sample{Conc: c, TotalTPS: &v, Probe: true, Seconds: 300}
	}
	full := func(c int, v float64) knee.Sample { return knee.Sample{Conc: c, TotalTPS: &v, Seconds: 1200} }
	kv := func(s knee.Sample, usage float64) knee.Sample {
		s.KVUsage = &usage
		return s
	}
	unsteady := func(s knee.Sample) knee.Sample { return kv(s, 0.947) }
	failed := func(s knee.Sample) knee.Sample {
		s.Excluded = "marked invalid: acceptance length: measured AL 2.7124 is outside golden 2.7800 ± 0.0500"
		return s
	}
	doubling := []int{1, 2, 4, 8, 16, 32, 64, 128, 256}
	rising := []knee.Sample{probe(1, 1000), probe(4, 3800), probe(16, 14000)}
	plateau := []knee.Sample{probe(1, 1000), probe(4, 4000), probe(16, 16000), probe(64, 16000)}
	settled := "between c%d and c%d, measured: the knee c16 (ok) is bounded by c8 and c64, both measured"
	tests := []struct {
		name     string
		grid     []int
		measured []knee.Sample
		step     string // Step.String
		why      map[int]string
		skipped  map[int]string
		done     string
	}{
		{"bracket: the first point", doubling, nil, "{[1] true}",
			map[int]string{1: "bracket: the grid's first point"}, nil, ""},
		{"bracket: above the first point", doubling, rising[:1], "{[4] true}",
			map[int]string{4: "bracket: the next ×4 step above c1, the first usable point"}, nil, ""},
		{"bracket: the next ×4 step", doubling, rising[:2], "{[16] true}",
			map[int]string{16: "bracket: the next ×4 step: c4 gained 94.9 % per doubling over c1 (gate 10.0 %)"}, nil, ""},
		{"bracket: past one failure", doubling, append(slices.Clone(rising), failed(full(64, 900))), "{[128] true}",
			map[int]string{128: "bracket: the grid point after c64, which failed (one failure may be transient)"}, nil, ""},
		{"a failed probe would end the bracket", doubling, append(slices.Clone(rising), failed(probe(64, 900))), "{[64] false}",
			map[int]string{64: "c64 again at full length: its probe failed the way a short window can, and that failure would end the bracket"}, nil, ""},
		{"bracket: the top of the grid", []int{1, 4, 8, 12}, rising[:2], "{[12] true}",
			map[int]string{12: "bracket: the top of the grid: c4 gained 94.9 % per doubling over c1 (gate 10.0 %)"}, nil, ""},
		{"fill: k/2", doubling, plateau, "{[8] true}",
			map[int]string{8: "fill: k/2 of the knee c16 (ok), its lower doubling neighbour"}, nil, ""},
		// The simulated MI325X Qwen3.5 FP8 MTP TP4 arm's probes: c48 reads
		// a cliff above the peak c32.
		{"peak gap below a cliff", []int{1, 8, 16, 32, 40, 48}, []knee.Sample{probe(1, 2000), probe(8, 13000), probe(16, 19000), probe(32, 23000), probe(48, 9000)}, "{[40] true}",
			map[int]string{40: "peak gap: c48 above the peak c32 fell off a cliff (9000 against the peak's 23000 tok/s/GPU), so the peak (and the knee with it) may lie between"}, nil, ""},
		// The same with c48 failed: the arm reads still rising into it.
		{"still rising below a failure", []int{1, 8, 16, 32, 40, 48}, []knee.Sample{probe(1, 2000), probe(8, 13000), probe(16, 19000), probe(32, 23000), failed(full(48, 9000))}, "{[40] true}",
			map[int]string{40: "fill: the arm still gains at c32 (unsaturated (98.5 % likely)): the next point above, nearest 2×c32"}, nil, ""},
		{"fill: k/2 and 2k below a cliff", doubling, append(slices.Clone(rising), full(64, 2000)), "{[8 32] true}",
			map[int]string{
				8:  "fill: k/2 of the knee c16 (ok), its lower doubling neighbour",
				32: "fill: 2k of the knee c16 (ok), its upper doubling neighbour: no point above it is measured on the plateau to bound it",
			}, nil, ""},
		{"unsteady probe", doubling, append(slices.Clone(rising), unsteady(probe(64, 20000))), "{[64] false}",
			map[int]string{64: "c64 again at full length: its probe's KV pool came near full (unsteady: short of a full point's steady state), with the verdict hanging on it (unsaturated (99.2 % likely) as read, knee c16 (ok) at half its reading)"}, nil, ""},
		// The simulated H200 Qwen3.5 arm's probes (TestNextStepUnsteadyProbeEitherWay):
		// c32 is asked for with c64 as read and at half its reading.
		{"below an unsteady probe, either way", []int{4, 16, 24, 32, 40, 48, 64},
			[]knee.Sample{kv(probe(4, 6812), 0.056), kv(probe(16, 17520), 0.201), kv(probe(64, 23279), 0.856)}, "{[32] true}",
			map[int]string{32: "fill: the middle of the widest gap, c16 to c64: the top c64's gain is not clear of the gate yet (c48 not measured), and the fit through the gaps decides it (asked for with unsteady c64 as read and at half its reading, so it runs first: that probe may run again at full length after it)"}, nil, ""},
		// The simulated DeepSeek V4 TP8 DRAM-KV arm's probes
		// (TestNextStepUnsteadyProbeTooFewPoints): two usable points.
		{"below an unsteady probe, too few points", []int{16, 32, 48},
			[]knee.Sample{kv(probe(16, 56276), 0.59), kv(probe(48, 7390), 1)}, "{[32] true}",
			map[int]string{32: "fill: the middle of the widest gap, c16 to c48: 2 usable points, a verdict needs 3 (first: unsteady c48, with too few points usable for a verdict, may run again at full length after it)"}, nil, ""},
		{"top gate: the point below the top", []int{1, 2, 4, 8, 16}, []knee.Sample{probe(1, 1000), probe(4, 4000), probe(16, 16000)}, "{[8] true}",
			map[int]string{8: "top gate: the arm still gains at the top c16, which the gate compares with the grid point below it"}, nil, ""},
		{"a far probe decides", []int{1, 4, 8, 16, 32, 40, 48, 56, 64}, []knee.Sample{probe(1, 1000), probe(4, 3000), probe(16, 3000)}, "{[4] false}",
			map[int]string{4: "c4 again at full length: a grid neighbour lies more than a doubling away, and its probe moved 2σ (12.0 %) down reads knee c16 (ambiguous), not knee c4 (ok)"}, nil, ""},
		{"an ambiguous knee in the top gate", []int{16, 32, 48}, []knee.Sample{probe(16, 60000), probe(48, 88000), probe(32, 76000)}, "{[32 48] false}",
			map[int]string{
				32: "c32 again at full length: the knee c48 (ambiguous) lies at the top gate's probes c32 and c48, and its verdict would rest on probes alone",
				48: "c48 again at full length: the knee c48 (ambiguous) lies at the top gate's probes c32 and c48, and its verdict would rest on probes alone",
			}, nil, ""},
		{"the gate into a capped peak", doubling, append(slices.Clone(rising), failed(full(64, 900)), failed(full(128, 900)), probe(8, 8000), probe(32, 15000)), "{[16 32] false}",
			map[int]string{
				16: "c16 again at full length: c64 above the peak c32 failed, so the gate reads the gain 7.1 % per doubling from c16 to c32 lies within 2σ (±17.0 %) of the 10.0 % gate, and the probes' noise decides it (unsaturated moved 2σ one way, not the other)",
				32: "c32 again at full length: c64 above the peak c32 failed, so the gate reads the gain 7.1 % per doubling from c16 to c32 lies within 2σ (±17.0 %) of the 10.0 % gate, and the probes' noise decides it (unsaturated moved 2σ one way, not the other)",
			}, nil, ""},
		{"done: a knee bounded", doubling, append(slices.Clone(plateau), probe(8, 8000)), "{[] false}", nil,
			map[int]string{
				2:   fmt.Sprintf(settled, 1, 4),
				32:  fmt.Sprintf(settled, 16, 64),
				128: "above c64, the highest point measured: the knee c16 (ok) is bounded by c8 and c64, both measured",
				256: "above c64, the highest point measured: the knee c16 (ok) is bounded by c8 and c64, both measured",
			}, "knee c16 (ok)"},
		{"done: above a cliff", doubling, append(slices.Clone(rising), full(64, 2000), probe(8, 8000), probe(32, 16000)), "{[] false}", nil,
			map[int]string{
				2:   "between c1 and c4, measured: the knee c32 (ok) is bounded by c16 and c64, both measured",
				128: "above c64: c64 fell off a cliff (2000 against c16's 14000 tok/s/GPU, beyond the noise)",
				256: "above c64: c64 fell off a cliff (2000 against c16's 14000 tok/s/GPU, beyond the noise)",
			}, "knee c32 (ok)"},
		{"done: sure unsaturated", []int{1, 2, 4, 8, 16}, []knee.Sample{probe(1, 1000), probe(4, 4000), probe(8, 8000), probe(16, 16000)}, "{[] false}", nil,
			map[int]string{2: "between c1 and c4, measured: the arm reads unsaturated (100.0 % likely), sure at 99 % or more: the gaps below its top need no filling"},
			"unsaturated (100.0 % likely)"},
		{"done: ambiguous", []int{16, 32, 48}, []knee.Sample{full(16, 60000), full(48, 88000), full(32, 76000)}, "{[] false}", nil, map[int]string{},
			"knee c48 (ambiguous); replicates of c32, c48 would settle it, and the adaptive search measures each point once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := knee.NextStep(tc.grid, tc.measured, knee.SearchOptions{})
			if got.String() != tc.step {
				t.Errorf("step %v, want %s", got, tc.step)
			}
			if !maps.Equal(got.Why, tc.why) {
				t.Errorf("why:\n%s\nwant:\n%s", byConc(got.Why), byConc(tc.why))
			}
			if !maps.Equal(got.Skipped, tc.skipped) {
				t.Errorf("skipped:\n%s\nwant:\n%s", byConc(got.Skipped), byConc(tc.skipped))
			}
			if got.Done != tc.done {
				t.Errorf("done %q, want %q", got.Done, tc.done)
			}
		})
	}
}

// byConc prints reasons one concurrency a line, in order.
func byConc(m map[int]string) string {
	var s string
	for _, c := range slices.Sorted(maps.Keys(m)) {
		s += fmt.Sprintf("  c%d: %s\n", c, m[c])
	}
	return s
}

// TestNextStepWhyEveryPoint: along whole searches (several curves and
// grids, probes and full-length runs), every point a step asks for has a
// reason, and the last step names why of every grid point not measured
// and what the search ends on.
func TestNextStepWhyEveryPoint(t *testing.T) {
	curves := map[string]func(int) float64{
		"saturates at c16": func(c int) float64 { return 1000 * float64(min(c, 16)) },
		"a cliff at c128": func(c int) float64 {
			if c >= 128 {
				return 3000
			}
			return 1000 * float64(min(c, 48))
		},
		"still rising": func(c int) float64 { return 1000 * float64(c) },
		"fails from c64": func(c int) float64 {
			if c >= 64 {
				return -1
			}
			return 1000 * float64(min(c, 40))
		},
	}
	grids := [][]int{{1, 2, 4, 8, 16, 32, 64, 128, 256}, {1, 4, 8, 16, 32, 40, 48, 56, 64}, {16, 32, 48}, {4, 16, 20, 24, 32}}
	for _, name := range slices.Sorted(maps.Keys(curves)) {
		for _, grid := range grids {
			t.Run(fmt.Sprintf("%s %v", name, grid), func(t *testing.T) {
				var measured []knee.Sample
				for range 3 * len(grid) {
					step := knee.NextStep(grid, measured, knee.SearchOptions{})
					if len(step.Conc) == 0 {
						for _, g := range grid {
							ran := slices.ContainsFunc(measured, func(s knee.Sample) bool { return s.Conc == g })
							if !ran && step.Skipped[g] == "" {
								t.Errorf("c%d not measured, and no reason: %v", g, step.Skipped)
							}
						}
						if step.Done == "" {
							t.Error("the last step says nothing of the verdict")
						}
						return
					}
					if len(step.Skipped) > 0 || step.Done != "" {
						t.Errorf("step %v: skipped %v, done %q before the end", step, step.Skipped, step.Done)
					}
					for _, c := range step.Conc {
						if step.Why[c] == "" {
							t.Errorf("step %v: no reason for c%d: %v", step, c, step.Why)
						}
						v := curves[name](c)
						s := knee.Sample{Conc: c, TotalTPS: &v, Seconds: 1200}
						if v < 0 {
							s.TotalTPS, s.Excluded = nil, "error rate 40% > 10%"
						}
						if step.Probe {
							s.Probe, s.Seconds = true, 300
						}
						measured = slices.DeleteFunc(measured, func(m knee.Sample) bool { return m.Conc == c })
						measured = append(measured, s)
					}
				}
				t.Fatal("the search did not end")
			})
		}
	}
}
