package compare

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/pyjson"
	"sweep/metrics/result"
	"sweep/sweep/knee"
)

// The shapes of the audit's simulated discoveries (qwen3.5 mi325x sglang
// TP8 EP8, one result per point): BASE, HEAD with a KV pool of 5.3 M
// tokens (only the peak loses) and with 3 M tokens (a capacity cliff from
// c40 on), and an A/A rerun of a TP4 arm whose c48 lies past BASE's
// own cliff.
var (
	auditBase  = map[int]float64{4: 7018.5, 16: 16895.3, 24: 19674.3, 32: 21215.6, 40: 22380.1, 48: 22490.6, 64: 23011.1}
	auditKV53  = map[int]float64{4: 7018.5, 16: 16895.3, 24: 19674.3, 32: 21152.6, 40: 22111.9, 48: 22260.9, 64: 20713.5}
	auditSmall = map[int]float64{4: 7018.5, 16: 16895.3, 24: 19254.3, 32: 20525.3, 40: 10063.4, 48: 4063.1, 64: 3623.0}
	// interactivity (P90 E2E-normalised) of the same points
	auditBaseIv  = map[int]float64{4: 95.3, 16: 60, 24: 40, 32: 30, 40: 24, 48: 19, 64: 15}
	auditSmallIv = map[int]float64{4: 95.3, 16: 60, 24: 39, 32: 25.6, 40: 8, 48: 3, 64: 2}
	tp4Base      = map[int]float64{1: 3567.3, 8: 18007.2, 16: 23341.7, 32: 25653.5, 40: 26047.7, 48: 4231.8}
	tp4AA        = map[int]float64{1: 3566.6, 8: 18019.6, 16: 23337.5, 32: 25730.8, 40: 26050.5, 48: 3988.4}
)

// curve builds an arm of tp with one result per concurrency of tput
// (throughput per GPU), with the interactivity of iv where given.
func curve(tp, ep int, tput, iv map[int]float64) *knee.Arm {
	a := &knee.Arm{Identity: identity(tp, ep, "none")}
	concs := make([]int, 0, len(tput))
	for c := range tput {
		concs = append(concs, c)
	}
	slices.Sort(concs)
	for _, c := range concs {
		v := tput[c]
		s := knee.Sample{Conc: c, TotalTPS: &v, File: "f"}
		if x, ok := iv[c]; ok {
			r := pyjson.Rounded(x)
			s.E2ENormIntvty = result.Stats{P90: &r}
			s.Intvty = result.Stats{P50: &r}
		}
		a.Samples = append(a.Samples, s)
	}
	return a
}

// jitter multiplies every value by 1 + N(0, sigma).
func jitter(rng *rand.Rand, vals map[int]float64, sigma float64) map[int]float64 {
	out := map[int]float64{}
	for c, v := range vals {
		out[c] = v * (1 + sigma*rng.NormFloat64())
	}
	return out
}

func points(a *ArmReport, keep func(PointReport) bool) []int {
	var out []int
	for _, p := range a.Points {
		if keep(p) {
			out = append(out, p.Conc)
		}
	}
	return out
}

func regressing(p PointReport) bool { return p.Verdict == Regression }

