package knee

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/pyjson"
	"sweep/metrics/result"
)

// wpt is a made-up window point.
func wpt(c int, tput, inter float64) WindowPoint {
	return WindowPoint{Conc: c, Throughput: tput, Interactivity: inter}
}

// flatAfter8 is a made-up curve that rises to about 1000 tok/s/GPU by
// c8 and stays flat after it.
func flatAfter8(concs ...int) []WindowPoint {
	v := map[int]float64{1: 120, 2: 240, 4: 470, 8: 900, 16: 1000, 32: 1010, 64: 1005, 128: 1000}
	var pts []WindowPoint
	for _, c := range concs {
		pts = append(pts, wpt(c, v[c], 100/float64(c)))
	}
	return pts
}

// TestWindowJudge holds the strict and by-peak rules on made-up curves: a
// knee inside the window agrees; a knee at the window's first point (a
// flat window) agrees by the peak only when the peak lies inside; an arm
// still rising at the top agrees by neither; a failed point fails both;
// an arm of fewer than three points only needs them green.
func TestWindowJudge(t *testing.T) {
	for _, tc := range []struct {
		name           string
		pts            []WindowPoint
		strict, byPeak bool
		why            string
	}{
		{"knee inside", flatAfter8(1, 2, 4, 8, 16, 32, 64), true, true, "ambiguous knee c16 peak c32 window 1-64"},
		{"still rising", flatAfter8(1, 2, 4, 8), false, false, "unsaturated no knee window 1-8"},
		{"flat from the first point, peak inside", []WindowPoint{wpt(64, 990, 5), wpt(68, 1000, 4), wpt(72, 1010, 4), wpt(76, 1000, 3)}, false, true, "saturated-at-min knee c64 peak c72 window 64-76"},
		{"flat, peak at the first point", []WindowPoint{wpt(64, 1010, 5), wpt(68, 1000, 4), wpt(72, 990, 4), wpt(76, 980, 3)}, false, false, "saturated-at-min knee c64 peak c64 window 64-76"},
		{"a failed point", append(flatAfter8(1, 2, 4, 8, 16, 32), WindowPoint{Conc: 64, Failed: true}), false, false, "1 of 7 points failed"},
		{"two green points", flatAfter8(1, 2), true, true, "0 of 2 points failed"},
		{"two points, one failed", []WindowPoint{wpt(1, 100, 50), {Conc: 2, Failed: true}}, false, false, "1 of 2 points failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			strict, byPeak, why := CurveWindow("tp8", tc.pts).Judge()
			assert.Equal(t, tc.strict, strict, why)
			assert.Equal(t, tc.byPeak, byPeak, why)
			assert.Contains(t, why, "tp8: "+tc.why)
		})
	}
}

// TestFrontierRuleConditions holds FrontierVerdict's conditions on
// made-up curves: an arm dominated at every point of its window is not a
// frontier segment, however dominated it is beyond it; a tie beyond, a
// point more efficient than the other arm's, one past the arm's own
// cliff, a failed one, or a window with a failed point, does not.
func TestFrontierRuleConditions(t *testing.T) {
	low := Window{Arm: "low", Points: []WindowPoint{wpt(1, 100, 50), wpt(2, 180, 40)}}
	high := Window{Arm: "high", Points: []WindowPoint{wpt(1, 150, 60), wpt(4, 400, 45)}}
	key := []Window{low, high}
	assert.Equal(t, 4, FrontierStep(low, key))
	assert.Equal(t, 8, FrontierStep(high, key), "no other arm above: the doubling")
	ok, why := FrontierVerdict(low, wpt(4, 250, 30), key)
	assert.False(t, ok, why)
	assert.Contains(t, why, "no window point on the frontier")
	// The same arm with a low-latency point the other arm does not beat.
	low.Points = []WindowPoint{wpt(1, 100, 80), wpt(2, 180, 40)}
	key = []Window{low, high}
	ok, why = FrontierVerdict(low, wpt(4, 250, 30), key)
	assert.True(t, ok, why)
	assert.Equal(t, "frontier: c4 (250 tok/s/GPU, 30.0 tok/s/user) dominated by high c4 (400 tok/s/GPU, 45.0 tok/s/user)", why)
	// A tie with the other arm's point does not count.
	ok, why = FrontierVerdict(low, wpt(4, 400, 45), key)
	assert.False(t, ok, why)
	// Not dominated beyond: more throughput than any point of the other arm.
	ok, why = FrontierVerdict(low, wpt(4, 450, 30), key)
	assert.False(t, ok, why)
	assert.Contains(t, why, "not dominated")
	// Past its own cliff, the arm's knee lies between: not a frontier question.
	ok, why = FrontierVerdict(low, wpt(4, 20, 1), key)
	assert.False(t, ok, why)
	assert.Contains(t, why, "below its top")
	// Failed beyond.
	ok, why = FrontierVerdict(low, WindowPoint{Conc: 4, Failed: true}, key)
	assert.False(t, ok, why)
	assert.Equal(t, "frontier: c4 failed", why)
	// A failed point of the other arm dominates nothing; a failed point of
	// its own window keeps the arm a disagreement.
	failedHigh := Window{Arm: "high", Points: []WindowPoint{wpt(1, 150, 60), {Conc: 4, Failed: true}}}
	ok, why = FrontierVerdict(low, wpt(4, 250, 30), []Window{low, failedHigh})
	assert.False(t, ok, why)
	assert.Contains(t, why, "not dominated")
	failedLow := Window{Arm: "low", Points: []WindowPoint{wpt(1, 100, 80), {Conc: 2, Failed: true}}}
	ok, why = FrontierVerdict(failedLow, wpt(4, 250, 30), []Window{failedLow, high})
	assert.False(t, ok, why)
	assert.Equal(t, "frontier: 1 of 2 window points failed", why)
}

