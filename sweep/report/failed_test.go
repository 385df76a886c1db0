package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// axisMarkers are the points of r's throughput chart drawn with shape.
func axisMarkers(f *figure, shape draw.GlyphDrawer) plotter.XYs {
	var out plotter.XYs
	for _, e := range f.legend {
		for _, th := range e.thumbs {
			if s, ok := th.(*plotter.Scatter); ok && s.GlyphStyle.Shape == shape {
				out = append(out, s.XYs...)
			}
		}
	}
	return out
}

// TestFailedPoints: a report lists every failed result with why, and the
// throughput chart draws a failed point on the x axis, labelled, where
// no value is read: the crosses sat at the arm's lowest measurement, and
// the report said only "excluded files 2".
func TestFailedPoints(t *testing.T) {
	rep, _ := buildKeySweep(t)
	rows, _ := failedRows(rep.Results, nil, "")
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"qwen3.5 mi325x-amds sglang fp8 mtp tp2 ep2", "c64", "error rate 14.8% > 10% (174 of 1174 requests failed)"}, rows[0][:3])
	assert.Equal(t, "c128", rows[2][1])
	md := rep.Markdown(ChartsDir)
	assert.Contains(t, md, "## Failed points (3 results)\n\n"+failedIntro+"\n\n| arm | point | why | file |")
	assert.Contains(t, md, "| qwen3.5 mi325x-amds sglang fp8 mtp tp2 ep2 | c64 | error rate 14.8% \\> 10% (174 of 1174 requests failed) |")
	assert.Contains(t, rep.HTML(), `<table id="failed">`)

	f := kneeChart("arm", rep.Results[0], nil, knee.MetricTotal)
	failed := axisMarkers(f, draw.CrossGlyph{})
	assert.Equal(t, plotter.XYs{{X: 64}, {X: 128}}, failed, "on the x axis (y = 0), not at a measured value")
	c, err := f.render()
	require.NoError(t, err)
	assert.Equal(t, "failed, no value (× on the x axis): c64, c128", c.Note)
	labels := 0
	for _, s := range svgTexts(c.SVG) {
		if s == "failed" {
			labels++
		}
	}
	assert.Equal(t, 2, labels, "each failed point labelled")

	// A replicate that failed beside a usable one is listed as such; a
	// probe its full-length run superseded is no failure.
	r := rep.Results[4]
	r.Points[0].Excluded = []knee.Exclusion{{File: "x/a.json", Reason: "marked invalid"}}
	r.Points[1].Excluded = []knee.Exclusion{{File: "x/p.json", Reason: knee.ExcludedSuperseded}}
	r.Arm.Samples = append(r.Arm.Samples, knee.Sample{File: "x/p.json", Conc: r.Points[1].Conc, Superseded: true})
	rows, _ = failedRows(rep.Results[4:], nil, "x")
	assert.Equal(t, [][]string{{r.Arm.Identity.Label(), "c1 (other results used)", "marked invalid", "a.json"}}, rows)
}

var update = flag.Bool("update", false, "rewrite testdata goldens")

