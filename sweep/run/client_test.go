package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/metrics/result"
	"sweep/recipes"
)

// TestChooseClient: with aiperf on PATH, `sweep run --simulate` silently
// ran it against the simulated engine on a clock compressed 150x; its
// latencies came out 150 times too small in a result marked valid. A real
// aiperf runs only where it measures true time.
func TestChooseClient(t *testing.T) {
	onPath := func(name string) (string, error) {
		if name == "aiperf" || name == "/opt/aiperf" {
			return "/opt/aiperf", nil
		}
		return "", exec.ErrNotFound
	}
	none := func(string) (string, error) { return "", exec.ErrNotFound }
	tests := []struct {
		name       string
		req        ClientRequest
		wantAiperf string
		why        string
		err        string
	}{
		{name: "simulated virtual clock, aiperf on PATH: built-in, said so", req: ClientRequest{Simulate: true, TimeScale: 150, LookPath: onPath},
			why: "aiperf on PATH (/opt/aiperf) not used: the simulated engine runs on the virtual clock (--sim-clock virtual), and a real aiperf needs --sim-clock wall --time-scale 1"},
		{name: "simulated compressed wall clock, aiperf on PATH: built-in", req: ClientRequest{Simulate: true, WallClock: true, TimeScale: 150, LookPath: onPath},
			why: "a wall clock compressed 150x (--time-scale 150)"},
		{name: "simulated honest clock, aiperf on PATH: aiperf", req: ClientRequest{Simulate: true, WallClock: true, TimeScale: 1, LookPath: onPath},
			wantAiperf: "/opt/aiperf", why: "aiperf on PATH"},
		{name: "real engine, aiperf on PATH", req: ClientRequest{TimeScale: 150, LookPath: onPath}, wantAiperf: "/opt/aiperf", why: "aiperf on PATH"},
		{name: "no aiperf", req: ClientRequest{Simulate: true, LookPath: none}, why: "no aiperf on PATH"},
		{name: "--builtin-client", req: ClientRequest{Builtin: true, Aiperf: "/opt/aiperf", LookPath: onPath}, why: "--builtin-client"},
		{name: "--aiperf on a compressed clock is refused", req: ClientRequest{Aiperf: "/opt/aiperf", Simulate: true, WallClock: true, TimeScale: 150, LookPath: onPath},
			err: "--aiperf /opt/aiperf with --simulate on a wall clock compressed 150x (--time-scale 150): a real aiperf measures wall-clock time: against the simulated engine it needs --sim-clock wall --time-scale 1, or use --builtin-client"},
		{name: "--aiperf on the virtual clock is refused", req: ClientRequest{Aiperf: "/opt/aiperf", Simulate: true, TimeScale: 1, LookPath: onPath},
			err: "on the virtual clock (--sim-clock virtual)"},
		{name: "--aiperf at time scale 1 on the wall clock", req: ClientRequest{Aiperf: "/opt/aiperf", Simulate: true, WallClock: true, TimeScale: 1, LookPath: onPath},
			wantAiperf: "/opt/aiperf", why: "--aiperf /opt/aiperf"},
		{name: "--aiperf missing", req: ClientRequest{Aiperf: "/nope", LookPath: onPath}, err: "--aiperf /nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ChooseClient(tc.req)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantAiperf, c.Aiperf)
			assert.Contains(t, c.Why, tc.why)
		})
	}
}