// TestJudgeKey holds the key's three verdicts and their counts: an arm
// still rising at the top of its window, handed over to another arm that
// dominates its next point, agrees by the frontier; with that point not
// measured the frontier verdict stays open; an error reading it is
// returned.
func TestJudgeKey(t *testing.T) {
	rising := CurveWindow("tp4", []WindowPoint{wpt(1, 100, 90), wpt(2, 200, 80), wpt(4, 390, 70)})
	other := CurveWindow("tp8", []WindowPoint{wpt(1, 90, 100), wpt(8, 800, 75), wpt(16, 1000, 60), wpt(32, 1010, 30)})
	key := []Window{rising, other}
	var asked []int
	measured := func(a Window, conc int) (WindowPoint, bool, error) {
		asked = append(asked, conc)
		return wpt(conc, 700, 50), true, nil
	}
	v, err := JudgeKey(key, measured)
	require.NoError(t, err)
	assert.Equal(t, []int{8}, asked, "only the arm that disagrees strictly is read beyond, at its frontier step")
	assert.False(t, v.Strict)
	assert.False(t, v.ByPeak)
	assert.True(t, v.ByFrontier)
	assert.Equal(t, "by frontier       k: tp4: unsaturated no knee window 1-4 (frontier: c8 (700 tok/s/GPU, 50.0 tok/s/user) dominated by tp8 c16 (1000 tok/s/GPU, 60.0 tok/s/user))", v.Line("k"))

	open, err := JudgeKey(key, func(Window, int) (WindowPoint, bool, error) { return WindowPoint{}, false, nil })
	require.NoError(t, err)
	assert.False(t, open.ByFrontier)
	assert.Equal(t, []string{"tp4"}, open.Open)
	assert.Equal(t, "disagree          k: tp4: unsaturated no knee window 1-4 (frontier: c8 not measured)", open.Line("k"))

	agree, err := JudgeKey([]Window{other}, measured)
	require.NoError(t, err)
	assert.Equal(t, "agree             k", agree.Line("k"))

	var tally Tally
	for _, v := range []KeyVerdict{v, open, agree} {
		tally.Add(v)
	}
	assert.Equal(t, "1 of 3 keys agree; 1 with InferenceX's knee, the peak, inside every window; 2 with each arm whose knee misses its window a segment of the simulated frontier (1 key open: an arm's point at its frontier step is not measured)", tally.String())

	asked = nil
	broken := CurveWindow("tp4", []WindowPoint{wpt(1, 100, 90), {Conc: 2, Failed: true}, wpt(4, 390, 70)})
	failed, err := JudgeKey([]Window{broken, other}, measured)
	require.NoError(t, err)
	assert.Empty(t, asked, "an arm with a failed window point is not read beyond")
	assert.Equal(t, "disagree          k: tp4: 1 of 3 points failed (frontier: 1 of 3 window points failed)", failed.Line("k"))

	boom := errors.New("boom")
	_, err = JudgeKey(key, func(Window, int) (WindowPoint, bool, error) { return WindowPoint{}, false, boom })
	assert.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "tp4 at c8")
}

