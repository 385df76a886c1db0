package simfit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
	"sweep/configs/matrix"
	"sweep/internal/pyjson"
	"sweep/internal/simproto"
	"sweep/metrics/result"
	"sweep/simengine"
	"sweep/sweep/knee"
	"sweep/sweep/run"
	"sweep/sweep/testkit/synth"
)

// qwenIdentity is the identity of a Qwen3.5 FP8 MTP agentic arm of
// framework on hw with tp and ep.
func qwenIdentity(framework, hw string, tp, ep int) result.Identity {
	var id result.Identity
	vals := map[string]any{"infmax_model_prefix": "qwen3.5", "hw": hw, "framework": framework, "precision": "fp8",
		"spec_decoding": "mtp", "scenario_type": "agentic-coding", "disagg": false, "is_multinode": false, "tp": tp, "ep": ep,
		"dp_attention": "false", "kv_offloading": "none", "pp": 1}
	for i, k := range result.IdentityKeys {
		if v, ok := vals[k]; ok { // no multi-node shape
			id[i], _ = json.Marshal(v)
		}
	}
	return id
}

// arm is a three-point arm of framework on hw, written as InferenceX's
// results are (synth.WriteDir: no model name, no request rate).
func arm(framework, hw string, tp int) *knee.Arm {
	a := &knee.Arm{Identity: qwenIdentity(framework, hw, tp, 1)}
	for _, c := range []int{4, 8, 16} {
		v, out, kv := 1000.0*float64(c), 100.0*float64(c), 0.1*float64(c)/16
		itl := pyjson.Rounded(0.02 * float64(c))
		a.Samples = append(a.Samples, knee.Sample{Conc: c, TotalTPS: &v, OutputTPS: &out, KVUsage: &kv, ITL: result.Stats{P50: &itl}})
	}
	return a
}

// TestFitResultsSkips: each arm the simulator cannot be fitted to is
// skipped with its reason (an engine it does not simulate, a runner that
// names no GPU it knows, speculative decoding without a measured
// acceptance length, as in InferenceX's own results: a step is ITL ×
// AL; a disaggregated arm without its workers' commands, as InferenceX
// writes results: their layouts and endpoints unknown), the others
// read on; a directory that cannot be read or holds no result is an
// error.
// TestSimCalibrateRecoversAPlantedArm (cmd/sweep) fits a simulated
// discovery's arm.
func TestFitResultsSkips(t *testing.T) {
	dir := t.TempDir()
	disagg := arm("sglang", "mi355x-amds", 16)
	disagg.Identity[slices.Index(result.IdentityKeys[:], "disagg")] = json.RawMessage("true")
	for _, a := range []*knee.Arm{arm("trt", "b200-nv", 8), arm("sglang", "tpu-v5", 4), arm("sglang", "mi325x-amds", 2), disagg} {
		_, err := synth.WriteDir(dir, a, false)
		require.NoError(t, err)
	}
	cal, skipped, err := FitResults(t.Context(), dir, Options{})
	require.NoError(t, err)
	assert.Empty(t, cal.Arms)
	assert.Equal(t, dir, cal.Source)
	require.Len(t, skipped, 4)
	for _, want := range []string{`engine "trt" is not simulated`, `runner "tpu-v5" names no GPU the simulator knows`, "speculative decoding (mtp) without a measured acceptance length at any point",
		"disaggregated, without the prefill and decode workers' commands beside its results"} {
		assert.True(t, slices.ContainsFunc(skipped, func(s string) bool { return strings.Contains(s, want) }), "%q among %q", want, skipped)
	}

	_, _, err = FitResults(t.Context(), t.TempDir()+"/missing", Options{})
	assert.ErrorContains(t, err, "results directory: stat ")
	empty := t.TempDir()
	_, _, err = FitResults(t.Context(), empty, Options{})
	assert.ErrorContains(t, err, empty+" holds no result to fit")
}

