package run

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDisk is a disk of three filesystems: paths under full are on
// device 1, with free bytes left; paths under shm on device 3, with
// shmFree left; any other path on device 2, with rootFree left.
type fakeDisk struct {
	full string
	free int64
	shm  string
	// shmFree and rootFree are the other filesystems' free space.
	shmFree, rootFree int64
}

func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

func (d fakeDisk) Dev(path string) (uint64, error) {
	switch {
	case under(path, d.full):
		return 1, nil
	case d.shm != "" && under(path, d.shm):
		return 3, nil
	}
	return 2, nil
}

func (d fakeDisk) Free(dir string) (int64, error) {
	dev, _ := d.Dev(dir)
	switch dev {
	case 1:
		return d.free, nil
	case 3:
		return d.shmFree, nil
	}
	return d.rootFree, nil
}

// TestDiskFull: a stage that failed for want of space on the disk of its
// output directory, or on another disk its log names that stays full
// (/dev/shm, an engine's cache: every later point failed the same way),
// is told from one whose other disk has space again (the failed
// process's own files, freed as it exited) or that failed for another
// reason; the sweep stops on the first two, which no attempt survives.
func TestDiskFull(t *testing.T) {
	const out = "/data/sweep/point"
	enospc := func(path string) error {
		return fmt.Errorf("write %s: %w", path, &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC})
	}
	clientFailed := errors.New("client failed (exit code 1)")
	engineExited := errors.New("engine exited (exit code 1)")
	shmLine := "OSError: [Errno 28] No space left on device: '/dev/shm/torch_1234_0'"
	for _, tc := range []struct {
		name string
		err  error
		tail []string
		free int64
		// shmFree and rootFree are the space left on /dev/shm and on
		// any other disk (8 GB when 0).
		shmFree, rootFree int64
		line              string // the quoted log line, "" for none
		full              bool
		// elsewhere is the mount point of the full disk that is not
		// the output directory's, "" for the output directory's.
		elsewhere string
	}{
		{name: "sweep's own write in the directory", err: enospc(out + "/run.json"), free: 4096, full: true},
		{name: "a quota", err: fmt.Errorf("record tag: %w", syscall.EDQUOT), free: 1 << 40, full: true},
		{name: "sweep's own write on another disk", err: enospc("/tmp/sidecar.json"), free: 4096},
		{name: "the client's artifacts", err: clientFailed, free: 4096, full: true,
			tail: []string{"loadgen: profiling done", "sweep: loadgen: write " + out + "/aiperf_artifacts/p.jsonl: write " + out + "/aiperf_artifacts/.p.jsonl.tmp: no space left on device", out + "/aiperf_artifacts/p.json"},
			line: "sweep: loadgen: write " + out + "/aiperf_artifacts/p.jsonl: write " + out + "/aiperf_artifacts/.p.jsonl.tmp: no space left on device"},
		{name: "Python's OSError names no file, little left", err: clientFailed, free: 100 << 20, full: true,
			tail: []string{"Traceback (most recent call last):", "OSError: [Errno 28] No space left on device"}, line: "OSError: [Errno 28] No space left on device"},
		{name: "Python's OSError names no file, plenty left", err: clientFailed, free: 500 << 30,
			tail: []string{"OSError: [Errno 28] No space left on device"}},
		{name: "an engine's cache on another disk with space again", err: engineExited, free: 4096,
			tail: []string{"OSError: [Errno 28] No space left on device: '/root/.triton/cache/x.so'"}},
		{name: "a full /dev/shm", err: engineExited, free: 500 << 30, shmFree: 0, full: true, elsewhere: "/dev/shm",
			tail: []string{shmLine, "[rank0] exiting"}, line: shmLine},
		{name: "a /dev/shm freed as the engine exited", err: engineExited, free: 500 << 30, shmFree: 32 << 30,
			tail: []string{shmLine}},
		{name: "an engine's cache on a full root disk", err: engineExited, free: 500 << 30, rootFree: 1 << 20, full: true, elsewhere: "/",
			tail: []string{"OSError: [Errno 28] No space left on device: '/root/.triton/cache/x.so'"},
			line: "OSError: [Errno 28] No space left on device: '/root/.triton/cache/x.so'"},
		{name: "the output directory's disk first", err: clientFailed, free: 4096, shmFree: 0, full: true,
			tail: []string{shmLine, "write " + out + "/x: no space left on device"}, line: "write " + out + "/x: no space left on device"},
		{name: "another failure", err: clientFailed, free: 0, tail: []string{"aiperf: error: server returned 500"}},
		{name: "no failure", free: 0, tail: []string{"no space left on device"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rootFree == 0 {
				tc.rootFree = 8 << 30
			}
			df := diskFull(fakeDisk{full: "/data", free: tc.free, shm: "/dev/shm", shmFree: tc.shmFree, rootFree: tc.rootFree}, out, tc.err, tc.tail)
			if !tc.full {
				assert.Nil(t, df)
				return
			}
			require.NotNil(t, df)
			switch tc.elsewhere {
			case "":
				assert.Equal(t, out, df.Dir)
				assert.Equal(t, tc.free, df.Free)
				assert.False(t, df.Elsewhere)
			case "/dev/shm":
				assert.Equal(t, tc.elsewhere, df.Dir)
				assert.Equal(t, tc.shmFree, df.Free)
				assert.True(t, df.Elsewhere)
			default:
				assert.Equal(t, tc.elsewhere, df.Dir)
				assert.Equal(t, tc.rootFree, df.Free)
				assert.True(t, df.Elsewhere)
			}
			assert.Equal(t, tc.line, df.Line)
			assert.ErrorIs(t, df, tc.err, "it wraps the failure")
		})
	}
}

