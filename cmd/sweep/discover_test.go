package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sweep/recipes/models"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
	"sweep/internal/proc"
	"sweep/internal/selfexe"
	"sweep/internal/simproto"
	"sweep/metrics/result"
	"sweep/recipes"
	"sweep/sweep/campaign"
	"sweep/sweep/knee"
	"sweep/sweep/report"
	"sweep/sweep/run"
)

// discoverArgs is a short simulated discovery of two points of the MI325X
// Qwen3.5 TEP8 arm: 120 s official-duration points on a 40x clock.
func discoverArgs(out string, extra ...string) []string {
	args := []string{"discover", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8",
		"--conc-list", "4", "16", "--official-durations", "--duration", "120", "--time-scale", "40", "--stop-grace", "3s", "--out", out}
	return overrideFlags(args, extra...)
}

func journalOf(t *testing.T, dir string) []campaign.Record {
	t.Helper()
	recs, err := campaign.ReadJournal(dir)
	require.NoError(t, err)
	return recs
}

// spentOf reads what the sweep in dir cost on the hardware from its
// summary.json.
func spentOf(t *testing.T, dir string) campaign.Spending {
	t.Helper()
	var sum campaign.Summary
	data, err := os.ReadFile(filepath.Join(dir, campaign.SummaryJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sum))
	require.NotNil(t, sum.Spent, "%s: no spent", campaign.SummaryJSON)
	return *sum.Spent
}

// countEvent is how many of recs are ev events.
func countEvent(recs []campaign.Record, ev string) int {
	n := 0
	for _, r := range recs {
		if r.Event == ev {
			n++
		}
	}
	return n
}

func countEvents(recs []campaign.Record, ev string) map[string]int {
	n := map[string]int{}
	for _, r := range recs {
		if r.Event == ev {
			n[r.Point]++
		}
	}
	return n
}