// TestJudgeKeyPeakAtTop holds the peak rule's reading beyond a window
// still climbing to its top: the arm agrees by the peak only when its own
// point at the frontier step falls off a cliff (more than 10 % below the
// top), not on a plateau, a failed or unmeasured point, nor when the top
// of its window was not measured.
func TestJudgeKeyPeakAtTop(t *testing.T) {
	rising := []WindowPoint{wpt(1, 100, 90), wpt(2, 200, 80), wpt(4, 390, 70)}
	other := CurveWindow("tp8", []WindowPoint{wpt(1, 90, 100), wpt(8, 800, 75), wpt(16, 1000, 60), wpt(32, 1010, 30)})
	for _, tc := range []struct {
		name     string
		pts      []WindowPoint
		beyond   WindowPoint
		measured bool
		byPeak   bool
		why      string
	}{
		{"a cliff beyond", rising, wpt(8, 20, 1), true, true,
			"by peak           k: tp4: unsaturated no knee window 1-4, its peak at its top (c8 beyond falls off a cliff) (frontier: c8 (20 tok/s/GPU, 1.0 tok/s/user) below its top c4 (390 tok/s/GPU, 70.0 tok/s/user))"},
		{"a fall of 10 % is no cliff", rising, wpt(8, 351, 40), true, false,
			"disagree          k: tp4: unsaturated no knee window 1-4 (frontier: c8 (351 tok/s/GPU, 40.0 tok/s/user) below its top c4 (390 tok/s/GPU, 70.0 tok/s/user))"},
		{"a fall of 11 % is", rising, wpt(8, 347, 40), true, true,
			"by peak           k: tp4: unsaturated no knee window 1-4, its peak at its top (c8 beyond falls off a cliff) (frontier: c8 (347 tok/s/GPU, 40.0 tok/s/user) below its top c4 (390 tok/s/GPU, 70.0 tok/s/user))"},
		{"failed beyond", rising, WindowPoint{Conc: 8, Failed: true}, true, false,
			"disagree          k: tp4: unsaturated no knee window 1-4 (frontier: c8 failed)"},
		{"not measured beyond", rising, WindowPoint{}, false, false,
			"disagree          k: tp4: unsaturated no knee window 1-4 (frontier: c8 not measured)"},
		{"the window's top not measured", append(slices.Clone(rising), WindowPoint{Conc: 6, NotMeasured: true}), wpt(8, 20, 1), true, false,
			"disagree          k: tp4: unsaturated no knee on window c1 c2 c4 c6: 3 green, 1 not measured (not among the discovery's points: c6) (frontier: c8 (20 tok/s/GPU, 1.0 tok/s/user) below its top measured c4 (390 tok/s/GPU, 70.0 tok/s/user))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			beyond := func(_ Window, conc int) (WindowPoint, bool, error) {
				assert.Equal(t, 8, conc, "the frontier step")
				return tc.beyond, tc.measured, nil
			}
			v, err := JudgeKey([]Window{CurveWindow("tp4", tc.pts), other}, beyond)
			require.NoError(t, err)
			assert.Equal(t, tc.byPeak, v.ByPeak)
			assert.False(t, v.Strict)
			assert.Equal(t, tc.why, v.Line("k"))
		})
	}
}

// TestWindowOf reads a measured arm's window: a concurrency of the window
// without a usable result is failed, a point outside it is left out and
// the knee found again over the window.
func TestWindowOf(t *testing.T) {
	a := &Arm{Simulated: true}
	for _, p := range flatAfter8(1, 2, 4, 8, 16, 32) {
		v, iv := p.Throughput, pyjson.Rounded(p.Interactivity)
		a.Samples = append(a.Samples, Sample{Conc: p.Conc, Simulated: true, TotalTPS: &v, OutputTPS: &v, E2ENormIntvty: result.Stats{P90: &iv}})
	}
	a.Samples = append(a.Samples, Sample{Conc: 64, Simulated: true, Excluded: "error rate 0.5"})
	r := Analyze(a, Options{})
	w := WindowOf("tp8", r, []int{1, 2, 4, 8, 16, 32, 64}, Discovery{})
	require.Len(t, w.Points, 7)
	assert.Same(t, r, w.Knee)
	assert.Equal(t, WindowPoint{Conc: 8, Throughput: 900, Interactivity: 12.5}, w.Points[3])
	assert.True(t, w.Points[6].Failed)
	strict, _, why := w.Judge()
	assert.False(t, strict)
	assert.Equal(t, "tp8: 1 of 7 points failed", why)

	inner := WindowOf("tp8", r, []int{1, 2, 4, 8}, Discovery{})
	require.NotNil(t, inner.Knee)
	assert.NotSame(t, r, inner.Knee)
	assert.Equal(t, StatusUnsaturated, inner.Knee.Status, inner.Knee.Reason)

	missing := WindowOf("tp8", nil, []int{1, 2, 4}, Discovery{})
	assert.Equal(t, []WindowPoint{{Conc: 1, Failed: true}, {Conc: 2, Failed: true}, {Conc: 4, Failed: true}}, missing.Points)
}

