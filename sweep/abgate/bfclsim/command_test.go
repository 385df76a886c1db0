package bfclsim

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/usage"
)

// TestCommandLines: models lists bfcl's own keys (and the registered one
// only when a registry entry is loaded); a command line bfcl would reject
// is a usage error; an unregistered model is refused as bfcl refuses it.
func TestCommandLines(t *testing.T) {
	env := Arm{Model: "Org/M-FC", Accuracy: 0.5}.Env(1)
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	require.NoError(t, Command(t.Context(), []string{"models"}, getenv, &out, &errOut))
	assert.Equal(t, "gorilla-openfunctions-v2\ngpt-4o-2024-11-20-FC\nQwen/Qwen3-8B-FC\n", out.String())
	assert.Contains(t, errOut.String(), "sim-bfcl: no registry entry added: PYTHONPATH is empty")

	for _, args := range [][]string{{"generate", "--no-such-flag"}} {
		err := Command(t.Context(), args, getenv, &out, &errOut)
		_, ok := errors.AsType[*usage.Error](err)
		assert.True(t, ok, "%v: %v", args, err)
	}
	err := Command(t.Context(), []string{"generate", "--model", "Org/M-FC"}, getenv, &out, &errOut)
	assert.EqualError(t, err, "sim-bfcl generate: Unknown model_name 'Org/M-FC' (no registry entry added: PYTHONPATH is empty: no registration file (sitecustomize.py) is loaded)")
	err = Command(t.Context(), []string{"models"}, func(string) string { return "" }, &out, &errOut)
	assert.ErrorContains(t, err, "sim-bfcl: SWEEP_SIM_BFCL is not set")
}
