package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/abgate"
	"sweep/sweep/run"
)

// TestABCalibrateSimulated runs an A/A calibration end to end: arm a's
// server once, four simulated runs in fresh roots (each with its registry
// entry written and listed), the measured flip rate against the stand-in's
// case model (3 % flips per run: 2·0.03·0.97 = 5.82 % of cases differ
// between two runs; SE 0.24 pp over 4441 cases with 4 runs), then a leg
// whose INCONCLUSIVE advice uses it.
func TestABCalibrateSimulated(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "aa")
	code, stdout, stderr := runCLI(t, "ab", "calibrate", filepath.Join(abLegsDir, "pass.yaml"), "--simulate", "--runs", "4", "--out", out, "--stop-grace", "3s", "--format", "json")
	require.Equal(t, exitOK, code, "stderr:\n%s", stderr)
	var cal abgate.Calibration
	require.NoError(t, json.Unmarshal([]byte(stdout), &cal), stdout)
	require.Empty(t, cal.Problems)
	require.NotNil(t, cal.Simulated, "the calibration says whether it was simulated")
	assert.True(t, *cal.Simulated)
	assert.Equal(t, 4, cal.Runs)
	assert.Equal(t, 4441, cal.Overall.Cases)
	assert.InDelta(t, 2*0.03*0.97, cal.Overall.FlipRate, 3*0.0025, "the case model's flip rate")
	require.NotNil(t, cal.FalseAlarm)
	assert.Equal(t, 12, cal.FalseAlarm.Comparisons, "4·3 ordered pairs of single runs")
	assert.Zero(t, cal.FalseAlarm.Regression)
	assert.Equal(t, 1, cal.ReplicatesFor80Power)
	require.Len(t, cal.Roots, 4)
	for i, root := range cal.Roots {
		assert.Equal(t, filepath.Join(out, "a", "bfcl-r"+itoa(i+1)), root)
		assert.FileExists(t, filepath.Join(out, "a", "bfcl-r"+itoa(i+1)+"-python", abgate.SitecustomizeFile))
		models, err := os.ReadFile(filepath.Join(out, "a", "bfcl-r"+itoa(i+1)+"-models.log"))
		require.NoError(t, err)
		assert.Contains(t, strings.Split(string(models), "\n"), "MiniMaxAI/MiniMax-M3-MXFP8-FC")
	}
	assert.NoDirExists(t, filepath.Join(out, "b"), "arm b does not run")
	var srv run.Record
	data, err := os.ReadFile(filepath.Join(out, "a", "server", run.ServerRecordFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &srv))
	for name, p := range srv.Processes {
		assert.ErrorIs(t, syscall.Kill(-p.PID, 0), syscall.ESRCH, "%s survived the calibration", name)
	}
	table, err := os.ReadFile(filepath.Join(out, "calibration.md"))
	require.NoError(t, err)
	assert.Contains(t, string(table), "False alarms: 0 of 12 A-against-A gate runs")
	assert.Contains(t, string(table), "against itself (SIMULATED)\n")
	assert.Contains(t, string(table), "Simulated: yes: the flip rates are the simulated case model's")

	// The calibrated leg's INCONCLUSIVE advice uses the A/A rate of its
	// one category, multi_turn_base.
	var mtb abgate.CategoryFlips
	for _, cf := range cal.Categories {
		if cf.Category == "multi_turn_base" {
			mtb = cf
		}
	}
	require.Equal(t, 200, mtb.Cases)
	file := filepath.Join(out, abgate.CalibrationFile)
	code, stdout, stderr = runCLI(t, "ab", "run", filepath.Join(abLegsDir, "inconclusive.yaml"), "--simulate", "--out", filepath.Join(t.TempDir(), "leg"), "--stop-grace", "3s", "--calibration", file)
	require.Equal(t, exitABInconclusive, code, "stderr:\n%s", stderr)
	assert.Contains(t, stdout, "the A/A-measured flip rate ("+file+": 4 identical runs of arm a) is ")
	assert.Contains(t, stderr, "A/A calibration: "+file)

	// A simulated calibration cannot size the replicates of a leg on
	// real engines: refused before anything starts, with the fix.
	code, _, stderr = runCLI(t, "ab", "run", filepath.Join(abLegsDir, "inconclusive.yaml"), "--out", filepath.Join(t.TempDir(), "real"), "--calibration", file)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "--calibration: "+file+" is a simulated A/A calibration (sweep ab calibrate --simulate): its flip rates are the simulated case model's, not the model's: calibrate the leg on its real engines")
	assert.NotContains(t, stderr, "starting the server")
}

func TestABCalibrateFlags(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"model":"Org/Other-FC","arm":"a","runs":2,"replicates":1,"tolerance":2,"categories":[{"category":"multiple","cases":200,"flip_rate":0.05,"unstable_cases":10}],"overall":{"category":"overall","cases":200,"flip_rate":0.05,"unstable_cases":10},"false_alarm":null,"replicates_for_80_power":4,"roots":[],"problems":[]}`), 0o644))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"model":"M","runs":1}`), 0o644))
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ab", "calibrate"}, "ab calibrate takes one leg"},
		{[]string{"ab", "calibrate", "minimaxm3-mi325x-smg", "--runs", "1"}, "--runs 1: an A/A calibration needs at least 2 identical runs"},
		{[]string{"ab", "run", "minimaxm3-mi325x-smg", "--calibration", filepath.Join(dir, "none.json")}, "--calibration: "},
		{[]string{"ab", "run", "minimaxm3-mi325x-smg", "--calibration", bad}, "runs 1: an A/A calibration needs at least 2 identical runs"},
		{[]string{"ab", "run", "minimaxm3-mi325x-smg", "--calibration", other}, `is of model "Org/Other-FC", the leg's is "MiniMaxAI/MiniMax-M3-MXFP8-FC"`},
		{[]string{"ab", "compare", "--a", root, "--b", t.TempDir(), "--model", "M-FC", "--categories", "multiple", "--calibration", other}, `is of model "Org/Other-FC", not --model "M-FC"`},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
}

// TestABCalibrateIncomplete: a calibration whose server cannot start (no
// engine on this machine) is INCOMPLETE (exit 4), names the failed runs and
// measures nothing.
func TestABCalibrateIncomplete(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "aa")
	code, stdout, stderr := runCLI(t, "ab", "calibrate", filepath.Join(abLegsDir, "inconclusive.yaml"), "--out", out,
		"--bfcl", filepath.Join(t.TempDir(), "no-bfcl"), "--port", "1", "--ready-timeout", "1s", "--format", "json")
	require.Equal(t, exitABIncomplete, code, "stderr:\n%s", stderr)
	var cal abgate.Calibration
	require.NoError(t, json.Unmarshal([]byte(stdout), &cal), stdout)
	assert.Nil(t, cal.FalseAlarm)
	var failed int
	for _, p := range cal.Problems {
		if p.Reason == abgate.ReasonRunFailed {
			failed++
		}
	}
	assert.Equal(t, 2, failed, "one run-failed problem per run: %+v", cal.Problems)
	assert.Contains(t, stderr, "ab calibrate inconclusive: INCOMPLETE")
	_, err := abgate.ReadCalibration(filepath.Join(out, abgate.CalibrationFile))
	assert.ErrorContains(t, err, "the A/A calibration is incomplete")
}
