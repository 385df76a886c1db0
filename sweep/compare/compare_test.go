package compare

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/knee"
)

// arm builds an arm of tp with one sample per value at the given concs.
func arm(tp int, sim bool, pts map[int][]float64) *knee.Arm {
	a := &knee.Arm{Identity: identity(tp, 1, "none"), Simulated: sim}
	for _, c := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		for _, v := range pts[c] {
			v := v
			a.Samples = append(a.Samples, knee.Sample{Conc: c, TotalTPS: &v, Simulated: sim, File: "f"})
		}
	}
	return a
}

func TestProblems(t *testing.T) {
	ok := map[int][]float64{4: {100}, 8: {200}, 16: {300}}
	for _, tc := range []struct {
		name       string
		base, head []*knee.Arm
		want       []string // Problem.String substrings, in order
		verdict    Decision
	}{
		{"missing arm", []*knee.Arm{arm(2, false, ok), arm(4, false, ok)}, []*knee.Arm{arm(2, false, ok)},
			[]string{"missing-arm: arm qwen3.5 mi325x-amds sglang fp8 mtp tp4: HEAD has no result"}, Incomplete},
		{"missing point", []*knee.Arm{arm(2, false, ok)}, []*knee.Arm{arm(2, false, map[int][]float64{4: {100}, 16: {300}})},
			[]string{"missing-point: arm qwen3.5 mi325x-amds sglang fp8 mtp tp2, conc 8: HEAD has no result"}, Incomplete},
		{"simulated head", []*knee.Arm{arm(2, false, ok)}, []*knee.Arm{arm(2, true, ok)},
			[]string{"simulated-mismatch: arm qwen3.5 mi325x-amds sglang fp8 mtp tp2: BASE is real, HEAD is simulated"}, Incomplete},
		{"only in head is no problem", []*knee.Arm{arm(2, false, ok)},
			[]*knee.Arm{arm(2, false, map[int][]float64{4: {100}, 8: {200}, 16: {300}, 32: {310}}), arm(8, false, ok)}, nil, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Compare(tc.base, tc.head, Options{Tolerance: 5})
			assert.Equal(t, tc.verdict, rep.Verdict)
			require.Len(t, rep.Problems, len(tc.want), "%v", rep.Problems)
			for i, w := range tc.want {
				assert.Contains(t, rep.Problems[i].String(), w)
			}
		})
	}
}

func TestInvalidResults(t *testing.T) {
	b := arm(2, false, map[int][]float64{4: {100, 101}, 8: {200}, 16: {300}})
	b.Samples[1].Excluded = "marked invalid: acceptance length"
	h := arm(2, false, map[int][]float64{4: {100}, 8: {200}, 16: {300}})
	h.Samples[2].Excluded = "error rate 15.0% > 10%"
	rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{Tolerance: 5})
	assert.Equal(t, Incomplete, rep.Verdict)
	require.Len(t, rep.Problems, 1)
	assert.Equal(t, InvalidResult, rep.Problems[0].Kind)
	assert.Equal(t, "head", rep.Problems[0].Side)
	assert.Equal(t, 16, *rep.Problems[0].Conc)
	require.Len(t, rep.Arms[0].Excluded, 1, "the invalid BASE replicate beside a valid one is left out and named")
	assert.Equal(t, Excluded{Side: "base", Conc: 4, File: "f", Reason: "marked invalid: acceptance length"}, rep.Arms[0].Excluded[0])
	assert.Equal(t, []int{4, 8}, []int{rep.Arms[0].Points[0].Conc, rep.Arms[0].Points[1].Conc})
}

// TestInvalidOnBothSides: a point whose results are invalid on both
// sides named BASE's problem alone, so the user who fixed it met HEAD's
// in a second run.
func TestInvalidOnBothSides(t *testing.T) {
	b := arm(2, false, map[int][]float64{4: {100}, 8: {200}, 16: {300}})
	b.Samples[2].Excluded = "engine crashed"
	h := arm(2, false, map[int][]float64{4: {100}, 8: {200}, 16: {300}})
	h.Samples[2].Excluded = "error rate 15.0% > 10%"
	rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{Tolerance: 5})
	assert.Equal(t, Incomplete, rep.Verdict)
	require.Len(t, rep.Problems, 2, "%v", rep.Problems)
	for i, want := range []string{"no valid BASE result: engine crashed", "no valid HEAD result: error rate 15.0% > 10%"} {
		assert.Equal(t, InvalidResult, rep.Problems[i].Kind)
		assert.Equal(t, 16, *rep.Problems[i].Conc)
		assert.Contains(t, rep.Problems[i].String(), want)
	}
}

