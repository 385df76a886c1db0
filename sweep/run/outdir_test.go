package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sweep/internal/proc"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClaimOutDir: two runs with the same --out both reported success with
// one's artifacts overwritten, and a non-empty --out was overwritten
// silently.
func TestClaimOutDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	release, _, err := ClaimOutDir(dir, "p", false)
	require.NoError(t, err, "a new directory")

	_, _, err = ClaimOutDir(dir, "p", false)
	oe, ok := errors.AsType[*OutDirError](err)
	require.True(t, ok, "a second run is refused while the first holds the lock: %v", err)
	assert.Contains(t, oe.Msg, "is running a point there")
	release()

	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.log"), []byte("x"), 0o644))
	_, _, err = ClaimOutDir(dir, "p", false)
	oe, ok = errors.AsType[*OutDirError](err)
	require.True(t, ok, "%v", err)
	assert.Contains(t, oe.Msg, "not empty (server.log); use --force")

	release, _, err = ClaimOutDir(dir, "p", true)
	require.NoError(t, err, "--force")
	release()

	require.NoError(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte(`{"name":"p","ok":true}`), 0o644))
	_, _, err = ClaimOutDir(dir, "p", false)
	assert.ErrorIs(t, err, ErrAlreadyDone, "the same completed point is a no-op")
	_, _, err = ClaimOutDir(dir, "other", false)
	_, ok = errors.AsType[*OutDirError](err)
	assert.True(t, ok, "another point's directory is refused: %v", err)
}

// TestLeftoversOfAKilledRunAreStopped: kill -9 of sweep run orphaned the
// engine's own children (Pdeathsig reaches direct children only). The
// next start in the same --out finds them by their tag and stops them.
func TestLeftoversOfAKilledRunAreStopped(t *testing.T) {
	dir := t.TempDir()
	tag := proc.NewTag("engine")
	require.NoError(t, recordTag(dir, tag))
	// An engine tree whose parent sweep "died": a shell that left its
	// process group, with a child.
	p, err := proc.Start(context.Background(), proc.Spec{Name: "engine", Tag: tag, Argv: []string{"sh", "-c", "sleep 60 & exec sleep 60"}})
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(time.Second) })
	require.Eventually(t, func() bool { return countTagged(tag) >= 2 }, 5*time.Second, 20*time.Millisecond)

	release, left, err := ClaimOutDir(dir, "p", false)
	require.NoError(t, err)
	release()
	assert.GreaterOrEqual(t, len(left), 2, "the engine and its child")
	assert.Zero(t, countTagged(tag), "nothing of the earlier run is left")
	assert.NoFileExists(t, filepath.Join(dir, TagsFile))
}

// countTagged counts the live (not zombie) processes carrying tag.
func countTagged(tag string) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && strings.Contains(string(env), proc.TagEnv+"="+tag+"\x00") {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
				n++
			}
		}
	}
	return n
}
