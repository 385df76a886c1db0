package abgate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlipRate(t *testing.T) {
	const P, F = true, false
	// Three runs: a case passing twice disagrees in 2 of the 3 pairs.
	f, unstable := flipRate([][]bool{{P, P, P, F}, {P, P, F, F}, {P, F, F, F}})
	assert.InDelta(t, (0+2.0/3+2.0/3+0)/4, f, 1e-12)
	assert.Equal(t, 2, unstable)
	// Two runs: the share of cases that differ.
	f, unstable = flipRate([][]bool{{P, P, F, F}, {P, F, P, F}})
	assert.InDelta(t, 0.5, f, 1e-12)
	assert.Equal(t, 2, unstable)
	f, _ = flipRate([][]bool{{P, F}})
	assert.Zero(t, f, "one run has no pair")
}

func TestAASplits(t *testing.T) {
	assert.Equal(t, [][2][]int{{{0}, {1}}, {{1}, {0}}}, aaSplits(2, 1, 20, 1))
	assert.Len(t, aaSplits(3, 1, 20, 1), 6)
	assert.Len(t, aaSplits(4, 2, 20, 1), 6) // C(4,2)·C(2,2)
	got := aaSplits(6, 2, 5, 1)             // 5 of C(6,2)·C(4,2) = 90
	require.Len(t, got, 5)
	seen := map[string]bool{}
	for _, s := range got {
		require.Len(t, s[0], 2)
		require.Len(t, s[1], 2)
		for _, r := range s[0] {
			assert.NotContains(t, s[1], r, "the sides are disjoint")
		}
		key := fmtInts(s[0]) + "|" + fmtInts(s[1])
		assert.False(t, seen[key], "distinct splits")
		seen[key] = true
	}
	assert.Equal(t, got, aaSplits(6, 2, 5, 1), "seeded")
}

func fmtInts(xs []int) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteString(string(rune('0' + x)))
	}
	return b.String()
}

// TestCalibrateHandComputed: two runs of 200 cases that differ on 10 cases
// flip 5 %; V₁ = 0.05/200, so 80 % power against 2 points needs
// ceil(6.1826 × 0.00025 / 0.0004) = 4 replicates, and one run per side
// fails to pass with P = Φ(z₀.₉₅ − 0.02/√V₁) = 0.648, is a REGRESSION with
// Φ(−0.02/√V₁ − z₀.₉₅) = 0.0018.
func TestCalibrateHandComputed(t *testing.T) {
	dir := t.TempDir()
	c := mustCategory(t, "multi_turn_base")
	r1, r2 := filepath.Join(dir, "r1"), filepath.Join(dir, "r2")
	writeCategory(t, r1, c, catFiles{fail: seq(10)})                                  // 0..9
	writeCategory(t, r2, c, catFiles{fail: []int{5, 6, 7, 8, 9, 10, 11, 12, 13, 14}}) // 5..14
	cal, err := Calibrate(t.Context(), CalibrateOptions{Roots: []string{r1, r2}, Model: testModel, Categories: []Category{c}, Resamples: 2000})
	require.NoError(t, err)
	require.Empty(t, cal.Problems)
	assert.Equal(t, []CategoryFlips{{Category: "multi_turn_base", Cases: 200, FlipRate: 0.05, Unstable: 10}}, cal.Categories)
	assert.Equal(t, CategoryFlips{Category: "overall", Cases: 200, FlipRate: 0.05, Unstable: 10}, cal.Overall)
	assert.Equal(t, 4, cal.ReplicatesFor80Power)
	assert.Equal(t, 1, cal.Replicates)
	require.NotNil(t, cal.FalseAlarm)
	assert.InDelta(t, 0.6480, cal.FalseAlarm.PredictedNotPass, 1e-4)
	assert.InDelta(t, 0.0018085, cal.FalseAlarm.PredictedRegression, 1e-6)
	// Both orders: Δ = 0 with 10 discordant cases, 90 % CI about ±2.6 pp.
	assert.Equal(t, 2, cal.FalseAlarm.Comparisons)
	assert.Equal(t, 0, cal.FalseAlarm.Regression)
	assert.Equal(t, 2, cal.FalseAlarm.NotPass)

	// Written and read back; the table says what was measured.
	file := filepath.Join(dir, CalibrationFile)
	var b strings.Builder
	require.NoError(t, WriteCalibrationJSON(&b, cal))
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
	back, err := ReadCalibration(file)
	require.NoError(t, err)
	assert.Equal(t, file, back.File)
	back.File = ""
	assert.Equal(t, cal, back)
	b.Reset()
	require.NoError(t, WriteCalibrationTable(&b, cal))
	assert.Contains(t, b.String(), "| multi_turn_base | 200 | 5.00 | 10 |")
	assert.Contains(t, b.String(), "False alarms: 0 of 2 A-against-A gate runs (1 vs 1 runs) were REGRESSION, 2 were not PASS; the measured flips predict 0.18 % and 64.80 %")
	assert.Contains(t, b.String(), "needs 4 replicates per arm")
}