// TestVerdict: the interval against the tolerance, higher or lower
// better.
func TestVerdict(t *testing.T) {
	l := func(p float64) float64 { return pctToLog(p) }
	for _, tc := range []struct {
		lo, hi float64
		metric Metric
		want   Decision
	}{
		{-4, 1, MetricTotal, Pass},
		{6, 9, MetricTotal, Improvement},
		{-9, -6, MetricTotal, Regression},
		{-7, -3, MetricTotal, Inconclusive},
		{-5, -4, MetricTotal, Inconclusive}, // exactly at -tol is not above it
		{6, 9, MetricTTFTP50, Regression},
		{-9, -6, MetricTTFTP50, Improvement},
		{-1, 4, MetricTTFTP50, Pass},
	} {
		assert.Equal(t, tc.want, verdict(l(tc.lo), l(tc.hi), Options{Tolerance: 5, Metric: tc.metric}), "%+v", tc)
	}
}

func TestNoNoiseEstimate(t *testing.T) {
	b := arm(2, false, map[int][]float64{8: {200}})
	h := arm(2, false, map[int][]float64{8: {150}})
	rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{})
	assert.Equal(t, Inconclusive, rep.Verdict)
	assert.Nil(t, rep.Arms[0].CIPct)
	assert.InDelta(t, -25, *rep.Arms[0].DeltaPct, 1e-9)
	assert.Contains(t, rep.Arms[0].NoiseSource, "none")
}

// TestCalibration: an A/A calibration gives a one-arm comparison without
// replicates its noise, and an INCONCLUSIVE arm its replicate advice.
func TestCalibration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runs := make([][]*knee.Arm, 4)
	noisy := func(v float64) []float64 { return []float64{v * (1 + 0.02*rng.NormFloat64())} }
	for i := range runs {
		runs[i] = []*knee.Arm{arm(2, false, map[int][]float64{4: noisy(100), 8: noisy(200), 16: noisy(300)})}
	}
	cal, err := Calibrate([]string{"r1", "r2", "r3", "r4"}, runs, MetricTotal)
	require.NoError(t, err)
	require.Len(t, cal.Arms, 1)
	assert.Equal(t, 9, cal.Arms[0].DF)
	assert.InDelta(t, 0.02, cal.Arms[0].SigmaLog, 0.012)

	var buf bytes.Buffer
	require.NoError(t, WriteCalibration(&buf, cal))
	path := filepath.Join(t.TempDir(), "noise.json")
	require.NoError(t, writeFile(path, buf.Bytes()))
	back, err := ReadCalibration(path)
	require.NoError(t, err)
	assert.Equal(t, cal.Arms, back.Arms)

	b := arm(2, false, map[int][]float64{4: {100}, 8: {200}})
	h := arm(2, false, map[int][]float64{4: {90}, 8: {185}})
	rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{Tolerance: 5, Calibration: back})
	assert.Contains(t, rep.Arms[0].NoiseSource, "calibration")
	require.NotNil(t, rep.Arms[0].CIPct)

	_, err = Calibrate(nil, [][]*knee.Arm{runs[0]}, MetricTotal)
	assert.ErrorIs(t, err, ErrNoRepeats)
}

func TestMarkdownEscapes(t *testing.T) {
	b := arm(2, false, map[int][]float64{4: {100}, 8: {200}, 16: {300}})
	h := arm(2, false, map[int][]float64{4: {100}, 16: {300}})
	for i := range b.Samples {
		b.Samples[i].Image = "img|<img src=x>\n# [x](http://e)"
	}
	var buf bytes.Buffer
	require.NoError(t, WriteMarkdown(&buf, Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{})))
	out := buf.String()
	assert.NotRegexp(t, `(^|[^\\])<img`, out, "an HTML tag survived unescaped")
	assert.NotContains(t, out, "[x](", "a link survived")
	for _, line := range strings.Split(out, "\n") {
		assert.False(t, strings.HasPrefix(line, "#"), "a heading broke out: %q", line)
	}
}

func TestFrontier(t *testing.T) {
	mk := func(scale float64) *knee.Arm {
		a := &knee.Arm{Identity: identity(2, 1, "none")}
		rng := rand.New(rand.NewPCG(3, 4))
		for _, c := range []int{1, 2, 4, 8, 16, 32} {
			s := sample(rng, c, scale*100*float64(c)/(1+float64(c)/8), 0)
			a.Samples = append(a.Samples, s)
		}
		return a
	}
	rep := Compare([]*knee.Arm{mk(1)}, []*knee.Arm{mk(0.8)}, Options{})
	f := rep.Arms[0].Frontier
	require.True(t, f.Covered, f.Reason)
	assert.InDelta(t, -20, *f.DeltaPct, 0.01, "throughput 20 %% lower at every interactivity")
	assert.Len(t, f.At, frontierSteps)

	// The same engine measured at fewer concurrencies (an adaptive
	// discovery against the full grid): the frontiers are drawn through
	// the paired points only, so HEAD's chords do not read as a loss.
	sparse := mk(1)
	sparse.Samples = slices.DeleteFunc(sparse.Samples, func(s knee.Sample) bool { return s.Conc == 2 || s.Conc == 8 })
	rep = Compare([]*knee.Arm{mk(1)}, []*knee.Arm{sparse}, Options{})
	f = rep.Arms[0].Frontier
	require.True(t, f.Covered, f.Reason)
	assert.InDelta(t, 0, *f.DeltaPct, 1e-9, "the same curve")
}

