package report

import (
	"bytes"
	"fmt"
	"html"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/campaign"
	"sweep/sweep/compare"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// interruptedSweep writes the key sweep's tp8 ep8 arm as a discovery
// interrupted while it ran c32 (planned c1..c128): c1..c16 ran, c32
// started and never ended, c64 and c128 never ran.
func interruptedSweep(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	arm := synth.KeySweep(11)[4].Arm
	ran := &knee.Arm{Identity: arm.Identity}
	for _, s := range arm.Samples {
		if s.Conc <= 16 {
			ran.Samples = append(ran.Samples, s)
		}
	}
	paths, err := synth.WriteDir(dir, ran, true)
	require.NoError(t, err)
	plan := campaign.ArmPlan{Arm: 1, Identity: arm.Identity}
	for _, c := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		plan.Points = append(plan.Points, campaign.PointPlan{Point: fmt.Sprintf("c%d", c), Conc: c})
	}
	recs := []campaign.Record{{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover"}, Arms: []campaign.ArmPlan{plan}}}
	for i, p := range paths {
		rel, err := filepath.Rel(dir, p)
		require.NoError(t, err)
		c := ran.Samples[i].Conc
		recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: fmt.Sprintf("c%d", c), Conc: c},
			campaign.Record{Event: campaign.EventPointEnd, Arm: 1, Point: fmt.Sprintf("c%d", c), Conc: c, Status: campaign.StatusOK, Result: rel})
	}
	recs = append(recs, campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: "c32", Conc: 32})
	require.NoError(t, synth.WriteJournal(dir, recs...))
	return dir
}

// TestIncompleteSweep: the report of an interrupted discovery says, first,
// that the sweep has not finished and which points, the arm's verdict
// names them instead of advising to extend the grid, and its throughput
// chart marks them on the x axis. It said "still gaining ...: extend the
// grid upward" of an arm whose grid ran further, unfinished.
func TestIncompleteSweep(t *testing.T) {
	rep, err := Read(t.Context(), interruptedSweep(t), knee.Options{})
	require.NoError(t, err)
	want := "Incomplete: its journal says the sweep has not finished 3 of its 8 points: qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8 c32 (interrupted), c64 (not run), c128 (not run); rerun its command to resume it"
	require.Len(t, rep.Incomplete, 1)
	assert.True(t, strings.HasPrefix(rep.Incomplete[0], want), rep.Incomplete[0])
	md := rep.Markdown(ChartsDir)
	assert.True(t, strings.HasPrefix(md, "> **Simulated: every arm ran"), md[:80])
	assert.Contains(t, md, ">\n> **"+want)
	assert.NotContains(t, md, "extend the grid upward")
	assert.Contains(t, md, "the sweep has not finished c32, c64, c128 above it")
	assert.Contains(t, rep.HTML(), `<p class="incomplete"><strong>`)
	var chart *Chart
	for i := range rep.Charts {
		if rep.Charts[i].Name == "g1-arm1-throughput" {
			chart = &rep.Charts[i]
		}
	}
	require.NotNil(t, chart)
	assert.Equal(t, "not finished by its sweep (□ on the x axis): c32, c64, c128", chart.Note)
	assert.Contains(t, svgTexts(chart.SVG), "not finished (on the axis)")
}

// TestMetricStated: the summary says which throughput its tables show,
// as the page does, and the tables' headers name it; it was in the page
// only.
func TestMetricStated(t *testing.T) {
	rep, _ := buildKeySweep(t)
	rep.Metric = knee.MetricOutput
	md := rep.Markdown(ChartsDir)
	line := "Throughput: output tokens per second per GPU (--metric output) in every table and chart."
	assert.Contains(t, md, "they are not measurements.**\n\n"+line+"\n\n## Sweep knees")
	assert.Contains(t, md, "| interactivity (tok/s/user) | output throughput/GPU (tok/s) |")
	assert.Contains(t, rep.HTML(), "<p>5 arms. "+line+"</p>")
}

