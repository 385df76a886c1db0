package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"

	"sweep/metrics/result"
	"sweep/sweep/knee"
	"sweep/sweep/testkit/synth"
)

// buildKeySweep writes the seeded five-arm key sweep as result files,
// reads it back and builds the report on it.
func buildKeySweep(t *testing.T) (*Report, string) {
	t.Helper()
	rep, dir := buildKeySweepOf(t, func(*synth.Case) {})
	return rep, filepath.Join(dir, "report")
}

// buildKeySweepOf is buildKeySweep with each case changed by edit before
// it is written; it returns the report and the directory.
func buildKeySweepOf(t *testing.T, edit func(*synth.Case)) (*Report, string) {
	t.Helper()
	dir := t.TempDir()
	for _, c := range synth.KeySweep(11) {
		edit(c)
		_, err := synth.WriteDir(filepath.Join(dir, "results", c.ID), c.Arm, true)
		require.NoError(t, err)
	}
	arms, err := knee.Read(t.Context(), filepath.Join(dir, "results"))
	require.NoError(t, err)
	rs := make([]*knee.Result, len(arms))
	for i, a := range arms {
		rs[i] = knee.Analyze(a, knee.Options{})
	}
	rep, err := Build(rs, knee.MetricTotal)
	require.NoError(t, err)
	return rep, dir
}

func TestBuildCharts(t *testing.T) {
	rep, out := buildKeySweep(t)
	var names []string
	for _, c := range rep.Charts {
		names = append(names, c.Name)
		assert.True(t, bytes.HasPrefix(c.PNG, []byte("\x89PNG")), c.Name)
		assert.Contains(t, string(c.SVG), "<svg", c.Name)
	}
	assert.Equal(t, []string{"g1-pareto-p90", "g1-pareto-median", "g1-arm1-throughput", "g1-arm2-throughput",
		"g1-arm3-throughput", "g1-arm4-throughput", "g1-arm5-throughput", "g1-ttft", "g1-itl", "g1-acceptance-length"}, names)
	page, err := rep.Write(out)
	require.NoError(t, err)
	for _, n := range names {
		assert.FileExists(t, filepath.Join(out, ChartsDir, n+".png"))
		assert.FileExists(t, filepath.Join(out, ChartsDir, n+".svg"))
	}
	md, err := os.ReadFile(filepath.Join(out, SummaryFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Sweep knees (5 arms)")
	assert.Contains(t, string(md), "| qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8 | ok | c64 |")
	assert.Contains(t, string(md), "(charts/g1-pareto-p90.png)")
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.NotContains(t, string(html), "<script")
	assert.NotContains(t, string(html), `src="`, "self-contained: no external resources")
	assert.Equal(t, len(names), strings.Count(string(html), "<svg"))
}

// TestMarkdownEscapes: text from result files (the arm's identity, the
// knee's reason) stays inside its table cell in summary.md.
func TestMarkdownEscapes(t *testing.T) {
	rep, _ := buildKeySweep(t)
	r := rep.Results[0]
	hw, err := json.Marshal("mi325x\n# Approved\n<img src=x>")
	require.NoError(t, err)
	r.Arm.Identity[slices.Index(result.IdentityKeys[:], "hw")] = hw
	r.Reason = "see [here](https://evil.example) | `x`"
	md := rep.Markdown(ChartsDir)
	for _, line := range strings.Split(md, "\n") {
		assert.False(t, strings.HasPrefix(line, "# "), "a heading broke out: %q", line)
	}
	assert.NotRegexp(t, `(^|[^\\])<img`, md, "unescaped HTML")
	assert.NotContains(t, md, "[here](")
	assert.Contains(t, md, `mi325x \# Approved \<img src=x\>`)
	assert.Contains(t, md, "see \\[here\\](https://evil.example) \\| \\`x\\` |")
}

// patchedKeySweep writes the key sweep as result files, lets patch edit
// each file's JSON (the arm's tp and ep, the object), and builds the
// report on the files.
func patchedKeySweep(t *testing.T, patch func(tp, ep string, obj map[string]any)) (*Report, error) {
	t.Helper()
	dir := t.TempDir()
	for _, c := range synth.KeySweep(11) {
		paths, err := synth.WriteDir(filepath.Join(dir, c.ID), c.Arm, true)
		require.NoError(t, err)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			var obj map[string]any
			require.NoError(t, json.Unmarshal(data, &obj))
			patch(c.Arm.Identity.Get("tp"), c.Arm.Identity.Get("ep"), obj)
			data, err = json.Marshal(obj)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, data, 0o644))
		}
	}
	arms, err := knee.Read(t.Context(), dir)
	require.NoError(t, err)
	rs := make([]*knee.Result, len(arms))
	for i, a := range arms {
		rs[i] = knee.Analyze(a, knee.Options{})
	}
	return Build(rs, knee.MetricTotal)
}

