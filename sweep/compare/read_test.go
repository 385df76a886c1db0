package compare

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
