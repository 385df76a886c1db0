package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/selfexe"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
)

// measuredKey is the simulated discovery of the measured key with its own
// settings (`sweep discover --simulate --config-keys
// qwen3.5-fp8-mi325x-sglang-agentic-mtp --no-report`: 32 points in 5
// arms), run once for the tests that read it (about a minute on two
// cores). It runs as its own process from the build without the race
// detector, as the simulated points' processes do: its numbers come from
// the simulated clock, not the wall clock, so a loaded machine changes
// nothing but the time it takes. TestMain removes its directory.
var measuredKey struct {
	once sync.Once
	dir  string // the sweep directory, in a directory of its own
	log  string // its stdout and stderr
	err  error
}

// measuredKeyDiscovery returns the directory and output of measuredKey's
// discovery, running it on first use. Callers only read the directory.
func measuredKeyDiscovery(t *testing.T) (dir, log string) {
	t.Helper()
	measuredKey.once.Do(func() {
		bin, err := selfexe.Path()
		if err != nil {
			measuredKey.err = err
			return
		}
		parent, err := os.MkdirTemp("", "sweep-measured-key-")
		if err != nil {
			measuredKey.err = err
			return
		}
		measuredKey.dir = filepath.Join(parent, "d")
		out, err := exec.CommandContext(t.Context(), bin, "discover", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp",
			"--no-report", "--out", measuredKey.dir).CombinedOutput()
		measuredKey.log, measuredKey.err = string(out), err
	})
	require.NoError(t, measuredKey.err, "the measured key's discovery:\n%s", measuredKey.log)
	return measuredKey.dir, measuredKey.log
}

// removeMeasuredKey removes measuredKey's directory (TestMain).
func removeMeasuredKey() {
	if measuredKey.dir != "" {
		os.RemoveAll(filepath.Dir(measuredKey.dir))
	}
}

// TestDiscoverMeasuredKeyAsOnTheCluster is issue 28's acceptance, run as
// a user runs it: `sweep discover --simulate --config-keys
// qwen3.5-fp8-mi325x-sglang-agentic-mtp` with the key's own settings
// (official conc-lists, agentx-fast durations, the simulated clock). The
// cluster measured (the InferenceX PR that added the recipe; the
// config's comment in configs/amd-master.yaml) TP2/EP2 peaking at c4,
// TP4 and TEP4 at c40, TP8 and TEP8 at c64, with the next official point
// after each peak its throughput cliff (TEP8's c64 is its grid's top) and
// every official point green. The simulated discovery must peak within
// one grid step of each, fall off after the peak where the cluster did,
// and run all 32 points green.
//
// The discovery is measuredKeyDiscovery's.
func TestDiscoverMeasuredKeyAsOnTheCluster(t *testing.T) {
	out, log := measuredKeyDiscovery(t)
	assert.Contains(t, log, "32 ok, 0 failed, 0 not run")

	var sum campaign.Summary
	data, err := os.ReadFile(filepath.Join(out, campaign.SummaryJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sum))
	require.Len(t, sum.Points, 32, "the key's official points")
	for _, p := range sum.Points {
		assert.Equal(t, campaign.StatusOK, p.Status, "%s", p.ID)
	}

	measured := []struct {
		arm   string // the arm label's parallelism
		peak  int
		cliff bool // the official point after the peak fell off on the cluster
	}{
		{"tp2 ep2", 4, true},
		{"tp4", 40, true},
		{"tp4 ep4", 40, true},
		{"tp8", 64, true},
		{"tp8 ep8", 64, false}, // c64 is the top of TEP8's grid
	}
	k, err := campaign.ReadKnees(t.Context(), out, knee.Options{})
	require.NoError(t, err)
	results := k.Results
	require.Len(t, results, len(measured))
	for _, m := range measured {
		i := slices.IndexFunc(results, func(r *knee.Result) bool { return strings.HasSuffix(r.Arm.Identity.Label(), " mtp "+m.arm) })
		require.GreaterOrEqual(t, i, 0, "no arm %s", m.arm)
		r := results[i]
		var grid []int
		var tput = map[int]float64{}
		for _, p := range r.Points {
			grid = append(grid, p.Conc)
			if p.Throughput != nil {
				tput[p.Conc] = *p.Throughput
			}
		}
		at := slices.Index(grid, m.peak)
		require.GreaterOrEqual(t, at, 0, "%s: the measured peak c%d is not on the grid %v", m.arm, m.peak, grid)
		got := slices.Index(grid, r.Peak)
		assert.LessOrEqual(t, max(got-at, at-got), 1, "%s: simulated peak c%d, measured c%d (grid %v): %s", m.arm, r.Peak, m.peak, grid, r.Reason)
		if !m.cliff {
			continue
		}
		require.Less(t, at+1, len(grid), "%s: no point after the measured peak", m.arm)
		next := grid[at+1]
		assert.NotEmpty(t, r.Cliff, "%s: no cliff after the peak: %s", m.arm, r.Reason)
		assert.Less(t, tput[next], 0.5*r.PeakValue, "%s: c%d (%.0f tok/s/GPU) is not past the cliff from the peak %.0f", m.arm, next, tput[next], r.PeakValue)
	}
}

