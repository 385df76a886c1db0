package simengine

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
)

// TestLoadCalibration: a calibration file reads back as written (its
// keys in snake case, "arms" too); a hand edit gone wrong is refused at
// its line and column with the key; a FIFO in its place is refused
// without blocking.
func TestLoadCalibration(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	cal := &Calibration{Version: CalibrationVersion, Source: "results", Arms: []ArmCalibration{{Engine: configs.SGLang, Model: "Org/M", GPU: "mi325x", TP: 8, EP: 1, StepScale: 1.5, PoolTokens: 2000000}}}
	require.NoError(t, atomicfile.WriteJSON(good, cal))
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"arms": [`)
	got, err := LoadCalibration(good)
	require.NoError(t, err)
	assert.Equal(t, cal, got)

	typo := filepath.Join(dir, "typo.json")
	require.NoError(t, os.WriteFile(typo, []byte("{\n  \"version\": 1,\n  \"arms\": [\n    {\"engine\": \"sglang\", \"model\": \"Org/M\", \"gpu\": \"mi325x\", \"tp\": 8,\n     \"pool_token\": 2000000}\n  ]\n}\n"), 0o644))
	_, err = LoadCalibration(typo)
	require.Error(t, err)
	assert.Equal(t, typo+":5:6: pool_token: unknown key: want the JSON sweep sim calibrate writes", err.Error())

	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err = LoadCalibration(fifo)
	var notRegular *inputfile.NotRegularError
	assert.True(t, errors.As(err, &notRegular), "%v", err)
}
