package configs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigFilesBounded: a 50 MB YAML took 2.4 GB of RSS to reject, and a
// FIFO in place of a config file blocked validate. Both are refused before
// parsing, naming the file and the limit.
func TestConfigFilesBounded(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	require.NoError(t, os.WriteFile(huge, []byte("k:\n  image: x\n"), 0o644))
	require.NoError(t, os.Truncate(huge, 50<<20))
	fifo := filepath.Join(dir, "fifo.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, tc := range []struct {
		name, path, msg string
	}{
		{"huge", huge, huge + ":1:1: cannot read master config: " + huge + " is 50 MiB, over sweep's config file limit of 8 MiB: refusing to read it"},
		{"fifo", fifo, fifo + ":1:1: cannot read master config: " + fifo + " is a named pipe (FIFO), not a regular file: sweep reads only regular files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadMasters(tc.path)
			require.Error(t, err)
			var ce *Error
			require.True(t, errors.As(err, &ce), "got %v", err)
			assert.Equal(t, tc.msg, ce.Error())
			_, err = LoadRunners(tc.path)
			assert.ErrorContains(t, err, "cannot read runner config: "+tc.path+" is ")
		})
	}
}