// TestFromPlanRefusesARealAiperfOnACompressedClock: the choice is
// enforced where specs are made, so no caller (a sweep, a Slurm arm job)
// runs a real aiperf against a compressed clock.
func TestFromPlanRefusesARealAiperfOnACompressedClock(t *testing.T) {
	dir := t.TempDir()
	p := &recipes.Point{
		ResultFilename: "p",
		ResultDir:      dir,
		Engine:         recipes.Command{Argv: []string{"python3", "-m", "sglang.launch_server", "--model-path", "m"}},
		Client:         &recipes.Command{Argv: []string{"aiperf", "profile", "--model", "m", "--output-artifact-dir", dir + "/aiperf_artifacts"}},
	}
	setup := Setup{Simulate: true, Executable: "/bin/sweep", Aiperf: "/opt/aiperf", AiperfSchema: "aiperf@0.12.0", WallClock: true, TimeScale: 150}
	_, err := FromPlan(p, setup)
	assert.ErrorIs(t, err, ErrDishonestClock)
	setup.WallClock = false
	_, err = FromPlan(p, setup)
	assert.ErrorIs(t, err, ErrDishonestClock, "the virtual clock")

	setup.WallClock, setup.TimeScale, setup.ClientWhy = true, 1, "--aiperf /opt/aiperf"
	spec, err := FromPlan(p, setup)
	require.NoError(t, err)
	assert.Equal(t, "/opt/aiperf", spec.Client.Argv[0])
	assert.Equal(t, "aiperf 0.12.0", spec.ClientInfo.Name)
	assert.Equal(t, "/opt/aiperf", spec.ClientInfo.Program)
	assert.Equal(t, "--aiperf /opt/aiperf", spec.ClientInfo.Why)

	setup.Aiperf, setup.TimeScale, setup.AiperfSchema = "", 150, "aiperf@"+recipes.ForkAiperfVersion
	spec, err = FromPlan(p, setup)
	require.NoError(t, err)
	assert.Equal(t, "built-in (aiperf fork artifacts)", spec.ClientInfo.Name)
	assert.Equal(t, []string{"/bin/sweep", "loadgen"}, spec.Client.Argv[:2])
	assert.False(t, errors.Is(err, ErrDishonestClock))
}

// TestResultCarriesTheScenarioStamp: aiperf stamped a point shorter than
// 900 s submission_valid=false (--unsafe-override) and sweep's result
// dropped it. The result carries the stamp; an official point that is
// not a valid submission is invalid, a discovery point stays valid. The
// invalid one fails its validate stage naming the stamp (run.json not
// ok: sweep run exits 1 and runs it again), where it ended ok.
func TestResultCarriesTheScenarioStamp(t *testing.T) {
	for _, official := range []bool{false, true} {
		t.Run(fmt.Sprintf("official=%t", official), func(t *testing.T) {
			spec, opts := testSpec(t, "", "")
			spec.Official = official
			spec.ClientInfo = &result.Client{Name: "aiperf 0.12.0", Program: "/opt/aiperf"}
			rec, err := Run(t.Context(), spec, opts)
			require.NotEmpty(t, rec.ResultFile)
			assert.Equal(t, !official, rec.OK, "run.json's ok")
			if official {
				se, ok := errors.AsType[*StageError](err)
				require.True(t, ok, "Run's error %v", err)
				assert.Equal(t, StageValidate, se.Stage)
				assert.ErrorContains(t, err, "not a valid inferencex-agentx-mvp submission (unsafe_override)")
			} else {
				assert.NoError(t, err)
			}
			b, err := os.ReadFile(rec.ResultFile)
			require.NoError(t, err)
			var res result.Result
			require.NoError(t, json.Unmarshal(b, &res))
			require.NotNil(t, res.Submission)
			assert.Equal(t, result.Submission{Scenario: "inferencex-agentx-mvp", Valid: false, InvalidReasons: []string{"unsafe_override"}}, *res.Submission)
			require.NotNil(t, res.Client)
			assert.Equal(t, "aiperf 0.12.0", res.Client.Name)
			assert.Equal(t, "0.12.0", res.Client.AiperfVersion, "the version the artifacts say wrote them")
			assert.Equal(t, !official, res.Valid, "reasons: %v", res.InvalidReasons)
			if official {
				assert.Contains(t, res.InvalidReasons, "not a valid inferencex-agentx-mvp submission (unsafe_override): an official point must be one")
			}
			// sweep result aggregate judges the directory as run did: the
			// official point's re-aggregated result was valid.
			agg, err := Aggregate(opts.OutDir, AggregateOptions{})
			require.NoError(t, err)
			assert.Equal(t, res.Valid, agg.Result.Valid, "sweep result aggregate's validity, then sweep run's")
			assert.Equal(t, res.InvalidReasons, agg.Result.InvalidReasons, "sweep result aggregate's reasons, then sweep run's")
		})
	}
}