// TestFailedPointsFromJournal: the failed points' table lists every
// point the sweep's journal ends failed, also one that wrote no result
// (tp4 c16, its client killed twice; tp8 ep8, whose server never
// started and which has no result at all), with the journal's error,
// among its arm's failed results by concurrency, and a failed point
// whose result the knees read (tp2 ep2 c64) once, as the knees read it.
// The table listed only the failed results: a point that failed before
// writing one was missing though the journal said why it failed. The
// probes a full-length run superseded (tp4 c4, which had failed, and c8)
// are listed apart, by both, as "(probe, superseded)": sweep knees
// listed them among the failed points as "c4", the report not at all.
// The results made with another image than their arm's (tp4 ep4 c32 and
// c64) are listed apart too, with what differed: the report listed them
// under "Failed points", though they did not fail.
func TestFailedPointsFromJournal(t *testing.T) {
	dir := failedJournalSweep(t)
	rep, err := Read(t.Context(), dir, knee.Options{})
	require.NoError(t, err)
	require.Len(t, rep.Results, 4, "tp8 ep8 has no result")
	md := rep.Markdown(ChartsDir)
	i, j := strings.Index(md, "## Failed points"), strings.Index(md, "## Pareto frontier")
	require.True(t, i >= 0 && j > i, md)
	got := md[i:j]
	golden := filepath.Join("testdata", "failed_journal.md.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)

	// The tp4 arm's throughput chart marks c16, failed with no result
	// file, as it marks c128's failed result: a cross on the x axis,
	// labelled, and named in its note. It drew no mark at c16, so the
	// chart and the table disagreed.
	var tp4 *figure
	for _, f := range rep.figures() {
		if strings.HasPrefix(f.p.Title.Text, "Throughput vs concurrency: tp4\n") {
			tp4 = f
		}
	}
	require.NotNil(t, tp4, "tp4's throughput chart")
	assert.Equal(t, plotter.XYs{{X: 16}, {X: 128}}, axisMarkers(tp4, draw.CrossGlyph{}))
	c, err := tp4.render()
	require.NoError(t, err)
	assert.Equal(t, "failed, no value (× on the x axis): c16, c128", c.Note)
	labels := 0
	for _, s := range svgTexts(c.SVG) {
		if s == "failed" {
			labels++
		}
	}
	assert.Equal(t, 2, labels, "each failed point labelled")

	page := rep.HTML()
	i, j = strings.Index(page, "<h2>Failed points"), strings.Index(page, "<h2>Pareto frontier")
	require.True(t, i >= 0 && j > i, "no failed points' table")
	page = page[i:j]
	assert.Contains(t, page, "<h2>Failed points (3 results, 3 points with no result)</h2>")
	assert.Contains(t, page, "<tr><td>qwen3.5 mi325x-amds sglang fp8 mtp tp4</td><td>c16</td><td>stage client: client failed (killed by SIGKILL) (2 attempts)</td><td>no result file</td></tr>")
	assert.Contains(t, page, "<tr><td>qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8</td><td>c1</td><td>server start: stage engine-ready: engine not ready after 1800s (c1)</td><td>no result file</td></tr>")

	// sweep knees lists the same points in the same order under
	// "excluded points" (campaign.LeftOutOf, the one list): before, it
	// listed the failed results only, not the points with no result.
	k, err := campaign.ReadKnees(t.Context(), dir, knee.Options{})
	require.NoError(t, err)
	var text strings.Builder
	require.NoError(t, k.WriteTable(&text))
	i = strings.Index(text.String(), "\nexcluded points:\n")
	require.True(t, i >= 0, text.String())
	listed := strings.ReplaceAll(text.String()[i:], dir+string(filepath.Separator), "DIR/")
	golden = filepath.Join("testdata", "failed_journal.knees.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(listed), 0o644))
	}
	want, err = os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), listed)
	rows, _ := failedRows(rep.Results, rep.Failed, dir)
	sections := strings.Split(strings.TrimSpace(listed), "\n\n")
	require.Len(t, sections, 3, "excluded points, then superseded probes, then results made otherwise")
	for i, rows := range [][][]string{rows, supersededRows(rep.Results, dir), otherwiseRows(rep.Results, dir)} {
		lines := strings.Split(sections[i], "\n")[1:]
		require.Len(t, lines, len(rows), "one line per row of the report's table")
		for n, row := range rows {
			assert.True(t, strings.HasPrefix(strings.TrimSpace(lines[n]), row[0]+" "+strings.TrimSuffix(row[1], " (other results used)")+": "), "line %d %q, row %q", n, lines[n], row)
		}
	}
	// A superseded probe is named so in both: sweep knees listed it
	// among the failed points as "c8", which the report left out.
	assert.Contains(t, md, "| qwen3.5 mi325x-amds sglang fp8 mtp tp4 | c8 (probe, superseded) | "+knee.ExcludedSuperseded+" |")
	assert.Contains(t, sections[1], "qwen3.5 mi325x-amds sglang fp8 mtp tp4 c8 (probe, superseded): "+knee.ExcludedSuperseded+" (DIR/")
	assert.NotContains(t, sections[0], "probe")
	// Results made with another image than their arm's are listed apart,
	// with what differed, by both: they did not fail, and the report
	// listed them under "Failed points".
	assert.NotContains(t, sections[0], "made otherwise")
	assert.NotContains(t, md[:strings.Index(md, "## Superseded probes")], "made otherwise")
	assert.Contains(t, md, "| qwen3.5 mi325x-amds sglang fp8 mtp tp4 ep4 | c64 | "+knee.ExcludedOtherSetup+": image lmsysorg/sglang:other, not lmsysorg/sglang:synthetic")
	page = rep.HTML()
	i, j = strings.Index(page, "<h2>Results made otherwise (2)</h2>"), strings.Index(page, "<h2>Pareto frontier")
	require.True(t, i >= 0 && j > i, "no table of results made otherwise")
	assert.Contains(t, page[i:j], `<table id="made-otherwise">`)
	assert.Contains(t, page[i:j], "<td>c32 (other results used)</td>")
	assert.NotContains(t, page[:i], knee.ExcludedOtherSetup, "not under Failed points")
}

