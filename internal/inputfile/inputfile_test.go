package inputfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var small = Limit{What: "test file", Bytes: 10}

func write(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	return p
}

func TestRead(t *testing.T) {
	got, err := Read(write(t, "0123456789"), small)
	require.NoError(t, err)
	assert.Equal(t, "0123456789", string(got), "a file at the limit is read")

	p := write(t, "0123456789x")
	_, err = Read(p, small)
	tl, ok := errors.AsType[*TooLargeError](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, int64(11), tl.Size)
	assert.Equal(t, p+" is 11 bytes, over sweep's test file limit of 10 bytes: refusing to read it", err.Error())

	got, err = Read(p, Limit{What: "log", Bytes: -1})
	require.NoError(t, err)
	assert.Len(t, got, 11, "a negative limit is no size limit")

	_, err = Read(filepath.Join(t.TempDir(), "missing"), small)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestSparseFileRefusedUnread: a 1 GB sparse JSON took 2.1 GB of RSS to
// reject; its size is now checked before anything is read.
func TestSparseFileRefusedUnread(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse.json")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30))
	require.NoError(t, f.Close())
	_, err = Read(p, AiperfSummary)
	tl, ok := errors.AsType[*TooLargeError](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, int64(1<<30), tl.Size)
	assert.Contains(t, err.Error(), "is 1 GiB, over sweep's profile_export_aiperf.json limit of 64 MiB: refusing to read it")
}

// TestFileGrowingWhileRead: a file within the limit at open that grows
// past it is not silently cut.
func TestFileGrowingWhileRead(t *testing.T) {
	p := write(t, "01234")
	f, err := Open(p, small)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, os.WriteFile(p, []byte("0123456789abcdef"), 0o644))
	_, err = io.ReadAll(f)
	_, ok := errors.AsType[*TooLargeError](err)
	assert.True(t, ok, "got %v", err)
	assert.EqualError(t, err, p+" is over sweep's test file limit of 10 bytes: refusing to read it")
}

// TestNotRegular: a FIFO in place of profile_export_aiperf.json blocked
// sweep result aggregate forever (open waits for a writer).
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "profile_export_aiperf.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		_, err := Read(fifo, AiperfSummary)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		// Unblock the reader so the test can end, then fail.
		if w, werr := os.OpenFile(fifo, os.O_RDWR, 0); werr == nil {
			w.Close()
		}
		t.Fatal("Read blocked on a FIFO")
	}
	nr, ok := errors.AsType[*NotRegularError](err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, fifo+" is a named pipe (FIFO), not a regular file: sweep reads only regular files", nr.Error())
	assert.True(t, IsRefused(err))

	_, err = Read(dir, small)
	assert.EqualError(t, err, dir+" is a directory, not a regular file: sweep reads only regular files")
	_, err = Read("/dev/zero", small)
	assert.EqualError(t, err, "/dev/zero is a device, not a regular file: sweep reads only regular files")
}

func TestLimitString(t *testing.T) {
	assert.Equal(t, "config file limit of 8 MiB", ConfigYAML.String())
	assert.Equal(t, "profile_export.jsonl limit of 1 GiB", AiperfRecords.String())
}

func TestReadFrom(t *testing.T) {
	limit := Limit{Bytes: 4}
	got, err := ReadFrom(strings.NewReader("abcd"), "stdin", limit)
	if err != nil || string(got) != "abcd" {
		t.Fatalf("ReadFrom at the limit: %q, %v", got, err)
	}
	_, err = ReadFrom(strings.NewReader("abcde"), "stdin", limit)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Path != "stdin" || !tl.Read || tl.Size != 5 {
		t.Fatalf("ReadFrom over the limit: %#v", err)
	}
}

// Contains finds a needle wherever the reads split it, and refuses what
// Read refuses.
func TestContains(t *testing.T) {
	text := `{"metrics": {"vllm:num_requests_running": {}}}`
	for _, window := range []int{1, 2, 3, 5, 8, 64} {
		for needle, want := range map[string]bool{`"vllm:`: true, `"sglang:`: false, `}}}`: true, `{"metrics"`: true, text: true, text + " ": false} {
			got, err := contains(strings.NewReader(text), []byte(needle), window)
			require.NoError(t, err)
			assert.Equal(t, want, got, "window %d, %q", window, needle)
		}
	}
	got, err := Contains(write(t, text[:10]), small, []byte("metrics"))
	require.NoError(t, err)
	assert.True(t, got)
	_, err = Contains(write(t, text), small, []byte("metrics"))
	_, ok := errors.AsType[*TooLargeError](err)
	assert.True(t, ok, "got %v", err)
	_, err = contains(iotest.ErrReader(io.ErrUnexpectedEOF), []byte("x"), 8)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
