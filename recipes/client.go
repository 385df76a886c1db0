package recipes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sweep/recipes/schema"
)

// The InferenceX replay settings (benchmark_lib.sh build_replay_cmd).
const (
	agentxScenario         = "inferencex-agentx-mvp"
	officialWarmupPerLane  = 10
	fastWarmupPerLane      = 1
	fastDuration           = 1200 // agentx-fast discovery runs
	minScenarioDuration    = 900  // below it aiperf needs --unsafe-override
	defaultWarmupGrace     = 1800
	traceIdleGapCapSeconds = 300
	failedRequestThreshold = "0.10"
	numDatasetEntries      = 393
)

// defaultLoader is resolve_trace_source's choice: the 256k-capped corpus
// except for models with long native context.
func defaultLoader(modelPrefix string) string {
	for _, p := range []string{"dsv4", "glm5.2", "minimaxm3", "kimik3"} {
		if strings.HasPrefix(modelPrefix, p) {
			return Loader062126
		}
	}
	return Loader062126256k
}

// replayEnv is what build_replay_cmd exports for aiperf.
var replayEnv = map[string]string{
	"AIPERF_DATASET_WEKA_LIVE_ASSISTANT_RESPONSES": "0",
	"AIPERF_DATASET_CONFIGURATION_TIMEOUT":         "1800",
	"AIPERF_SERVICE_PROFILE_CONFIGURE_TIMEOUT":     "1800",
	"AIPERF_UI_REALTIME_METRICS_ENABLED":           "true",
}

// replaySettings are the values of one replay command.
type replaySettings struct {
	URL           string
	Duration      int
	WarmupPerLane int
	ArtifactDir   string
	ServerMetrics []string
}

// clientArgs builds the aiperf replay flags of InferenceX's §4.5 set for the
// schema's version. Where the version lacks a flag or its scenario forbids
// one, the documented deviation applies (see the package doc):
// --warmup-requests-per-lane N becomes --warmup-request-count N×conc, and
// --trace-idle-gap-cap-seconds is dropped.
func clientArgs(c *Ctx, r *Recipe, s *schema.Schema, rs replaySettings) []Arg {
	cl := r.Client
	loader := cl.Loader
	if loader == "" {
		loader = defaultLoader(c.Row.ModelPrefix)
	}
	grace := defaultWarmupGrace
	if cl.WarmupGracePeriod != nil {
		if g := cl.WarmupGracePeriod(c); g > 0 {
			grace = g
		}
	}
	args := []Arg{
		Flag("--scenario", agentxScenario),
		Flag("--url", rs.URL),
		Flag("--endpoint", "/v1/chat/completions"),
		Flag("--endpoint-type", "chat"),
		Flag("--streaming", nil),
		Flag("--model", c.Model),
		Flag("--tokenizer", c.Model),
		Flag("--concurrency", c.Conc),
		Flag("--benchmark-duration", rs.Duration),
		Flag("--stats-interval", 30),
		Flag("--random-seed", 42),
		Flag("--failed-request-threshold", failedRequestThreshold),
		Flag("--trajectory-start-min-ratio", 0.25),
		Flag("--trajectory-start-max-ratio", 0.75),
	}
	if _, ok := s.Lookup("--warmup-requests-per-lane"); ok {
		args = append(args, Flag("--warmup-requests-per-lane", rs.WarmupPerLane))
	} else {
		args = append(args, Flag("--warmup-request-count", rs.WarmupPerLane*c.Conc))
	}
	if !scenarioForbids(s, agentxScenario, "--trace-idle-gap-cap-seconds") {
		args = append(args, Flag("--trace-idle-gap-cap-seconds", traceIdleGapCapSeconds))
	}
	args = append(args,
		Flag("--warmup-grace-period", grace),
		Flag("--use-server-token-count", nil),
		Flag("--no-gpu-telemetry", nil),
		Flag("--tokenizer-trust-remote-code", nil),
		Flag("--num-dataset-entries", numDatasetEntries),
		Flag("--slice-duration", 1.0),
	)
	if len(rs.ServerMetrics) > 0 {
		args = append(args, Flag("--server-metrics", rs.ServerMetrics))
	}
	args = append(args, Flag("--output-artifact-dir", rs.ArtifactDir))
	if rs.Duration < minScenarioDuration {
		args = append(args, Flag("--unsafe-override", nil))
	}
	args = append(args, Flag("--public-dataset", loader))
	if cl.ApplyChatTemplate {
		args = append(args, Flag("--apply-chat-template", nil))
	}
	if cl.BenchmarkGracePeriod > 0 {
		args = append(args, Flag("--benchmark-grace-period", cl.BenchmarkGracePeriod))
	}
	return append(args, cl.Extra...)
}