// TestComputedPromptTokens: the computed prompt tokens are the results'
// by-source count, else the prompt tokens less the prefix-cache hits
// (vLLM without prompt_tokens_by_source), else unknown.
func TestComputedPromptTokens(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       *float64
	}{
		{"by source", `{"server_metrics": {"tokens": {"prompt_total": 1000, "prompt_by_source": {"computed": 120}}, "cache": {"prefix_cache_hits": 800}}}`, ptr(120)},
		{"prompt less hits", `{"server_metrics": {"tokens": {"prompt_total": 1000}, "cache": {"prefix_cache_hits": 800, "external_prefix_cache_hits": 50}}}`, ptr(150)},
		{"device hits alone", `{"server_metrics": {"tokens": {"prompt_total": 1000}, "cache": {"prefix_cache_hits": 800}}}`, ptr(200)},
		{"neither", `{"server_metrics": {"tokens": {"prompt_total": 1000}}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f resultFacts
			require.NoError(t, json.Unmarshal([]byte(tc.json), &f.r))
			assert.Equal(t, tc.want, f.computed())
		})
	}
}

func ptr(v float64) *float64 { return &v }

// TestArmConfigBasis: the fit's configuration is the first engine
// command's the simulator reads, the recorded one before the recipe's
// (the arm takes its names and cache dtype, the results' pool, never the
// calibration that run had), else the one rebuilt from the results'
// identity; the basis says why a command was passed over.
func TestArmConfigBasis(t *testing.T) {
	base := func() simengine.ArmCalibration {
		return simengine.ArmCalibration{Engine: configs.SGLang, Model: "Qwen/Qwen3.5-397B-A17B-FP8", GPU: "mi325x", TP: 8, EP: 1}
	}
	argv := []string{"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-397B-A17B-FP8", "--tp", "8", "--ep-size", "8", "--kv-cache-dtype", "fp8_e4m3"}
	engine := basedCommand{run.RecordedCommand{Argv: argv, Env: map[string]string{simproto.EnvCalibration: "/gone/cal.json"}}, simengine.BasisCommand}
	unreadable := basedCommand{run.RecordedCommand{Argv: []string{"trtllm-serve", "m"}}, simengine.BasisCommand}
	planned := basedCommand{run.RecordedCommand{Argv: argv}, simengine.BasisPlanned}
	for _, tc := range []struct {
		name     string
		commands []basedCommand
		basis    string
		ep       int
		dtype    string
	}{
		{"no command", nil, simengine.BasisIdentity, 1, ""},
		{"the engine's command", []basedCommand{engine, planned}, simengine.BasisCommand, 8, "fp8_e4m3"},
		{"the recipe's command", []basedCommand{planned}, simengine.BasisPlanned, 8, "fp8_e4m3"},
		{"a command the simulator cannot read, then the recipe's", []basedCommand{unreadable, planned},
			simengine.BasisPlanned + " (" + simengine.BasisCommand + " was not read: ", 8, "fp8_e4m3"},
		{"none the simulator reads", []basedCommand{unreadable}, simengine.BasisIdentity + " (" + simengine.BasisCommand + " was not read: ", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arm := base()
			cfg, err := armConfig(&arm, tc.commands, "mtp", 3.4)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(arm.Basis, tc.basis), arm.Basis)
			assert.Equal(t, tc.ep, arm.EP)
			assert.Equal(t, tc.dtype, arm.KVCacheDType)
			assert.Equal(t, "mi325x", cfg.GPU, "the results' GPU where the command names none")
			assert.Nil(t, cfg.Calibration, "fitted against the model")
		})
	}
}

// TestPlanArms: the shipped configs' arms, keyed by their identity
// without the runner's "cluster:" prefix, with the engine command their
// recipe plans and its golden acceptance length.
func TestPlanArms(t *testing.T) {
	m, r, err := configs.Load(nil, "")
	require.NoError(t, err)
	planned, err := PlanArms(&matrix.Generator{Masters: m, Runners: r})
	require.NoError(t, err)
	arm, ok := planned[plannedKey(qwenIdentity("sglang", "mi325x-amds", 8, 8))]
	require.True(t, ok, "the MI325X Qwen3.5 TP8/EP8 arm, named without cluster:")
	assert.Equal(t, 3.39, arm.GoldenAL)
	assert.Contains(t, strings.Join(arm.Command.Argv, " "), "--model-path Qwen/Qwen3.5-397B-A17B-FP8")
	assert.Equal(t, "3.39", arm.Command.Env["SGLANG_SIMULATE_ACC_LEN"])
	for k := range planned {
		assert.NotContains(t, k, "cluster:", k)
	}
}

// TestCheckOut: the calibration is written to a new file or over a
// calibration file (fitting again to the same file); a file that is
// not one (a result), a directory or a missing directory is refused.
func TestCheckOut(t *testing.T) {
	dir := t.TempDir()
	cal := filepath.Join(dir, "cal.json")
	require.NoError(t, os.WriteFile(cal, []byte(`{"version": 1, "arms": []}`), 0o644))
	bom := filepath.Join(dir, "bom.json")
	require.NoError(t, os.WriteFile(bom, []byte("\xef\xbb\xbf"+`{"version": 1, "arms": []}`), 0o644))
	res := filepath.Join(dir, "result.json")
	require.NoError(t, os.WriteFile(res, []byte(`{"hw": "mi325x", "conc": 4}`), 0o644))
	for _, tc := range []struct{ out, err string }{
		{filepath.Join(dir, "new.json"), ""},
		{cal, ""},
		{bom, ""},
		{res, "--out " + res + " exists and is not a calibration file"},
		{dir, "--out " + dir + " is a directory: name a file (" + filepath.Join(dir, "sim-calibration.json") + ")"},
		{filepath.Join(dir, "no", "cal.json"), "the directory " + filepath.Join(dir, "no") + " does not exist"},
	} {
		err := CheckOut(tc.out)
		if tc.err == "" {
			assert.NoError(t, err, tc.out)
			continue
		}
		require.Error(t, err, tc.out)
		assert.Contains(t, err.Error(), tc.err)
	}
}

// TestPoolTokensAsANumber: a result whose pool is written as a number
// with a fraction (6172736.0, as knee reads it) is read, not refused; so
// is a mean Python wrote as NaN (read as not measured).
func TestPoolTokensAsANumber(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"conc": 4, "kv_cache_pool_tokens": 6172736.0, "request_metrics": {"latency": {"ttft": {"mean": NaN}}}}`), 0o644))
	f, err := readResultFacts(path)
	require.NoError(t, err)
	require.NotNil(t, f.r.KVCachePoolTokens)
	assert.Equal(t, 6172736.0, float64(*f.r.KVCachePoolTokens))
	assert.Nil(t, f.r.RequestMetrics.Latency.TTFT.Mean)
}