// TestDiscoverSimulated runs a discovery end to end (simulated engine,
// built-in load generator, real processes): one server for the arm,
// progress, summary, knee table and report; a rerun does nothing.
func TestDiscoverSimulated(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "d")
	code, stdout, stderr := runCLI(t, discoverArgs(out, "--builtin-client")...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "point 1/2")
	assert.Contains(t, stderr, "point 2/2")
	assert.Contains(t, stderr, "server reused")
	assert.Contains(t, stderr, "ETA")
	assert.Contains(t, stdout, "2 ok, 0 failed, 0 not run; 1 server start")
	assert.Contains(t, stdout, "knees:")
	assert.Contains(t, stdout, "report: "+filepath.Join(out, "report"))

	recs := journalOf(t, out)
	assert.Len(t, countEvents(recs, campaign.EventServerStart), 1, "one server for the arm")
	require.Len(t, recs[0].Arms, 1)
	assert.Equal(t, []int{4, 16, 24, 32, 40, 48, 64}, recs[0].Arms[0].Grid, "the start records the arm's grid in the config, before --conc-list 4 16")
	var sum campaign.Summary
	data, err := os.ReadFile(filepath.Join(out, campaign.SummaryJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sum))
	require.Len(t, sum.Points, 2)
	for _, p := range sum.Points {
		assert.Equal(t, campaign.StatusOK, p.Status)
		require.NotNil(t, p.Metrics)
		require.NotNil(t, p.Metrics.AL, "acceptance length per point")
		assert.InDelta(t, 3.38, *p.Metrics.AL, 0.05)
		rec := readRunRecord(t, filepath.Join(out, p.ID))
		assert.True(t, rec.OK)
		require.NotNil(t, rec.Server)
		assert.Equal(t, p.Index == 2, rec.Server.Reused)
		assert.FileExists(t, filepath.Join(out, p.ID, "server.log"), "the server's log is linked into the point")
	}
	arms, err := knee.Read(t.Context(), out)
	require.NoError(t, err)
	require.Len(t, arms, 1, "the point results form one arm")
	assert.Len(t, arms[0].Samples, 2)

	code, stdout, stderr = runCLI(t, discoverArgs(out, "--builtin-client", "--no-report")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "2 of 2 points complete: 0 to run")
	assert.Contains(t, stderr, "sweep discover: 2 points in 1 arm, nothing left to run, 0 server starts planned; ", "not the schedule's 1 start")
	assert.Contains(t, stdout, "0 server starts")
	assert.Equal(t, 1, countEvents(journalOf(t, out), campaign.EventPointStart)[sum.Points[0].ID], "not rerun")

	other := discoverArgs(out, "--builtin-client")
	other[slices.Index(other, "16")] = "8"
	code, _, stderr = runCLI(t, other...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "holds a different sweep")
	assert.Contains(t, stderr, `--conc-list: was "4 16", now "4 8"`)

	// Another checkpoint, client or config is another sweep too.
	amdMaster, err := filepath.Abs("../../configs/amd-master.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		flags []string
		diff  string
	}{
		{[]string{"--builtin-client", "--model-path", "/ckpt/other"}, `--model-path: was "", now "/ckpt/other"`},
		{[]string{"--builtin-client", "--aiperf", "/opt/aiperf"}, `--aiperf: was "", now "/opt/aiperf"`},
		{[]string{"--builtin-client", "--config-files", "../../configs/amd-master.yaml"}, `--config-files: was "", now "` + amdMaster + `"`},
	} {
		code, _, stderr = runCLI(t, discoverArgs(out, tc.flags...)...)
		assert.Equal(t, exitUsage, code, "%v", tc.flags)
		assert.Contains(t, stderr, tc.diff)
	}
	// The dry run says so too, before it plans anything.
	code, stdout, stderr = runCLI(t, append(other, "--dry-run")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `holds a different sweep; this command differs in:`+"\n"+`  --conc-list: was "4 16", now "4 8"`)
	assert.NotContains(t, stdout, "order:")

	// A variable of the environment that changes what the points
	// measure is part of the sweep: a resume with another seed, faults
	// or power GPUs mixed them in one sweep.
	for _, tc := range []struct{ name, value, diff string }{
		{simproto.EnvSeed, "7", `$SWEEP_SIM_SEED: was "", now "7" (the variable changes what the points measure: `},
		{simproto.EnvFault, "slow-steps:50", `$SWEEP_SIM_FAULT: was "", now "slow-steps:50"`},
		{run.EnvPowerGPUs, "allocated", `--power-gpus: was "", now "allocated"`},
		// The engine's own variables, which its process inherits: a
		// resume with another one mixed points measured under other
		// engine settings.
		{"SGLANG_ENABLE_TORCH_COMPILE", "1", `$SGLANG_ENABLE_TORCH_COMPILE: was "", now "1" (the variable changes what the points measure: `},
		// The libraries' the engine runs on likewise: a resume with
		// another one went on.
		{"NCCL_P2P_DISABLE", "1", `$NCCL_P2P_DISABLE: was "", now "1" (the variable changes what the points measure: `},
		{"HSA_NO_SCRATCH_RECLAIM", "1", `$HSA_NO_SCRATCH_RECLAIM: was "", now "1"`},
	} {
		t.Setenv(tc.name, tc.value)
		code, _, stderr = runCLI(t, discoverArgs(out, "--builtin-client", "--no-report")...)
		assert.Equal(t, exitUsage, code, "%s=%s", tc.name, tc.value)
		assert.Contains(t, stderr, tc.diff)
		t.Setenv(tc.name, "")
	}
	t.Setenv(simproto.EnvSeed, "0") // the default: the same sweep
	// Engine variables that do not reach this sweep's engine: another
	// engine's, and one the recipe sets itself (SGLANG_USE_AITER=1).
	t.Setenv("VLLM_ATTENTION_BACKEND", "TRITON_ATTN")
	t.Setenv("SGLANG_USE_AITER", "0")
	// Nor do the GPU visibility variables: the executor pins each
	// server to its GPUs.
	t.Setenv("CUDA_VISIBLE_DEVICES", "3")
	t.Setenv("HIP_VISIBLE_DEVICES", "3")
	// What means the same is the same sweep: a set in another order, a
	// time scale the virtual clock ignores.
	same := discoverArgs(out, "--builtin-client", "--no-report", "--time-scale", "100")
	i := slices.Index(same, "--conc-list")
	same[i+1], same[i+2] = "16", "4"
	code, _, stderr = runCLI(t, same...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "2 of 2 points complete: 0 to run")

	// The dry run of a finished sweep says there is nothing left to run.
	code, stdout, stderr = runCLI(t, append(same, "--dry-run")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "resume: "+out+" holds this sweep, which a run goes on with: 2 of 2 points complete: 0 to run\n")
	assert.Contains(t, stdout, "  2  arm 1  conc 16   ok           "+sum.Points[1].ID, "how the point ended")
	assert.Contains(t, stdout, "  left to run:     nothing: a run of this command ends at once")
}

// TestDiscoverServerNeverReady: an arm whose engine never becomes ready
// (simulated engine, real processes) starts its server once per round,
// not once per point and retry (before: 4 starts for these 2 points),
// its points fail with the start's failure ("start failed" in
// summary.txt), and a resume with no retry left starts nothing.
func TestDiscoverServerNeverReady(t *testing.T) {
	t.Setenv(simproto.EnvFault, "never-ready")
	out := filepath.Join(t.TempDir(), "d")
	args := discoverArgs(out, "--builtin-client", "--no-report", "--ready-timeout", "2s")
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Equal(t, 2, countEvent(journalOf(t, out), campaign.EventServerStart), "the first round's start and the retry round's")
	assert.Contains(t, stdout, "0 ok, 2 failed, 0 not run; 2 server starts in this invocation")
	text, err := os.ReadFile(filepath.Join(out, campaign.SummaryText))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(text), "  start failed\n"), "%s", text)
	assert.Contains(t, string(text), "c16, 2 attempts: server start: not tried, the arm's server did not start for c4: stage engine-ready: engine not ready")
	assert.NotContains(t, stderr, "server started")

	// Its report lists the failed points (before: "no result files
	// under DIR", exit 2, and no report).
	code, stdout, stderr = runCLI(t, "report", out)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Equal(t, "no point has a result: the report lists the 2 points that failed before writing one\n", stderr)
	md, err := os.ReadFile(filepath.Join(out, "report", report.SummaryFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Failed points (2 points with no result)")

	code, stdout, stderr = runCLI(t, args...)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "0 of 2 points complete, 2 failed with no retry left (--retries 1): 0 to run")
	assert.Contains(t, stderr, "sweep discover: 2 points in 1 arm, nothing left to run, 0 server starts planned; ", "not the schedule's 1 start")
	assert.Contains(t, stdout, "0 ok, 2 failed, 0 not run; 0 server starts in this invocation")
}

