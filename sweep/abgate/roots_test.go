package abgate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckRoots(t *testing.T) {
	dir := t.TempDir()
	a, b, file := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "f")
	require.NoError(t, os.Mkdir(a, 0o755))
	require.NoError(t, os.Mkdir(b, 0o755))
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	assert.NoError(t, CheckRoots(ArmRoots{"--a", []string{a}}, ArmRoots{"--b", []string{b, dir}}))
	for _, tc := range []struct {
		a, b []string
		want string
	}{
		{[]string{a, ""}, []string{b}, "--a: empty root in the list"},
		{[]string{a}, []string{b, a}, "--b: root " + a + " is listed again (already in --a): every replicate needs its own root"},
		{[]string{a, a}, []string{b}, "--a: root " + a + " is listed again (already in --a)"},
		{[]string{a}, []string{file}, "--b: root " + file + " is not a directory"},
		{[]string{filepath.Join(dir, "none")}, []string{b}, "--a: root " + filepath.Join(dir, "none") + " is not a directory"},
	} {
		assert.ErrorContains(t, CheckRoots(ArmRoots{"--a", tc.a}, ArmRoots{"--b", tc.b}), tc.want)
	}
}