// TestBuildUnplottableValues: finite values gonum/plot cannot draw (an
// ITL p50 of 1e307 s is +Inf ms; a whole arm at 1e308 tok/s makes an
// infinite axis range) are left out of their chart, which says so; the
// report never panics.
func TestBuildUnplottableValues(t *testing.T) {
	tests := []struct {
		name   string
		patch  func(tp, ep string, obj map[string]any)
		chart  string
		inNote string
	}{
		{"ITL p50 1e307", func(tp, ep string, obj map[string]any) {
			if tp == "8" && ep == "8" && obj["conc"] == 32.0 {
				lat := obj["request_metrics"].(map[string]any)["latency"].(map[string]any)
				lat["itl"].(map[string]any)["p50"] = 1e307
			}
		}, "g1-itl", "1 value left out (beyond ±1e+12): tp8 ep8 ITL p50 at c32 = +Inf ms"},
		{"a whole arm's interactivity at 1e308", func(tp, ep string, obj map[string]any) {
			if tp == "4" && ep == "1" {
				lat := obj["request_metrics"].(map[string]any)["latency"].(map[string]any)
				lat["intvty"].(map[string]any)["p50"] = 1e308
			}
		}, "g1-pareto-median", "values left out (beyond ±1e+12): tp4 throughput/GPU vs interactivity at c1 = 1e+308"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rep *Report
			var err error
			require.NotPanics(t, func() { rep, err = patchedKeySweep(t, tc.patch) })
			require.NoError(t, err)
			var found *Chart
			for i := range rep.Charts {
				if rep.Charts[i].Name == tc.chart {
					found = &rep.Charts[i]
				}
			}
			require.NotNil(t, found, "chart %s is drawn", tc.chart)
			assert.Contains(t, found.Note, tc.inNote)
			assert.Contains(t, rep.Markdown(ChartsDir), tc.inNote)
			assert.Contains(t, rep.HTML(), tc.inNote)
		})
	}
}

// chromium finds Debian's chromium; `make deps-chromium` installs it.
func chromium(t *testing.T) string {
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("chromium is not installed and could not be (make deps-chromium runs apt-get install -y chromium): the report page was not checked in a browser")
	return ""
}

func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--hide-scrollbars"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium %v: %s", args, stderr.String())
	return stdout.Bytes()
}

// TestPageInBrowser loads index.html in headless Chromium from a file://
// URL, dumps the DOM (titles, axis labels, tables) and takes a screenshot
// whose chart area must be drawn: many saturated (series-coloured) pixels
// spread over the charts' part of the page.
func TestPageInBrowser(t *testing.T) {
	bin := chromium(t)
	rep, out := buildKeySweep(t)
	page, err := rep.Write(out)
	require.NoError(t, err)
	abs, err := filepath.Abs(page)
	require.NoError(t, err)
	url := "file://" + abs

	dom := string(runChromium(t, bin, "--dump-dom", url))
	for _, want := range []string{
		"<h1>Sweep report</h1>", `<table id="knees">`, `<table id="frontier">`,
		"Throughput/GPU vs interactivity (P90 E2E-normalised)", "Throughput/GPU vs interactivity (median)",
		"interactivity, P90 E2E-normalised (tok/s/user)", "interactivity, median 1/ITL (tok/s/user)",
		"total throughput per GPU (tok/s)", "Throughput vs concurrency: tp8 ep8", "concurrency",
		"TTFT percentiles vs concurrency", "ITL (ms)", "Acceptance length, measured vs golden", "Pareto frontier", "knee c64",
	} {
		assert.Contains(t, dom, want)
	}

	shot := filepath.Join(t.TempDir(), "page.png")
	runChromium(t, bin, "--screenshot="+shot, "--window-size=1400,3000", url)
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	b := img.Bounds()
	require.Equal(t, image.Pt(1400, 3000), b.Size())
	// Count saturated pixels per 100×100 tile: table text is black on
	// white or grey, so colour comes from the chart series only.
	tiles := map[image.Point]int{}
	colored := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi, lo := max(r, g, bl)>>8, min(r, g, bl)>>8
			if hi-lo > 80 {
				colored++
				tiles[image.Pt(x/100, y/100)]++
			}
		}
	}
	busy := 0
	for _, n := range tiles {
		if n > 30 {
			busy++
		}
	}
	t.Logf("screenshot %s: %d coloured pixels, %d busy tiles", shot, colored, busy)
	assert.Greater(t, colored, 2000, "charts drew coloured series")
	assert.GreaterOrEqual(t, busy, 12, "coloured pixels spread over several charts")
	if keep := os.Getenv("REPORT_SCREENSHOT"); keep != "" {
		data, err := os.ReadFile(shot)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(keep, data, 0o644))
	}
}

