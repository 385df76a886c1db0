package compare

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/usage"
)

func TestReadSide(t *testing.T) {
	dirs, err := filepath.Glob("testdata/conformance/cases/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	base := filepath.Join(dirs[0], "base")
	arms, err := ReadSide(t.Context(), "BASE", base)
	require.NoError(t, err)
	assert.NotEmpty(t, arms)

	empty := t.TempDir()
	_, err = ReadSide(t.Context(), "HEAD", empty)
	var ne *NoResultsError
	require.True(t, errors.As(err, &ne), "%v", err)
	assert.EqualError(t, err, "HEAD "+empty+` holds no result file (a *.json with "conc" and "request_metrics")`)

	missing := filepath.Join(empty, "missing")
	_, err = ReadSide(t.Context(), "BASE", missing)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "BASE "+missing+": ")

	_, err = CalibrateDirs(t.Context(), []string{base, empty}, MetricTotal)
	assert.EqualError(t, err, "run "+empty+` holds no result file (a *.json with "conc" and "request_metrics")`)
}

// TestReadSidesRefusesOneSweepTwice: a sweep compared with itself (one
// directory given twice, one inside the other, or a hard-linked copy as
// cp -al makes) read PASS with a zero-width interval; it is refused. A
// copy of its own (cp -r) is read: a deterministic simulated rerun is
// byte for byte the same, and a real comparison.
func TestReadSidesRefusesOneSweepTwice(t *testing.T) {
	dirs, err := filepath.Glob("testdata/conformance/cases/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	base := filepath.Join(dirs[0], "base")
	files, err := filepath.Glob(filepath.Join(base, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	linked, copied := t.TempDir(), t.TempDir()
	for _, f := range files {
		require.NoError(t, os.Link(f, filepath.Join(linked, filepath.Base(f))))
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(copied, filepath.Base(f)), data, 0o644))
	}
	for _, tc := range []struct{ name, head, want string }{
		{"the same directory", base, "BASE " + base + " and HEAD " + base + " hold the same result file ("},
		{"its parent", dirs[0], "BASE " + base + " and HEAD " + dirs[0] + " hold the same result file ("},
		{"a hard-linked copy", linked, "BASE " + base + " and HEAD " + linked + " hold the same result file (" + linked + "/"},
		{"a copy of its own", copied, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, h, err := ReadSides(t.Context(), base, tc.head)
			if tc.want == "" {
				require.NoError(t, err)
				assert.NotEmpty(t, b)
				assert.NotEmpty(t, h)
				return
			}
			require.Error(t, err)
			assert.True(t, usage.IsRefusal(err), "a refusal naming its fix: %v", err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got  %v\nwant %s...", err, tc.want)
			assert.Contains(t, err.Error(), "a sweep compared with itself always passes")
		})
	}
}

func TestWriteCalibrationFile(t *testing.T) {
	c := &Calibration{Kind: CalibrationKind, Version: 1, Metric: MetricTotal}
	path := filepath.Join(t.TempDir(), "new", "noise.json")
	require.NoError(t, WriteCalibrationFile(path, c))
	var want bytes.Buffer
	require.NoError(t, WriteCalibration(&want, c))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want.String(), string(got))
}

func TestWrite(t *testing.T) {
	dirs, err := filepath.Glob("testdata/conformance/cases/*")
	require.NoError(t, err)
	base, err := ReadSide(t.Context(), "BASE", filepath.Join(dirs[0], "base"))
	require.NoError(t, err)
	rep := Compare(base, base, Options{})
	for format, write := range map[string]func(io.Writer, *Report) error{"text": WriteText, "json": WriteJSON, "markdown": WriteMarkdown, "other": WriteText} {
		var got, want bytes.Buffer
		require.NoError(t, Write(&got, rep, format))
		require.NoError(t, write(&want, rep))
		assert.Equal(t, want.String(), got.String(), format)
	}
}