// TestDiscoverAdaptiveMeasuresAsTheFullDiscovery: `sweep discover
// --adaptive --simulate` of the measured key's TEP4 arm runs every point
// it asks for green, and each full-length point reads what the full
// discovery reads there, whatever the points run before it on the
// server. The adaptive discovery runs c48 right after c16 (the x4
// bracket's jump to the top of the grid) where the full one runs it after
// c40; the simulated engine's random stream used to run on across
// points, so c48, which sits at the 10 % error-rate limit, passed in the
// full discovery and failed in the adaptive one (and again on a fresh
// server when retried). With the far-neighbour bracketing points as
// probes the default adaptive discovery of this arm runs only probes
// (c4 c16 c48 c32 c40), so the full-length comparison runs with
// --probe-duration 0, where every point it asks for is full length. The
// full discovery is the arm's in measuredKeyDiscovery's, which reads as
// the arm's discovery alone does.
func TestDiscoverAdaptiveMeasuresAsTheFullDiscovery(t *testing.T) {
	bin, err := selfexe.Path()
	require.NoError(t, err)
	tep4 := func(arms []*knee.Arm) map[int]knee.Sample {
		i := slices.IndexFunc(arms, func(a *knee.Arm) bool { return a.Identity.Get("tp") == "4" && a.Identity.Get("ep") == "4" })
		require.GreaterOrEqual(t, i, 0, "no TEP4 arm among %d", len(arms))
		got := map[int]knee.Sample{}
		for _, s := range arms[i].Samples {
			assert.Empty(t, s.Excluded, "c%d", s.Conc)
			got[s.Conc] = s
		}
		return got
	}
	discover := func(extra ...string) map[int]knee.Sample {
		out := filepath.Join(t.TempDir(), "d")
		args := append([]string{"discover", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "4", "--ep", "4",
			"--no-report", "--out", out}, extra...)
		log, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
		require.NoError(t, err, "sweep %s\n%s", strings.Join(args, " "), log)
		assert.Contains(t, string(log), " 0 failed", "%s", log)
		arms, err := knee.Read(t.Context(), out)
		require.NoError(t, err)
		require.Len(t, arms, 1)
		return tep4(arms)
	}
	dir, log := measuredKeyDiscovery(t)
	assert.Contains(t, log, " 0 failed", "%s", log)
	arms, err := knee.Read(t.Context(), dir)
	require.NoError(t, err)
	full := tep4(arms)
	require.Contains(t, discover("--adaptive"), 48, "the top of the grid, probed")
	adaptive := discover("--adaptive", "--probe-duration", "0")
	require.Contains(t, adaptive, 48, "the top of the grid")
	for c, s := range adaptive {
		require.False(t, s.Probe, "c%d", c)
		require.NotNil(t, s.TotalTPS, "c%d", c)
		require.NotNil(t, full[c].TotalTPS, "c%d", c)
		assert.InDelta(t, *full[c].TotalTPS, *s.TotalTPS, 1e-6*(*s.TotalTPS), "c%d: adaptive vs full discovery", c)
	}
}