// TestWriteSweep: the knee table and the report of a sweep directory; an
// empty one is an error, not a page.
func TestWriteSweep(t *testing.T) {
	_, out := buildKeySweep(t)
	dir := filepath.Join(filepath.Dir(out), "results")
	var w bytes.Buffer
	require.NoError(t, WriteSweep(t.Context(), &w, dir))
	assert.True(t, strings.HasPrefix(w.String(), "\nknees:\n"), w.String())
	assert.Contains(t, w.String(), "report: "+filepath.Join(dir, "report", "index.html")+"\n")
	assert.FileExists(t, filepath.Join(dir, "report", SummaryFile))

	empty := t.TempDir()
	assert.EqualError(t, WriteSweep(t.Context(), &w, empty), "no results in "+empty+" yet")
}

// cancelOnWrite is a writer that cancels its context at the first write.
type cancelOnWrite struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.cancel()
	return w.Buffer.Write(p)
}

// TestWriteSweepInterrupted: Ctrl-C as the knee table was printed went on
// to write the report, and the sweep exited 0 after "stopping". WriteSweep
// stops before writing it and says how to make it.
func TestWriteSweepInterrupted(t *testing.T) {
	_, out := buildKeySweep(t)
	dir := filepath.Join(filepath.Dir(out), "results")
	ctx, cancel := context.WithCancel(t.Context())
	w := &cancelOnWrite{cancel: cancel}
	err := WriteSweep(ctx, w, dir)
	ie, ok := errors.AsType[*InterruptedError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, dir, ie.Dir)
	assert.ErrorIs(t, err, context.Canceled)
	assert.EqualError(t, err, "interrupted: the sweep's results in "+dir+" are complete, but its report was not written (make it with: sweep report "+dir+")")
	assert.Contains(t, w.String(), "\nknees:\n", "the knee table was printed")
	assert.NotContains(t, w.String(), "report: ")
	assert.NoDirExists(t, filepath.Join(dir, "report"))
}

// TestNiceTicks: a linear axis is labelled at round values with the
// digits they need (gonum's default labels 0..27000 "0.00", "25000.00").
// TestPow2Ticks: a log2 axis is labelled at the powers of two in its
// range, and a range a log axis cannot draw as given (gonum pads an arm
// measured at c1 alone to [0, 2]) ends: the ticks once doubled 0 forever.
func TestPow2Ticks(t *testing.T) {
	values := func(ts []plot.Tick) []float64 {
		var vs []float64
		for _, tk := range ts {
			vs = append(vs, tk.Value)
		}
		return vs
	}
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{1, 64, []float64{1, 2, 4, 8, 16, 32, 64}},
		{3, 40, []float64{4, 8, 16, 32}},
		{0, 2, []float64{0.5, 1, 2}},
		{-1, 8, []float64{2, 4, 8}},
		{0, 0, nil},
		{1, math.Inf(1), nil},
		{math.NaN(), 8, nil},
	} {
		assert.Equal(t, tc.want, values(pow2Ticks{}.Ticks(tc.lo, tc.hi)), "[%g, %g]", tc.lo, tc.hi)
	}
	assert.Len(t, pow2Ticks{}.Ticks(1e-300, 1e300), maxPow2Ticks)
	assert.InDelta(t, 0.5, log2Scale{}.Normalize(0, 2, 1), 1e-12, "c1 alone sits in the middle")
}