// TestCheckCalibrationOut: a calibration is written to a new file or
// over a calibration; a directory, a result, a sim calibration or any
// other file is refused as a usage error, and WriteCalibrationFile
// leaves it as it was.
func TestCheckCalibrationOut(t *testing.T) {
	dir := t.TempDir()
	c := &Calibration{Kind: CalibrationKind, Version: 1, Metric: MetricTotal, Arms: []CalibrationArm{}}
	cal := filepath.Join(dir, "noise.json")
	require.NoError(t, WriteCalibrationFile(cal, c))
	files := map[string]string{
		"result.json":    `{"conc": 8, "request_metrics": {}}`,
		"sim.json":       `{"version": 1, "arms": []}`,
		"notes.txt":      "my notes\n",
		"truncated.json": `{"kind": "sweep-compare-calibration", "arms": [`,
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	assert.NoError(t, CheckCalibrationOut(filepath.Join(dir, "new.json")))
	assert.NoError(t, CheckCalibrationOut(cal), "a calibration is replaced")
	err := CheckCalibrationOut(dir)
	assert.EqualError(t, err, "--out "+dir+" is a directory: name a file ("+filepath.Join(dir, "noise.json")+")")
	for name, body := range files {
		path := filepath.Join(dir, name)
		for _, err := range []error{CheckCalibrationOut(path), WriteCalibrationFile(path, c)} {
			_, isUsage := errors.AsType[*usage.Error](err)
			assert.True(t, isUsage, "%s: %v", name, err)
			assert.ErrorContains(t, err, "--out "+path+" exists and is not a noise calibration file")
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, body, string(data), "%s is left as it was", name)
	}
}

// TestCalibrateDirsDistinctRuns: runs that share a result file (the same
// directory twice, one inside the other) are refused: a result read twice
// would be its own replicate, with no noise.
func TestCalibrateDirsDistinctRuns(t *testing.T) {
	dirs, err := filepath.Glob("testdata/conformance/cases/*")
	require.NoError(t, err)
	base := filepath.Join(dirs[0], "base")
	parent := filepath.Dir(base)
	for _, runs := range [][]string{{base, base}, {parent, base}} {
		_, err := CalibrateDirs(t.Context(), runs, MetricTotal)
		_, isUsage := errors.AsType[*usage.Error](err)
		assert.True(t, isUsage, "%v: %v", runs, err)
		assert.ErrorContains(t, err, "run "+runs[0]+" and run "+runs[1]+" both hold the result ")
	}
	cal, err := CalibrateDirs(t.Context(), []string{base}, MetricTotal)
	require.NoError(t, err, "one directory holding replicates")
	assert.NotEmpty(t, cal.Arms)
}

// TestReadCalibrationStrict: a calibration file is read strictly, as the
// other files sweep writes for users to hand back: a file cut short, a
// mistyped key and a bad arm are named at their line and column.
func TestReadCalibrationStrict(t *testing.T) {
	dir := t.TempDir()
	good := "{\n  \"kind\": \"sweep-compare-calibration\",\n  \"version\": 1,\n  \"metric\": \"total\",\n  \"runs\": [\"a\", \"b\"],\n  \"arms\": [\n    {\"arm\": \"x\", \"sigma_log\": 0.01, \"df\": 3, \"points\": []}\n  ]\n}\n"
	for _, tc := range []struct {
		name, body string
		line, col  int
		key, msg   string
	}{
		{"cut", good[:60], 4, 4, "", "the JSON ends early"},
		{"typo", strings.Replace(good, `"df"`, `"dof"`, 1), 7, 37, "arms[0].dof", "unknown key"},
		{"bad arm", strings.Replace(good, `"df": 3`, `"df": 0`, 1), 7, 5, "arms[0]", "sigma_log 0.01 with df 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			_, err := ReadCalibration(path)
			ce, ok := errors.AsType[*configs.Error](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, [2]int{tc.line, tc.col}, [2]int{ce.Line, ce.Col}, "%v", err)
			assert.Equal(t, tc.key, ce.Key)
			assert.Contains(t, ce.Error(), tc.msg)
		})
	}
	path := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(path, []byte(good), 0o644))
	c, err := ReadCalibration(path)
	require.NoError(t, err)
	assert.Equal(t, 3, c.Arms[0].DF)
}