// notMeasured is a made-up point an adaptive discovery skipped.
func notMeasured(c int) WindowPoint { return WindowPoint{Conc: c, NotMeasured: true} }

// probe is a made-up point read from a probe only.
func probe(p WindowPoint) WindowPoint {
	p.Probe = true
	return p
}

// TestWindowJudgeAdaptive holds the window rules on windows an adaptive
// discovery measured in part: a point not measured is neither green nor
// failed, the knee is judged on the points measured and why says what it
// rests on (the probe-only points named); a failed measured point still
// fails the arm; too few measured points give no knee.
func TestWindowJudgeAdaptive(t *testing.T) {
	curve := flatAfter8(1, 2, 4, 8, 16, 32, 64)
	for _, tc := range []struct {
		name           string
		pts            []WindowPoint
		strict, byPeak bool
		why            string
	}{
		{"knee inside on the points measured",
			[]WindowPoint{curve[0], curve[1], notMeasured(4), curve[3], probe(curve[4]), notMeasured(32), curve[6]}, true, true,
			"ambiguous knee c8 peak c64 on window c1 c2 c4 c8 c16 c32 c64: 5 green (probe only: c16), 2 not measured (adaptive: c4 c32)"},
		{"a failed measured point still fails",
			[]WindowPoint{curve[0], curve[1], notMeasured(4), curve[3], curve[4], curve[5], {Conc: 64, Failed: true, Probe: true}}, false, false,
			"window c1 c2 c4 c8 c16 c32 c64: 5 green, 1 failed (c64 probe only), 1 not measured (adaptive: c4)"},
		{"still rising on the points measured",
			[]WindowPoint{curve[0], notMeasured(2), curve[2], curve[3]}, false, false,
			"unsaturated no knee on window c1 c2 c4 c8: 3 green, 1 not measured (adaptive: c2)"},
		{"two measured of four: no knee",
			[]WindowPoint{curve[0], notMeasured(2), notMeasured(4), curve[3]}, false, false,
			"insufficient no knee on window c1 c2 c4 c8: 2 green, 2 not measured (adaptive: c2 c4)"},
		{"two points, one not measured",
			[]WindowPoint{curve[0], notMeasured(2)}, true, true,
			"window c1 c2: 1 green, 1 not measured (adaptive: c2)"},
		{"every point measured, one a probe",
			[]WindowPoint{curve[0], curve[1], curve[2], probe(curve[3]), curve[4], curve[5], curve[6]}, true, true,
			"ambiguous knee c16 peak c32 on window c1 c2 c4 c8 c16 c32 c64: 7 green (probe only: c8)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := CurveWindow("tp8", tc.pts)
			w.Adaptive = true
			strict, byPeak, why := w.Judge()
			assert.Equal(t, tc.strict, strict, why)
			assert.Equal(t, tc.byPeak, byPeak, why)
			assert.Equal(t, "tp8: "+tc.why, why)
		})
	}
}