// TestPointVerdicts: each point has its own interval and verdict, and an
// arm cannot PASS while one of its points decisively regresses: a loss
// confined to the high-concurrency points (a capacity regression) is not
// diluted away by the geometric mean, and a non-uniform change does not
// pass for noise.
func TestPointVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name         string
		base, head   map[int]float64
		verdict      Decision
		regressing   []int // points whose interval lies beyond -tol
		notUniform   []int // points the paired scatter leaves out
		pastCliff    []int
		maxNoisePct  float64
		deltaPct     float64
		noiseContain string
	}{
		{name: "kv53: only the peak loses 10 %", base: auditBase, head: auditKV53, verdict: Regression,
			regressing: []int{64}, notUniform: []int{64}, maxNoisePct: 1, deltaPct: -1.85},
		{name: "kvsmall: a capacity cliff from c40 on", base: auditBase, head: auditSmall, verdict: Regression,
			regressing: []int{40, 48, 64}, notUniform: []int{40, 48, 64}, maxNoisePct: 2, deltaPct: -46.77},
		{name: "unchanged", base: auditBase, head: auditBase, verdict: Pass, maxNoisePct: 0, deltaPct: 0},
		{name: "a uniform loss of 8 %", base: auditBase,
			head:    map[int]float64{4: 6457, 16: 15545, 24: 18100, 32: 19520, 40: 20590, 48: 20690, 64: 21170},
			verdict: Regression, regressing: []int{4, 16, 24, 32, 40, 48, 64}, maxNoisePct: 1, deltaPct: -8},
		{name: "A/A past BASE's cliff: c48 thrashes on both sides", base: tp4Base, head: tp4AA, verdict: Pass,
			pastCliff: []int{48}, maxNoisePct: 0.5, deltaPct: 0.07},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Compare([]*knee.Arm{curve(8, 8, tc.base, nil)}, []*knee.Arm{curve(8, 8, tc.head, nil)}, Options{Tolerance: 5})
			a := rep.Arms[0]
			assert.Equal(t, tc.verdict, a.Verdict, "%s\n%s", a.Why, a.NoiseSource)
			assert.Equal(t, tc.regressing, points(a, regressing))
			assert.Equal(t, tc.notUniform, points(a, func(p PointReport) bool { return p.NotUniform }))
			assert.Equal(t, tc.pastCliff, points(a, func(p PointReport) bool { return p.PastBaseCliff }))
			assert.LessOrEqual(t, a.NoisePct, tc.maxNoisePct, a.NoiseSource)
			require.NotNil(t, a.DeltaPct)
			assert.InDelta(t, tc.deltaPct, *a.DeltaPct, 0.01)
			for _, p := range a.Points {
				if p.PastBaseCliff {
					assert.Nil(t, p.CIPct, "c%d is not judged", p.Conc)
					assert.Empty(t, p.Verdict, "c%d is not judged", p.Conc)
					continue
				}
				require.NotNil(t, p.CIPct, "c%d", p.Conc)
				assert.True(t, p.CIPct[0] <= p.DeltaPct && p.DeltaPct <= p.CIPct[1], "c%d: Δ %g outside %v", p.Conc, p.DeltaPct, *p.CIPct)
				assert.NotEmpty(t, p.Verdict, "c%d", p.Conc)
			}
		})
	}
}

// TestPointVerdictLowerIsBetter: for a latency the signs turn at the
// points as at the arm: ITL rising 29-488 % past the KV limit regresses
// there.
func TestPointVerdictLowerIsBetter(t *testing.T) {
	itl := func(vals map[int]float64) *knee.Arm {
		a := curve(8, 8, auditBase, nil)
		for i := range a.Samples {
			r := pyjson.Rounded(vals[a.Samples[i].Conc])
			a.Samples[i].ITL = result.Stats{P50: &r}
		}
		return a
	}
	base := itl(map[int]float64{4: 0.00593, 16: 0.01236, 24: 0.01771, 32: 0.02394, 40: 0.02966, 48: 0.03674, 64: 0.05066})
	head := itl(map[int]float64{4: 0.00593, 16: 0.01236, 24: 0.01802, 32: 0.02436, 40: 0.0382, 48: 0.21589, 64: 0.21371})
	rep := Compare([]*knee.Arm{base}, []*knee.Arm{head}, Options{Tolerance: 5, Metric: MetricITLP50})
	a := rep.Arms[0]
	assert.Equal(t, Regression, a.Verdict)
	assert.Equal(t, []int{40, 48, 64}, points(a, regressing))
	assert.Equal(t, 0.00593, a.Points[0].Base, "seconds kept to 6 significant digits")
	assert.Equal(t, 0.0382, a.Points[4].Head)
	assert.False(t, a.Frontier.Covered)
	assert.Contains(t, a.Frontier.Reason, "the frontier compares throughput per GPU")
	assert.Nil(t, a.Frontier.DeltaPct, "no throughput Δ beside a latency whose sign means the opposite")

	var text bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	assert.Contains(t, text.String(), "base ms")
	assert.Regexp(t, `\n\s+4\s+5\.930\s+5\.930\s+\+0\.00 `, text.String(), "milliseconds with three decimals")
	assert.Regexp(t, `\n\s+48\s+36\.740\s+215\.890\s+\+487\.62 `, text.String())
	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, rep))
	assert.Contains(t, js.String(), `"base": 0.00593`)
}

