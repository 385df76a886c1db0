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
	linkB := filepath.Join(dir, "linkB")
	require.NoError(t, os.Symlink("b", linkB))
	t.Chdir(dir)
	assert.NoError(t, CheckRoots(ArmRoots{"--a", []string{a}}, ArmRoots{"--b", []string{b, dir}}))
	for _, tc := range []struct {
		name string
		a, b []string
		want string
	}{
		{"empty", []string{a, ""}, []string{b}, "--a: empty root in the list"},
		{"A on both sides", []string{a}, []string{b, a}, "--b: root " + a + " is already in --a: an arm compared with itself always passes; give each arm its own roots"},
		{"twice on one side", []string{a, a}, []string{b}, "--a: root " + a + " is listed again: every replicate needs its own root"},
		{"a file", []string{a}, []string{file}, "--b: root " + file + " is not a directory"},
		{"missing", []string{filepath.Join(dir, "none")}, []string{b}, "--a: root " + filepath.Join(dir, "none") + " is not a directory"},
		// The same root written two ways (the audit's ./r1/a/bfcl-r1
		// against r1/a/bfcl-r1/, and a symbolic link).
		{"./ and trailing /", []string{"./a"}, []string{"a/"}, "--b: root a/ is already in --a (a/ is ./a)"},
		{"relative and absolute", []string{a, "./a"}, []string{b}, "--a: root ./a is listed again (./a is " + a + ")"},
		{"symbolic link", []string{a}, []string{b, linkB}, "--b: root " + linkB + " is listed again (" + linkB + " is " + b + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, CheckRoots(ArmRoots{"--a", tc.a}, ArmRoots{"--b", tc.b}), tc.want)
		})
	}
}