// TestDocCurvesAsTheMeasuredKeyDiscovery holds the numbers go doc
// ./simengine gives for the measured key to a fresh discovery of it
// (measuredKeyDiscovery's: no run of its own): the TEP8 curve of "The
// curves" (tok/s/GPU and tok/s/user per concurrency) and the "simulated
// now" column of the measured-and-simulated table (each arm's peak and the
// point after it). The MiniMax-M3 curve beside them went stale unnoticed
// (pool 7.5M and c18 37160 documented where the engine gave 6.74M and a
// cliff at c18, 11815); its discovery is another 9 points (about 20 s on
// two cores) and is not held here. A value agrees when the doc's is the
// measured one rounded to an integer.
func TestDocCurvesAsTheMeasuredKeyDiscovery(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "simengine", "doc.go"))
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	// fields is the doc's indented block line starting with prefix, split
	// on white space, the prefix's own words dropped.
	fields := func(prefix string) []string {
		t.Helper()
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "//\t"+prefix) })
		require.GreaterOrEqual(t, i, 0, "go doc ./simengine has no line %q", prefix)
		return strings.Fields(strings.TrimPrefix(lines[i], "//\t"+prefix))
	}
	atoi := func(s string) float64 {
		t.Helper()
		v, err := strconv.Atoi(strings.TrimPrefix(s, "c"))
		require.NoError(t, err, "a number in the doc: %q", s)
		return float64(v)
	}

	out, log := measuredKeyDiscovery(t)
	k, err := campaign.ReadKnees(t.Context(), out, knee.Options{})
	require.NoError(t, err)
	arm := func(name string) map[int]knee.Point {
		t.Helper()
		i := slices.IndexFunc(k.Results, func(r *knee.Result) bool { return strings.HasSuffix(r.Arm.Identity.Label(), " mtp "+name) })
		require.GreaterOrEqual(t, i, 0, "no arm %s", name)
		pts := map[int]knee.Point{}
		for _, p := range k.Results[i].Points {
			pts[p.Conc] = p
		}
		return pts
	}
	agree := func(what string, doc float64, got *float64) {
		t.Helper()
		if assert.NotNil(t, got, "%s: not measured", what) {
			assert.InDelta(t, doc, *got, 0.5, "%s: go doc ./simengine says %.0f, the discovery gives %.1f (update simengine/doc.go)", what, doc, *got)
		}
	}

	tep8 := arm("tp8 ep8")
	concs, tput, usr := fields("conc "), fields("tok/s/GPU "), fields("tok/s/usr ")
	require.Len(t, tput, len(concs))
	require.Len(t, usr, len(concs))
	for i, c := range concs {
		p := tep8[int(atoi(c))]
		agree("TEP8 c"+c+" tok/s/GPU", atoi(tput[i]), p.Throughput)
		agree("TEP8 c"+c+" tok/s/user", atoi(usr[i]), p.Intvty)
	}

	measured := map[string]string{"TP2": "tp2 ep2", "TP4": "tp4", "TEP4": "tp4 ep4", "TP8": "tp8", "TEP8": "tp8 ep8"}
	cell := regexp.MustCompile(`\bc(\d+) (\d+)\b`)
	for row, name := range measured {
		f := fields(row + " ")
		pts := arm(name)
		n := 0
		for _, m := range cell.FindAllStringSubmatch(strings.Join(f, " "), -1) {
			n++
			agree(row+" c"+m[1]+" tok/s/GPU", atoi(m[2]), pts[int(atoi(m[1]))].Throughput)
		}
		assert.Positive(t, n, "the table's %s row gives no simulated value", row)
	}
	green := fields("green ")
	assert.Contains(t, log, fmt.Sprintf("%s ok, 0 failed, 0 not run", green[len(green)-3]), "the table's green count")
}