// TestNoiseAcrossArms: four unchanged arms beside one with a capacity
// cliff (the audit's all/allkv). The cliff's points are left out of the
// paired scatter, so it does not make the unchanged arms INCONCLUSIVE.
// Bit-identical, the unchanged arms have no scatter at all and the
// changed arm's is not their noise: the F test (which used to skip it
// because the others' scatter is zero) leaves it out of their pool, and
// on its own uniform points' noise it gets the verdict and interval it
// gets alone. With 1 % noise its uniform points scatter like the others'
// and it is pooled with them: its verdict is the same.
func TestNoiseAcrossArms(t *testing.T) {
	unchanged := []map[int]float64{
		{1: 6121.1, 4: 15095.7, 6: 5368.5},
		{1: 3567.3, 8: 18007.2, 16: 23341.7, 32: 25653.5, 40: 26047.7, 48: 4231.8},
		{4: 11825.1, 16: 23799.7, 32: 26453.6, 40: 26756.7, 48: 4479.0},
		{1: 1948.1, 4: 7083.4, 8: 11666.2, 12: 14744.2, 16: 16882.2, 24: 19442.3, 32: 21032.4, 40: 22070.8, 48: 22267.2, 64: 22656.2, 80: 4221.2},
	}
	alone := Compare([]*knee.Arm{curve(8, 8, auditBase, nil)}, []*knee.Arm{curve(8, 8, auditSmall, nil)}, Options{Tolerance: 5}).Arms[0]
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name    string
		noise   float64 // of the unchanged arms' results
		leftOut bool    // the changed arm out of the pool
	}{
		{"bit-identical", 0, true},
		{"1 % noise", 0.01, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var base, head []*knee.Arm
			for i, u := range unchanged {
				base = append(base, curve(1<<i, 1, u, nil))
				head = append(head, curve(1<<i, 1, jitter(rng, u, tc.noise), nil))
			}
			base = append(base, curve(8, 8, auditBase, nil))
			head = append(head, curve(8, 8, auditSmall, nil))
			rep := Compare(base, head, Options{Tolerance: 5})
			for _, a := range rep.Arms[:4] {
				assert.Equal(t, Pass, a.Verdict, "the unchanged arm %s: %s", a.Arm, a.NoiseSource)
				assert.Less(t, a.NoisePct, 2.0, a.NoiseSource)
			}
			changed := rep.Arms[4]
			assert.Equal(t, Regression, changed.Verdict)
			assert.Equal(t, alone.Verdict, changed.Verdict, "the same verdict as alone")
			assert.Equal(t, []int{40, 48, 64}, points(changed, regressing))
			assert.Equal(t, []int{40, 48, 64}, points(changed, func(p PointReport) bool { return p.NotUniform }))
			if tc.leftOut {
				assert.Equal(t, alone.CIPct, changed.CIPct, "the same interval as alone")
				assert.Contains(t, changed.NoiseSource, "left out of the pool of the other 4 arms")
				for _, a := range rep.Arms[:4] {
					assert.Contains(t, a.NoiseSource, "1 arm left out of the pool as not uniform")
					assert.Equal(t, &[2]float64{0, 0}, a.CIPct, a.Arm)
				}
			} else {
				assert.Contains(t, changed.NoiseSource, "pooled over 5 arms")
			}
			assert.Equal(t, Regression, rep.Verdict)
		})
	}
}

// TestPoolScatter: the F test leaves out an arm whose scatter is not the
// others' noise, also when the others have none.
func TestPoolScatter(t *testing.T) {
	arms := make([]*ArmReport, 4)
	for i := range arms {
		arms[i] = &ArmReport{Arm: string(rune('a' + i))}
	}
	for _, tc := range []struct {
		name string
		ss   []float64 // per arm, each with 4 degrees of freedom
		left []string
	}{
		{"alike", []float64{1e-4, 2e-4, 1.5e-4, 0.8e-4}, nil},
		{"one far above", []float64{1e-4, 2e-4, 1.5e-4, 0.5}, []string{"d"}},
		{"one beside zeros", []float64{0, 0, 0, 1e-4}, []string{"d"}},
		{"two alike beside zeros support each other", []float64{0, 0, 1e-4, 1e-4}, nil},
		{"all zero", []float64{0, 0, 0, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var all []armScatter
			for i, ss := range tc.ss {
				all = append(all, armScatter{arm: arms[i], ss: ss, df: 4})
			}
			pool, left := poolScatter(all)
			var names []string
			for _, s := range left {
				names = append(names, s.arm.Arm)
			}
			slices.Sort(names)
			assert.Equal(t, tc.left, names)
			assert.Len(t, pool, len(all)-len(left))
		})
	}
}

