package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// TestSearchedPoints: the report of an adaptive discovery lists why its
// search ran each point (the rule in its point_start record, and whether
// it ran as a probe or at the full length) and why it skipped the others
// (their point_skip records' reasons), in the journal's order
// (testdata/searched.md.golden; the page has the same table). Before,
// neither the report nor the page said why any point ran or was left
// out.
func TestSearchedPoints(t *testing.T) {
	dir := t.TempDir()
	c := synth.KeySweep(11)[0]
	ran := map[int]string{
		1:  "bracket: the grid's first point",
		4:  "bracket: the next ×4 step above c1, the first usable point",
		16: "bracket: the next ×4 step: c4 gained 90.0 % per doubling over c1 (gate 10.0 %)",
		64: "c64 again at full length: its probe's KV pool came near full (unsteady: short of a full point's steady state), with the verdict hanging on it (unsaturated (96.4 % likely) as read, knee c16 (ok) at half its reading)",
		8:  "fill: k/2 of the knee c16 (ok), its lower doubling neighbour",
	}
	start := campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover"}}
	plan := campaign.ArmPlan{Arm: 1, Identity: c.Arm.Identity}
	written := &knee.Arm{Identity: c.Arm.Identity}
	id := func(conc int) string { return fmt.Sprintf("%s-c%d", c.ID, conc) }
	for _, s := range c.Arm.Samples {
		plan.Points = append(plan.Points, campaign.PointPlan{Point: id(s.Conc), Conc: s.Conc})
		start.Identity.Points = append(start.Identity.Points, id(s.Conc))
		if ran[s.Conc] != "" && !slices.ContainsFunc(written.Samples, func(w knee.Sample) bool { return w.Conc == s.Conc }) {
			s.Probe = s.Conc != 64
			written.Samples = append(written.Samples, s)
		}
	}
	start.Arms = []campaign.ArmPlan{plan}
	paths, err := synth.WriteDir(dir, written, true)
	require.NoError(t, err)
	recs := []campaign.Record{start}
	for i, s := range written.Samples {
		rel, err := filepath.Rel(dir, paths[i])
		require.NoError(t, err)
		recs = append(recs,
			campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: id(s.Conc), Conc: s.Conc, Probe: s.Probe, Reason: ran[s.Conc]},
			campaign.Record{Event: campaign.EventPointEnd, Arm: 1, Point: id(s.Conc), Conc: s.Conc, Probe: s.Probe, Status: campaign.StatusOK, Attempt: 1, Result: rel})
	}
	for _, p := range plan.Points {
		if ran[p.Conc] == "" {
			where := fmt.Sprintf("between c%d and c%d, measured", p.Conc/2, p.Conc*2)
			if p.Conc > 64 {
				where = "above c64, the highest point measured"
			}
			recs = append(recs, campaign.Record{Event: campaign.EventPointSkip, Arm: 1, Point: p.Point, Conc: p.Conc,
				Reason: "adaptive discovery: not needed to find the knee: " + where + ": the knee c16 (ok) is bounded by c8 and c64, both measured"})
		}
	}
	recs = append(recs, campaign.Record{Event: campaign.EventSearchEnd, Arm: 1, Reason: "adaptive discovery: the knee search needs no more points: knee c16 (ok)"})
	require.NoError(t, synth.WriteJournal(dir, recs...))

	rep, err := Read(t.Context(), dir, knee.Options{})
	require.NoError(t, err)
	md := rep.Markdown(ChartsDir)
	i := strings.Index(md, "## Adaptive search")
	require.GreaterOrEqual(t, i, 0, md)
	j := strings.Index(md[i+1:], "\n## ")
	require.Positive(t, j)
	got := md[i : i+1+j]
	golden := filepath.Join("testdata", "searched.md.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
	page := rep.HTML()
	assert.Contains(t, page, "<h2>Adaptive search: why each point ran or was skipped ("+fmt.Sprint(len(c.Arm.Samples)))
	assert.Contains(t, page, `<table id="searched">`)
	assert.Contains(t, page, "<td>c64</td><td>full length</td><td>c64 again at full length: its probe&#39;s KV pool came near full")
}
