package loadgen

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes/schema"
)

// inferencexReplay is the replay command of InferenceX's build_replay_cmd
// (inferencex.md §4.5) for a fast-mode SGLang point, as a recipe would
// run it, plus the recipe's own appended --server-metrics.
var inferencexReplay = []string{
	"profile", "--scenario", "inferencex-agentx-mvp",
	"--url", "http://localhost:8888", "--endpoint", "/v1/chat/completions", "--endpoint-type", "chat", "--streaming",
	"--model", "Qwen/Qwen3.5-FP8", "--tokenizer", "Qwen/Qwen3.5-FP8", "--concurrency", "32",
	"--benchmark-duration", "1200", "--stats-interval", "30", "--random-seed", "42",
	"--failed-request-threshold", "0.10",
	"--trajectory-start-min-ratio", "0.25", "--trajectory-start-max-ratio", "0.75",
	"--warmup-requests-per-lane", "1",
	"--trace-idle-gap-cap-seconds", "300", "--warmup-grace-period", "1800",
	"--use-server-token-count",
	"--no-gpu-telemetry", "--tokenizer-trust-remote-code",
	"--num-dataset-entries", "393", "--slice-duration", "1.0",
	"--server-metrics", "http://localhost:8888/metrics",
	"--output-artifact-dir", "/tmp/res/aiperf_artifacts",
	"--unsafe-override",
	"--public-dataset", "semianalysis_cc_traces_weka_062126_256k",
	"--server-metrics", "http://localhost:30000/metrics",
}

func TestOptionsFromFlagsInferenceX(t *testing.T) {
	a, warnings, err := ParseCommand(inferencexReplay, "")
	require.NoError(t, err)
	assert.Empty(t, warnings)
	o, err := OptionsFromFlags(a)
	require.NoError(t, err)
	want := DefaultOptions()
	want.URL = "http://localhost:8888"
	want.Endpoint = "/v1/chat/completions"
	want.Model = "Qwen/Qwen3.5-FP8"
	want.Tokenizer = "Qwen/Qwen3.5-FP8"
	want.Streaming = true
	want.ExtraInputs = map[string]any{"ignore_eos": true} // the scenario injects it
	want.ServerTokens = true
	want.Concurrency = 32
	want.BenchmarkDuration = 1200 * time.Second
	want.StatsInterval = 30 * time.Second
	want.Seed = 42
	want.FailThreshold = 0.10
	want.StartMinRatio, want.StartMaxRatio = 0.25, 0.75 // explicit values beat the scenario's 0/1
	want.WarmupPerLane = 1
	want.TrustRemoteCode = true // recorded in input_config
	want.WarmupGrace = 1800 * time.Second
	want.IdleGapCap = 300 * time.Second
	want.SystemIdleCap = 10 * time.Second // scenario default
	want.CacheBust = true                 // scenario: first_turn_prefix
	want.DatasetEntries = 393
	want.SliceDuration = time.Second
	want.ServerMetricsURLs = []string{"http://localhost:8888/metrics", "http://localhost:30000/metrics"}
	want.ArtifactDir = "/tmp/res/aiperf_artifacts"
	want.PublicDataset = "semianalysis_cc_traces_weka_062126_256k"
	want.Scenario = ScenarioAgentX
	want.UnsafeOverride = true
	assert.Equal(t, want, o)
	assert.Equal(t, []string{"http://localhost:8888/metrics", "http://localhost:30000/metrics"}, metricsEndpoints(&o), "deduplicated")
}

// TestWarmupBound: InferenceX's fork command (--warmup-requests-per-lane)
// bounds the warm-up by --warmup-grace-period; the command sweep builds for
// upstream aiperf 0.12.0 (--warmup-request-count, the same grace) waits
// for every primer, as aiperf 0.12.0's agentic warm-up barrier does.
func TestWarmupBound(t *testing.T) {
	upstream := slices.Clone(inferencexReplay)
	i := slices.Index(upstream, "--warmup-requests-per-lane")
	upstream[i], upstream[i+1] = "--warmup-request-count", "32"
	tests := []struct {
		name, ref string
		argv      []string
		want      time.Duration
	}{
		{"fork", DefaultSchema, inferencexReplay, 1800 * time.Second},
		{"aiperf 0.12.0", "aiperf@0.12.0", upstream, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, _, err := ParseCommand(tc.argv, tc.ref)
			require.NoError(t, err)
			o, err := OptionsFromFlags(f)
			require.NoError(t, err)
			assert.Equal(t, 1800*time.Second, o.WarmupGrace, "echoed in input_config either way")
			assert.Equal(t, tc.want, o.warmupBound())
		})
	}
}