// failedJournalSweep writes the sweep TestFailedPointsFromJournal reads
// into a new directory and returns it: synth.KeySweep(11)'s arms with
// failed results, failed points with no result (tp4 c16, tp8 ep8 c1 and
// c2), superseded probes (tp4 c4 and c8) and results made with another
// image than their arm's (tp4 ep4: a replicate at c32, the only result
// at c64), and its journal.
func failedJournalSweep(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	start := campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover"}}
	var recs []campaign.Record
	for i, c := range synth.KeySweep(11) {
		tp, ep := c.Arm.Identity.Get("tp"), c.Arm.Identity.Get("ep")
		plan := campaign.ArmPlan{Arm: i + 1, Identity: c.Arm.Identity}
		written := &knee.Arm{Identity: c.Arm.Identity}
		for _, s := range c.Arm.Samples {
			switch {
			case tp == "8" && ep == "8" && s.Conc <= 2: // planned, failed: its server did not start
			case tp == "8" && ep == "8": // not planned
				continue
			case tp == "4" && ep == "1" && s.Conc == 16: // failed before writing a result
			default:
				written.Samples = append(written.Samples, s)
			}
			id := fmt.Sprintf("%s-c%d", c.ID, s.Conc)
			plan.Points = append(plan.Points, campaign.PointPlan{Point: id, Conc: s.Conc})
			start.Identity.Points = append(start.Identity.Points, id)
		}
		start.Arms = append(start.Arms, plan)
		if tp == "4" && ep == "1" {
			// An adaptive search's probes at c4 (failed) and c8, each run
			// again at the full length: superseded, no failure.
			for _, c := range []int{4, 8} {
				j := slices.IndexFunc(written.Samples, func(s knee.Sample) bool { return s.Conc == c })
				p := written.Samples[j]
				p.Probe = true
				if c == 4 {
					p.ErrorRate = 0.2
				}
				written.Samples = append(written.Samples, p)
			}
		}
		otherImage := map[int]bool{} // indices of written.Samples made with another image
		if tp == "4" && ep == "4" {
			// A replicate at c32 and the only result at c64 made with
			// another image than the arm's: not one measurement with
			// its reading, and no failure.
			j := slices.IndexFunc(written.Samples, func(s knee.Sample) bool { return s.Conc == 32 })
			written.Samples = append(written.Samples, written.Samples[j])
			otherImage[len(written.Samples)-1] = true
			otherImage[slices.IndexFunc(written.Samples, func(s knee.Sample) bool { return s.Conc == 64 })] = true
		}
		paths, err := synth.WriteDir(dir, written, true)
		require.NoError(t, err)
		for j := range otherImage {
			data, err := os.ReadFile(paths[j])
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(paths[j], bytes.Replace(data, []byte("lmsysorg/sglang:synthetic"), []byte("lmsysorg/sglang:other"), 1), 0o644))
		}
		for _, p := range plan.Points {
			st := campaign.Record{Event: campaign.EventPointStart, Arm: i + 1, Point: p.Point, Conc: p.Conc}
			end := campaign.Record{Event: campaign.EventPointEnd, Arm: i + 1, Point: p.Point, Conc: p.Conc, Status: campaign.StatusOK, Attempt: 1}
			if j := slices.IndexFunc(written.Samples, func(s knee.Sample) bool { return s.Conc == p.Conc }); j >= 0 {
				end.Result, err = filepath.Rel(dir, paths[j])
				require.NoError(t, err)
				if written.Samples[j].Excluded != "" {
					end.Status, end.Error = campaign.StatusFailed, "stage client: error rate over the limit"
				}
				recs = append(recs, st, end)
				continue
			}
			end.Status = campaign.StatusFailed
			if tp == "8" {
				st.NoServer = true
				end.Error = fmt.Sprintf("server start: stage engine-ready: engine not ready after 1800s (c%d)", p.Conc)
				recs = append(recs, st, end)
				continue
			}
			end.Error = "stage client: client failed (killed by SIGKILL)"
			recs = append(recs, st, end, st, end) // two attempts
		}
	}
	require.NoError(t, synth.WriteJournal(dir, append([]campaign.Record{start}, recs...)...))
	return dir
}