func pctToLog(p float64) float64 { return math.Log1p(p / 100) }

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

// TestEngineFlagDiffs: the engine commands recorded beside the results
// are compared flag by flag (the simulated engine's wrapper and the ports
// left out), each difference named with where it holds.
func TestEngineFlagDiffs(t *testing.T) {
	dir := t.TempDir()
	write := func(side string, conc int, cmd string) string {
		d := filepath.Join(dir, side, fmt.Sprintf("c%d", conc))
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "vllm_command.txt"), []byte(cmd), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, "benchmark_command.txt"), []byte("aiperf profile --flag-that-is-not-the-engine's\n"), 0o644))
		return filepath.Join(d, "r.json")
	}
	mk := func(side string, cmds map[int]string) *knee.Arm {
		a := &knee.Arm{Identity: identity(2, 1, "none")}
		for _, c := range []int{4, 8} {
			v := 100.0 * float64(c)
			a.Samples = append(a.Samples, knee.Sample{Conc: c, TotalTPS: &v, File: write(side, c, cmds[c])})
		}
		return a
	}
	base := "export CUDA_VISIBLE_DEVICES=0,1\n/opt/sweep sim-engine \\\n  --unchecked \\\n  -- vllm serve m \\\n  --port 8000 \\\n  --gpu-memory-utilization 0.9 \\\n  --enforce-eager\n"
	b := mk("base", map[int]string{4: base, 8: base})
	h := mk("head", map[int]string{
		4: strings.Replace(base, "0.9", "0.95", 1),
		8: strings.NewReplacer("0.9", "0.95", "--port 8000", "--port 9000", "--enforce-eager", "--speculative-config '{\"n\": 3}'").Replace(base),
	})
	rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{})
	assert.Equal(t, []string{
		`engine flag --enforce-eager removed (conc 8)`,
		`engine flag --gpu-memory-utilization 0.9 → 0.95 (every paired point)`,
		`engine flag --speculative-config {"n": 3} added (conc 8)`,
	}, rep.Arms[0].Differs)
}

// TestEngineFlagsAsTheEngineReadsThem: engine flags are compared as the
// engine reads them, so spellings it reads alike (SGLang's argparse
// abbreviation, FLAG=VALUE) are one flag, named by its canonical name.
// Before, "--max-running-req 8" against "--max-running-requests=8" read
// as one flag added and another removed.
func TestEngineFlagsAsTheEngineReadsThem(t *testing.T) {
	const sglang = "/opt/sweep sim-engine -- python3 -m sglang.launch_server --model-path m --port 8000 "
	tests := []struct {
		name, base, head string
		want             []string
	}{
		{"abbreviated against attached", "--max-running-requests=8", "--max-running-req 8", nil},
		{"abbreviated against full, another value", "--max-running-requests 32", "--max-running-req 8",
			[]string{"engine flag --max-running-requests 32 → 8 (every paired point)"}},
		{"alias against name", "--tp-size 8", "--tp 8", nil},
		{"a flag the schema does not know stays as spelt", "--max-running-requests 8", "--max-running-requests 8 --frobnicate 1",
			[]string{"engine flag --frobnicate 1 added (every paired point)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mk := func(side, flags string) *knee.Arm {
				d := filepath.Join(dir, side)
				require.NoError(t, os.MkdirAll(d, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(d, "sglang_command.txt"), []byte(sglang+flags+"\n"), 0o644))
				v := 400.0
				return &knee.Arm{Identity: identity(2, 1, "none"), Samples: []knee.Sample{{Conc: 4, TotalTPS: &v, File: filepath.Join(d, "r.json")}}}
			}
			rep := Compare([]*knee.Arm{mk("base", tc.base)}, []*knee.Arm{mk("head", tc.head)}, Options{})
			var differs []string
			for _, d := range rep.Arms[0].Differs {
				if strings.HasPrefix(d, "engine flag") {
					differs = append(differs, d)
				}
			}
			assert.Equal(t, tc.want, differs)
		})
	}
}