// TestPrefillMidContext: the context a computed prompt token attends to is
// weighted by the tokens each profiled request computed (Σ n·(c + n/2) /
// Σ n), not the means' (c̄ + n̄/2): a first turn computing 10,000 tokens
// after nothing and a later turn computing 1,000 after 100,000 give
// 13,682, where the means give 52,750. Warm-up and failed records and
// records without cached tokens are left out; no records give 0.
func TestPrefillMidContext(t *testing.T) {
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "r_conc4.json")
	mid, err := prefillMidContext(resultFile)
	require.NoError(t, err)
	assert.Zero(t, mid, "no records beside the result")

	rec := func(phase string, prompt, cached int, failed bool) string {
		m := fmt.Sprintf(`{"usage_prompt_tokens": {"value": %d, "unit": "tokens"}`, prompt)
		if cached >= 0 {
			m += fmt.Sprintf(`, "usage_prompt_cache_read_tokens": {"value": %d, "unit": "tokens"}`, cached)
		}
		e := "null"
		if failed {
			e = `{"code": 500, "type": "HTTPError", "message": "boom"}`
		}
		return fmt.Sprintf(`{"metadata": {"benchmark_phase": %q}, "metrics": %s}, "error": %s}`, phase, m, e)
	}
	lines := []string{
		rec("profiling", 10000, 0, false),
		rec("profiling", 101000, 100000, false),
		rec("warmup", 50000, 0, false),          // warm-up: left out
		rec("profiling", 50000, 0, true),        // failed: left out
		rec("profiling", 50000, -1, false),      // no cached tokens: left out
		rec("profiling", 100000, 100000, false), // nothing computed
	}
	art := filepath.Join(dir, "aiperf_artifacts")
	require.NoError(t, os.MkdirAll(art, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(art, "profile_export.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	mid, err = prefillMidContext(resultFile)
	require.NoError(t, err)
	want := (10000*(0+5000.0) + 1000*(100000+500.0)) / 11000
	assert.InDelta(t, want, mid, 1e-6)
	assert.InDelta(t, 13682, mid, 1)
}

// TestPointWorkersReadAttachedAddresses: a recorded worker's --port and
// --host are read in either form. Before, --port=7001 left the worker
// without a port, so no aiperf export was matched to it.
func TestPointWorkersReadAttachedAddresses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("prefill0_command.txt", "python3 -m sglang.launch_server --port=7001 --host=10.0.0.2 --disaggregation-mode prefill\n")
	write("decode0_command.txt", "python3 -m sglang.launch_server --port 7002 --host 0.0.0.0 --disaggregation-mode decode\n")
	ws, err := pointWorkers(filepath.Join(dir, "r.json"))
	require.NoError(t, err)
	require.Len(t, ws["prefill"], 1)
	require.Len(t, ws["decode"], 1)
	assert.Equal(t, [2]string{"10.0.0.2", "7001"}, [2]string{ws["prefill"][0].host, ws["prefill"][0].port})
	assert.Equal(t, [2]string{"", "7002"}, [2]string{ws["decode"][0].host, ws["decode"][0].port})
	assert.True(t, ws["prefill"][0].serves("http://10.0.0.2:7001/metrics"))
}

// TestPastDevicePool: a point of an arm with a host KV tier is past its
// device pool when its requests in flight's context, a rank's share,
// reaches 95 % of a rank's pool (4 DP ranks of 1M tokens here), whatever
// the pool's usage (a tier keeps it full).
func TestPastDevicePool(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  float64
		want string
	}{
		{"a rank's requests hold half its pool", 2 << 20, ""},
		{"just under 95 %", 0.949 * (4 << 20), ""},
		{"at 95 %", 0.95 * (4 << 20), "the requests in flight decode over 996147 tokens of context per rank, 95.0 % of the device pool's 1048576, at or past 95 %: the engine retracts requests"},
		{"past the pool", 5 << 20, "the requests in flight decode over 1310720 tokens of context per rank, 125.0 % of the device pool's 1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pastDevicePool(simengine.FitPoint{Conc: 64, CtxTokens: tc.ctx}, 1<<20, 4)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.True(t, strings.HasPrefix(got, tc.want), "got %q, want the prefix %q", got, tc.want)
		})
	}
}