// TestDiscoverAdaptiveProbes: discover --adaptive on the MI355X DSv4 TP8
// arms runs the kv=none arm's points (conc 1 2 4 8 16) as 180 s probes
// (aiperf --unsafe-override, as below 900 s InferenceX passes it): the x4
// bracket's 1, 4 and 16 and the top gate's 8, none again at the full
// length (the gain into the top clears the gate beyond the probes'
// noise), and not the gap's 2 (the gate's posterior reads the top still
// gaining with 99 % odds or more: no gap fill below it); the kv=dram arm (one point of the list in its window,
// c16) at agentx-fast's 1200 s. It marks the probes in the journal, the results, the summary
// and the knee table.
func TestDiscoverAdaptiveProbes(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "d")
	code, stdout, stderr := runCLI(t, "discover", "--simulate", "--adaptive", "--builtin-client", "--config-keys", "dsv4-fp4-mi355x-sglang-agentic-mtp",
		"--tp", "8", "--conc-list", "1", "2", "4", "8", "16", "--stop-grace", "3s", "--out", out)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, "conc 1 (probe)")
	assert.Contains(t, stdout, "ok (probe)")
	probes := map[int]bool{}
	for _, r := range journalOf(t, out) {
		if r.Event == campaign.EventPointEnd && r.Probe {
			probes[r.Conc] = true
		}
	}
	assert.Equal(t, map[int]bool{1: true, 4: true, 8: true, 16: true}, probes, "the probes: the kv=none arm's")
	arms, err := knee.Read(t.Context(), out)
	require.NoError(t, err)
	seen := map[bool]int{} // by probe
	for _, a := range arms {
		for _, smp := range a.Samples {
			seen[smp.Probe]++
			cmd, err := os.ReadFile(filepath.Join(filepath.Dir(smp.File), "benchmark_command.txt"))
			require.NoError(t, err)
			assert.Equal(t, a.Identity.Get("kv_offloading") == "none", smp.Probe, "conc %d", smp.Conc)
			if smp.Probe {
				assert.Contains(t, string(cmd), "--benchmark-duration 180", "conc %d", smp.Conc)
				assert.Contains(t, string(cmd), "--unsafe-override", "conc %d", smp.Conc)
				// the measured span of the successful requests: 180.5 s
				// at c1 to 208.3 s at c16 (those in flight at the window's
				// end that complete within the 30 s grace period lengthen
				// it; at 240 s, c1 measured 193.5 s)
				assert.InDelta(t, 180, smp.Seconds, 60, "conc %d", smp.Conc)
			} else {
				assert.Contains(t, string(cmd), "--benchmark-duration 1200", "conc %d", smp.Conc)
				assert.NotContains(t, string(cmd), "--unsafe-override", "conc %d", smp.Conc)
			}
		}
	}
	assert.Equal(t, 4, seen[true], "the kv=none arm's points")
	assert.Equal(t, 1, seen[false], "the kv=dram arm's point")

	// What it cost on the hardware, priced as planned (a server start
	// 600 s, a point 1200 s + 60, a probe 180 s + 60; 8 GPUs): two server
	// starts, four probes and the kv=dram arm's c16, against InferenceX's
	// six points with a server start each, and the six at the full length
	// on the two server starts.
	sp := spentOf(t, out)
	assert.Equal(t, [3]int{2, 1, 4}, [3]int{sp.ServerStarts, sp.Runs, sp.Probes}, "server starts, full-length runs, probes")
	assert.InDelta(t, 8*(2*600+4*240+1260)/3600.0, sp.GPUHours, 1e-9)
	assert.InDelta(t, 8*6*(600+1260)/3600.0, sp.InferenceXGPUHours, 1e-9)
	assert.InDelta(t, 8*(2*600+6*1260)/3600.0, sp.GridGPUHours, 1e-9)
	assert.False(t, sp.Measured, "a simulated sweep is priced as planned")
	assert.Contains(t, stdout, "GPU-hours on the hardware: 7.6 spent, 31 % of InferenceX's 24.8 (6 points, a server start each) and 39 % of 19.5 (each point once at the full length on this schedule's server starts)\n")
}

