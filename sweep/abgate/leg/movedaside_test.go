package leg

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMovedAside: the leg's report lists what resumed runs moved aside
// and kept (earlier reports, earlier servers' files), in the order of
// their number (2 before 10), and nothing else of the directory: not the
// current report or server, not a root's try, not a name whose suffix is
// no number freeSuffix gives.
func TestMovedAside(t *testing.T) {
	dir := t.TempDir()
	p := shippedPlan(t, dir)
	for _, f := range []string{
		"report.md", "report.json", "report.md.10", "report.md.2", "report.json.2", "report.json.10", "report.md.x", "report.md.02",
		"a/server/server.log", "b/server/server.log", "b/server.1/server.log", "b/server.3/server.log", "b/servers.1",
		"b/bfcl-r1/x", "b/bfcl-r1.try2/x",
	} {
		path := filepath.Join(dir, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, nil, 0o644))
	}
	assert.Equal(t, []string{"report.md.2", "report.md.10", "report.json.2", "report.json.10", "b/server.1", "b/server.3"}, movedAside(dir, p))
	assert.Nil(t, movedAside(t.TempDir(), p), "a fresh leg: none")
}