// TestEnergyMetric: energy per output token compares like a latency, a
// rise beyond the tolerance being the regression; results without a valid
// power lane have no value.
func TestEnergyMetric(t *testing.T) {
	mk := func(j float64, concs ...int) *knee.Arm {
		a := &knee.Arm{Identity: identity(2, 1, "none")}
		for i, c := range concs {
			v, e := 100.0, j*(1+0.001*float64(i))
			a.Samples = append(a.Samples, knee.Sample{Conc: c, TotalTPS: &v, JoulesPerOutputToken: &e, File: "f"})
		}
		return a
	}
	rep := Compare([]*knee.Arm{mk(10, 4, 8, 16)}, []*knee.Arm{mk(12, 4, 8, 16)}, Options{Metric: MetricEnergy})
	assert.Equal(t, Regression, rep.Verdict, "20 %% more joules per token")
	assert.InDelta(t, 20, *rep.Arms[0].DeltaPct, 0.01)
	rep = Compare([]*knee.Arm{mk(10, 4, 8, 16)}, []*knee.Arm{mk(8, 4, 8, 16)}, Options{Metric: MetricEnergy})
	assert.Equal(t, Pass, rep.Verdict)
	assert.Equal(t, Improvement, rep.Arms[0].Verdict)
	noPower := mk(10, 4, 8, 16)
	for i := range noPower.Samples {
		noPower.Samples[i].JoulesPerOutputToken = nil
	}
	rep = Compare([]*knee.Arm{mk(10, 4, 8, 16)}, []*knee.Arm{noPower}, Options{Metric: MetricEnergy})
	assert.Equal(t, Incomplete, rep.Verdict, "no valid power on HEAD")
}

// TestProbeLengths: an adaptive discovery's short probes are compared
// only with probes; beside a full-length result of their point they are
// left out and named, and a probe against a full-length result is a
// problem, never a change.
func TestProbeLengths(t *testing.T) {
	probe := func(a *knee.Arm, c int, v float64) *knee.Arm {
		a.Samples = append(a.Samples, knee.Sample{Conc: c, TotalTPS: &v, Probe: true, File: fmt.Sprintf("probe-c%d", c)})
		return a
	}
	full := map[int][]float64{4: {100}, 8: {200}, 16: {300}}
	t.Run("probe against full length", func(t *testing.T) {
		h := probe(arm(2, false, map[int][]float64{4: {100}, 16: {300}}), 8, 400)
		rep := Compare([]*knee.Arm{arm(2, false, full)}, []*knee.Arm{h}, Options{Tolerance: 5})
		assert.Equal(t, Incomplete, rep.Verdict)
		require.Len(t, rep.Problems, 1)
		assert.Equal(t, LengthMismatch, rep.Problems[0].Kind)
		assert.Equal(t, 8, *rep.Problems[0].Conc)
		assert.Contains(t, rep.Problems[0].Detail, "HEAD measured it only as a short probe")
		assert.Equal(t, []int{4, 16}, pointConcs(rep.Arms[0].Points), "c8 is not paired")
	})
	t.Run("probe beside a full-length result", func(t *testing.T) {
		h := probe(arm(2, false, full), 16, 900) // re-run at full length: the probe read 3× high
		rep := Compare([]*knee.Arm{arm(2, false, full)}, []*knee.Arm{h}, Options{Tolerance: 5})
		assert.Equal(t, Pass, rep.Verdict)
		assert.Empty(t, rep.Problems)
		require.Len(t, rep.Arms[0].Points, 3)
		p := rep.Arms[0].Points[2]
		assert.Equal(t, PointReport{Conc: 16, Base: 300, Head: 300, DeltaPct: 0, BaseN: 1, HeadN: 1}, PointReport{Conc: p.Conc, Base: p.Base, Head: p.Head, DeltaPct: p.DeltaPct, BaseN: p.BaseN, HeadN: p.HeadN})
		assert.Equal(t, []Excluded{{Side: "head", Conc: 16, File: "probe-c16", Reason: knee.ExcludedSuperseded}}, rep.Arms[0].Excluded)
		assert.InDelta(t, 0, *rep.Arms[0].DeltaPct, 1e-9)
	})
	t.Run("probes pair with probes", func(t *testing.T) {
		b := probe(arm(2, false, map[int][]float64{4: {100}, 16: {300}}), 8, 200)
		h := probe(arm(2, false, map[int][]float64{4: {100}, 16: {300}}), 8, 180)
		rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{Tolerance: 5})
		assert.Empty(t, rep.Problems)
		require.Len(t, rep.Arms[0].Points, 3)
		assert.InDelta(t, -10, rep.Arms[0].Points[1].DeltaPct, 1e-9)
	})
	t.Run("calibration reads full-length results only", func(t *testing.T) {
		a := probe(probe(arm(2, false, full), 8, 400), 16, 900)
		cal, err := Calibrate([]string{"x"}, [][]*knee.Arm{{a}, {arm(2, false, full)}}, MetricTotal)
		require.NoError(t, err)
		for _, p := range cal.Arms[0].Points {
			assert.Equal(t, 2, p.N, "c%d", p.Conc)
			assert.Zero(t, p.SigmaLog, "c%d: identical full-length results", p.Conc)
		}
	})
}