// TestFrontierRuleAdaptive: on windows measured in part the frontier rule
// reads the arm's top measured point, a dominating point read from a probe
// only is labelled so, a point of another arm not measured dominates
// nothing (why counts them), and an arm with no point measured is no
// frontier segment.
func TestFrontierRuleAdaptive(t *testing.T) {
	low := Window{Arm: "low", Points: []WindowPoint{wpt(1, 100, 80), wpt(2, 180, 40), notMeasured(3)}, Adaptive: true}
	high := Window{Arm: "high", Points: []WindowPoint{wpt(1, 150, 60), wpt(4, 400, 45)}}
	key := []Window{low, high}
	assert.Equal(t, 4, FrontierStep(low, key), "the official window's top, measured or not")
	ok, why := FrontierVerdict(low, wpt(4, 250, 30), key)
	assert.True(t, ok, why)
	probeHigh := Window{Arm: "high", Points: []WindowPoint{wpt(1, 150, 60), probe(wpt(4, 400, 45))}, Adaptive: true}
	ok, why = FrontierVerdict(low, wpt(4, 250, 30), []Window{low, probeHigh})
	assert.True(t, ok, why)
	assert.Equal(t, "frontier: c4 (250 tok/s/GPU, 30.0 tok/s/user) dominated by high c4 (400 tok/s/GPU, 45.0 tok/s/user, probe only)", why, "a dominating point read from a probe only says so")
	ok, why = FrontierVerdict(low, wpt(4, 150, 30), key)
	assert.False(t, ok, why)
	assert.Equal(t, "frontier: c4 (150 tok/s/GPU, 30.0 tok/s/user) below its top measured c2 (180 tok/s/GPU, 40.0 tok/s/user)", why)

	skippedHigh := Window{Arm: "high", Points: []WindowPoint{wpt(1, 150, 60), notMeasured(4)}, Adaptive: true}
	ok, why = FrontierVerdict(low, wpt(4, 250, 30), []Window{low, skippedHigh})
	assert.False(t, ok, why)
	assert.Equal(t, "frontier: c4 (250 tok/s/GPU, 30.0 tok/s/user) not dominated by a measured point (1 official points of other arms not measured)", why)

	none := Window{Arm: "low", Points: []WindowPoint{notMeasured(1), notMeasured(2)}, Adaptive: true}
	ok, why = FrontierVerdict(none, wpt(4, 250, 30), []Window{none, high})
	assert.False(t, ok, why)
	assert.Equal(t, "frontier: no window point measured", why)

	failedLow := Window{Arm: "low", Points: []WindowPoint{wpt(1, 100, 80), {Conc: 2, Failed: true}, notMeasured(3)}, Adaptive: true}
	ok, why = FrontierVerdict(failedLow, wpt(4, 250, 30), []Window{failedLow, high})
	assert.False(t, ok, why)
	assert.Equal(t, "frontier: 1 of 2 measured window points failed", why)
}

// TestJudgeKeyAdaptive: a key judged on an adaptive discovery names each
// arm whose verdict rests on a window measured in part, even when it
// agrees; an arm with no point measured is not read beyond; the counts
// tell the keys judged on adaptive discoveries from the full ones.
func TestJudgeKeyAdaptive(t *testing.T) {
	full := CurveWindow("tp8", []WindowPoint{wpt(1, 90, 100), wpt(8, 800, 75), wpt(16, 1000, 60), wpt(32, 1010, 30)})
	part := CurveWindow("tp4", flatAfter8(1, 2, 4, 8, 16, 32, 64))
	part.Points[2], part.Points[5] = notMeasured(4), notMeasured(32)
	part = CurveWindow("tp4", part.Points)
	part.Adaptive = true
	var asked []int
	measured := func(a Window, conc int) (WindowPoint, bool, error) {
		asked = append(asked, conc)
		return wpt(conc, 700, 50), true, nil
	}
	v, err := JudgeKey([]Window{part, full}, measured)
	require.NoError(t, err)
	assert.True(t, v.Strict)
	assert.True(t, v.Adaptive)
	assert.Empty(t, asked)
	assert.Equal(t, "agree             k: tp4: ambiguous knee c8 peak c64 on window c1 c2 c4 c8 c16 c32 c64: 5 green, 2 not measured (adaptive: c4 c32)", v.Line("k"))

	none := CurveWindow("tp4", []WindowPoint{notMeasured(1), notMeasured(2), notMeasured(4)})
	none.Adaptive = true
	nv, err := JudgeKey([]Window{none, full}, measured)
	require.NoError(t, err)
	assert.Empty(t, asked, "an arm with no point measured is not read beyond")
	assert.Equal(t, "disagree          k: tp4: insufficient no knee on window c1 c2 c4: 0 green, 3 not measured (adaptive: c1 c2 c4) (frontier: no window point measured)", nv.Line("k"))

	fv, err := JudgeKey([]Window{full}, measured)
	require.NoError(t, err)
	assert.False(t, fv.Adaptive)
	var tally Tally
	for _, v := range []KeyVerdict{v, nv, fv} {
		tally.Add(v)
	}
	assert.Equal(t, "2 of 3 keys agree; 2 with InferenceX's knee, the peak, inside every window; 2 with each arm whose knee misses its window a segment of the simulated frontier; 1 judged on full discoveries, 2 on adaptive ones (on the points they measured: 1 agree, 1 by the peak, 1 by the frontier)", tally.String())
}