// TestDiscoverAdaptiveKeepsProbe: discover --adaptive on the MI325X GLM-5.2
// TP8 arm probes c4, whose KV pool comes near full, and runs it again at
// the full length; the probe's directory (result and aiperf artifacts) is
// kept as RESULT_FILENAME.probe/, knees reads c4 as the full-length run
// alone and lists the probe as superseded, and a rerun runs nothing.
func TestDiscoverAdaptiveKeepsProbe(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "d")
	args := []string{"discover", "--simulate", "--adaptive", "--builtin-client", "--no-report",
		"--config-keys", "glm5.2-fp8-mi325x-sglang-agentic-mtp", "--stop-grace", "3s", "--out", out}
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	var c4 []string
	id := ""
	for _, r := range journalOf(t, out) {
		if r.Event == campaign.EventPointEnd && r.Conc == 4 {
			c4 = append(c4, fmt.Sprintf("probe=%v %s", r.Probe, r.Status))
			id = r.Point
		}
	}
	require.Equal(t, []string{"probe=true ok", "probe=false ok"}, c4, "c4: a probe, then the full length")
	kept := result.ProbeDir(out, id, 1)
	probe, ok, err := knee.ReadFile(result.Path(kept, id))
	require.NoError(t, err)
	require.True(t, ok, "the probe's result is kept in %s", kept)
	assert.True(t, probe.Probe)
	assert.DirExists(t, filepath.Join(kept, "aiperf_artifacts"), "the probe's artifacts are kept")
	full, ok, err := knee.ReadFile(result.PointPath(out, id))
	require.NoError(t, err)
	require.True(t, ok)
	require.False(t, full.Probe)

	code, stdout, stderr = runCLI(t, "knees", "--format", "json", out)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	var verdicts []struct {
		Points []knee.Point `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &verdicts))
	require.Len(t, verdicts, 1)
	i := slices.IndexFunc(verdicts[0].Points, func(p knee.Point) bool { return p.Conc == 4 })
	require.GreaterOrEqual(t, i, 0)
	pt := verdicts[0].Points[i]
	assert.Equal(t, []float64{*full.TotalTPS}, pt.Replicates, "c4 reads the full-length run alone")
	assert.Equal(t, []knee.Exclusion{{File: result.Path(kept, id), Reason: knee.ExcludedSuperseded}}, pt.Excluded)

	code, _, stderr = runCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "0 to run")
	assert.NoDirExists(t, result.ProbeDir(out, id, 2))
}

// TestDiscoverAdaptiveKilledAfterEveryPoint: discover --adaptive killed
// after an arm's last probe, before the full-length run of a probe the
// search asks for again, resumes with that run. On the MI325X MiniMax-M3
// TP8 arm's c4 c8 c12 c16 (360 s points, 90 s probes) the search
// measures every point and asks last for c16 and c12 again at the full
// length, c12's run the last. The directory is then rewound to what a
// kill just before that run leaves (rewindToProbe): every point
// complete, c16 at the full length, c12 read as its probe. The
// resume names the run, starts one server, runs c12 at the full length
// and reads the uninterrupted discovery's knee; without the search
// forming the resume's jobs (Sweep.Run handing campaign.Run the arms'
// Choose) it starts nothing and reads the arm as unsaturated on c12's
// probe. The rewound journal reads c12 unfinished (the arm's search
// recorded no end), the resumed one nothing. A second resume starts
// nothing.
func TestDiscoverAdaptiveKilledAfterEveryPoint(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	out := filepath.Join(t.TempDir(), "d")
	grid := []string{"4", "8", "12", "16"}
	args := append(append([]string{"discover", "--simulate", "--adaptive", "--builtin-client", "--no-report",
		"--config-keys", "minimaxm3-fp8-mi325x-vllm-agentic-mtp", "--tp", "8", "--conc-list"}, grid...),
		"--official-durations", "--duration", "360", "--probe-duration", "90", "--stop-grace", "3s", "--out", out)
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	whole := armVerdict(t, out)
	require.True(t, whole.HasKnee(), "the uninterrupted discovery finds a knee: %s", whole.Reason)
	assert.Contains(t, stderr, "run 1, point 1/4  arm 1/1", "an adaptive search's progress counts its runs (it skips points and runs some twice)")
	assert.Contains(t, stderr, "run 2, point ")

	// The state a kill leaves: every point measured, the probe the search
	// asked for again at the full length last.
	recs := journalOf(t, out)
	var last campaign.Record
	for _, r := range recs {
		if r.Event == campaign.EventPointEnd {
			last = r
		}
	}
	c, id := last.Conc, last.Point
	runs := pointRuns(recs, campaign.EventPointEnd, campaign.EventPointSkip)
	n := len(runs)
	require.GreaterOrEqual(t, n, 2, "%s", runs)
	require.Equal(t, fmt.Sprintf("point_end c%d probe=false ok", c), runs[n-1], "the discovery ends with a full-length run: %s", runs)
	require.Contains(t, runs[:n-1], fmt.Sprintf("point_end c%d probe=true ok", c), "the last run is a probe's again at the full length: %s", runs)
	measured := map[string]bool{}
	for _, e := range runs[:n-1] {
		require.True(t, strings.HasPrefix(e, "point_end "), "every point measured, none skipped: %s", runs)
		measured[strings.Fields(e)[1]] = true
	}
	require.Len(t, measured, len(grid), "every point measured before the full-length run: %s", runs)
	rewindToProbe(t, out, id)
	cov, err := campaign.ReadCoverage(out)
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(cov.Unfinished, func(r campaign.Record) bool { return r.Point == id && r.Probe }),
		"c%d's probe, which the search runs again, is unfinished: %v", c, cov.Unfinished)

	before := len(journalOf(t, out))
	code, stdout, stderr = runCLI(t, args...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, fmt.Sprintf("%d of %d points complete: 0 to run; adaptive discovery asks again for points that ran: arm 1 c%d at the full length\n", len(grid), len(grid), c))
	assert.Contains(t, stderr, fmt.Sprintf("conc %d (full length after its probe)  server started", c))
	assert.Contains(t, stdout, "1 server start in this invocation")
	assert.Equal(t, []string{"server_start", fmt.Sprintf("point_start c%d probe=false", c), fmt.Sprintf("point_end c%d probe=false ok", c)},
		pointRuns(journalOf(t, out)[before:], campaign.EventServerStart, campaign.EventPointStart, campaign.EventPointEnd, campaign.EventPointSkip),
		"the resume starts one server and runs c%d at the full length", c)
	resumed := armVerdict(t, out)
	assert.Equal(t, whole.Status, resumed.Status, "the uninterrupted discovery's verdict: %s", resumed.Reason)
	assert.Equal(t, whole.Knee, resumed.Knee, "the uninterrupted discovery's knee: %s", resumed.Reason)
	assert.Equal(t, whole.Reason, resumed.Reason)
	cov, err = campaign.ReadCoverage(out)
	require.NoError(t, err)
	assert.Empty(t, cov.Unfinished, "the resumed search recorded its end")
	smp, ok, err := knee.ReadFile(result.PointPath(out, id))
	if assert.NoError(t, err) && assert.True(t, ok) {
		assert.False(t, smp.Probe, "c%d's result is the full-length run's", c)
	}
	smp, ok, err = knee.ReadFile(result.Path(result.ProbeDir(out, id, 1), id))
	if assert.NoError(t, err, "c%d's probe is kept", c) && assert.True(t, ok) {
		assert.True(t, smp.Probe)
	}

	before = len(journalOf(t, out))
	code, stdout, stderr = runCLI(t, args...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, fmt.Sprintf("%d of %d points complete: 0 to run\n", len(grid), len(grid)))
	assert.Contains(t, stdout, "0 server starts in this invocation")
	assert.Empty(t, pointRuns(journalOf(t, out)[before:], campaign.EventServerStart, campaign.EventPointStart), "the search satisfied, nothing runs")
}

// armVerdict is the knee verdict of the one arm in the sweep directory dir.
func armVerdict(t *testing.T, dir string) *knee.Result {
	t.Helper()
	arms, err := knee.Read(t.Context(), dir)
	require.NoError(t, err)
	require.Len(t, arms, 1)
	return knee.Analyze(arms[0], knee.Options{})
}

// pointRuns are recs' records of the events evs as "EVENT cN probe=BOOL
// STATUS" (a server start as its event alone).
func pointRuns(recs []campaign.Record, evs ...string) []string {
	var out []string
	for _, r := range recs {
		switch {
		case !slices.Contains(evs, r.Event):
		case r.Event == campaign.EventServerStart:
			out = append(out, r.Event)
		default:
			out = append(out, strings.TrimSpace(fmt.Sprintf("%s c%d probe=%v %s", r.Event, r.Conc, r.Probe, r.Status)))
		}
	}
	return out
}

// rewindToProbe leaves the sweep directory dir as a discovery killed
// just before point id's full-length run (after its probe) leaves it:
// the journal (append-only, a record per line) cut before that run's
// start record, the point's
// directory its probe's again (ClearPointDir keeps it as the probe
// directory only when the full-length run starts), no summary.
func rewindToProbe(t *testing.T, dir, id string) {
	t.Helper()
	path := filepath.Join(dir, campaign.JournalFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	cut, off := -1, 0
	for line := range bytes.Lines(data) {
		off += len(line)
		var r campaign.Record
		require.NoError(t, json.Unmarshal(line, &r))
		if r.Event == campaign.EventPointStart && r.Point == id && !r.Probe {
			cut = off - len(line)
		}
	}
	require.Positive(t, cut, "no full-length run of %s started in %s", id, path)
	require.NoError(t, os.Truncate(path, int64(cut)))
	require.NoError(t, os.RemoveAll(result.PointDir(dir, id)))
	require.NoError(t, os.Rename(result.ProbeDir(dir, id, 1), result.PointDir(dir, id)))
	for _, f := range []string{campaign.SummaryText, campaign.SummaryJSON} {
		require.NoError(t, os.Remove(filepath.Join(dir, f)))
	}
}

// TestDiscoverInterruptAndKill: SIGINT mid-sweep stops cleanly (exit
// 130, no process left); kill -9 leaves processes that the next
// invocation stops; each resume keeps the completed points.
func TestDiscoverInterruptAndKill(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "d")
			// Signalled as the second point starts on the reused server: a
			// sleep would race the simulated load, which can finish in
			// well under a second.
			log, sent, err := signalAtLine(t, discoverArgs(out, "--builtin-client", "--no-report", "--duration", "240"), nil, "point 2/2", sig)
			require.True(t, sent, "the second point never started:\n%s", log)
			ee, ok := err.(*exec.ExitError)
			require.True(t, ok, "%v\n%s", err, log)
			recs := journalOf(t, out)
			if sig == syscall.SIGINT {
				assert.Equal(t, exitCancelled, ee.ExitCode(), log)
				assert.Equal(t, campaign.EventSweepEnd, recs[len(recs)-1].Event, "the journal is closed")
				for _, r := range recs {
					if r.Event == campaign.EventServerReady {
						for _, pid := range r.PIDs {
							assert.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH, "server process group %d survived", pid)
						}
					}
				}
			}
			first := ""
			for _, r := range recs {
				if r.Event == campaign.EventPointEnd && r.Status == campaign.StatusOK {
					first = r.Point
				}
			}
			require.NotEmpty(t, first, "the first point completed before the signal:\n%s", log)

			t.Setenv(asCLIEnv, "1")
			code, stdout, errOut := runCLI(t, discoverArgs(out, "--builtin-client", "--no-report", "--duration", "240")...)
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, errOut)
			assert.Contains(t, errOut, "1 of 2 points complete")
			assert.Contains(t, errOut, "sweep discover: 2 points in 1 arm, 1 left to run, 1 server start planned; ")
			recs = journalOf(t, out)
			assert.Equal(t, 1, countEvents(recs, campaign.EventPointStart)[first], "the completed point is not rerun")
			for _, r := range recs {
				if r.Event != campaign.EventServerReady {
					continue
				}
				// No process of any server lives on: the killed sweep's
				// engine died with it (Pdeathsig) or, carrying its tag, was
				// stopped by the resume (campaign's TestLeftoverServerIsStopped
				// covers a survivor); its pid may be a zombie until init
				// reaps it, and is never signalled itself.
				for _, tag := range r.Tags {
					assert.Empty(t, proc.KillTagged(tag, time.Second), "processes of server %s survived", tag)
				}
				for _, pid := range r.PIDs {
					if sig == syscall.SIGINT {
						assert.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH, "server process group %d survived", pid)
					}
				}
			}
		})
	}
}

func TestDiscoverDryRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d")
	code, stdout, stderr := runCLI(t, "discover", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--dry-run", "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "declares one server for the arm, planned for conc 64")
	assert.Contains(t, stdout, "this schedule:   1 server start, ")
	assert.Contains(t, stdout, "InferenceX's:    7 server starts")
	assert.NoDirExists(t, out, "a dry run writes nothing")

	code, stdout, _ = runCLI(t, "discover", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--dry-run", "--exact-servers", "--out", out)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "restart per point (--exact-servers)")
	assert.Contains(t, stdout, "this schedule:   7 server starts")

	code, stdout, _ = runCLI(t, "discover", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--dry-run", "--adaptive", "--out", out)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "x4 bracketing as 180 s probes, run again at the full length where the verdict hangs on them")
	assert.Contains(t, stdout, "the summary gives the GPU-hours the search spent when it ends")
}

// TestDiscoverKVOffloading: sweep plan and sweep run pick a key's kv:none
// or kv:dram rows with --kv-offloading; discover and official had no such
// filter, so the FP4 MI355X MiniMax-M3 key's kv:dram arm could not be
// discovered alone. --kv-offloading keeps the arms of that mode; a mode no
// selected arm has, or no mode at all, is a usage error.
func TestDiscoverKVOffloading(t *testing.T) {
	const key = "minimaxm3-fp4-mi355x-vllm-agentic-mtp"
	out := filepath.Join(t.TempDir(), "d")
	code, stdout, stderr := runCLI(t, "discover", "--config-keys", key, "--kv-offloading", "dram", "--dry-run", "--out", out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, key+" tp4 kv:dram ")
	assert.NotContains(t, stdout, "kvnone", "only the kv:dram arm")
	assert.NoDirExists(t, out, "a dry run writes nothing")
	for _, tc := range []struct{ key, kv, want string }{
		{"glm5.2-fp8-mi325x-sglang-agentic-mtp", "dram", "no selected arm has --kv-offloading dram; theirs is none: drop --kv-offloading"},
		{key, "ssd", `--kv-offloading "ssd": want one of none, dram`},
	} {
		code, _, stderr = runCLI(t, "discover", "--config-keys", tc.key, "--kv-offloading", tc.kv, "--dry-run", "--out", out)
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, tc.want)
	}
}

// TestDiscoverRefusesADirectoryItDidNotMake: discover and official
// started a new sweep in any --out and read what was there as their own
// (a sweep run point's 300 s result as a replicate of c16's, another
// sweep's points below it as this one's). A directory without a journal
// that is not empty is refused, exit 2, with and without --dry-run,
// naming what it holds, and nothing is written into it.
func TestDiscoverRefusesADirectoryItDidNotMake(t *testing.T) {
	dir := t.TempDir()
	point := filepath.Join(dir, "p2") // what sweep run leaves
	require.NoError(t, os.MkdirAll(filepath.Join(point, "aiperf_artifacts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(point, run.RecordFile), []byte("{}"), 0o644))
	sweeps := filepath.Join(dir, "x") // a copy of another sweep below it
	require.NoError(t, os.MkdirAll(filepath.Join(sweeps, "old"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sweeps, "old", campaign.JournalFile), nil, 0o644))
	for _, tc := range []struct{ out, want string }{
		{point, "sweep directory " + point + " is not empty and holds no sweep (no journal.jsonl): run.json (a point of sweep run), aiperf_artifacts/; a new sweep reads every result below its directory as its own: give --out an empty or new directory"},
		{sweeps, "old/ (a sweep: its journal.jsonl); a new sweep reads every result below its directory as its own: give --out an empty or new directory, or, to resume a sweep it holds, that sweep's directory (" + filepath.Join(sweeps, "old") + ") with the command that started it"},
	} {
		for _, args := range [][]string{
			{"discover", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--out", tc.out},
			{"discover", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--out", tc.out, "--dry-run"},
			{"official", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--out", tc.out},
		} {
			code, stdout, stderr := runCLI(t, args...)
			assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
			assert.Contains(t, stderr, tc.want, args)
			assert.NotContains(t, stdout, "order:", "refused before the schedule")
			assert.NoFileExists(t, filepath.Join(tc.out, campaign.JournalFile), "nothing written")
			assert.NoFileExists(t, filepath.Join(tc.out, ".lock"), "nothing written")
		}
	}
}

func TestDiscoverFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"discover", "--out", out}, "missing --config-keys"},
		{[]string{"discover", "--config-keys", "k"}, "missing --out"},
		{[]string{"discover", "--config-keys", "k", "--out", out, "--executor", "k8s"}, `--executor "k8s"`},
		{[]string{"discover", "--config-keys", "k", "--out", out, "--dp-attn", "yes"}, `--dp-attn "yes"`},
		{[]string{"discover", "--config-keys", "k", "--out", out, "--time-scale", "5"}, "need --simulate"},
		{[]string{"discover", "--config-keys", "k", "--out", out, "--simulate", "--sim-clock", "fast"}, `--sim-clock "fast": want virtual or wall`},
		{[]string{"discover", "--config-keys", "no-such-key", "--out", out}, "no-such-key"},
		{[]string{"discover", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "3", "--out", out}, "no agentic point matches --tp 3: no arm has that layout; pick from the concurrencies of qwen3.5-fp8-mi325x-sglang-agentic-mtp's arms (sweep plan lists the points):\n  tp2 ep2: 1 4 6\n"},
		{[]string{"discover", "--config-keys", "k", "--out", "/no/such/parent/d"}, "parent directory"},
		{[]string{"discover", "--config-keys", "k", "--out", out, "--probe-duration", "600"}, "--probe-duration needs --adaptive"},
		{[]string{"discover", "--config-keys", "k", "--out", out, "--adaptive", "--probe-duration", "-1"}, "--probe-duration -1"},
		// 1 s probes read a MiniMax-M3 arm whose knee is c14 as saturated
		// at c1; a probe as long as the point is no probe.
		{[]string{"discover", "--config-keys", "k", "--out", out, "--adaptive", "--probe-duration", "1"}, "--probe-duration 1: want 0 (every point at the full length) or 60 s or more"},
		{[]string{"discover", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--out", out, "--adaptive", "--probe-duration", "1200"},
			"probe duration 1200 s: qwen3.5_tp8_conc4_"},
		{[]string{"discover", "--simulate", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8", "--out", out, "--adaptive", "--probe-duration", "1200"},
			"runs 1200 s at the full length, and a probe must be shorter (the search reads its probes against the full-length points): give less than 1200 s"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
}

// --duration without --official-durations is refused (it printed a
// warning and ran every point at agentx-fast's duration, exit 0): the
// agentx-fast points keep their duration, as InferenceX's do.
func TestDiscoverRefusesDurationUnused(t *testing.T) {
	args := []string{"discover", "--simulate", "--dry-run", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--tp", "8", "--ep", "8",
		"--duration", "120", "--out", filepath.Join(t.TempDir(), "d")}
	code, _, stderr := runCLI(t, args...)
	require.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "--duration 120 would not be used: agentx-fast points run at agentx-fast's duration")
	assert.NotContains(t, stderr, "--help", "a refusal naming its fix")
	code, _, stderr = runCLI(t, append(args, "--official-durations")...)
	require.Equal(t, exitOK, code, stderr)
}

// TestServerServesTwoLoads: run.StartServer + two RunLoads at different
// concurrencies + Stop against the simulated engine. Each load's counters
// are its own: the second load (after a larger one) measures the same
// acceptance length and prefix-cache figures as the same load on a fresh
// server, which it would not if the caches or counters carried over.
func TestServerServesTwoLoads(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	const key = "qwen3.5-fp8-mi325x-sglang-agentic-mtp"
	g, err := (&matrixInputs{}).generator()
	require.NoError(t, err)
	rows, err := g.TestConfig(matrix.TestConfigOptions{ConfigKeys: []string{key}, ScenarioTypes: []string{"agentic-coding"}, EvalOptions: matrix.EvalOptions{NoEvals: true}})
	require.NoError(t, err)
	pick := func(conc int) *matrix.Row {
		for _, r := range rows {
			if r.Kind == matrix.AgenticSingleNode && r.TP == 8 && r.EP == 8 && r.Conc == conc {
				return r
			}
		}
		t.Fatalf("no row conc %d", conc)
		return nil
	}
	port, err := recipes.FreeRouterPort()
	require.NoError(t, err)
	dir := t.TempDir()
	plan := func(conc int, sub string) *recipes.Point {
		pts, err := recipes.Plan(matrix.Matrix{pick(conc)}, recipes.PlanOptions{Catalog: models.Builtin(), Runners: g.Runners, Port: port, Duration: 120, ResultDir: filepath.Join(dir, sub)})
		require.NoError(t, err)
		return &pts[0]
	}
	exe, err := selfexe.Path()
	require.NoError(t, err)
	setup := run.Setup{Simulate: true, TimeScale: 40, Executable: exe, AiperfSchema: "aiperf@0.12.0"}
	opts := run.Options{StopGrace: 3 * time.Second}.Simulated(40)
	spec := func(p *recipes.Point) run.Spec {
		s, err := run.FromPlan(p, setup)
		require.NoError(t, err)
		return s
	}
	big, small := spec(plan(32, "big")), spec(plan(16, "small"))
	// The arm's server is planned for its largest concurrency.
	opts.OutDir = filepath.Join(dir, "server")
	srv, _, err := run.StartServer(t.Context(), big.ServerSpec, opts)
	require.NoError(t, err)
	defer srv.Stop()
	rec1, err := srv.RunLoad(t.Context(), big.LoadSpec, filepath.Join(dir, "big"))
	require.NoError(t, err)
	rec2, err := srv.RunLoad(t.Context(), small.LoadSpec, filepath.Join(dir, "small"))
	require.NoError(t, err, "%+v", rec2)
	require.NoError(t, srv.Healthy(context.Background()))
	final, err := srv.Stop()
	require.NoError(t, err)
	assert.True(t, final.OK)
	for _, p := range final.Processes {
		assert.ErrorIs(t, syscall.Kill(-p.PID, 0), syscall.ESRCH, "server process %d survived Stop", p.PID)
	}
	assert.False(t, rec1.Server.Reused)
	assert.True(t, rec2.Server.Reused)
	assert.Equal(t, "ok", stageOutcome(rec2, run.StageFlush), "caches flushed before the second load")
	assert.Empty(t, stageOutcome(rec1, run.StageFlush), "no flush before the first load")
	log, err := os.ReadFile(filepath.Join(dir, "server", "server.log"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(log), "Cache flushed successfully!"), "the engine flushed once, between the loads")

	// The same small load on a fresh server of the same command.
	fresh := spec(plan(16, "fresh"))
	fresh.ServerSpec = big.ServerSpec
	opts.OutDir = filepath.Join(dir, "fresh")
	rec3, err := run.Run(t.Context(), fresh, opts)
	require.NoError(t, err)

	reused, alone := readServerFigures(t, rec2.ResultFile), readServerFigures(t, rec3.ResultFile)
	assert.InDelta(t, alone.AL, reused.AL, 0.05, "acceptance length per load")
	assert.InDelta(t, alone.HitRate, reused.HitRate, 0.1, "cache hit rate per load (%v reused vs %v fresh)", reused.HitRate, alone.HitRate)
	assert.InEpsilon(t, alone.Prompt, reused.Prompt, 0.25, "prompt tokens counted over the load only")
	big1 := readServerFigures(t, rec1.ResultFile)
	assert.Greater(t, big1.Prompt, reused.Prompt, "the larger load sent more prompt tokens")
}

type serverFigures struct{ AL, HitRate, Prompt float64 }

func readServerFigures(t *testing.T, path string) serverFigures {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var r struct {
		AL struct {
			Measured float64 `json:"measured"`
		} `json:"acceptance_length"`
		ServerMetrics struct {
			Cache struct {
				Overall *float64 `json:"overall_cache_hit_rate"`
				GPU     *float64 `json:"gpu_cache_hit_rate"`
			} `json:"cache"`
			Tokens struct {
				Prompt *float64 `json:"prompt_total"`
			} `json:"tokens"`
		} `json:"server_metrics"`
	}
	require.NoError(t, json.Unmarshal(data, &r))
	f := serverFigures{AL: r.AL.Measured}
	c := r.ServerMetrics.Cache
	switch {
	case c.Overall != nil:
		f.HitRate = *c.Overall
	case c.GPU != nil:
		f.HitRate = *c.GPU
	}
	require.NotNil(t, r.ServerMetrics.Tokens.Prompt, "%s has no server_metrics.tokens.prompt_total", path)
	f.Prompt = *r.ServerMetrics.Tokens.Prompt
	return f
}

func stageOutcome(rec *run.Record, name string) string {
	for _, s := range rec.Stages {
		if s.Name == name {
			return s.Outcome
		}
	}
	return ""
}

// cancelAfter is an output stream that cancels the command's context once
// what it printed holds mark (Ctrl-C then).
type cancelAfter struct {
	strings.Builder
	mark   string
	cancel context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	n, err := w.Builder.Write(p)
	if strings.Contains(w.String(), w.mark) {
		w.cancel()
	}
	return n, err
}

// TestDiscoverInterruptedDuringTheReport: Ctrl-C as the knee table was
// printed said "stopping", then wrote the report and exited 0. The sweep
// stops: exit 130, saying its results are complete and how to make the
// report, which is not written.
func TestDiscoverInterruptedDuringTheReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout := &cancelAfter{mark: "\nknees:\n", cancel: cancel}
	var stderr strings.Builder
	code := mainRun(ctx, &IOStreams{In: strings.NewReader(""), Out: stdout, ErrOut: &stderr}, discoverArgs(out, "--builtin-client"))
	assert.Equal(t, exitCancelled, code, stderr.String())
	assert.Contains(t, stderr.String(), "sweep discover: interrupted: the sweep's results in "+out+" are complete, but its report was not written (make it with: sweep report "+out+")\n")
	assert.NotContains(t, stdout.String(), "report: ")
	assert.NoDirExists(t, filepath.Join(out, "report"))
	assert.FileExists(t, filepath.Join(out, campaign.SummaryJSON), "the sweep itself ended")
}