// TestSimCalibrationDiffers: simulated sides whose engines ran with
// different calibrations name what each set among the differences;
// the same setting under another file name is no difference.
func TestSimCalibrationDiffers(t *testing.T) {
	set := func(a *knee.Arm, setting string) *knee.Arm {
		for i := range a.Samples {
			a.Samples[i].SimCalibration = setting
		}
		return a
	}
	pts := map[int][]float64{4: {100}, 8: {200}}
	b := arm(2, true, pts)
	h := set(arm(2, true, pts), "step costs x1.5, pool 2000000 tokens per rank")
	rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{})
	assert.Equal(t, []string{"simulated engine's calibration: (none) → step costs x1.5, pool 2000000 tokens per rank"}, rep.Arms[0].Differs)
	var text bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	assert.Contains(t, text.String(), "\n  differs: simulated engine's calibration: (none) → step costs x1.5, pool 2000000 tokens per rank\n", "the terminal shows it above the arm's points")

	b = set(arm(2, true, pts), "step costs x1.5, pool 2000000 tokens per rank")
	rep = Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{})
	assert.Empty(t, rep.Arms[0].Differs)
	// Replicates with and without a calibration list both: the side
	// named the calibrated one alone.
	b = arm(2, true, map[int][]float64{4: {100, 100}, 8: {200, 200}})
	b.Samples[0].SimCalibration = "step costs x1.5, pool 2000000 tokens per rank"
	rep = Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{})
	assert.Equal(t, []string{"simulated engine's calibration: (none), step costs x1.5, pool 2000000 tokens per rank → step costs x1.5, pool 2000000 tokens per rank"}, rep.Arms[0].Differs)
}

// TestSimSeedAndFaultsDiffer: a side whose simulated engines ran with
// another seed or an injected fault says so; both were recorded nowhere
// a comparison read, so a slowed engine's regression read as a change.
func TestSimSeedAndFaultsDiffer(t *testing.T) {
	pts := map[int][]float64{4: {100}, 8: {200}}
	b, h := arm(2, true, pts), arm(2, true, pts)
	for i := range h.Samples {
		b.Samples[i].SimSeed = "0"
		h.Samples[i].SimSeed, h.Samples[i].SimFaults = "2", "slow-steps:10"
	}
	rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{})
	assert.Equal(t, []string{"simulated engine's seed: 0 → 2", "simulated engine's faults: (none) → slow-steps:10"}, rep.Arms[0].Differs)
}