// TestDiskFullError: the error says what failed, that the disk is full,
// how much is left and the log line that says so.
func TestDiskFullError(t *testing.T) {
	err := &DiskFullError{Dir: "/data/p", Free: 4_100_000, Line: "write /data/p/x: no space left on device", Err: errors.New("client failed (exit code 1)")}
	assert.EqualError(t, err, "client failed (exit code 1): the disk holding /data/p is full (4.1 MB free); from its log: write /data/p/x: no space left on device")
	err.Free, err.Line = -1, ""
	assert.EqualError(t, err, "client failed (exit code 1): the disk holding /data/p is full (free space unknown)")
	assert.Equal(t, "730 B", formatBytes(730))
	assert.Equal(t, "12.0 GB", formatBytes(12e9))
}

// TestCheckDiskFull: a caller's own write into a directory refused for
// want of space is a *DiskFullError; another error, or one that is one
// already, is returned as it is.
func TestCheckDiskFull(t *testing.T) {
	dir := t.TempDir()
	err := CheckDiskFull(dir, fmt.Errorf("journal: %w", &fs.PathError{Op: "write", Path: filepath.Join(dir, "journal.jsonl"), Err: syscall.ENOSPC}))
	df, ok := errors.AsType[*DiskFullError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, dir, df.Dir)
	assert.GreaterOrEqual(t, df.Free, int64(0), "the free space is read")
	assert.Same(t, err, CheckDiskFull(dir, err))
	other := errors.New("permission denied")
	assert.Same(t, other, CheckDiskFull(dir, other))
}

// TestRunOnAFullDisk: a client whose artifacts found the disk full
// failed "client failed (exit code 1)", the reason only in run.json's
// log tail. Run's error says the disk holding the output directory is
// full, quoting the line, and the stage's cause is that line.
func TestRunOnAFullDisk(t *testing.T) {
	spec, opts := testSpec(t, "", "no-space")
	rec, err := Run(t.Context(), spec, opts)
	require.Error(t, err)
	df, ok := errors.AsType[*DiskFullError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, opts.OutDir, df.Dir)
	assert.Contains(t, err.Error(), "client failed (exit code 1): the disk holding "+opts.OutDir+" is full (")
	assert.Contains(t, err.Error(), ".profile_export.jsonl.sweep-1.tmp: no space left on device")
	f := rec.Failed()
	require.NotNil(t, f)
	assert.Contains(t, f.Detail(), "; from its log: sweep: loadgen: write ", "the stage's cause is the write that found no space")
	assertNothingLeft(t, rec)
}