// TestComparisonSides: the comparison names BASE's and HEAD's
// directories; simulated HEAD results beside real BASE ones get the
// banner (they got none); an arm only HEAD has gets a row and its
// charts (it had neither).
func TestComparisonSides(t *testing.T) {
	base, err := patchedKeySweep(t, func(_, _ string, obj map[string]any) { obj["simulated"] = false })
	require.NoError(t, err)
	base.Results = base.Results[:4] // HEAD has tp8 ep8, BASE not
	base.Dir = "runs/main"
	_, headDir := buildKeySweepOf(t, func(*synth.Case) {})
	headDir = filepath.Join(headDir, "results")
	cmp, err := base.CompareDir(t.Context(), headDir, knee.Options{}, 5)
	require.NoError(t, err)
	assert.Equal(t, []string{"qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8"}, cmp.OnlyInHead)
	md := base.Markdown(ChartsDir)
	head := "Simulated: every arm of HEAD (" + headDir + ") ran on sweep's simulated engine"
	assert.True(t, strings.HasPrefix(md, "> **"+head), md[:120])
	assert.NotContains(t, md, "of BASE", "BASE's results are real")
	assert.Contains(t, md, "BASE: runs/main (this report's results); HEAD: "+strings.ReplaceAll(headDir, "_", "\\_")+".")
	rows := tableRows(md, "| verdict | arm |")
	require.Len(t, rows, 5)
	assert.Equal(t, "| not compared | qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8 | – | – | – | – | – | – | – | only in HEAD: BASE has no such arm |", rows[4])
	assert.Contains(t, base.HTML(), `<p id="compare-sides">BASE: runs/main (this report&#39;s results); HEAD: `+headDir+`.</p>`)
	var names []string
	for _, c := range base.Charts {
		if strings.HasPrefix(c.Name, "compare-") {
			names = append(names, c.Name+": "+c.Title)
		}
	}
	require.Len(t, names, 10)
	assert.Equal(t, "compare-arm5-conc: Throughput vs concurrency, BASE vs HEAD: qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8 (only in HEAD)", names[8])
	for _, p := range cmp.Problems {
		assert.NotEqual(t, compare.MissingArm, p.Kind, "an arm only HEAD has is not a problem")
	}
}

// TestKneedleColumn: the report's Kneedle column reads as sweep knees'
// does ("no bend" where Kneedle ran and found none, a dash where it did
// not run: unsaturated, insufficient), and the page and the summary say
// so under the knee table. The report printed "–" for "no bend".
func TestKneedleColumn(t *testing.T) {
	id := synth.KeySweep(11)[0].Arm.Identity
	tests := []struct {
		name    string
		status  knee.Status
		kneedle int
		want    string // the report's cell; sweep knees prints "-" for "–"
	}{
		{"a knee", knee.StatusOK, 16, "c16"},
		{"no bend at ok", knee.StatusOK, 0, "no bend"},
		{"no bend at saturated-at-min", knee.StatusSaturatedAtMin, 0, "no bend"},
		{"no bend at ambiguous", knee.StatusAmbiguous, 0, "no bend"},
		{"unsaturated: not run", knee.StatusUnsaturated, 0, "–"},
		{"insufficient: not run", knee.StatusInsufficient, 0, "–"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &knee.Result{Arm: &knee.Arm{Identity: id}, Status: tc.status, Kneedle: tc.kneedle, Reason: "r"}
			rows := kneeRows([]*knee.Result{r})
			require.Len(t, rows, 1)
			col := slices.Index(kneeHeader, "Kneedle")
			assert.Equal(t, tc.want, rows[0][col], "report")

			var table bytes.Buffer
			require.NoError(t, knee.WriteTable(&table, []*knee.Result{r}))
			lines := strings.Split(table.String(), "\n")
			at := strings.Index(lines[0], "KNEEDLE")
			cell, _, _ := strings.Cut(lines[1][at:], "  ")
			assert.Equal(t, strings.ReplaceAll(tc.want, "–", "-"), cell, "sweep knees:\n%s", table.String())
		})
	}

	rep, _ := buildKeySweep(t)
	section := func(page, from, to string) string {
		_, s, _ := strings.Cut(page, from)
		s, _, _ = strings.Cut(s, to)
		return s
	}
	note := `"no bend": it finds none there (fewer than 4 points on the rising side, or no bend in them); – for an unsaturated or insufficient arm`
	md := section(rep.Markdown(ChartsDir), "## Sweep knees", "\n## ")
	assert.Contains(t, md, " | no bend | ", "an arm of the key sweep has no bend")
	assert.Contains(t, md, " |\n\nKneedle: the knee kneed's KneeLocator")
	assert.Contains(t, md, note)
	page := section(rep.HTML(), "<h2>Knees</h2>", "<h2>")
	assert.Contains(t, page, "<td>no bend</td>")
	assert.Contains(t, page, "</table>\n<p>Kneedle: the knee kneed&#39;s KneeLocator")
	assert.Contains(t, page, html.EscapeString(note))
}
