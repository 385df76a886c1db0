package selfexe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPath(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	bin := filepath.Join(dir, "sweep")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))

	t.Setenv(Env, "")
	got, err := Path()
	require.NoError(t, err)
	assert.Equal(t, self, got, "unset: this executable")

	t.Setenv(Env, bin)
	got, err = Path()
	require.NoError(t, err)
	assert.Equal(t, bin, got)

	for _, bad := range []string{dir, plain, filepath.Join(dir, "missing")} {
		t.Setenv(Env, bad)
		_, err = Path()
		assert.ErrorContains(t, err, Env+"="+bad+": not an executable file", bad)
	}
}

func TestWithout(t *testing.T) {
	assert.Equal(t, []string{"A=1", "SWEEP_EXECUTABLE_X=2"}, Without([]string{"A=1", Env + "=/tmp/s/sweep", "SWEEP_EXECUTABLE_X=2"}))
}