// TestBuildOneConcurrencyArm: a report whose arms were each measured at
// one concurrency (discover --conc-list 1) draws its charts. Their
// log2 axis is padded to [0, 2] there, which once made the report grow
// without bound until the kernel killed sweep.
func TestBuildOneConcurrencyArm(t *testing.T) {
	rep, _ := buildKeySweepOf(t, func(c *synth.Case) { c.Arm.Samples = c.Arm.Samples[:1] })
	for _, r := range rep.Results {
		require.Len(t, r.Points, 1)
	}
	require.NotEmpty(t, rep.Charts)
	svg := map[string]string{}
	for _, c := range rep.Charts {
		assert.Contains(t, string(c.SVG), "<svg", c.Name)
		svg[c.Name] = string(c.SVG)
	}
	// Each arm is in the latency charts: a single point is a marker, where
	// a line needs two (they were left out without a word).
	for _, r := range rep.Results {
		for _, chart := range []string{"g1-ttft", "g1-itl"} {
			assert.Contains(t, svg[chart], r.Arm.Identity.Parallelism()+" p50", chart)
			assert.Contains(t, svg[chart], r.Arm.Identity.Parallelism()+" p90", chart)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 27000, []string{"0", "5000", "10000", "15000", "20000", "25000"}},
		{0, 26375.4, []string{"0", "5000", "10000", "15000", "20000", "25000"}},
		{0, 3.65, []string{"0", "0.5", "1", "1.5", "2", "2.5", "3", "3.5"}},
		{0.2, 0.93, []string{"0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"}},
		{0, 1333, []string{"0", "200", "400", "600", "800", "1000", "1200"}},
	} {
		var got []string
		for _, tk := range (niceTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		assert.Equal(t, tc.want, got, "%g..%g", tc.lo, tc.hi)
	}
}

// TestProvenance: a report of simulated results says so before anything
// else, names the simulated arms among real ones, and what a
// calibration file set for them; a report of real results says nothing.
func TestProvenance(t *testing.T) {
	rep, _ := buildKeySweep(t)
	want := "Simulated: every arm ran on sweep's simulated engine (--simulate), not on hardware; its numbers rehearse a sweep, they are not measurements."
	assert.Equal(t, []string{want}, rep.Provenance())
	md := rep.Markdown(ChartsDir)
	assert.True(t, strings.HasPrefix(md, "> **Simulated: every arm ran on sweep's simulated engine"), md[:min(200, len(md))])
	assert.Contains(t, md, "they are not measurements.**\n\nThroughput: total (input + output) tokens per second per GPU (--metric total) in every table and chart.\n\n## Sweep knees (5 arms)")
	page := rep.HTML()
	assert.True(t, strings.Contains(page, `<p class="provenance"><strong>`+html.EscapeString(want)+`</strong></p>`) &&
		strings.Index(page, `class="provenance"`) < strings.Index(page, "<h2>Knees</h2>"), "the page leads with it")

	rep, err := patchedKeySweep(t, func(tp, ep string, obj map[string]any) {
		switch {
		case tp == "8":
			obj["simulated"] = false
		case tp == "4" && ep == "1":
			obj["simulation"] = map[string]any{"clock": "virtual", "calibration": map[string]any{"file": "cal.json",
				"engines": []any{map[string]any{"name": "engine", "calibrated": true, "step_scale": 1.5, "pool_tokens": 2000000}}}}
		}
	})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"Simulated: 3 of 5 arms ran on sweep's simulated engine (--simulate), not on hardware: qwen3.5 mi325x-amds sglang fp8 mtp tp2 ep2; qwen3.5 mi325x-amds sglang fp8 mtp tp4; qwen3.5 mi325x-amds sglang fp8 mtp tp4 ep4.",
		"Calibrated (sweep sim calibrate, --sim-calibration): qwen3.5 mi325x-amds sglang fp8 mtp tp4 (step costs x1.5, pool 2000000 tokens per rank).",
	}, rep.Provenance())

	// An adaptive discovery's probes are named, and marked in the tables
	// (they were listed as plain points).
	rep, err = patchedKeySweep(t, func(tp, ep string, obj map[string]any) {
		obj["simulated"] = false
		if tp == "8" && ep == "8" && (obj["conc"] == 16.0 || obj["conc"] == 32.0) {
			obj["probe"] = true
		}
	})
	require.NoError(t, err)
	assert.Equal(t, []string{`Probes (an adaptive discovery's short runs, read against the arm's full-length points; marked "(probe)" in the tables): qwen3.5 mi325x-amds sglang fp8 mtp tp8 ep8: c16 c32.`}, rep.Provenance())
	var probeRow bool
	for _, fs := range rep.Frontiers {
		for _, r := range frontierRows(fs) {
			probeRow = probeRow || r[1] == "tp8 ep8" && strings.HasSuffix(r[2], " (probe)")
		}
	}
	for _, r := range energyRows(rep.Results) {
		probeRow = probeRow || strings.HasSuffix(r[0], "tp8 ep8") && strings.HasPrefix(r[1], "c16 (probe)")
	}
	assert.True(t, probeRow, "a probe is marked in the frontier or energy table")

	rep, err = patchedKeySweep(t, func(_, _ string, obj map[string]any) { obj["simulated"] = false })
	require.NoError(t, err)
	assert.Empty(t, rep.Provenance())
	assert.True(t, strings.HasPrefix(rep.Markdown(ChartsDir), "Throughput: total"))
	assert.False(t, strings.Contains(rep.HTML(), "provenance"), "a page of real results has no provenance line")
}