// TestOptionsFromFlagsErrors: each command is rejected, by the aiperf
// schema where aiperf itself would reject it (schema names the expected
// message), and always by OptionsFromFlags, which is checked on the
// schema's best-effort parse so the load generator's own wording stays
// covered even where the schema answers first.
func TestOptionsFromFlagsErrors(t *testing.T) {
	base := []string{"profile", "--model", "m", "--concurrency", "4", "--benchmark-duration", "60"}
	weka := []string{"--public-dataset", "semianalysis_cc_traces_weka_062126"}
	tests := []struct {
		name   string
		args   []string
		schema string // substring of the schema's rejection; "" = the schema accepts
		want   string // prefix of OptionsFromFlags' error
	}{
		{"1 no model", []string{"profile", "--concurrency", "4", "--benchmark-duration", "60"}, "--model-names: a model is required", "1 validation error for AIPerfConfig: benchmark.models.items List should have at least 1 item"},
		{"2 no concurrency", []string{"profile", "--model", "m", "--benchmark-duration", "60"}, "", "--concurrency: want an integer >= 1"},
		{"3 no stop condition", []string{"profile", "--model", "m", "--concurrency", "2"}, "", "give --benchmark-duration, --request-count or --conversation-num"},
		{"4 short agentx run", slices.Concat(base, weka, []string{"--scenario", ScenarioAgentX}), "requires --benchmark-duration >= 900 s", "Scenario invariants violated (1 conflicts): benchmark_duration 60s is below"},
		{"5 unknown scenario", append(base, "--scenario", "x"), `unknown scenario "x"`, "UnknownScenarioError: Unknown scenario 'x'"},
		{"6 streaming off under agentx", slices.Concat(base, weka, []string{"--scenario", ScenarioAgentX, "--unsafe-override", "--streaming=false"}), "", "Scenario invariants violated: inferencex-agentx-mvp requires --streaming"},
		{"7 endpoint type", append(base, "--endpoint-type", "completions"), "", "--endpoint-type completions: the load generator implements chat only"},
		{"8 ratios", append(base, "--trajectory-start-min-ratio", "0.8", "--trajectory-start-max-ratio", "0.2"), "--trajectory-start-min-ratio must be <= --trajectory-start-max-ratio (0.8 > 0.2)", "--trajectory-start-min-ratio (0.8) must be <="},
		{"9 sweep", []string{"profile", "--model", "m", "--concurrency", "4,8", "--benchmark-duration", "60"}, "", "--concurrency: a comma list of 2 values is an aiperf sweep; the load generator runs one value"},
		{"10 extra inputs", append(base, "--extra-inputs", "novalue"), "", `--extra-inputs "novalue": want key:value`},
		{"11 two models", append(base, "--model", "n"), "", "--model: the load generator sends one model, got 2"},
		{"12 cache bust", append(base, "--cache-bust", "system_prefix"), "", "--cache-bust system_prefix: the load generator implements none and first_turn_prefix"},
		{"13 metrics both ways", append(base, "--server-metrics", "h:1", "--no-server-metrics"), "", "--no-server-metrics cannot be combined with --server-metrics"},
	}
	cat, err := schema.Embedded()
	require.NoError(t, err)
	s, err := cat.Resolve(DefaultSchema)
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := ParseCommand(tc.args, ""); tc.schema != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.schema)
			} else {
				require.NoError(t, err)
			}
			p, _ := s.Parse(tc.args) // usable even when rejected
			_, err := OptionsFromFlags(FlagsFromParsed(p))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got %q, want prefix %q", err, tc.want)
			_, isArgError := errors.AsType[*ArgError](err)
			assert.True(t, isArgError, "%T", err)
		})
	}
}

