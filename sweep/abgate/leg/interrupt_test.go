package leg

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/abgate"
)

// TestInterruptedReportArmNotStarted: the INCOMPLETE report of a leg
// interrupted before an arm's server started lists that arm as not
// started, its commands with ports by name and no root; an arm whose
// server this run started keeps the plan's ports and names its fresh
// root once its replicate has made it, never before. `sweep ab run`
// interrupted during arm a listed arm b's drawn ports "as launched" and
// a root b/bfcl-r1 that did not exist; then, interrupted after arm b's
// server started but before its replicate began, that root still.
func TestInterruptedReportArmNotStarted(t *testing.T) {
	drawn := []string{"20000", "21000", "21001", "31000"} // a's port, b's router, engine and metrics ports
	for _, tc := range []struct {
		name     string
		launched []string
		made     []string // roots made by the time of the interrupt
	}{
		{"none started", nil, nil},
		{"arm a started, its root not made yet", []string{"a"}, nil},
		{"arm a started, its root made", []string{"a"}, []string{"a"}},
		{"both started, b's root made", []string{"a", "b"}, []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := shippedPlan(t, dir)
			launched := &launches{}
			for _, label := range tc.launched {
				launched.add(label)
			}
			for _, label := range tc.made {
				require.NoError(t, os.MkdirAll(RootDir(dir, label, 1), 0o755))
			}
			ie := interrupted(dir, p, false, time.Now(), launched, context.Canceled)
			require.NotNil(t, ie)
			rep := ie.report(p, false)
			require.Len(t, rep.Servers, 2)
			assert.Equal(t, []abgate.Problem{{Arm: abgate.Every, Root: dir, Category: abgate.Every, Reason: abgate.ReasonInterrupted, Detail: ie.Error()}}, rep.Problems)
			for i, label := range []string{"a", "b"} {
				s := rep.Servers[i]
				roots := [][]string{rep.Roots.A, rep.Roots.B}[i]
				argv := strings.Join(append(append([]string{}, s.EngineArgv...), s.RouterArgv...), " ")
				if launched.has(label) {
					assert.False(t, s.NotStarted, "arm %s", label)
					want := []string{}
					if slices.Contains(tc.made, label) {
						want = []string{filepath.Join(dir, label, "bfcl-r1")}
					}
					assert.Equal(t, want, roots, "arm %s: its root only once made", label)
					continue
				}
				assert.True(t, s.NotStarted, "arm %s", label)
				assert.Equal(t, []string{}, roots, "arm %s: no root", label)
				assert.Contains(t, argv, "{port}", "arm %s: ports by name", label)
				for _, port := range drawn {
					assert.NotContains(t, argv, port, "arm %s: a drawn port no server used", label)
				}
			}
		})
	}
}
