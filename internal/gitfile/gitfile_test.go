package gitfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShow(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	git("init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("v: 1\n"), 0o644))
	git("add", "a.yaml")
	git("commit", "-qm", "one")

	got, err := Show(t.Context(), "HEAD", filepath.Join(dir, "a.yaml"))
	require.NoError(t, err)
	assert.Equal(t, "v: 1\n", string(got))

	_, err = Show(t.Context(), "HEAD", filepath.Join(dir, "new.yaml"))
	assert.ErrorIs(t, err, ErrNotExist, "a file the revision lacks")

	_, err = Show(t.Context(), "no-such-ref", filepath.Join(dir, "a.yaml"))
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrNotExist), "a git failure is not a missing file: %v", err)

	out := filepath.Join(dir, "written-by-git")
	for _, ref := range []string{"--output=" + out, "-p", "", "HEAD a"} {
		_, err = Show(t.Context(), ref, filepath.Join(dir, "a.yaml"))
		_, isRef := errors.AsType[*RefError](err)
		assert.True(t, isRef, "ref %q: %v", ref, err)
	}
	assert.NoFileExists(t, out)
}