func TestParseCommand(t *testing.T) {
	f, warnings, err := ParseCommand([]string{"profile", "-m", "m", "--url", "a:1", "--streaming=yes", "--extra-inputs", "ignore_eos:true", "max_tokens:5",
		"--server-metrics", "h:1,h:2", "--server-metrics", "h:3", "--artifact-dir=/x"}, "")
	require.NoError(t, err)
	assert.Empty(t, warnings)
	for _, name := range []string{"model-names", "model", "url", "streaming", "extra-inputs", "server-metrics", "output-artifact-dir", "artifact-dir"} {
		assert.True(t, f.Changed(name), "given: %s", name)
	}
	assert.False(t, f.Changed("concurrency"))
	m, _ := f.Strings("model")
	assert.Equal(t, []string{"m"}, m, "alias lookup")
	s, _ := f.Strings("server-metrics")
	assert.Equal(t, []string{"h:1", "h:2", "h:3"}, s, "multi-value, comma split, accumulated")
	b, _ := f.Bool("streaming")
	assert.True(t, b)
	x, _ := f.Strings("extra-inputs")
	got, err := parseKeyValues("extra-inputs", x)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"ignore_eos": true, "max_tokens": 5.0}, got)
	d, _ := f.String("output-artifact-dir")
	assert.Equal(t, "/x", d)
}

func TestParseCommandErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"1 subcommand", []string{"--url", "x"}, `expected "profile" as the first argument`},
		{"2 unknown flag", []string{"profile", "--use-chat-template"}, "has no flag --use-chat-template (did you mean --apply-chat-template?)"},
		{"3 unimplemented aiperf flag", []string{"profile", "-m", "x", "--request-rate", "3"}, "accepts --request-rate, but the built-in load generator does not implement it"},
		{"4 two unimplemented flags", []string{"profile", "-m", "x", "--request-rate", "3", "--goodput", "ttft:10"}, "accepts --request-rate, --goodput, but"},
		{"5 repeated scalar", []string{"profile", "--concurrency", "2", "--concurrency", "3"}, "--concurrency"},
		{"6 missing value", []string{"profile", "--concurrency"}, "--concurrency: requires an argument"},
		{"7 bad bool", []string{"profile", "--streaming=off"}, `unable to convert "off" into bool`},
		{"8 stray token", []string{"profile", "--streaming", "false"}, `unused tokens ["false"]`},
		{"9 help", []string{"profile", "--help"}, "aiperf --help is not a run"},
		{"10 not aiperf", []string{"profile"}, "not an aiperf schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := ""
			if strings.HasPrefix(tc.name, "10 ") {
				ref = "vllm"
			}
			_, _, err := ParseCommand(tc.args, ref)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestSupportedFlagsInSchema: every flag the load generator lists is a
// canonical flag of both aiperf schemas, so CheckSupported can match the
// schema's names and the Long help names real flags.
func TestSupportedFlagsInSchema(t *testing.T) {
	cat, err := schema.Embedded()
	require.NoError(t, err)
	for _, ref := range []string{DefaultSchema, "aiperf@0.12.0"} {
		s, err := cat.Resolve(ref)
		require.NoError(t, err)
		for _, name := range SupportedFlags() {
			if name == "--warmup-requests-per-lane" && ref == "aiperf@0.12.0" {
				continue // the SemiAnalysis fork's flag
			}
			f, ok := s.Lookup(name)
			if assert.True(t, ok, "%s has %s", ref, name) {
				assert.Equal(t, name, f.Name, "%s: canonical name", ref)
			}
		}
	}
}

func TestHFRepoFor(t *testing.T) {
	tests := []struct{ loader, want string }{
		{"semianalysis_cc_traces_weka_062126_256k", "semianalysisai/cc-traces-weka-062126-256k"},
		{"semianalysis_cc_traces_weka_062126", "semianalysisai/cc-traces-weka-062126"},
		{"semianalysis_cc_traces_weka_with_subagents", "semianalysisai/cc-traces-weka-062126"},
		{"semianalysis_cc_traces_weka_with_subagents_060526_256k", "semianalysisai/cc-traces-weka-060526-256k"},
		{"semianalysis_cc_traces_weka", "semianalysisai/cc-traces-weka-no-subagents-051826"},
	}
	for _, tc := range tests {
		got, ok := hfRepoFor(tc.loader)
		assert.True(t, ok, tc.loader)
		assert.Equal(t, tc.want, got, tc.loader)
	}
	_, ok := hfRepoFor("sharegpt")
	assert.False(t, ok)
}

func TestResolveDatasetFromHFCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	o := DefaultOptions()
	o.PublicDataset = "semianalysis_cc_traces_weka_062126"
	var warned []string
	ds, err := resolveDataset(&o, func(s string) { warned = append(warned, s) })
	require.NoError(t, err)
	assert.Equal(t, "builtin", ds.SourceType, "not cached: fall back to the built-in set")
	assert.Equal(t, "sweep_synthetic_agentic_long", ds.Loader, "the uncapped corpus falls back to the long set")
	require.Len(t, warned, 1)
	o.PublicDataset = "semianalysis_cc_traces_weka_062126_256k"
	capped, err := resolveDataset(&o, func(string) {})
	require.NoError(t, err)
	assert.Equal(t, "sweep_synthetic_agentic", capped.Loader, "the 256k-capped corpus falls back to the capped set")
	o.PublicDataset = "semianalysis_cc_traces_weka_062126"

	snap := cache + "/datasets--semianalysisai--cc-traces-weka-062126/snapshots/abc"
	require.NoError(t, mkdirCopy(wekaSample, snap+"/traces.jsonl"))
	ds, err = resolveDataset(&o, func(s string) { t.Errorf("unexpected warning %s", s) })
	require.NoError(t, err)
	assert.Equal(t, "public_dataset", ds.SourceType)
	assert.Equal(t, "semianalysisai/cc-traces-weka-062126", ds.HFName)
	assert.Len(t, ds.Traces, 16)
}

