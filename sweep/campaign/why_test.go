package campaign_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestAdaptiveWhy: an adaptive discovery says why its search ran each
// point and why it skipped the others: the journal's point_start records
// carry the rule that asked for the point, each point_skip why it was not
// needed and the search_end the verdict; the summary lists both under the
// points' numbers (testdata/adaptive-why-*.golden). Before, every skip
// read "not needed to find the knee" and nothing said why a point ran,
// nor why a probe ran again at the full length.
func TestAdaptiveWhy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sweep func(t *testing.T) *sweepRun
	}{
		{"full-length", func(t *testing.T) *sweepRun {
			s := newSweep(t, testSchedule(t, []int{8}, 1, 2, 4, 8, 16, 32, 64, 128, 256))
			s.b.saturateAt = 16
			return s
		}},
		{"failed-probe", func(t *testing.T) *sweepRun {
			s, c64 := probeSweep(t)
			s.b.saturateAt = 16
			s.b.faults[c64] = "fail" // the first load only
			return s
		}},
		{"unsteady-probe", func(t *testing.T) *sweepRun {
			s, _ := probeSweep(t)
			s.b.saturateAt, s.b.kvFullAt, s.b.unsteadyHigh = 16, 64, 2
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.sweep(t)
			s.adaptive()
			var progress strings.Builder
			s.o.Progress = &progress
			sum, err := s.run(t.Context())
			require.NoError(t, err)
			checkGolden(t, "adaptive-why-"+tc.name+".golden", whyOf(t, s, sum))
			assert.Contains(t, progress.String(), "]   arm 1: the knee search needs no more points: knee c16 (ok)\n", "the progress says what the search ends on")
		})
	}
}

// whyOf is what the sweep s (its summary sum) says of why its search ran
// or skipped each point: the journal's reasons, then the summary's list.
func whyOf(t *testing.T, s *sweepRun, sum *campaign.Summary) string {
	t.Helper()
	recs, err := campaign.ReadJournal(s.dir)
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("journal:\n")
	for _, r := range recs {
		switch r.Event {
		case campaign.EventPointStart, campaign.EventPointSkip:
			probe := ""
			if r.Probe {
				probe = " (probe)"
			}
			fmt.Fprintf(&b, "  %s c%d%s: %s\n", r.Event, r.Conc, probe, r.Reason)
		case campaign.EventSearchEnd:
			fmt.Fprintf(&b, "  %s: %s\n", r.Event, r.Reason)
		}
	}
	b.WriteString("summary:\n")
	table := sum.Table()
	i := strings.Index(table, "adaptive discovery, why")
	require.GreaterOrEqual(t, i, 0, "the summary says nothing of why:\n%s", table)
	lines := strings.SplitAfter(table[i:], "\n")
	b.WriteString(lines[0])
	for _, line := range lines[1:] {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		b.WriteString(strings.ReplaceAll(line, s.sched.Arms[0].Name, "ARM"))
	}
	return b.String()
}

// checkGolden compares got with testdata/name, which -update rewrites.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}