// TestWriteSweepOnlyFailedPoints: a sweep whose every point failed before
// it wrote a result (its server never started) gets its report, which
// says no point has a result and lists them with the journal's errors;
// before, it stopped with "no results in DIR yet" and no report. A sweep
// that has not ended a point yet, or a directory with nothing, still
// has no results yet.
func TestWriteSweepOnlyFailedPoints(t *testing.T) {
	id := synth.KeySweep(11)[0].Arm.Identity
	start := campaign.Record{Event: campaign.EventSweepStart, Identity: &campaign.Identity{Command: "discover", Points: []string{"p-c4", "p-c16"}},
		Arms: []campaign.ArmPlan{{Arm: 1, Identity: id, Points: []campaign.PointPlan{{Point: "p-c4", Conc: 4}, {Point: "p-c16", Conc: 16}}}}}
	var failed []campaign.Record
	for _, c := range []int{4, 16} {
		failed = append(failed,
			campaign.Record{Event: campaign.EventPointStart, Arm: 1, Point: fmt.Sprintf("p-c%d", c), Conc: c, NoServer: true},
			campaign.Record{Event: campaign.EventPointEnd, Arm: 1, Point: fmt.Sprintf("p-c%d", c), Conc: c, Attempt: 1,
				Status: campaign.StatusFailed, Error: "server start: stage engine-ready: engine not ready"})
	}
	for _, tc := range []struct {
		name    string
		journal []campaign.Record // nil: no journal
		// want: the line WriteSweep prints under "knees:", or its error
		want string
		err  bool
	}{
		{"every point failed before a result", append([]campaign.Record{start}, failed...), "none: no point has a result, 2 points failed before writing one\n", false},
		{"no point ended yet", []campaign.Record{start}, "no results in DIR yet", true},
		{"nothing", nil, "no results in DIR yet", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.journal != nil {
				require.NoError(t, synth.WriteJournal(dir, tc.journal...))
			}
			var w bytes.Buffer
			err := WriteSweep(t.Context(), &w, dir)
			if tc.err {
				assert.EqualError(t, err, strings.ReplaceAll(tc.want, "DIR", dir))
				assert.NoDirExists(t, filepath.Join(dir, "report"))
				return
			}
			require.NoError(t, err)
			assert.Contains(t, w.String(), "\nknees:\n"+tc.want, w.String())
			md, err := os.ReadFile(filepath.Join(dir, "report", SummaryFile))
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(md), "> **No point has a result: 2 points failed before writing one; the failed points' table says why.**\n"), "%s", md)
			assert.Contains(t, string(md), "## Failed points (2 points with no result)")
			assert.Contains(t, string(md), "| c16 | server start: stage engine-ready: engine not ready | no result file |")
			page, err := os.ReadFile(filepath.Join(dir, "report", PageFile))
			require.NoError(t, err)
			assert.Contains(t, string(page), `<p class="no-result"><strong>No point has a result`)
			// The knees, the frontier and the charts say there is nothing
			// rather than show an empty table.
			assert.Equal(t, 3, strings.Count(string(md), "\nNone: no point has a result.\n"), "%s", md)
			assert.NotContains(t, string(md), "| arm | status |")
			assert.Equal(t, 3, strings.Count(string(page), "<p>None: no point has a result.</p>"))
			assert.NotContains(t, string(page), `class="knees"`)
		})
	}
}