// scenarioForbids reports whether the schema's scenario forbids flag.
func scenarioForbids(s *schema.Schema, scenario, flag string) bool {
	for _, sc := range s.Scenarios {
		if sc.Name != scenario {
			continue
		}
		return slices.ContainsFunc(sc.Locks, func(l schema.Lock) bool {
			return l.Flag == flag && l.Kind == schema.LockForbid && len(l.When) == 0
		})
	}
	return false
}

// evalCommand is InferenceX's run_lm_eval for agentic eval-only rows:
// gsm8k through lm-eval's local-chat-completions client against the
// point's public port. ${EVAL_MAX_MODEL_LEN} is filled at run time from the
// model's native context (InferenceX compute_eval_context_length, 16384
// when unknown); max_tokens assumes a context of at least 20480 tokens, as
// every model served here has.
func evalCommand(c *Ctx, resultDir string) Command {
	modelArgs := strings.Join([]string{
		"model=" + c.Model,
		"base_url=http://0.0.0.0:" + strconv.Itoa(c.Port) + "/v1/chat/completions",
		"api_key=EMPTY",
		"eos_string=</s>",
		"max_retries=5",
		"num_concurrent=" + strconv.Itoa(c.Conc),
		"timeout=1800",
		"tokenized_requests=False",
		"max_length=" + placeholderEvalMaxModelLen,
	}, ",")
	return Command{
		Argv: []string{"python3", "-m", "lm_eval", "--model", "local-chat-completions", "--apply_chat_template",
			"--tasks", "utils/evals/gsm8k.yaml", "--output_path", evalResultDir(resultDir), "--log_samples",
			"--model_args", modelArgs, "--gen_kwargs", "max_tokens=16384,temperature=0,top_p=1"},
		Placeholders: []string{placeholderEvalMaxModelLen, placeholderLMEvalPatchDir},
	}
}

// evalResultDir is where lm-eval writes results*.json and samples.
func evalResultDir(resultDir string) string {
	return strings.TrimSuffix(resultDir, "/") + "/eval_results"
}

// Run-time placeholders a point runner fills in (Command.Placeholders).
const (
	placeholderEvalMaxModelLen = "${EVAL_MAX_MODEL_LEN}"
	placeholderLMEvalPatchDir  = "${LM_EVAL_PATCH_DIR}"
)

// SubmissionProblem says why the point's client run cannot be a valid
// submission for its scenario, "" when it can: a benchmark shorter than
// the scenario's minimum runs with --unsafe-override, and aiperf stamps
// such a run submission_valid=false.
func (p *Point) SubmissionProblem() string {
	if p.Client == nil || !slices.Contains(p.Client.Argv, "--unsafe-override") {
		return ""
	}
	d := "its duration"
	if f, _ := schema.ReadArgv(p.Client.Argv, schema.ArgvOptions{}).Find("--benchmark-duration"); f.Value() != "" {
		d = f.Value() + " s"
	}
	return fmt.Sprintf("%s is below the %s scenario's %d s minimum, so aiperf runs it with --unsafe-override and stamps it submission_valid=false", d, agentxScenario, minScenarioDuration)
}
