package campaign

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/run"
)

// TestServerDirErrors: a DIR/servers that cannot hold directories (a
// file, a symlink loop) spun serverDir at 100 % CPU forever, looking for
// a free name; it must fail naming the path.
func TestServerDirErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, servers string)
		errno syscall.Errno
	}{
		{"a file", func(t *testing.T, servers string) {
			require.NoError(t, os.WriteFile(servers, []byte("x"), 0o644))
		}, syscall.ENOTDIR},
		{"a symlink loop", func(t *testing.T, servers string) {
			require.NoError(t, os.Symlink(servers, servers))
		}, syscall.ELOOP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, filepath.Join(dir, ServersDir))
			b := &RunBackend{Dir: dir}
			done := make(chan error, 1)
			go func() {
				_, err := b.serverDir(&Arm{Index: 0}, 1)
				done <- err
			}()
			select {
			case err := <-done:
				require.ErrorIs(t, err, tc.errno)
				assert.ErrorContains(t, err, filepath.Join(dir, ServersDir, "arm01-1"))
			case <-time.After(10 * time.Second):
				t.Fatal("serverDir spins")
			}
		})
	}
}

// TestServerDirSkipsTakenNames: directories of earlier invocations are
// kept and the first free name is taken.
func TestServerDirSkipsTakenNames(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ServersDir, "arm02-1"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ServersDir, "arm02-2"), 0o755))
	b := &RunBackend{Dir: dir}
	d, err := b.serverDir(&Arm{Index: 1}, 1)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, ServersDir, "arm02-3"), d)
}

// TestOnSweepDiskKeepsAnotherDisk: a point's failure for want of space
// in its own directory names the sweep directory's disk; one for want
// of space on another disk (/dev/shm) keeps that disk's name.
func TestOnSweepDiskKeepsAnotherDisk(t *testing.T) {
	b := &RunBackend{Dir: "/data/sweep"}
	for _, tc := range []struct {
		name string
		df   *run.DiskFullError
		want string
	}{
		{"the point's directory", &run.DiskFullError{Dir: "/data/sweep/p1", Err: errors.New("x")}, "/data/sweep"},
		{"/dev/shm", &run.DiskFullError{Dir: "/dev/shm", Elsewhere: true, Err: errors.New("x")}, "/dev/shm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.onSweepDisk(fmt.Errorf("stage engine: %w", tc.df))
			df, ok := errors.AsType[*run.DiskFullError](err)
			require.True(t, ok)
			assert.Equal(t, tc.want, df.Dir)
		})
	}
}