// TestArmPool: an arm's calibration sets its largest concurrency's pool,
// a rank's share of what the results report (every rank's pool summed),
// and says which division it made; where its points' pools differ it
// says so with their spread (the file sets one pool for every point);
// the last point read set it, silently, before, and an arm of DP ranks
// took the sum for a rank's pool.
func TestArmPool(t *testing.T) {
	one := simengine.Config{Engine: configs.SGLang, TP: 8}
	dpa := simengine.Config{Engine: configs.SGLang, TP: 4, DP: 4, DPAttention: true}
	dep := simengine.Config{Engine: configs.VLLM, TP: 1, DP: 8}
	for _, tc := range []struct {
		name  string
		pools map[int]int
		cfg   simengine.Config
		pool  int
		from  string
	}{
		{"none reported", nil, one, 0, ""},
		{"one pool", map[int]int{4: 6172736, 16: 6172736, 32: 6172736}, one, 6172736, ""},
		{"by point", map[int]int{64: 15702016, 8: 15979520, 24: 15900672}, one, 15702016,
			"c64's, the arm's largest concurrency: its points report 15702016 (c64) to 15979520 (c8) tokens per rank, 1.7 % apart (the engine sized it per point; the file sets one pool for every point)"},
		{"DP attention, one pool", map[int]int{8: 15979520, 32: 15979520}, dpa, 3994880,
			"the results' kv_cache_pool_tokens (every rank's pool summed, as the engine logs each) divided by the arm's 4 DP-attention ranks"},
		{"DP attention, by point", map[int]int{64: 15702016, 8: 15979520, 24: 15900672}, dpa, 3925504,
			"c64's, the arm's largest concurrency: its points report 3925504 (c64) to 3994880 (c8) tokens per rank, 1.7 % apart (the engine sized it per point; the file sets one pool for every point); " +
				"the results' kv_cache_pool_tokens (every rank's pool summed, as the engine logs each) divided by the arm's 4 DP-attention ranks"},
		{"vLLM data parallel", map[int]int{128: 8 * 1048576}, dep, 1048576,
			"the results' kv_cache_pool_tokens (every rank's pool summed, as the engine logs each) divided by the arm's 8 data-parallel engines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, from := armPool(tc.pools, tc.cfg)
			assert.Equal(t, tc.pool, pool)
			assert.Equal(t, tc.from, from)
		})
	}
}

// TestUnusable: a point is left out of every fit with its reason; only a
// failed one says "failed:". A result made otherwise than the arm's
// reading (another client, trace set, aiperf version, image or
// benchmark duration) did not fail, and said "failed: made otherwise
// than the arm's reading" before.
func TestUnusable(t *testing.T) {
	otherSetup := knee.ExcludedOtherSetup + ": client aiperf 0.12.0, not the built-in load generator (most of the arm's results): results made otherwise are not one measurement"
	otherLength := knee.ExcludedOtherLength + ": ran 180 s, the point is read at 1200 s, the arm's most common duration (of a tie, the longer): results of different lengths are no replicates"
	for _, tc := range []struct {
		name string
		s    knee.Sample
		want string
	}{
		{"usable", knee.Sample{Conc: 8}, ""},
		{"superseded probe", knee.Sample{Conc: 8, Probe: true, Superseded: true, Excluded: knee.ExcludedSuperseded}, "a probe its full-length run superseded"},
		{"another setup", knee.Sample{Conc: 8, OtherMeasurement: true, Excluded: otherSetup}, otherSetup},
		{"another length", knee.Sample{Conc: 8, OtherMeasurement: true, Excluded: otherLength}, otherLength},
		{"another setup, failed too", knee.Sample{Conc: 8, OtherMeasurement: true, Excluded: otherSetup + " (the result: error rate 40 %)"},
			otherSetup + " (the result: error rate 40 %)"},
		{"failed", knee.Sample{Conc: 8, Excluded: "error rate 40 %"}, "failed: error rate 40 %"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, unusable(tc.s))
		})
	}
}
