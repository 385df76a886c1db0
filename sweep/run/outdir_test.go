package run

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClaimOutDir: two runs with the same --out both reported success with
// one's artifacts overwritten, and a non-empty --out was overwritten
// silently.
func TestClaimOutDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	release, err := ClaimOutDir(dir, "p", false)
	require.NoError(t, err, "a new directory")

	_, err = ClaimOutDir(dir, "p", false)
	oe, ok := errors.AsType[*OutDirError](err)
	require.True(t, ok, "a second run is refused while the first holds the lock: %v", err)
	assert.Contains(t, oe.Msg, "is running a point there")
	release()

	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.log"), []byte("x"), 0o644))
	_, err = ClaimOutDir(dir, "p", false)
	oe, ok = errors.AsType[*OutDirError](err)
	require.True(t, ok, "%v", err)
	assert.Contains(t, oe.Msg, "not empty (server.log); use --force")

	release, err = ClaimOutDir(dir, "p", true)
	require.NoError(t, err, "--force")
	release()

	require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte(`{"name":"p","ok":true}`), 0o644))
	_, err = ClaimOutDir(dir, "p", false)
	assert.ErrorIs(t, err, ErrAlreadyDone, "the same completed point is a no-op")
	_, err = ClaimOutDir(dir, "other", false)
	_, ok = errors.AsType[*OutDirError](err)
	assert.True(t, ok, "another point's directory is refused: %v", err)
}
