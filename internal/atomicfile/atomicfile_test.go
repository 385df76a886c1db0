package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplacesWholeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	require.NoError(t, Write(path, []byte("old content that is longer"), 0o600))
	require.NoError(t, Write(path, []byte("new"), 0o644))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestWriteFailsInMissingDirAndLeavesNothing(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "missing", "x.json"), []byte("x"), 0o644)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x.json")
}

// TestWriteWithFailureKeepsOld: a writer that fails half-way replaces
// nothing and leaves no temporary file.
func TestWriteWithFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "export.json")
	require.NoError(t, Write(path, []byte("old"), 0o644))
	err := WriteWith(path, 0o644, func(w io.Writer) error {
		if _, err := w.Write([]byte("half of the new")); err != nil {
			return err
		}
		return errors.New("encoder failed")
	})
	require.ErrorContains(t, err, "encoder failed")
	assert.Contains(t, err.Error(), "export.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.json")
	require.NoError(t, WriteJSON(path, map[string]any{"a": "<b>", "n": 1}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"a\": \"<b>\",\n  \"n\": 1\n}\n", string(b))
}

func TestCleanStale(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".result.json.sweep-123.tmp"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep.json"), nil, 0o644))
	require.NoError(t, CleanStale(dir))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "keep.json", entries[0].Name())
}

// TestCleanStaleRemovesOnlyItsOwn: CleanStale used to delete every .*.tmp
// in --out, including files sweep did not write.
func TestCleanStaleRemovesOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, ".result.json.sweep-123456.tmp")
	foreign := []string{".notes.tmp", ".result.json.123.tmp", ".x.sweep-abc.tmp", ".sweep-1.tmp"}
	require.NoError(t, os.WriteFile(mine, nil, 0o644))
	for _, f := range foreign {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	require.NoError(t, CleanStale(dir))
	assert.NoFileExists(t, mine)
	for _, f := range foreign {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	// A temp file Write makes is one CleanStale recognises.
	f, err := os.CreateTemp(dir, ".r.json"+tempInfix+"*.tmp")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.True(t, isOwnTemp(filepath.Base(f.Name())), f.Name())
}

func TestOpenFileRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	_, err := OpenFile(link, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	le, ok := errors.AsType[*LinkError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, link, le.Path)
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))

	f, err := OpenFile(filepath.Join(dir, "new"), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