// TestKneeChartFailedWithNoResult: an arm's throughput chart marks a
// concurrency its sweep's journal ends failed with no result file as it
// marks a failed result, a cross on the x axis: also above the curve's
// last point, where the curve ended early with no mark (the x axis
// reaches it); never over a point with a value, twice at a failed
// result's point, or at a point not finished (its square).
func TestKneeChartFailedWithNoResult(t *testing.T) {
	rep, _ := buildKeySweep(t)
	i := slices.IndexFunc(rep.Results, func(r *knee.Result) bool {
		return !slices.ContainsFunc(r.Points, func(p knee.Point) bool { return !p.Usable })
	})
	require.GreaterOrEqual(t, i, 0, "an arm with every point usable")
	// upTo32 is the usable arm measured up to c32 only.
	upTo32 := *rep.Results[i]
	upTo32.Points = slices.DeleteFunc(slices.Clone(upTo32.Points), func(p knee.Point) bool { return p.Conc > 32 })
	unfinished := upTo32
	unfinished.Unfinished = []int{64}
	for _, tc := range []struct {
		name     string
		r        *knee.Result
		noResult []int
		crosses  plotter.XYs
		note     string
	}{
		{"above the curve's end", &upTo32, []int{64}, plotter.XYs{{X: 64}}, "failed, no value (× on the x axis): c64"},
		{"at a failed result's point once, and above it, in order", rep.Results[0], []int{128, 64, 2048}, plotter.XYs{{X: 64}, {X: 128}, {X: 2048}},
			"failed, no value (× on the x axis): c64, c128, c2048"},
		{"at a point with a value", &upTo32, []int{8}, nil, ""},
		{"not finished", &unfinished, []int{64}, nil, "not finished by its sweep (□ on the x axis): c64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := kneeChart("arm", tc.r, tc.noResult, knee.MetricTotal)
			assert.Equal(t, tc.crosses, axisMarkers(f, draw.CrossGlyph{}))
			if len(tc.crosses) > 0 {
				assert.GreaterOrEqual(t, f.p.X.Max, tc.crosses[len(tc.crosses)-1].X, "the x axis reaches the last cross")
			}
			c, err := f.render()
			require.NoError(t, err)
			assert.Equal(t, tc.note, c.Note)
		})
	}
}

// TestMadeOtherwiseInBrowser: the page of failedJournalSweep, loaded in
// headless Chromium, shows the results made otherwise under their own
// heading, with what differed, and not in the failed points' table.
func TestMadeOtherwiseInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := failedJournalSweep(t)
	rep, err := Read(t.Context(), dir, knee.Options{})
	require.NoError(t, err)
	page, err := rep.Write(filepath.Join(t.TempDir(), "report"))
	require.NoError(t, err)
	abs, err := filepath.Abs(page)
	require.NoError(t, err)
	dom := string(runChromium(t, bin, "--dump-dom", "file://"+abs))
	i, j := strings.Index(dom, `<table id="failed">`), strings.Index(dom, `<table id="made-otherwise">`)
	require.True(t, i >= 0 && j > i, "the failed points' table, then the table of results made otherwise:\n%s", dom)
	assert.NotContains(t, dom[i:j], knee.ExcludedOtherSetup)
	assert.Contains(t, dom[:j], "<h2>Results made otherwise (2)</h2>")
	tables := dom[j:]
	tables = tables[:strings.Index(tables, "</table>")]
	assert.Equal(t, 2, strings.Count(tables, knee.ExcludedOtherSetup+": image lmsysorg/sglang:other, not lmsysorg/sglang:synthetic"), tables)
	if keep := os.Getenv("REPORT_SCREENSHOT"); keep != "" {
		runChromium(t, bin, "--screenshot="+keep, "--window-size=1400,1600", "file://"+abs)
	}
}