// TestResolveDatasetRequireTraces: a real engine's client (RequireTraces)
// never replays the synthetic set for a named trace set that is not
// cached: the error names every cache it looked in and the fix; a cached
// set, --input-file and no named set are unaffected.
func TestResolveDatasetRequireTraces(t *testing.T) {
	cache, home := t.TempDir(), t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	t.Setenv("HOME", home)
	o := DefaultOptions()
	o.RequireTraces = true
	for _, loader := range []string{"semianalysis_cc_traces_weka_062126", "semianalysis_cc_traces_weka_062126_256k"} {
		o.PublicDataset = loader
		_, err := resolveDataset(&o, func(s string) { t.Errorf("unexpected warning %s", s) })
		missing, ok := errors.AsType[*TraceSetError](err)
		require.True(t, ok, "%s: got %v, want a *TraceSetError", loader, err)
		assert.Equal(t, []string{cache, home + "/.cache/huggingface/hub"}, missing.Dirs)
		want := "trace set " + missing.Repo + " is not in the local Hugging Face cache (looked in " + cache + ", " + home + "/.cache/huggingface/hub): " +
			"set HF_HUB_CACHE to the hub cache that holds it, or download it there (hf download --repo-type dataset " + missing.Repo + ")"
		assert.ErrorContains(t, err, want)
	}

	o.PublicDataset = "semianalysis_cc_traces_weka_062126"
	snap := cache + "/datasets--semianalysisai--cc-traces-weka-062126/snapshots/abc"
	require.NoError(t, mkdirCopy(wekaSample, snap+"/traces.jsonl"))
	ds, err := resolveDataset(&o, func(s string) { t.Errorf("unexpected warning %s", s) })
	require.NoError(t, err)
	assert.Equal(t, "public_dataset", ds.SourceType)

	o.PublicDataset = ""
	ds, err = resolveDataset(&o, func(s string) { t.Errorf("unexpected warning %s", s) })
	require.NoError(t, err)
	assert.Equal(t, "builtin", ds.SourceType, "no trace set named: the built-in set, as asked")
}
