package leg

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/run"
)

// TestKeepEarlierServer: an earlier server's files move to the first free
// server.<n>; a directory with nothing of a server, or none, stays; one
// whose lock a live holder has (a server still running) is never moved.
func TestKeepEarlierServer(t *testing.T) {
	tests := []struct {
		name  string
		files []string // under the leg's arm directory
		held  bool     // the server directory's lock is held by another holder
		moved string   // "" for none
		err   bool
	}{
		{name: "no server directory"},
		{name: "only its lock", files: []string{"server/" + run.LockFile}},
		{name: "an earlier server", files: []string{"server/server.log", "server/" + run.LockFile}, moved: "server.1"},
		{name: "the next free number", files: []string{"server/server.log", "server.1/server.log", "server.2/server.log"}, moved: "server.3"},
		{name: "a live server's", files: []string{"server/server.log"}, held: true, err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arm := filepath.Join(t.TempDir(), "b")
			require.NoError(t, os.MkdirAll(arm, 0o755))
			for _, f := range tc.files {
				path := filepath.Join(arm, filepath.FromSlash(f))
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(f), 0o644))
			}
			dir := filepath.Join(arm, "server")
			if tc.held {
				unlock, err := run.LockOutDir(dir)
				require.NoError(t, err)
				defer unlock()
			}
			got, err := keepEarlierServer(dir)
			if tc.err {
				var oe *run.OutDirError
				require.ErrorAs(t, err, &oe)
				assert.Empty(t, got)
				assert.FileExists(t, filepath.Join(dir, "server.log"), "a held directory is left where it is")
				return
			}
			require.NoError(t, err)
			if tc.moved == "" {
				assert.Empty(t, got)
				if len(tc.files) == 0 {
					assert.NoDirExists(t, dir, "nothing made")
				}
				return
			}
			assert.Equal(t, filepath.Join(arm, tc.moved), got)
			data, err := os.ReadFile(filepath.Join(got, "server.log"))
			require.NoError(t, err)
			assert.Equal(t, "server/server.log", string(data), "the earlier server's log, kept")
			assert.NoDirExists(t, dir, "the new server makes its directory afresh")
		})
	}
}
