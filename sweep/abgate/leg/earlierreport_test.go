package leg

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeepEarlierReport: the earlier report's files move aside together
// to the first number free for both, each whole; none, nothing moves.
func TestKeepEarlierReport(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		moves [][2]string
		after []string // the directory's entries afterwards
	}{
		{"no report", []string{"leg.json"}, nil, []string{"leg.json"}},
		{"both", []string{"report.md", "report.json"}, [][2]string{{"report.md", "report.md.1"}, {"report.json", "report.json.1"}},
			[]string{"report.json.1", "report.md.1"}},
		{"one moved before (a kill between the renames)", []string{"report.json", "report.md.1"}, [][2]string{{"report.json", "report.json.2"}},
			[]string{"report.json.2", "report.md.1"}},
		{"after an earlier move", []string{"report.md", "report.json", "report.md.1", "report.json.1"},
			[][2]string{{"report.md", "report.md.2"}, {"report.json", "report.json.2"}},
			[]string{"report.json.1", "report.json.2", "report.md.1", "report.md.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644))
			}
			moves, err := keepEarlierReport(dir)
			require.NoError(t, err)
			assert.Equal(t, tc.moves, moves)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.Equal(t, tc.after, names)
			for _, m := range moves {
				data, err := os.ReadFile(filepath.Join(dir, m[1]))
				require.NoError(t, err)
				assert.Equal(t, m[0], string(data), "%s holds what %s held", m[1], m[0])
			}
		})
	}
}