// TestWindowOfAdaptive reads an adaptive discovery's arm: a concurrency it
// recorded as skipped without a result is not measured, one without a
// result it did not record is failed (absence alone proves nothing), a
// failed probe stays failed, a probe superseded by its full-length run
// is no probe point; a full discovery (the zero Discovery) reads every
// missing point as failed, as before.
func TestWindowOfAdaptive(t *testing.T) {
	a := &Arm{Simulated: true}
	for _, p := range flatAfter8(1, 2, 8, 16, 32, 32) {
		v, iv := p.Throughput, pyjson.Rounded(p.Interactivity)
		a.Samples = append(a.Samples, Sample{Conc: p.Conc, Simulated: true, TotalTPS: &v, OutputTPS: &v, E2ENormIntvty: result.Stats{P90: &iv}})
	}
	a.Samples[3].Probe = true // c16, not run again
	a.Samples[4].Probe = true // c32, superseded by samples[5]
	a.Samples = append(a.Samples, Sample{Conc: 64, Simulated: true, Probe: true, Excluded: result.ExcludedNoSuccess})
	a.Samples = SupersedeProbes(a.Samples)
	r := Analyze(a, Options{})
	concs := []int{1, 2, 4, 8, 16, 32, 64, 128}

	w := WindowOf("tp8", r, concs, Discovery{Adaptive: true, Skipped: []int{4, 128}})
	assert.True(t, w.Adaptive)
	assert.True(t, w.Points[2].NotMeasured, "c4 skipped")
	assert.True(t, w.Points[4].Probe, "c16 read from its probe only")
	assert.False(t, w.Points[5].Probe, "c32's probe superseded")
	assert.Equal(t, WindowPoint{Conc: 64, Failed: true, Probe: true}, w.Points[6])
	_, _, why := w.Judge()
	assert.Equal(t, "tp8: window c1 c2 c4 c8 c16 c32 c64 c128: 5 green (probe only: c16), 1 failed (c64 probe only), 2 not measured (adaptive: c4 c128)", why)

	unrecorded := WindowOf("tp8", r, concs, Discovery{Adaptive: true, Skipped: []int{4}})
	assert.Equal(t, WindowPoint{Conc: 128, Failed: true}, unrecorded.Points[7], "not recorded as skipped: failed")

	fullRead := WindowOf("tp8", r, concs, Discovery{})
	assert.False(t, fullRead.Adaptive)
	assert.Equal(t, WindowPoint{Conc: 4, Failed: true}, fullRead.Points[2])

	none := WindowOf("tp8", nil, []int{1, 2, 4}, Discovery{Adaptive: true, Skipped: []int{1, 2, 4}})
	strict, byPeak, why := none.Judge()
	assert.False(t, strict || byPeak)
	assert.Equal(t, "tp8: no knee on window c1 c2 c4: 0 green, 3 not measured (adaptive: c1 c2 c4)", why)
}