// TestRunRecordsTheHubCache: the run's facts had no HF_HUB_CACHE, so
// request_metrics.tokens.output_expected was {} where InferenceX fills it
// from the trace dataset in the model cache. The cache the client sees
// is recorded (its own environment first, then this machine's).
func TestRunRecordsTheHubCache(t *testing.T) {
	dir := t.TempDir()
	p := &recipes.Point{
		ResultFilename: "p",
		ResultDir:      dir,
		Engine:         recipes.Command{Argv: []string{"python3", "-m", "sglang.launch_server", "--model-path", "m"}},
		Client:         &recipes.Command{Argv: []string{"aiperf", "profile", "--model", "m", "--output-artifact-dir", dir + "/aiperf_artifacts"}},
	}
	env := map[string]string{"HF_HOME": "/data/hf", "HOME": "/home/u"}
	setup := Setup{Executable: "/bin/sweep", Environ: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	spec, err := FromPlan(p, setup)
	require.NoError(t, err)
	assert.Equal(t, "/data/hf/hub", spec.Facts.HFHubCache)

	env["HF_HUB_CACHE"] = "/mnt/hf_hub_cache"
	spec, err = FromPlan(p, setup)
	require.NoError(t, err)
	assert.Equal(t, "/mnt/hf_hub_cache", spec.Facts.HFHubCache)

	p.Client.Env = map[string]string{"HF_HUB_CACHE": "/client/cache"}
	spec, err = FromPlan(p, setup)
	require.NoError(t, err)
	assert.Equal(t, "/client/cache", spec.Facts.HFHubCache, "what the client itself is given")
}

// TestBuiltinClientNeedsItsTracesAgainstARealEngine: a launched point's
// built-in client did not find its trace set (HF_HUB_CACHE unset in the
// container), replayed the synthetic traces against the engine and the
// result was valid. Against a real engine the point now fails before the
// engine starts, naming where it looked and the fix, and the client runs
// with --require-traces; a simulated point keeps the documented fallback.
func TestBuiltinClientNeedsItsTracesAgainstARealEngine(t *testing.T) {
	cache, home := t.TempDir(), t.TempDir()
	dir := t.TempDir()
	p := &recipes.Point{
		ResultFilename: "p",
		ResultDir:      dir,
		Engine:         recipes.Command{Argv: []string{"python3", "-m", "sglang.launch_server", "--model-path", "m"}},
		Client: &recipes.Command{Argv: []string{"aiperf", "profile", "--url", "http://localhost:8000", "--model", "m", "--streaming",
			"--concurrency", "4", "--benchmark-duration", "60", "--public-dataset", "semianalysis_cc_traces_weka_062126_256k",
			"--output-artifact-dir", dir + "/aiperf_artifacts"}},
	}
	env := map[string]string{"HOME": home}
	setup := Setup{Executable: "/bin/sweep", Environ: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}

	_, err := FromPlan(p, setup)
	require.Error(t, err)
	assert.Equal(t, "built-in client against a real engine: trace set semianalysisai/cc-traces-weka-062126-256k is not in the local Hugging Face cache (looked in "+
		home+"/.cache/huggingface/hub): set HF_HUB_CACHE to the hub cache that holds it, or download it there (hf download --repo-type dataset semianalysisai/cc-traces-weka-062126-256k); "+
		"the built-in load generator never downloads", err.Error())

	sim := setup
	sim.Simulate = true
	spec, err := FromPlan(p, sim)
	require.NoError(t, err, "a simulated point replays the built-in traces")
	assert.NotContains(t, spec.Client.Argv, "--require-traces")

	env["HF_HUB_CACHE"] = cache
	require.NoError(t, os.MkdirAll(cache+"/datasets--semianalysisai--cc-traces-weka-062126-256k/snapshots/abc", 0o755))
	spec, err = FromPlan(p, setup)
	require.NoError(t, err)
	assert.Equal(t, []string{"/bin/sweep", "loadgen", "--require-traces", "--", "profile"}, spec.Client.Argv[:5])
}
