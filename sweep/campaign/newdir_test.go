package campaign_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/usage"
	"sweep/sweep/campaign"
)

// TestNewSweepOnlyInAnEmptyDirectory: a new sweep started in any
// directory, and its knees and report read what was there as its own
// results (a sweep run point's result as a replicate of its c16, another
// sweep's points below it). A directory without the sweep's journal is
// refused unless it holds nothing but what a sweep killed before its
// first record leaves (its lock, an empty journal), by Run and Preview
// alike, naming what it holds, and nothing is written into it.
func TestNewSweepOnlyInAnEmptyDirectory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string // made in the directory; a trailing / makes a directory
		want  string   // the refusal; "" runs
	}{
		{name: "1 empty"},
		{name: "2 a sweep killed before its first record", files: []string{".lock", campaign.JournalFile}},
		{name: "3 a point of sweep run", files: []string{"run.json", "q_conc16.json", "aiperf_artifacts/"},
			want: "is not empty and holds no sweep (no journal.jsonl): run.json (a point of sweep run), aiperf_artifacts/, q_conc16.json; a new sweep reads every result below its directory as its own: give --out an empty or new directory (or, to resume a sweep, the directory holding its journal.jsonl)"},
		{name: "4 another sweep below it", files: []string{"old/", "old/journal.jsonl", "old/q_conc48/"},
			want: "holds no sweep (no journal.jsonl): old/ (a sweep: its journal.jsonl); a new sweep reads every result below its directory as its own: give --out an empty or new directory, or, to resume a sweep it holds, that sweep's directory ({dir}/old) with the command that started it"},
		{name: "5 anything else", files: []string{"notes.txt", ".sweep.lock"},
			want: "holds no sweep (no journal.jsonl): notes.txt, .sweep.lock; a new sweep"},
		{name: "6 more than five entries", files: []string{"a", "b", "c", "d", "e", "f", "g"},
			want: "holds no sweep (no journal.jsonl): a, b, c, d, e, and 2 more; a new sweep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSweep(t, testSchedule(t, []int{8}, 4, 16))
			for _, f := range tc.files {
				p := filepath.Join(s.dir, f)
				if f[len(f)-1] == '/' {
					require.NoError(t, os.MkdirAll(p, 0o755))
				} else {
					require.NoError(t, os.WriteFile(p, nil, 0o644))
				}
			}
			before := tree(t, s.dir)
			left, err := campaign.Preview(s.o)
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, 2, left.Points)
				sum, err := s.run(t.Context())
				require.NoError(t, err)
				assert.Equal(t, 2, sum.OK)
				return
			}
			_, runErr := s.run(t.Context())
			for _, e := range []error{err, runErr} {
				_, ok := errors.AsType[*usage.Error](e)
				assert.True(t, ok, "a usage error (exit 2): %v", e)
				assert.ErrorContains(t, e, "sweep directory "+s.dir+" ")
				assert.ErrorContains(t, e, strings.ReplaceAll(tc.want, "{dir}", s.dir))
			}
			assert.Equal(t, before, tree(t, s.dir), "nothing written")
			assert.Zero(t, s.b.starts)
		})
	}
}

// tree lists the paths below dir.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		paths = append(paths, path)
		return err
	}))
	return paths
}