// TestBenchmarkDurations: a point each side's client ran for another
// benchmark duration (a discovery's 1200 s against an official sweep's
// 3600 s) is a length-mismatch problem, as a probe against a full-length
// point is, never a change: the comparison is INCOMPLETE, says why, and
// names the durations among what differs. It read REGRESSION at c4
// (-7.5 %, the lengths' difference) with nothing naming the durations.
func TestBenchmarkDurations(t *testing.T) {
	at := func(seconds float64, pts map[int][]float64, probe bool) *knee.Arm {
		a := arm(2, true, pts)
		for i := range a.Samples {
			a.Samples[i].BenchmarkSeconds, a.Samples[i].Probe = seconds, probe
		}
		return a
	}
	base := map[int][]float64{4: {7018.5}, 8: {12000}, 16: {16895.3}, 32: {21215.6}}
	head := map[int][]float64{4: {6490.2}, 8: {12010}, 16: {16900}, 32: {21220}}
	t.Run("every point", func(t *testing.T) {
		rep := Compare([]*knee.Arm{at(1200, base, false)}, []*knee.Arm{at(3600, head, false)}, Options{Tolerance: 5})
		assert.Equal(t, Incomplete, rep.Verdict)
		require.Len(t, rep.Problems, 4)
		for _, p := range rep.Problems {
			assert.Equal(t, LengthMismatch, p.Kind)
		}
		assert.Equal(t, "BASE ran it for 1200 s, HEAD for 3600 s (the client's configured benchmark duration): results of different lengths are not compared (a longer run's sessions get further, its cache warms and its KV pool fills otherwise); measure c4 on both sides at one length (the same sweep command, or the same --duration)",
			rep.Problems[0].Detail)
		assert.Empty(t, rep.Arms[0].Points)
		assert.Equal(t, []string{"client's benchmark duration: 1200 s → 3600 s"}, rep.Arms[0].Differs)
		assert.Equal(t, "verdict: INCOMPLETE: 4 problems (4 length-mismatch); no verdict is drawn from incomplete data", VerdictLine(rep))
		var text bytes.Buffer
		require.NoError(t, WriteText(&text, rep))
		assert.Contains(t, text.String(), "\n  differs: client's benchmark duration: 1200 s → 3600 s\n", "named for an arm with no paired point too")
	})
	t.Run("one point", func(t *testing.T) {
		h := at(1200, head, false)
		h.Samples[0].BenchmarkSeconds = 3600
		rep := Compare([]*knee.Arm{at(1200, base, false)}, []*knee.Arm{h}, Options{Tolerance: 5})
		assert.Equal(t, Incomplete, rep.Verdict)
		require.Len(t, rep.Problems, 1)
		assert.Equal(t, 4, *rep.Problems[0].Conc)
		assert.Equal(t, []int{8, 16, 32}, pointConcs(rep.Arms[0].Points))
		assert.Equal(t, []string{"client's benchmark duration: 1200 s → 1200 s, 3600 s"}, rep.Arms[0].Differs)
	})
	t.Run("probes of different lengths", func(t *testing.T) {
		rep := Compare([]*knee.Arm{at(180, base, true)}, []*knee.Arm{at(300, head, true)}, Options{Tolerance: 5})
		require.Len(t, rep.Problems, 4)
		assert.True(t, strings.HasPrefix(rep.Problems[0].Detail, "BASE probed it for 180 s, HEAD for 300 s"), rep.Problems[0].Detail)
	})
	t.Run("one length", func(t *testing.T) {
		rep := Compare([]*knee.Arm{at(1200, base, false)}, []*knee.Arm{at(1200, base, false)}, Options{Tolerance: 5})
		assert.Empty(t, rep.Problems)
		assert.Empty(t, rep.Arms[0].Differs)
	})
	t.Run("a side that does not say", func(t *testing.T) {
		rep := Compare([]*knee.Arm{at(1200, base, false)}, []*knee.Arm{at(0, base, false)}, Options{Tolerance: 5})
		assert.Empty(t, rep.Problems, "an unknown duration without spans is no mismatch")
		assert.Equal(t, []string{"client's benchmark duration: 1200 s → unknown"}, rep.Arms[0].Differs)
	})
	// A side whose aiperf artifacts were deleted does not say its
	// duration, but its results say the span they measured
	// (request_metrics.throughput.duration_seconds), at least about the
	// duration its client ran for: one more than knee.SpanTolerance short
	// of the other side's known duration is a shorter run. A 600 s
	// discovery without its artifacts (spans 619.5 s) against a 1200 s
	// one read PASS.
	spanned := func(seconds, span float64) *knee.Arm {
		a := at(seconds, base, false)
		for i := range a.Samples {
			a.Samples[i].Seconds = span
		}
		return a
	}
	// slowed is a with every throughput times f, as an engine f times as
	// fast delivers.
	slowed := func(a *knee.Arm, f float64) *knee.Arm {
		for i := range a.Samples {
			v := *a.Samples[i].TotalTPS * f
			a.Samples[i].TotalTPS = &v
		}
		return a
	}
	// oneFar is a with the span of its point at c4 alone set to span.
	oneFar := func(a *knee.Arm, span float64) *knee.Arm {
		a.Samples[0].Seconds = span
		return a
	}
	// Where neither side's duration is known, the arm's sides are runs of
	// different lengths when their spans lie a median more than
	// knee.ArmSpansApart apart and the longer spans delivered that much
	// more work (throughput × span), as a longer run does and a slower
	// engine does not. 120 s results against 200 s ones (spans 132 s
	// against 216 s, throughput unchanged) read PASS, and 120 s against
	// 240 s flagged only the point whose spans were twice apart.
	const apart = "BASE and HEAD ran this arm for durations their results do not say (no aiperf artifacts beside them, and no run.json that says it): HEAD's measured spans are a median "
	t.Run("both unknown: an arm of one point", func(t *testing.T) {
		one := func(span float64) *knee.Arm {
			a := at(0, map[int][]float64{16: {16895.3}}, false)
			a.Samples[0].Seconds = span
			return a
		}
		rep := Compare([]*knee.Arm{one(132.2)}, []*knee.Arm{one(215.8)}, Options{Tolerance: 5})
		require.Len(t, rep.Problems, 1)
		assert.Contains(t, rep.Problems[0].Detail, "HEAD's measured spans are a median 1.63x BASE's over the one point both measured (132.2 s → 215.8 s here)")
	})
	for _, tc := range []struct {
		name       string
		base, head *knee.Arm
		detail     string // the first problem's; "" for none
	}{
		{"HEAD's duration unknown, its span half BASE's duration", spanned(1200, 1224), spanned(0, 619.5),
			"BASE ran it for 1200 s (the client's configured benchmark duration), HEAD for a duration its results do not say (no aiperf artifacts beside them, and no run.json that says it) over a measured span of 619.5 s, more than 10 % short of 1200 s: a shorter run; results of different lengths are not compared (a longer run's sessions get further, its cache warms and its KV pool fills otherwise); measure c4 on both sides at one length (the same sweep command, or the same --duration), and keep the aiperf artifacts or run.json beside the results"},
		{"BASE's duration unknown, its span short of HEAD's", spanned(0, 619.5), spanned(1200, 1224),
			"HEAD ran it for 1200 s (the client's configured benchmark duration), BASE for a duration its results do not say (no aiperf artifacts beside them, and no run.json that says it) over a measured span of 619.5 s"},
		{"HEAD's span within 10 % of BASE's duration", spanned(1200, 1224), spanned(0, 1081), ""},
		{"HEAD's span longer: a span never tells a longer run", spanned(600, 619.5), spanned(0, 1224), ""},
		{"both unknown: spans a third apart at a quarter less throughput, as a slower engine's at one length", spanned(0, 2431), slowed(spanned(0, 3293), 0.75), ""},
		{"both unknown: spans 12 % apart at half the throughput", spanned(0, 132), slowed(spanned(0, 148), 0.44), ""},
		{"both unknown: a faster HEAD's shorter spans", spanned(0, 1224), slowed(spanned(0, 1000), 1.5), ""},
		{"both unknown: spans 1.6 times apart at one throughput (120 s against 200 s)", spanned(0, 132.2), spanned(0, 215.8),
			apart + "1.63x BASE's over the 4 points both measured (132.2 s → 215.8 s here) and the work they delivered (throughput × span) a median 1.63x, more than 15 % apart the same way: runs of different lengths"},
		{"both unknown: HEAD's spans shorter at one throughput", spanned(0, 1224), spanned(0, 619.5), apart + "0.506x"},
		{"both unknown: spans twice apart at one throughput, once under the other's half", spanned(0, 619.5), oneFar(spanned(0, 1224), 1300),
			"BASE and HEAD ran it for durations their results do not say (no aiperf artifacts beside them, and no run.json that says it) over measured spans of 619.5 s and 1300 s, more than 50 % apart: runs of different lengths"},
		{"both unknown: one point's spans 20 % apart, the arm's alike", spanned(0, 1000), oneFar(spanned(0, 1000), 1200), ""},
		{"both unknown: spans 1.6 times apart at 20 % less throughput: more work, a longer run", spanned(0, 132.2), slowed(spanned(0, 215.8), 0.8), apart + "1.63x"},
		{"both unknown: spans more than twice apart", spanned(0, 1210), spanned(0, 306),
			"BASE and HEAD ran it for durations their results do not say (no aiperf artifacts beside them, and no run.json that says it) over measured spans of 1210 s and 306 s, more than 50 % apart: runs of different lengths"},
		{"known durations win over the spans", spanned(1200, 1224), spanned(1200, 600), ""},
		{"known durations that differ, spans alike", spanned(1200, 1224), spanned(1100, 1224), "BASE ran it for 1200 s, HEAD for 1100 s (the client's configured benchmark duration)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Compare([]*knee.Arm{tc.base}, []*knee.Arm{tc.head}, Options{Tolerance: 5})
			if tc.detail == "" {
				assert.Empty(t, rep.Problems)
				return
			}
			assert.Equal(t, Incomplete, rep.Verdict)
			require.Len(t, rep.Problems, 4)
			assert.Equal(t, LengthMismatch, rep.Problems[0].Kind)
			assert.True(t, strings.HasPrefix(rep.Problems[0].Detail, tc.detail), "got %s\nwant %s...", rep.Problems[0].Detail, tc.detail)
		})
	}
	t.Run("an invalid result's span is not the point's", func(t *testing.T) {
		h := spanned(0, 1230)
		cut := knee.Sample{Conc: 4, TotalTPS: new(6000.0), Simulated: true, File: "cut", Seconds: 30, Excluded: "marked invalid: stage client failed"}
		h.Samples = append(h.Samples, cut)
		rep := Compare([]*knee.Arm{spanned(1200, 1224)}, []*knee.Arm{h}, Options{Tolerance: 5})
		assert.Empty(t, rep.Problems)
	})
}