// TestUniformCore: the forward search keeps every point of a uniform
// change and leaves out the points a non-uniform one moved (up to all but
// ⌊k/2⌋+1).
func TestUniformCore(t *testing.T) {
	q := func(k int) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = 2
		}
		return out
	}
	for _, tc := range []struct {
		name string
		ls   []float64
		out  []int // indices left out
	}{
		{"two points", []float64{0, -0.5}, nil},
		{"noise", []float64{0.01, -0.004, 0.007, -0.012, 0.002, 0.0, -0.006}, nil},
		{"identical", []float64{-0.1, -0.1, -0.1, -0.1}, nil},
		{"kv53: the peak", []float64{0, 0, 0, -0.003, -0.0121, -0.0103, -0.105}, []int{6}},
		{"kvsmall: three of seven", []float64{0, 0, -0.0216, -0.0331, -0.799, -1.711, -1.849}, []int{4, 5, 6}},
		{"an improvement at one point", []float64{0.002, -0.003, 0.001, 0.4, 0.0}, []int{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := uniformCore(tc.ls, q(len(tc.ls)))
			var out []int
			for i, ok := range in {
				if !ok {
					out = append(out, i)
				}
			}
			assert.Equal(t, tc.out, out)
		})
	}
}

// TestFrontierCoverage: the frontier Δ covers only the interactivities
// both sides reach, so the report says what lies outside them: HEAD's
// frontier no longer reaching BASE's high-throughput end is its peak's
// loss, stated beside the Δ. The axis is the report charts' (P90
// E2E-normalised interactivity).
func TestFrontierCoverage(t *testing.T) {
	base := curve(8, 8, auditBase, auditBaseIv)
	head := curve(8, 8, auditSmall, auditSmallIv)
	rep := Compare([]*knee.Arm{base}, []*knee.Arm{head}, Options{Tolerance: 5})
	f := rep.Arms[0].Frontier
	require.True(t, f.Covered, f.Reason)
	assert.Equal(t, knee.AxisE2ENormP90, f.Axis)
	assert.Equal(t, &[2]float64{15, 95.3}, f.BaseRange)
	assert.Equal(t, &[2]float64{25.6, 95.3}, f.HeadRange)
	assert.Equal(t, &[2]float64{25.6, 95.3}, f.IntvtyRange)
	assert.Equal(t, 23011.1, f.BasePeak)
	assert.Equal(t, 20525.3, f.HeadPeak)
	require.NotNil(t, f.PeakDeltaPct)
	assert.InDelta(t, -10.80, *f.PeakDeltaPct, 0.01)
	assert.Contains(t, f.Coverage, "only BASE reaches below 25.6 (15.0–25.6, up to 23011.1 tok/s/GPU)")

	var text, md bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	require.NoError(t, WriteMarkdown(&md, rep))
	for _, out := range []string{text.String(), md.String()} {
		assert.Contains(t, out, "peak Δ %")
		assert.Contains(t, out, "-10.80")
		assert.Contains(t, out, "interactivity, P90 E2E-normalised (tok/s/user): Δ over 25.6–95.3 tok/s/user; only BASE reaches below 25.6")
	}

	// Without E2E-normalised interactivity at a point, the median 1/ITL.
	for i := range head.Samples {
		head.Samples[i].E2ENormIntvty = result.Stats{}
	}
	f = Compare([]*knee.Arm{base}, []*knee.Arm{head}, Options{Tolerance: 5}).Arms[0].Frontier
	assert.Equal(t, knee.AxisMedian, f.Axis)
}