// TestCalibrateIncomplete: a missing file is a problem, no rate is
// measured, and the file is refused as a calibration.
func TestCalibrateIncomplete(t *testing.T) {
	dir := t.TempDir()
	c := mustCategory(t, "multi_turn_base")
	r1, r2 := filepath.Join(dir, "r1"), filepath.Join(dir, "r2")
	writeCategory(t, r1, c, catFiles{})
	cal, err := Calibrate(t.Context(), CalibrateOptions{Roots: []string{r1, r2}, Model: testModel, Categories: []Category{c}})
	require.NoError(t, err)
	assert.Equal(t, []Reason{ReasonMissingResult, ReasonMissingScore}, reasons(cal.Problems))
	assert.Nil(t, cal.FalseAlarm)
	var b strings.Builder
	require.NoError(t, WriteCalibrationTable(&b, cal))
	assert.Contains(t, b.String(), "calibration: INCOMPLETE: 2 problems")
	b.Reset()
	require.NoError(t, WriteCalibrationJSON(&b, cal))
	file := filepath.Join(dir, CalibrationFile)
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
	_, err = ReadCalibration(file)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the A/A calibration is incomplete (2 problems, first: missing-result-file multi_turn_base")

	_, err = Calibrate(t.Context(), CalibrateOptions{Roots: []string{r1}, Model: testModel, Categories: []Category{c}})
	assert.ErrorContains(t, err, "at least 2 identical runs")
	_, err = Calibrate(t.Context(), CalibrateOptions{Roots: []string{r1, r2}, Replicates: 2, Model: testModel, Categories: []Category{c}})
	assert.ErrorContains(t, err, "2 replicates per side need 4 runs, have 2")
}

// TestCalibrationCheckFor: a simulated calibration is refused for a leg
// on real engines; one that does not say (an older file) is warned about.
func TestCalibrationCheckFor(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name      string
		cal       *bool
		simulated bool
		warn, err string
	}{
		{"simulated for real", &yes, false, "", "cal.json is a simulated A/A calibration (sweep ab calibrate --simulate): its flip rates are the simulated case model's, not the model's: calibrate the leg on its real engines (sweep ab calibrate LEG without --simulate)"},
		{"simulated for simulated", &yes, true, "", ""},
		{"real for real", &no, false, "", ""},
		{"real for simulated", &no, true, "cal.json was measured on real engines; this leg is simulated", ""},
		{"older file for real", nil, false, "cal.json does not say whether it was simulated (written by an older sweep)", ""},
		{"older file for simulated", nil, true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Calibration{File: "cal.json", Runs: 2, Arm: "a", Simulated: tc.cal}
			warn, err := c.CheckFor(tc.simulated)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
			} else {
				assert.NoError(t, err)
			}
			if tc.warn != "" {
				assert.Contains(t, warn, tc.warn)
			} else {
				assert.Empty(t, warn)
			}
		})
	}
}

// TestReadCalibrationWithoutSimulated: a calibration.json written before
// sweep recorded "simulated" still reads, as not known.
func TestReadCalibrationWithoutSimulated(t *testing.T) {
	file := filepath.Join(t.TempDir(), CalibrationFile)
	require.NoError(t, os.WriteFile(file, []byte(`{"model": "M-FC", "arm": "a", "runs": 2, "replicates": 1, "tolerance": 2,
  "categories": [{"category": "multiple", "cases": 200, "flip_rate": 0.05, "unstable_cases": 10}],
  "overall": {"category": "", "cases": 200, "flip_rate": 0.05, "unstable_cases": 10},
  "false_alarm": null, "replicates_for_80_power": 1, "roots": ["r1", "r2"], "problems": []}`), 0o644))
	c, err := ReadCalibration(file)
	require.NoError(t, err)
	assert.Nil(t, c.Simulated)
}