// TestTooFewDegreesOfFreedom: with two paired points and nothing else
// the noise has one degree of freedom, and a point's 99 % family-wise
// interval spanned "[-99.99, +605441.91]": no interval is given, the arm
// is INCONCLUSIVE and its note says what would give one, not how many
// results per point would decide it. A third point gives intervals.
func TestTooFewDegreesOfFreedom(t *testing.T) {
	base := map[int]float64{4: 7018.5, 16: 16895.3}
	head := map[int]float64{4: 6490.2, 16: 17225.3}
	rep := Compare([]*knee.Arm{curve(8, 8, base, nil)}, []*knee.Arm{curve(8, 8, head, nil)}, Options{Tolerance: 5})
	a := rep.Arms[0]
	assert.Equal(t, Inconclusive, a.Verdict)
	assert.Equal(t, Inconclusive, rep.Verdict)
	require.NotNil(t, a.DeltaPct)
	assert.Nil(t, a.CIPct)
	assert.Nil(t, a.FamilyCIPct)
	assert.Zero(t, a.ReplicatesNeeded)
	assert.Equal(t, 1, a.NoiseDF)
	assert.True(t, strings.HasPrefix(a.NoiseSource, "too few: paired scatter: "), a.NoiseSource)
	for _, p := range a.Points {
		assert.Nil(t, p.CIPct, "c%d", p.Conc)
		assert.Empty(t, p.Verdict, "c%d", p.Conc)
	}
	assert.Zero(t, rep.Correction.Arms)
	var text bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	assert.Contains(t, text.String(), "(1 degree of freedom); an interval needs 2 degrees of freedom or more (a third paired point, a second result per point and side, or a calibration, sweep compare --calibrate, would give them)")
	assert.NotContains(t, text.String(), "would decide it")

	base[24], head[24] = 19674.3, 19700
	rep = Compare([]*knee.Arm{curve(8, 8, base, nil)}, []*knee.Arm{curve(8, 8, head, nil)}, Options{Tolerance: 5})
	assert.Equal(t, 2, rep.Arms[0].NoiseDF)
	assert.NotNil(t, rep.Arms[0].CIPct, "two degrees of freedom give intervals")
	assert.NotNil(t, rep.Arms[0].Points[0].CIPct)
}

