package campaign_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
)

// TestSweepDirectoryRefusesSymlinks: a received sweep directory whose
// .lock or journal.jsonl is a symbolic link made the sweep truncate and
// overwrite the file it points to (any file the user can write).
func TestSweepDirectoryRefusesSymlinks(t *testing.T) {
	for _, name := range []string{".lock", campaign.JournalFile} {
		t.Run(name, func(t *testing.T) {
			s := newSweep(t, testSchedule(t, []int{8}, 4))
			victim := filepath.Join(t.TempDir(), "precious.txt")
			require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o644))
			require.NoError(t, os.Symlink(victim, filepath.Join(s.dir, name)))

			_, err := s.run(t.Context())
			require.Error(t, err)
			assert.ErrorContains(t, err, filepath.Join(s.dir, name)+" is a symbolic link")
			data, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "precious", string(data), "the link's target was written")
		})
	}
}

// TestEventLogRefusesSymlinks: a node's event log is not written through
// a link either.
func TestEventLogRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "precious.txt")
	require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o644))
	path := filepath.Join(dir, "arm01-t1.events.jsonl")
	require.NoError(t, os.Symlink(victim, path))
	_, err := campaign.CreateEventLog(path)
	assert.ErrorContains(t, err, path+" is a symbolic link")
}