// TestJudgeKeyUnfinished: a key with a window point not finished is not
// judged: "unfinished", nothing read beyond, each arm with points not
// finished named with its coverage and one with failed points with how
// many, and the tally counts it apart from the judged keys (the counts
// line unchanged without one). WindowOf reads a concurrency the
// discovery has not finished as Unfinished, even where a probe of it was
// read (its full-length run was interrupted).
func TestJudgeKeyUnfinished(t *testing.T) {
	full := CurveWindow("tp8", []WindowPoint{wpt(1, 90, 100), wpt(8, 800, 75), wpt(16, 1000, 60), wpt(32, 1010, 30)})
	cut := CurveWindow("tp4", []WindowPoint{wpt(1, 100, 90), {Conc: 2, Unfinished: true}, {Conc: 4, Unfinished: true}})
	broken := CurveWindow("tp2", []WindowPoint{wpt(1, 50, 90), {Conc: 2, Failed: true}, wpt(4, 150, 70)})
	var asked []int
	measured := func(a Window, conc int) (WindowPoint, bool, error) {
		asked = append(asked, conc)
		return wpt(conc, 700, 50), true, nil
	}
	v, err := JudgeKey([]Window{broken, cut, full}, measured)
	require.NoError(t, err)
	assert.Empty(t, asked, "an unfinished key is not read beyond")
	assert.True(t, v.Unfinished)
	assert.False(t, v.Strict || v.ByPeak || v.ByFrontier)
	assert.Equal(t, "unfinished        k: tp2: 1 of 3 points failed; tp4: window c1 c2 c4: 1 green, 2 not finished (c2 c4): resume the discovery (the sweep discover command that started it) and judge it again", v.Line("k"))

	others, ok := UnfinishedVerdict([]Window{full}, 3)
	require.True(t, ok)
	assert.Equal(t, "unfinished        k: 3 points of the discovery not finished with no arm named in its journal: resume the discovery (the sweep discover command that started it) and judge it again", others.Line("k"))
	_, ok = UnfinishedVerdict([]Window{full, broken}, 0)
	assert.False(t, ok, "finished: judged")

	agree, err := JudgeKey([]Window{full}, measured)
	require.NoError(t, err)
	var tally Tally
	tally.Add(agree)
	judged := tally.String()
	assert.Equal(t, "1 of 1 keys agree; 1 with InferenceX's knee, the peak, inside every window; 1 with each arm whose knee misses its window a segment of the simulated frontier", judged)
	tally.Add(v)
	tally.Add(others)
	assert.Equal(t, judged+"; 2 keys not judged (their discoveries have not finished: resume them)", tally.String())

	a := &Arm{Simulated: true}
	for _, c := range []int{1, 2, 4} {
		v := float64(100 * c)
		a.Samples = append(a.Samples, Sample{Conc: c, Simulated: true, Probe: c == 4, TotalTPS: &v, OutputTPS: &v})
	}
	w := WindowOf("tp4", Analyze(a, Options{}), []int{1, 2, 4, 8}, Discovery{Adaptive: true, Unfinished: []int{4, 8}})
	assert.Equal(t, []WindowPoint{{Conc: 4, Unfinished: true}, {Conc: 8, Unfinished: true}}, w.Points[2:])
}