// TestFrontierCoverageBelowPrecision: a frontier that reaches past the
// other's by less than the figures print (two seeds' c64 at 14.96 and
// 14.98 tok/s/user) is no reach: the coverage read "only BASE reaches
// below 15.0 (15.0–15.0, ...)"; now it says nothing of it, and names a
// reach the figures show.
func TestFrontierCoverageBelowPrecision(t *testing.T) {
	baseIv := map[int]float64{4: 95.25, 16: 60, 24: 40, 32: 30, 40: 24, 48: 19, 64: 14.96}
	headIv := map[int]float64{4: 96.22, 16: 60, 24: 40, 32: 30, 40: 24, 48: 19, 64: 14.98}
	rep := Compare([]*knee.Arm{curve(8, 8, auditBase, baseIv)}, []*knee.Arm{curve(8, 8, auditBase, headIv)}, Options{Tolerance: 5})
	f := rep.Arms[0].Frontier
	require.True(t, f.Covered, f.Reason)
	assert.Equal(t, &[2]float64{14.96, 95.25}, f.BaseRange)
	assert.Equal(t, "Δ over 15.0–95.2 tok/s/user; only HEAD reaches above 95.2 (95.2–96.2); peak 23011.1 → 23011.1 tok/s/GPU (+0.00 %)", f.Coverage)
}

// TestPointOutput: the text, Markdown and JSON carry every point's
// interval with its confidence and verdict, and the verdict line names
// the regressing points and the correction. One arm's family CI is its
// 90 % interval; its points' intervals are Holm's over its 7 points:
// c64's at 1 − 0.01/7, the others', once c64 is told, at 1 − 0.01/6.
func TestPointOutput(t *testing.T) {
	rep := Compare([]*knee.Arm{curve(8, 8, auditBase, nil)}, []*knee.Arm{curve(8, 8, auditKV53, nil)}, Options{Tolerance: 5})
	assert.Equal(t, "verdict: REGRESSION beyond -5 % of total in 1 of 1 arm (Holm: 90 % family-wise over 1 arm, 99 % over its 7 points): qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8 (at c64)", VerdictLine(rep))
	assert.Contains(t, rep.Arms[0].Why, "c64 regresses beyond -5 % (its 99 % family-wise interval) while the pooled change is PASS")
	assert.Equal(t, rep.Arms[0].CIPct, rep.Arms[0].FamilyCIPct)
	assert.Equal(t, 90.0, rep.Arms[0].FamilyConfidencePct)

	var text, md, js bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	require.NoError(t, WriteMarkdown(&md, rep))
	require.NoError(t, WriteJSON(&js, rep))
	assert.Regexp(t, `\n\s+64\s+23011\.1\s+20713\.5\s+-9\.98 \[-1\d\.\d\d, -\d\.\d\d\] 99\.857%\s+1/1\s+REGRESSION \(not uniform\)\n`, text.String())
	assert.Regexp(t, `\n\s+4\s+7018\.5\s+7018\.5\s+\+0\.00 \[-\d\.\d\d, \+\d\.\d\d\] 99\.833%\s+1/1\s+PASS\n`, text.String())
	assert.Contains(t, text.String(), "99%-family CI")
	assert.Contains(t, text.String(), "\ncorrection: REGRESSION is read at 90 % family-wise over 1 arm and 99 % over its 7 points (Holm)")
	assert.Regexp(t, `\| 64 \| 23011\.1 \| 20713\.5 \| -9\.98 \| \[-1\d\.\d\d, -\d\.\d\d\] 99\.857% \| 1/1 \| REGRESSION \(not uniform\) \|`, md.String())
	assert.Contains(t, md.String(), "\nCorrection: REGRESSION is read at 90 % family-wise")
	var back Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	p := back.Arms[0].Points[6]
	assert.Equal(t, Regression, p.Verdict)
	assert.True(t, p.NotUniform)
	require.NotNil(t, p.CIPct)
	assert.Less(t, p.CIPct[1], -5.0)
	assert.Equal(t, 99.857, p.ConfidencePct)
	assert.Equal(t, 99.833, back.Arms[0].Points[0].ConfidencePct)
	assert.Equal(t, Correction{Method: "holm", Arms: 1, ArmConfidencePct: 90, Points: 7, PointConfidencePct: 99, FalseRegressionPct: 5.5,
		Rule: rep.Correction.Rule}, back.Correction)
	assert.True(t, strings.HasPrefix(back.Arms[0].Why, "c64 regresses"))
}