// TestMarkdownSummaryIsHTML: the <summary> of an arm's folded points is
// raw HTML, where GitHub reads no Markdown: its text is HTML-escaped
// ("p &lt; 0.001"), never backslash-escaped ("p \< 0.001" showed the
// backslash); the rest stays Markdown-escaped.
func TestMarkdownSummaryIsHTML(t *testing.T) {
	rep := Compare([]*knee.Arm{curve(8, 8, auditBase, nil)}, []*knee.Arm{curve(8, 8, auditKV53, nil)}, Options{Tolerance: 5})
	require.Contains(t, rep.Arms[0].NoiseSource, "p < 0.001")
	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, rep))
	var summary string
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "<details><summary>") {
			summary = line
		}
	}
	require.NotEmpty(t, summary, md.String())
	assert.Contains(t, summary, "(beyond the other points' prediction interval, p &lt; 0.001)")
	assert.NotContains(t, summary, `\`)
	assert.True(t, strings.HasSuffix(summary, "</summary>"), summary)
}

// TestSetupDiffers: a side made with another client, aiperf version or
// trace set read PASS with no word of it, where another image is named
// under differs. They are named now; another trace set is another
// workload, so the arm is INCOMPLETE (dataset-mismatch), while another
// client or aiperf version on the same traces is only named. A side
// whose results do not say their traces is no mismatch.
func TestSetupDiffers(t *testing.T) {
	const weka, synth = "semianalysis_cc_traces_weka_062126_256k, hf semianalysisai/cc-traces-weka-062126-256k, 393 entries", "sweep_synthetic_agentic, 393 entries"
	pts := map[int][]float64{4: {100}, 8: {200}}
	for _, tc := range []struct {
		name       string
		base, head knee.Setup
		differs    []string
		problem    string // "": none
		incomplete bool
	}{
		{"the same", knee.Setup{Client: "aiperf 0.12.0", AiperfVersion: "0.12.0", Dataset: weka}, knee.Setup{Client: "aiperf 0.12.0", AiperfVersion: "0.12.0", Dataset: weka},
			[]string{}, "", false},
		{"another client on the same traces", knee.Setup{Client: "aiperf 0.12.0", Dataset: weka}, knee.Setup{Client: "aiperf fork", Dataset: weka},
			[]string{"client: aiperf 0.12.0 → aiperf fork"}, "", false},
		{"another aiperf version", knee.Setup{AiperfVersion: "0.12.0"}, knee.Setup{AiperfVersion: "0.14.2"},
			[]string{"aiperf version: 0.12.0 → 0.14.2"}, "", false},
		{"another trace set", knee.Setup{Client: "aiperf 0.12.0", Dataset: weka}, knee.Setup{Client: "built-in (aiperf 0.12.0 artifacts)", Dataset: synth},
			[]string{"client: aiperf 0.12.0 → built-in (aiperf 0.12.0 artifacts)", "trace set: " + weka + " → " + synth},
			"dataset-mismatch: arm qwen3.5 mi325x-amds sglang fp8 mtp tp2: BASE replayed " + weka + ", HEAD " + synth + ": results of different trace sets measure different workloads and are never compared; run both sides on one trace set", true},
		{"traces not said on one side", knee.Setup{}, knee.Setup{Dataset: weka}, []string{"trace set: (none) → " + weka}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, h := arm(2, false, pts), arm(2, false, pts)
			for i := range b.Samples {
				b.Samples[i].Client, b.Samples[i].AiperfVersion, b.Samples[i].Dataset = tc.base.Client, tc.base.AiperfVersion, tc.base.Dataset
				h.Samples[i].Client, h.Samples[i].AiperfVersion, h.Samples[i].Dataset = tc.head.Client, tc.head.AiperfVersion, tc.head.Dataset
			}
			rep := Compare([]*knee.Arm{b}, []*knee.Arm{h}, Options{Tolerance: 5})
			assert.Equal(t, tc.differs, rep.Arms[0].Differs)
			assert.Equal(t, tc.incomplete, rep.Verdict == Incomplete, "%s", rep.Verdict)
			if tc.problem == "" {
				assert.Empty(t, rep.Problems)
				return
			}
			require.Len(t, rep.Problems, 1)
			assert.Equal(t, tc.problem, rep.Problems[0].String())
		})
	}
}