// TestJudgeKeyAbsentArms: an arm not in the key's discovery (WindowOf
// with Discovery.Absent, whatever results are read) is neither measured
// nor failed: the key is judged on its other arms, the line says on how
// many and names each absent arm in its place, whatever the verdict; no
// point beyond is asked for it. Its official window still sets the
// other arms' frontier steps, but dominates nothing; an arm with no
// other arm of the key in the discovery is not read beyond (nothing
// could dominate it there). The counts line tells the keys judged on
// part of their arms; a key with no arm in its discovery is an error;
// an unfinished key names its absent arms too.
func TestJudgeKeyAbsentArms(t *testing.T) {
	a := &Arm{Simulated: true}
	for _, p := range flatAfter8(1, 2, 4) {
		v := p.Throughput
		a.Samples = append(a.Samples, Sample{Conc: p.Conc, Simulated: true, TotalTPS: &v, OutputTPS: &v})
	}
	absent := WindowOf("tp2", Analyze(a, Options{}), []int{1, 2, 6}, Discovery{Absent: true})
	assert.True(t, absent.Absent)
	assert.Nil(t, absent.Knee)
	assert.Equal(t, []WindowPoint{{Conc: 1, NotMeasured: true}, {Conc: 2, NotMeasured: true}, {Conc: 6, NotMeasured: true}}, absent.Points,
		"not in the discovery: no point read, none failed")
	strict, byPeak, why := absent.Judge()
	assert.False(t, strict || byPeak)
	assert.Equal(t, "tp2: not in this discovery", why)

	rising := CurveWindow("tp4", []WindowPoint{wpt(1, 100, 90), wpt(2, 200, 80), wpt(4, 390, 70)})
	full := CurveWindow("tp8", []WindowPoint{wpt(1, 90, 100), wpt(8, 800, 75), wpt(16, 1000, 60), wpt(32, 1010, 30)})
	absent8 := WindowOf("tp8", nil, []int{1, 8, 16, 32}, Discovery{Absent: true})
	var asked []int
	measured := func(a Window, conc int) (WindowPoint, bool, error) {
		asked = append(asked, conc)
		return wpt(conc, 700, 50), true, nil
	}

	agree, err := JudgeKey([]Window{absent, full}, measured)
	require.NoError(t, err)
	assert.True(t, agree.Strict && agree.ByPeak && agree.ByFrontier)
	assert.True(t, agree.OnSomeArms())
	assert.Equal(t, "agree             k: judged on 1 of 2 arms; tp2: not in this discovery", agree.Line("k"))

	front, err := JudgeKey([]Window{absent, rising, full}, measured)
	require.NoError(t, err)
	assert.Equal(t, []int{6}, asked, "tp4's frontier step is tp2's official c6, tp2 not in the discovery or not")
	assert.Equal(t, "by frontier       k: judged on 2 of 3 arms; tp2: not in this discovery; tp4: unsaturated no knee window 1-4 (frontier: c6 (700 tok/s/GPU, 50.0 tok/s/user) dominated by tp8 c16 (1000 tok/s/GPU, 60.0 tok/s/user))", front.Line("k"))

	asked = nil
	lone, err := JudgeKey([]Window{absent, rising, absent8}, measured)
	require.NoError(t, err)
	assert.Equal(t, []int{6}, asked, "no other arm in the discovery: read beyond for the peak only (nothing there could be dominated)")
	assert.Empty(t, lone.Open)
	assert.False(t, lone.Strict || lone.ByPeak || lone.ByFrontier)
	assert.Equal(t, "disagree          k: judged on 1 of 3 arms; tp2: not in this discovery; tp4: unsaturated no knee window 1-4 (frontier: no other arm in this discovery); tp8: not in this discovery", lone.Line("k"))
	unmeasured := func(Window, int) (WindowPoint, bool, error) { return WindowPoint{}, false, nil }
	loneOpen, err := JudgeKey([]Window{absent, rising, absent8}, unmeasured)
	require.NoError(t, err)
	assert.Empty(t, loneOpen.Open, "its frontier verdict is decided")
	assert.Equal(t, "disagree          k: judged on 1 of 3 arms; tp2: not in this discovery; tp4: unsaturated no knee window 1-4, its peak not judged (c6 beyond not measured) (frontier: no other arm in this discovery); tp8: not in this discovery", loneOpen.Line("k"))
	cliff := func(_ Window, conc int) (WindowPoint, bool, error) { return wpt(conc, 20, 1), true, nil }
	loneCliff, err := JudgeKey([]Window{absent, rising, absent8}, cliff)
	require.NoError(t, err)
	assert.True(t, loneCliff.ByPeak && !loneCliff.Strict && !loneCliff.ByFrontier)
	assert.Equal(t, "by peak           k: judged on 1 of 3 arms; tp2: not in this discovery; tp4: unsaturated no knee window 1-4, its peak at its top (c6 beyond falls off a cliff) (frontier: no other arm in this discovery); tp8: not in this discovery", loneCliff.Line("k"))
	ok, why := FrontierVerdict(rising, wpt(8, 700, 50), []Window{absent, rising, absent8})
	assert.False(t, ok)
	assert.Equal(t, "frontier: no other arm in this discovery", why)

	whole, err := JudgeKey([]Window{full}, measured)
	require.NoError(t, err)
	assert.False(t, whole.OnSomeArms())
	var tally Tally
	tally.Add(whole)
	tally.Add(agree)
	one := tally.String()
	assert.Equal(t, "2 of 2 keys agree; 2 with InferenceX's knee, the peak, inside every window; 2 with each arm whose knee misses its window a segment of the simulated frontier; 1 key judged on part of its arms (on the arms its discovery ran: 1 agree, 1 by the peak, 1 by the frontier)", one)
	tally.Add(front)
	tally.Add(lone)
	assert.Equal(t, "2 of 4 keys agree; 2 with InferenceX's knee, the peak, inside every window; 3 with each arm whose knee misses its window a segment of the simulated frontier; 3 keys judged on part of their arms (on the arms their discoveries ran: 1 agree, 1 by the peak, 2 by the frontier)", tally.String())

	_, err = JudgeKey([]Window{absent, absent8}, measured)
	assert.ErrorContains(t, err, "no arm of the key is in the discovery")

	cut := CurveWindow("tp4", []WindowPoint{wpt(1, 100, 90), {Conc: 2, Unfinished: true}, {Conc: 4, Unfinished: true}})
	v, err := JudgeKey([]Window{absent, cut}, measured)
	require.NoError(t, err)
	assert.True(t, v.Unfinished)
	assert.Equal(t, "unfinished        k: tp2: not in this discovery; tp4: window c1 c2 c4: 1 green, 2 not finished (c2 c4): resume the discovery (the sweep discover command that started it) and judge it again", v.Line("k"))
}
