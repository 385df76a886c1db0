package schema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// problem is the part of an *Error a table row asserts.
type problem struct {
	kind Kind
	flag string // Spelling when set, else Flag
}

func problemsOf(err error) []problem {
	var out []problem
	for _, e := range Problems(err) {
		f := e.Spelling
		if f == "" {
			f = e.Flag
		}
		out = append(out, problem{e.Kind, f})
	}
	return out
}

func warningsOf(p *Parsed) []problem {
	var out []problem
	for _, e := range p.Warnings {
		f := e.Spelling
		if f == "" {
			f = e.Flag
		}
		out = append(out, problem{e.Kind, f})
	}
	return out
}

func profile(args ...string) []string { return append([]string{"profile", "--model", "m"}, args...) }

// agentx is the common part of a valid inferencex-agentx-mvp command.
// search is a complete --search-space command with the given dimensions.
func search(space ...string) []string {
	var args []string
	for _, d := range space {
		args = append(args, "--search-space", d)
	}
	return profile(append(args, "--search-metric", "output_token_throughput", "--search-direction", "maximize", "--search-max-iterations", "20")...)
}

func agentx(args ...string) []string {
	return profile(append([]string{"--scenario", "inferencex-agentx-mvp", "--streaming", "--concurrency", "8",
		"--public-dataset", "semianalysis_cc_traces_weka_062126_256k"}, args...)...)
}

// TestParseAiperf checks aiperf 0.12.0's parser and config rules, one real flag per row.
// Every row's verdict is the one aiperf 0.12.0 gives (see aiperf@0.12.0.yaml for sources).
func TestParseAiperf(t *testing.T) {
	s := MustLoad("aiperf", "0.12.0")
	tests := []struct {
		name     string
		argv     []string
		want     []problem // nil: valid
		warnings []problem
	}{
		// Names, spellings and values.
		{name: "minimal", argv: profile()},
		{name: "no subcommand", argv: []string{"--model", "m"}, want: []problem{{BadCommand, ""}}},
		{name: "unknown flag", argv: profile("--use-chat-template"), want: []problem{{UnknownFlag, "--use-chat-template"}}},
		{name: "no --no-streaming", argv: profile("--no-streaming"), want: []problem{{UnknownFlag, "--no-streaming"}}},
		{name: "flags are case sensitive", argv: profile("--ISL", "100"), want: []problem{{UnknownFlag, "--ISL"}}},
		{name: "bool attached false", argv: profile("--streaming=false")},
		{name: "bool attached yes", argv: profile("--streaming=YES")},
		{name: "bool attached off", argv: profile("--streaming=off"), want: []problem{{BadValue, "--streaming"}}},
		{name: "bool separate value is stray", argv: profile("--streaming", "false"), want: []problem{{StrayToken, ""}}},
		{name: "declared negative", argv: profile("--no-auto-plot")},
		{name: "accuracy negative form", argv: profile("--accuracy-benchmark", "mmlu", "--accuracy-no-enable-cot")},
		{name: "negative and positive repeat", argv: profile("--auto-plot", "--no-auto-plot"), want: []problem{{Repeated, "--no-auto-plot"}}},
		{name: "no-gpu-telemetry is its own flag", argv: profile("--no-gpu-telemetry")},
		{name: "no-gpu-telemetry with gpu-telemetry", argv: profile("--no-gpu-telemetry", "--gpu-telemetry", "dcgm"), want: []problem{{RuleBroken, "--no-gpu-telemetry"}}},
		{name: "no-gpu-telemetry given false with gpu-telemetry", argv: profile("--no-gpu-telemetry=false", "--gpu-telemetry", "dcgm"), want: []problem{{RuleBroken, "--no-gpu-telemetry"}}},
		{name: "no-server-metrics standalone", argv: profile("--no-server-metrics")},
		{name: "repeated scalar", argv: profile("--concurrency", "10", "--concurrency", "20"), want: []problem{{Repeated, "--concurrency"}}},
		{name: "repeated under an alias", argv: profile("--request-count", "5", "--num-requests", "6"), want: []problem{{Repeated, "--num-requests"}}},
		{name: "repeated bool", argv: profile("--streaming", "--streaming"), want: []problem{{Repeated, "--streaming"}}},
		{name: "list accumulates", argv: []string{"profile", "--model", "a", "--model", "b,c"}},
		{name: "multi-value list", argv: profile("--url", "http://a:8000", "http://b:8000", "--server-metrics", "http://a:8000/metrics", "http://b:8000/metrics")},
		{name: "comma sweep", argv: profile("--concurrency", "10,20,40")},
		{name: "float sweep", argv: profile("--request-rate", "1.5,3")},
		{name: "space separated sweep", argv: profile("--concurrency", "10", "20"), want: []problem{{StrayToken, ""}}},
		{name: "int type error", argv: profile("--concurrency", "abc"), want: []problem{{BadValue, "--concurrency"}}},
		{name: "float for int", argv: profile("--num-dataset-entries", "1.5"), want: []problem{{BadValue, "--num-dataset-entries"}}},
		{name: "float inf", argv: profile("--benchmark-duration", "1800", "--benchmark-grace-period", "inf")},
		{name: "attached value", argv: profile("--concurrency=8")},
		{name: "missing value", argv: profile("--concurrency"), want: []problem{{MissingValue, "--concurrency"}}},
		{name: "value looks like a flag", argv: profile("--tokenizer", "--streaming"), want: []problem{{MissingValue, "--tokenizer"}}},
		{name: "enum normalisation", argv: profile("--endpoint-type", "CHAT", "--model-selection-strategy", "round-robin", "--public-dataset", "ShareGPT")},
		{name: "bad choice", argv: profile("--endpoint-type", "chat-completions"), want: []problem{{BadChoice, "--endpoint-type"}}},
		{name: "literal exact match", argv: profile("--wait-for-model-mode", "Both"), want: []problem{{BadChoice, "--wait-for-model-mode"}}},
		{name: "literal exact ok", argv: profile("--wait-for-model-mode", "both", "--wait-for-model-timeout", "600")},
		{name: "list of enum", argv: profile("--server-metrics-formats", "json", "parquet")},
		{name: "list of enum bad", argv: profile("--server-metrics-formats", "json", "xml"), want: []problem{{BadChoice, "--server-metrics-formats"}}},
		{name: "bound gt", argv: profile("--request-timeout-seconds", "0"), want: []problem{{OutOfBounds, "--request-timeout-seconds"}}},
		{name: "bound le", argv: profile("--audio-num-channels", "3"), want: []problem{{OutOfBounds, "--audio-num-channels"}}},
		{name: "bound ratio", argv: profile("--failed-request-threshold", "1.5"), want: []problem{{OutOfBounds, "--failed-request-threshold"}}},
		{name: "help", argv: profile("--bogus", "--help")},

		// Cross-flag rules.
		{name: "model required", argv: []string{"profile", "--concurrency", "4"}, want: []problem{{RuleBroken, "--model-names"}}},
		{name: "model from config file", argv: []string{"profile", "--config", "bench.yaml"}},
		{name: "offset needs fixed schedule", argv: profile("--fixed-schedule-start-offset", "100"), want: []problem{{RuleBroken, "--fixed-schedule-start-offset"}}},
		{name: "offset with fixed schedule", argv: profile("--fixed-schedule", "--input-file", "t.jsonl", "--fixed-schedule-end-offset", "100")},
		{name: "fixed schedule without timing data", argv: profile("--fixed-schedule"), want: []problem{{RuleBroken, "--fixed-schedule"}}},
		{name: "fixed schedule given false needs no trace", argv: profile("--fixed-schedule=false")},
		{name: "auto offset needs fixed schedule", argv: profile("--fixed-schedule-auto-offset"), want: []problem{{RuleBroken, "--fixed-schedule-auto-offset"}}},
		{name: "search flag needs space", argv: profile("--search-metric", "output_token_throughput"), want: []problem{{RuleBroken, "--search-metric"}}},
		{name: "search space needs companions", argv: profile("--search-space", "concurrency:1,64:int"), want: []problem{{RuleBroken, "--search-space"}}},
		{name: "search complete", argv: search("concurrency:1,64:int")},
		{name: "search space default kind", argv: search("concurrency:1,64")},
		{name: "search space two dimensions", argv: search("phases.profiling.concurrency:1,1000:int", "rate:0.5,20:real")},
		{name: "search space bounds as Python floats", argv: search("concurrency: 1, 6.4e1")},
		{name: "search space without a comma", argv: search("concurrency:1:64"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space without a colon", argv: search("concurrency=1,64"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space four parts", argv: search("concurrency:1,64:int:log"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space bad kind", argv: search("concurrency:1,64:float"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space comma only in kind", argv: search("concurrency:1:int,real"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space bound not a number", argv: search("concurrency:one,64"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space three bounds", argv: search("concurrency:1,2,3"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space hi not above lo", argv: search("concurrency:64,64:int"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space infinite bound", argv: search("concurrency:1,inf"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space nan bound", argv: search("concurrency:nan,64"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space empty path", argv: search(":1,64"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space doubled dot", argv: search("phases..concurrency:1,64"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space benchmark prefix", argv: search("benchmark.phases.profiling.concurrency:1,64"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space sweep path", argv: search("sweep.max_iterations:1,64"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search space one bad of two", argv: search("concurrency:1,64:int", "rate:20,1"), want: []problem{{BadValue, "--search-space"}}},
		{name: "search tunable with recipe", argv: profile("--search-recipe", "concurrency-ramp", "--search-max-iterations", "20")},
		{name: "search recipe normalised", argv: profile("--search-recipe", "Max_Throughput_TTFT_SLA")},
		{name: "unknown search recipe", argv: profile("--search-recipe", "knee", "--search-max-iterations", "20"), want: []problem{{BadChoice, "--search-recipe"}}},
		{name: "wait-for-model mode without a timeout", argv: profile("--wait-for-model-mode", "both"), want: []problem{{RuleBroken, "--wait-for-model-mode"}}},
		{name: "wait-for-model interval without a timeout", argv: profile("--wait-for-model-interval", "1"), want: []problem{{RuleBroken, "--wait-for-model-interval"}}},
		{name: "wait-for-model both without a timeout", argv: profile("--wait-for-model-interval", "1", "--wait-for-model-mode", "models"), want: []problem{{RuleBroken, "--wait-for-model-mode"}}},
		{name: "wait-for-model timeout 0 given", argv: profile("--wait-for-model-timeout", "0", "--wait-for-model-mode", "models"), want: []problem{{RuleBroken, "--wait-for-model-mode"}}},
		{name: "wait-for-model defaults without a timeout", argv: profile("--wait-for-model-mode", "inference", "--wait-for-model-interval", "5.0")},
		{name: "wait-for-model with a timeout", argv: profile("--wait-for-model-timeout", "600", "--wait-for-model-mode", "models", "--wait-for-model-interval", "2")},
		{name: "image sampling with the default noise source", argv: profile("--image-source-sampling", "shuffle-cycle"), want: []problem{{RuleBroken, "--image-source-sampling"}}},
		{name: "image sampling with noise given", argv: profile("--image-source", "Noise", "--image-source-sampling", "sequential_cycle"), want: []problem{{RuleBroken, "--image-source-sampling"}}},
		{name: "image sampling default with noise", argv: profile("--image-source-sampling", "random_with_replacement")},
		{name: "image sampling with assets", argv: profile("--image-source", "assets", "--image-source-sampling", "shuffle-cycle")},
		{name: "image sampling with a directory", argv: profile("--image-source", "./images", "--image-source-sampling", "sequential-cycle")},
		{name: "image sampling with a public dataset", argv: profile("--public-dataset", "sharegpt", "--image-source-sampling", "shuffle-cycle"), want: []problem{{RuleBroken, "--image-source-sampling"}}},
		{name: "accuracy needs benchmark", argv: profile("--accuracy-n-shots", "5"), want: []problem{{RuleBroken, "--accuracy-n-shots"}}},
		{name: "accuracy bool false still needs benchmark", argv: profile("--accuracy-verbose=false"), want: []problem{{RuleBroken, "--accuracy-verbose"}}},
		{name: "accuracy with benchmark", argv: profile("--accuracy-benchmark", "gsm8k", "--accuracy-n-shots", "5")},
		{name: "warmup grace needs trigger", argv: profile("--warmup-grace-period", "60"), want: []problem{{RuleBroken, "--warmup-grace-period"}}},
		{name: "warmup grace needs duration", argv: profile("--warmup-request-count", "10", "--warmup-grace-period", "60"), want: []problem{{RuleBroken, "--warmup-grace-period"}}},
		{name: "warmup grace with duration", argv: profile("--warmup-duration", "30", "--warmup-grace-period", "60")},
		{name: "prefill above concurrency", argv: profile("--streaming", "--concurrency", "4", "--prefill-concurrency", "8"), want: []problem{{RuleBroken, "--prefill-concurrency"}}},
		{name: "prefill within concurrency", argv: profile("--streaming", "--concurrency", "8", "--prefill-concurrency", "4")},
		{name: "prefill above the default concurrency", argv: profile("--streaming", "--prefill-concurrency", "4"), want: []problem{{RuleBroken, "--prefill-concurrency"}}},
		{name: "prefill 1 within the default concurrency", argv: profile("--streaming", "--prefill-concurrency", "1")},
		{name: "prefill under a rate has no concurrency cap", argv: profile("--streaming", "--request-rate", "5", "--prefill-concurrency", "4")},
		{name: "prefill needs streaming", argv: profile("--concurrency", "8", "--prefill-concurrency", "4"), want: []problem{{RuleBroken, "--prefill-concurrency"}}},
		{name: "prefill needs streaming given false", argv: profile("--streaming=false", "--concurrency", "8", "--prefill-concurrency", "4"), want: []problem{{RuleBroken, "--prefill-concurrency"}}},
		{name: "warm-up prefill needs streaming", argv: profile("--concurrency", "8", "--warmup-request-count", "4", "--warmup-prefill-concurrency", "2"), want: []problem{{RuleBroken, "--warmup-prefill-concurrency"}}},
		{name: "warm-up prefill without a warm-up phase", argv: profile("--concurrency", "8", "--warmup-prefill-concurrency", "2")},
		{name: "warm-up prefill with streaming", argv: profile("--streaming", "--concurrency", "8", "--warmup-request-count", "4", "--warmup-prefill-concurrency", "2")},
		{name: "max context length on synthetic data", argv: profile("--max-context-length", "128000"), want: []problem{{RuleBroken, "--max-context-length"}}},
		{name: "max context length with a non-weka trace format", argv: profile("--input-file", "t.jsonl", "--custom-dataset-type", "mooncake_trace", "--max-context-length", "128000"), want: []problem{{RuleBroken, "--max-context-length"}}},
		{name: "max context length with a non-weka public dataset", argv: profile("--public-dataset", "sharegpt", "--max-context-length", "128000"), want: []problem{{RuleBroken, "--max-context-length"}}},
		{name: "max context length with a weka public dataset", argv: profile("--public-dataset", "semianalysis_cc_traces_weka_062126_256k", "--max-context-length", "128000")},
		{name: "max context length with a weka trace file", argv: profile("--input-file", "t.jsonl", "--custom-dataset-type", "weka_trace", "--max-context-length", "128000")},
		{name: "max context length with an auto-detected trace file", argv: profile("--input-file", "t.jsonl", "--max-context-length", "128000")},
		{name: "image height stddev without its mean", argv: profile("--image-height-stddev", "3"), want: []problem{{RuleBroken, "--image-height-stddev"}}},
		{name: "image height stddev 0 without its mean", argv: profile("--image-height-stddev", "0"), want: []problem{{RuleBroken, "--image-height-stddev"}}},
		{name: "image height stddev with the width mean only", argv: profile("--image-width-mean", "512", "--image-height-stddev", "3"), want: []problem{{RuleBroken, "--image-height-stddev"}}},
		{name: "image height stddev with its mean", argv: profile("--image-height-mean", "512", "--image-height-stddev", "3")},
		{name: "image height stddev with a public dataset", argv: profile("--public-dataset", "sharegpt", "--image-height-stddev", "3")},
		{name: "image height stddev with a trace file", argv: profile("--input-file", "t.jsonl", "--image-height-stddev", "3")},
		{name: "image width stddev without its mean", argv: profile("--image-width-stddev", "3"), want: []problem{{RuleBroken, "--image-width-stddev"}}},
		{name: "audio length stddev without its mean", argv: profile("--audio-length-stddev", "2"), want: []problem{{RuleBroken, "--audio-length-stddev"}}},
		{name: "rankings passages stddev without its mean", argv: profile("--rankings-passages-stddev", "2"), want: []problem{{RuleBroken, "--rankings-passages-stddev"}}},
		{name: "rankings query tokens stddev with its mean", argv: profile("--rankings-query-prompt-token-mean", "64", "--rankings-query-prompt-token-stddev", "2")},
		{name: "osl stddev without its mean", argv: profile("--osl-stddev", "8"), want: []problem{{RuleBroken, "--osl-stddev"}}},
		{name: "osl stddev with a trace file", argv: profile("--input-file", "t.jsonl", "--osl-stddev", "8")},
		{name: "isl stddev without its mean (a text endpoint's mean defaults)", argv: profile("--isl-stddev", "8")},
		{name: "num users needs user-centric rate", argv: profile("--num-users", "4"), want: []problem{{RuleBroken, "--num-users"}}},
		{name: "smoothness with a rate picks gamma", argv: profile("--request-rate", "2", "--arrival-smoothness", "1.5")},
		{name: "smoothness needs gamma", argv: profile("--request-rate", "2", "--arrival-pattern", "poisson", "--arrival-smoothness", "1.5"), want: []problem{{RuleBroken, "--arrival-smoothness"}}},
		{name: "smoothness needs a rate", argv: profile("--arrival-smoothness", "1.5"), want: []problem{{RuleBroken, "--arrival-smoothness"}}},
		{name: "smoothness under a fixed schedule", argv: profile("--fixed-schedule", "--input-file", "t.jsonl", "--arrival-smoothness", "1.5"), want: []problem{{RuleBroken, "--arrival-smoothness"}}},
		{name: "smoothness under a user-centric rate", argv: profile("--request-rate", "2", "--user-centric-rate", "2", "--num-users", "4", "--session-turns-mean", "3", "--arrival-smoothness", "1.5"), want: []problem{{RuleBroken, "--arrival-smoothness"}}},
		{name: "smoothness with gamma", argv: profile("--request-rate", "2", "--arrival-pattern", "gamma", "--arrival-smoothness", "1.5")},
		{name: "rate vs rate series", argv: profile("--request-rate", "2", "--request-rate-series", "rates.csv"), want: []problem{{RuleBroken, "--request-rate-series"}}},
		{name: "cooldown needs trials", argv: profile("--profile-run-cooldown-seconds", "5"), want: []problem{{RuleBroken, "--profile-run-cooldown-seconds"}}},
		{name: "cooldown with trials", argv: profile("--num-profile-runs", "3", "--profile-run-cooldown-seconds", "5")},
		{name: "grace needs duration", argv: profile("--benchmark-grace-period", "10"), want: []problem{{RuleBroken, "--benchmark-grace-period"}}},
		{name: "grace needs duration under a scenario", argv: agentx("--benchmark-grace-period", "10"), want: []problem{{RuleBroken, "--benchmark-grace-period"}}},
		{name: "dataset kinds exclusive", argv: profile("--public-dataset", "sharegpt", "--custom-dataset-type", "mooncake_trace", "--input-file", "t.jsonl"), want: []problem{{RuleBroken, "--public-dataset"}}},
		{name: "optuna acquisition needs botorch", argv: profile("--optuna-acquisition", "qlognei", "--optuna-sampler", "tpe", "--search-space", "c:1,2", "--search-metric", "x", "--search-direction", "maximize", "--search-max-iterations", "5"), want: []problem{{RuleBroken, "--optuna-acquisition"}}},

		{name: "synthetic-only flag with a public dataset", argv: profile("--public-dataset", "sharegpt", "--isl", "512"), want: []problem{{RuleBroken, "--isl"}}},
		{name: "synthetic-only flag with synthetic data", argv: profile("--isl", "512", "--osl", "128")},
		{name: "osl is allowed with a trace", argv: profile("--public-dataset", "sharegpt", "--osl", "128")},
		{name: "baseten-only flag without a file", argv: profile("--no-open-loop-replay"), want: []problem{{RuleBroken, "--no-open-loop-replay"}}},
		{name: "baseten-only flag with a file", argv: profile("--input-file", "trace.parquet", "--custom-dataset-type", "baseten_trace", "--replay-speedup", "2")},

		{name: "sweep with fixed schedule", argv: profile("--fixed-schedule", "--input-file", "t.jsonl", "--concurrency", "1,2"), want: []problem{{RuleBroken, "--concurrency"}}},
		{name: "user-centric needs turns", argv: profile("--user-centric-rate", "2", "--num-users", "4"), want: []problem{{RuleBroken, "--user-centric-rate"}}},
		{name: "user-centric with turns", argv: profile("--user-centric-rate", "2", "--num-users", "4", "--session-turns-mean", "3")},

		// Scenario inferencex-agentx-mvp.
		{name: "scenario valid", argv: agentx("--benchmark-duration", "1800", "--cache-bust", "first_turn_prefix", "--system-idle-gap-cap-seconds", "10", "--extra-inputs", "ignore_eos:true")},
		{name: "scenario fills duration", argv: agentx()},
		{name: "unknown scenario", argv: profile("--scenario", "agentx", "--public-dataset", "sharegpt"), want: []problem{{ScenarioLock, "--scenario"}}},
		{name: "scenario trace idle gap cap", argv: agentx("--trace-idle-gap-cap-seconds", "300"), want: []problem{{ScenarioLock, "--trace-idle-gap-cap-seconds"}}},
		{name: "scenario short duration", argv: agentx("--benchmark-duration", "600"), want: []problem{{ScenarioLock, "--benchmark-duration"}}},
		{name: "scenario request rate", argv: agentx("--request-rate", "5"), want: []problem{{ScenarioLock, "--request-rate"}}},
		{name: "scenario streaming off", argv: profile("--scenario", "inferencex-agentx-mvp", "--streaming=false", "--public-dataset", "weka_hf", "--hf-weka-dataset", "semianalysisai/cc-traces-weka-062126"), want: []problem{{ScenarioLock, "--streaming"}}},
		{name: "scenario cache bust", argv: agentx("--cache-bust", "none"), want: []problem{{ScenarioLock, "--cache-bust"}}},
		{name: "scenario ignore_eos false", argv: agentx("--extra-inputs", "ignore_eos:false"), want: []problem{{ScenarioLock, "--extra-inputs"}}},
		{name: "scenario system idle cap", argv: agentx("--system-idle-gap-cap-seconds", "5"), want: []problem{{ScenarioLock, "--system-idle-gap-cap-seconds"}}},
		{name: "scenario wrong loader", argv: profile("--scenario", "inferencex-agentx-mvp", "--public-dataset", "sharegpt"), want: []problem{{ScenarioLock, "--public-dataset"}}},
		{name: "scenario weka_hf needs pinned repo", argv: profile("--scenario", "inferencex-agentx-mvp", "--public-dataset", "weka_hf"), want: []problem{{ScenarioLock, "--public-dataset"}}},
		{name: "scenario synthetic is hard", argv: profile("--scenario", "inferencex-agentx-mvp", "--unsafe-override"), want: []problem{{ScenarioLock, "--public-dataset"}}},
		{name: "scenario concurrency given twice", argv: agentx("--concurrency", "8,16"), want: []problem{{Repeated, "--concurrency"}}},
		{name: "scenario warmup grace without trigger", argv: agentx("--warmup-grace-period", "1800")},
		{name: "override downgrades locks", argv: agentx("--unsafe-override", "--benchmark-duration", "600", "--trace-idle-gap-cap-seconds", "300", "--request-rate", "5"),
			warnings: []problem{{ScenarioLock, "--request-rate"}, {ScenarioLock, "--benchmark-duration"}, {ScenarioLock, "--trace-idle-gap-cap-seconds"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.Parse(tc.argv)
			assert.Equal(t, tc.want, problemsOf(err), "argv %q: %v", tc.argv, err)
			assert.Equal(t, tc.warnings, warningsOf(p), "warnings for %q", tc.argv)
		})
	}
}

// A sweep under a scenario is rejected (config.py _reject_scenario_with_sweep); the override
// downgrades it to a warning like every other lock.
func TestParseAiperfScenarioSweep(t *testing.T) {
	s := MustLoad("aiperf", "")
	argv := profile("--scenario", "inferencex-agentx-mvp", "--streaming", "--public-dataset", "semianalysis_cc_traces_weka_062126", "--concurrency", "8,16")
	p, err := s.Parse(argv)
	assert.Equal(t, []problem{{ScenarioLock, "--concurrency"}}, problemsOf(err))
	assert.Equal(t, []int64{8, 16}, p.Ints("--concurrency"))
	assert.Equal(t, []string{"--concurrency"}, p.Sweeps())

	_, err = s.Parse(append(argv[:len(argv)-2], "--concurrency", "8", "--benchmark-duration", "1800,3600"))
	assert.Equal(t, []problem{{ScenarioLock, "--benchmark-duration"}}, problemsOf(err), "any swept flag")

	p, err = s.Parse(append(argv, "--unsafe-override"))
	assert.NoError(t, err)
	assert.Equal(t, []problem{{ScenarioLock, "--concurrency"}}, warningsOf(p))
}

// The InferenceX agentic aiperf command (inferencex.md §4.5, build_replay_cmd, with the
// values a qwen3.5 fp8 MI325X point uses).
func inferencexReplay(extra ...string) []string {
	argv := []string{"/tmp/inferencex-agentic-1/venv/bin/aiperf", "profile", "--scenario", "inferencex-agentx-mvp",
		"--url", "http://localhost:8888", "--endpoint", "/v1/chat/completions", "--endpoint-type", "chat", "--streaming",
		"--model", "Qwen/Qwen3.5-397B-A17B-FP8", "--tokenizer", "Qwen/Qwen3.5-397B-A17B-FP8", "--concurrency", "32",
		"--benchmark-duration", "3600", "--stats-interval", "30", "--random-seed", "42",
		"--failed-request-threshold", "0.10",
		"--trajectory-start-min-ratio", "0.25", "--trajectory-start-max-ratio", "0.75",
		"--warmup-requests-per-lane", "10",
		"--trace-idle-gap-cap-seconds", "300", "--warmup-grace-period", "1800",
		"--use-server-token-count",
		"--no-gpu-telemetry", "--tokenizer-trust-remote-code",
		"--num-dataset-entries", "393", "--slice-duration", "1.0",
		"--server-metrics", "http://localhost:8888/metrics",
		"--output-artifact-dir", "/results/qwen3.5_tp8_conc32/aiperf_artifacts",
		"--public-dataset", "semianalysis_cc_traces_weka_062126_256k"}
	return append(argv, extra...)
}

func TestInferenceXReplayCommand(t *testing.T) {
	fork := MustLoad("aiperf", "sa-754356e9")
	upstream := MustLoad("aiperf", "0.12.0")

	t.Run("validates against the pinned fork", func(t *testing.T) {
		for _, extra := range [][]string{
			{"--apply-chat-template"},
			{"--extra-inputs", "ignore_eos:true", "--use-dynamo-conv-aware-routing", "--dynamo-session-timeout-seconds", "3600"},
		} {
			p, err := fork.Parse(fork.TrimProgram(inferencexReplay(extra...)))
			require.NoError(t, err)
			n, _ := p.Int("--warmup-requests-per-lane")
			assert.Equal(t, int64(10), n)
		}
	})
	t.Run("fast mode needs the override", func(t *testing.T) {
		argv := inferencexReplay()
		i := slices.Index(argv, "--benchmark-duration")
		argv[i+1] = "600"
		_, err := fork.Parse(fork.TrimProgram(argv))
		assert.Equal(t, []problem{{ScenarioLock, "--benchmark-duration"}}, problemsOf(err))
		_, err = fork.Parse(fork.TrimProgram(append(argv, "--unsafe-override")))
		assert.NoError(t, err)
	})
	t.Run("upstream 0.12.0 rejects it for the reasons its parser gives", func(t *testing.T) {
		_, err := upstream.Parse(upstream.TrimProgram(inferencexReplay("--apply-chat-template")))
		errs := Problems(err)
		require.Len(t, errs, 2, "%v", err)
		assert.Equal(t, UnknownFlag, errs[0].Kind)
		assert.Equal(t, "--warmup-requests-per-lane", errs[0].Spelling)
		assert.Equal(t, "--warmup-request-rate", errs[0].Suggestion)
		assert.Equal(t, "aiperf 0.12.0 has no flag --warmup-requests-per-lane (did you mean --warmup-request-rate?)", errs[0].Error())
		assert.Equal(t, ScenarioLock, errs[1].Kind)
		assert.Equal(t, "--trace-idle-gap-cap-seconds", errs[1].Flag)
		assert.Contains(t, errs[1].Msg, "forbids timeline compression")
		assert.True(t, errs[1].Bypassable)
	})
}

// recipeSample is one recorded InferenceX recipe run (testdata/schema/recipe-argv-sample.json).
type recipeSample struct {
	ConfigKey  string         `json:"config_key"`
	Row        map[string]any `json:"row"`
	ServerArgv []string       `json:"server_argv"`
	ClientArgv []string       `json:"client_argv"`
}

// Every recorded InferenceX recipe command parses with the schemas of the versions it ran
// against: client argv with the pinned fork, server argv with SGLang v0.5.16 / vLLM.
func TestRecordedRecipeCommands(t *testing.T) {
	var cases []recipeSample
	require.NoError(t, json.Unmarshal([]byte(readTestdata(t, "schema", "recipe-argv-sample.json")), &cases))
	require.NotEmpty(t, cases)
	fork := MustLoad("aiperf", "sa-754356e9")
	for i, c := range cases {
		t.Run(c.ConfigKey, func(t *testing.T) {
			if c.ClientArgv != nil {
				_, err := fork.Parse(fork.TrimProgram(c.ClientArgv))
				assert.NoError(t, err, "case %d client argv", i)
			}
			if c.ServerArgv == nil {
				return
			}
			engine := MustLoad(c.Row["framework"].(string), "")
			if engine.Tool == "sglang" {
				engine = MustLoad("sglang", "v0.5.16")
			}
			p, err := engine.Parse(engine.TrimProgram(c.ServerArgv))
			assert.NoError(t, err, "case %d server argv %q", i, c.ServerArgv)
			for _, w := range p.Warnings {
				assert.NotEqual(t, Repeated, w.Kind, "case %d: %v", i, w)
			}
		})
	}
}

func TestParseSGLang(t *testing.T) {
	s := MustLoad("sglang", "v0.5.16")
	base := []string{"--model-path", "Qwen/Qwen3.5-397B-A17B-FP8"}
	tests := []struct {
		name     string
		argv     []string
		want     []problem
		warnings []problem
		norm     string // expected normalised argv, when set
	}{
		{name: "store_true bare", argv: append(base, "--enable-metrics"), norm: "--model-path Qwen/Qwen3.5-397B-A17B-FP8 --enable-metrics"},
		{name: "store_true with value", argv: append(base, "--enable-metrics=true"), want: []problem{{BadValue, "--enable-metrics"}}},
		{name: "no negative form", argv: append(base, "--no-enable-metrics"), want: []problem{{UnknownFlag, "--no-enable-metrics"}}},
		{name: "boolean optional", argv: append(base, "--no-lora-strict-loading")},
		{name: "prefix abbreviations", argv: append(base, "--tp", "8", "--dp", "1", "--ep", "8"), norm: "--model-path Qwen/Qwen3.5-397B-A17B-FP8 --tp-size 8 --dp-size 1 --ep-size 8"},
		{name: "ambiguous abbreviation", argv: append(base, "--enable-dp"), want: []problem{{UnknownFlag, "--enable-dp"}}},
		{name: "declared alias", argv: []string{"--model", "m", "--tensor-parallel-size", "2"}, norm: "--model-path m --tp-size 2"},
		{name: "removed flag", argv: append(base, "--enable-ep-moe"), want: []problem{{RemovedFlag, "--enable-ep-moe"}}},
		{name: "repeat: last wins", argv: append(base, "--port", "1", "--port", "2"), warnings: []problem{{Repeated, "--port"}}, norm: "--model-path Qwen/Qwen3.5-397B-A17B-FP8 --port 2"},
		{name: "negative number value", argv: append(base, "--chunked-prefill-size", "-1")},
		{name: "exact choices", argv: append(base, "--kv-cache-dtype", "fp8"), want: []problem{{BadChoice, "--kv-cache-dtype"}}},
		{name: "choice case", argv: append(base, "--speculative-algorithm", "eagle"), want: []problem{{BadChoice, "--speculative-algorithm"}}},
		{name: "parser registries", argv: append(base, "--tool-call-parser", "deepseekv4", "--reasoning-parser", "deepseek-v4")},
		{name: "auto parsers", argv: append(base, "--tool-call-parser", "auto", "--reasoning-parser", "auto")},
		{name: "unknown reasoning parser", argv: append(base, "--reasoning-parser", "some-new-parser"), want: []problem{{BadChoice, "--reasoning-parser"}}},
		{name: "vLLM's tool-call parser name", argv: append(base, "--tool-call-parser", "deepseek_v4"), want: []problem{{BadChoice, "--tool-call-parser"}}},
		{name: "json text", argv: append(base, "--model-loader-extra-config", `{"enable_multithread_load": true}`)},
		{name: "bad json", argv: append(base, "--model-loader-extra-config", `{enable_multithread_load: true}`), want: []problem{{BadValue, "--model-loader-extra-config"}}},
		{name: "nargs plus", argv: append(base, "--cuda-graph-bs", "1", "2", "4", "--enable-metrics")},
		{name: "model path required", argv: []string{"--port", "30000"}, want: []problem{{RuleBroken, "--model-path"}}},
		{name: "dp attention without dp warns", argv: append(base, "--enable-dp-attention"), warnings: []problem{{RuleBroken, "--enable-dp-attention"}}},
		{name: "stray positional", argv: append(base, "extra"), want: []problem{{StrayToken, ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.Parse(tc.argv)
			assert.Equal(t, tc.want, problemsOf(err), "argv %q: %v", tc.argv, err)
			assert.Equal(t, tc.warnings, warningsOf(p))
			if tc.norm != "" && err == nil {
				assert.Equal(t, tc.norm, strings.Join(p.Args(), " "))
			}
		})
	}
}

func TestParseVLLM(t *testing.T) {
	s := MustLoad("vllm", "v0.27.1")
	tests := []struct {
		name     string
		argv     []string
		want     []problem
		warnings []problem
		norm     string
	}{
		{name: "positional model", argv: []string{"serve", "m", "-tp", "8", "--enable-prefix-caching"}, norm: "serve m --tensor-parallel-size 8 --enable-prefix-caching"},
		{name: "model as flag", argv: []string{"serve", "--model", "m"}, norm: "serve m"},
		{name: "negative form", argv: []string{"serve", "m", "--no-enable-prefix-caching", "--no-disable-hybrid-kv-cache-manager"}},
		{name: "negative takes no value", argv: []string{"serve", "m", "--no-enable-prefix-caching=1"}, want: []problem{{BadValue, "--no-enable-prefix-caching"}}},
		{name: "underscores", argv: []string{"serve", "m", "--max_num_seqs", "64"}, norm: "serve m --max-num-seqs 64"},
		{name: "short attached", argv: []string{"serve", "m", "-O3"}, norm: "serve m --optimization-level 3"},
		{name: "no abbreviations", argv: []string{"serve", "m", "--tensor-parallel", "8"}, want: []problem{{UnknownFlag, "--tensor-parallel"}}},
		{name: "dotted json keys", argv: []string{"serve", "m", "--compilation-config.mode", "3", "--compilation-config.cudagraph_mode", "FULL"}, norm: `serve m --compilation-config {"cudagraph_mode":"FULL","mode":3}`},
		{name: "speculative json", argv: []string{"serve", "m", "--speculative-config", `{"method": "mtp", "num_speculative_tokens": 3}`}},
		{name: "speculative not json", argv: []string{"serve", "m", "--speculative-config", "mtp"}, want: []problem{{BadValue, "--speculative-config"}}},
		{name: "speculative not object", argv: []string{"serve", "m", "-sc", "[3]"}, want: []problem{{BadValue, "-sc"}}},
		// vLLM rejects the pair only when --speculative-config sets the same key, which sweep
		// does not look into: a warning.
		{name: "speculative config vs shorthand", argv: []string{"serve", "m", "-sc", "{}", "--spec-method", "mtp"}, warnings: []problem{{RuleBroken, "--spec-method"}}},
		{name: "closed choices", argv: []string{"serve", "m", "--kv-offloading-backend", "nvme"}, want: []problem{{BadChoice, "--kv-offloading-backend"}}},
		{name: "open registry choices", argv: []string{"serve", "m", "--moe-backend", "a_newer_backend", "--spec-method", "a_newer_mtp"}},
		{name: "parser registries", argv: []string{"serve", "m", "--enable-auto-tool-choice", "--tool-call-parser", "minimax_m3", "--reasoning-parser", "minimax_m3"}},
		{name: "unknown reasoning parser", argv: []string{"serve", "m", "--reasoning-parser", "minimax_m9"}, want: []problem{{BadChoice, "--reasoning-parser"}}},
		{name: "SMG's tool-call parser name", argv: []string{"serve", "m", "--enable-auto-tool-choice", "--tool-call-parser", "kimik2"}, want: []problem{{BadChoice, "--tool-call-parser"}}},
		{name: "removed since v0.11", argv: []string{"serve", "m", "--swap-space", "4"}, want: []problem{{RemovedFlag, "--swap-space"}}},
		{name: "no-x of a hand-registered BooleanOptionalAction", argv: []string{"serve", "m", "--no-enable-lora", "--no-fail-on-environ-validation"}},
		{name: "store_true", argv: []string{"serve", "m", "--disable-log-stats"}},
		{name: "store_true has no negative", argv: []string{"serve", "m", "--no-disable-log-stats"}, want: []problem{{UnknownFlag, "--no-disable-log-stats"}}},
		{name: "served names nargs", argv: []string{"serve", "m", "--served-model-name", "a", "b", "--port", "8000"}},
		{name: "model required", argv: []string{"serve", "--port", "8000"}, want: []problem{{RuleBroken, "--model"}}},
		{name: "no serve", argv: []string{"m"}, want: []problem{{BadCommand, ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.Parse(tc.argv)
			assert.Equal(t, tc.want, problemsOf(err), "argv %q: %v", tc.argv, err)
			if err == nil {
				assert.Equal(t, tc.warnings, warningsOf(p), "warnings for %q", tc.argv)
			}
			if tc.norm != "" && err == nil {
				assert.Equal(t, tc.norm, strings.Join(p.Args(), " "))
			}
		})
	}
}

// The parsed form answers typed queries by any spelling, with schema defaults when absent.
func TestParsedQueries(t *testing.T) {
	s := MustLoad("vllm", "")
	p, err := s.Parse([]string{"serve", "deepseek-ai/DeepSeek-V4-Pro", "-tp", "8", "--gpu-memory-utilization", "0.86",
		"--no-enable-prefix-caching", "--speculative-config", `{"method":"mtp","num_speculative_tokens":3}`,
		"--cudagraph-capture-sizes", "1", "2", "4"})
	require.NoError(t, err)
	model, ok := p.String("--model")
	assert.True(t, ok)
	assert.Equal(t, "deepseek-ai/DeepSeek-V4-Pro", model)
	tp, ok := p.Int("-tp")
	assert.True(t, ok)
	assert.Equal(t, int64(8), tp)
	pp, ok := p.Int("--pipeline-parallel-size")
	assert.False(t, ok)
	assert.Equal(t, int64(1), pp, "default")
	mem, _ := p.Float("--gpu-memory-utilization")
	assert.Equal(t, 0.86, mem)
	caching, ok := p.Bool("--enable-prefix-caching")
	assert.True(t, ok)
	assert.False(t, caching)
	spec, ok := p.JSON("--speculative-config")
	assert.True(t, ok)
	assert.Equal(t, 3.0, spec.(map[string]any)["num_speculative_tokens"])
	assert.Equal(t, []int64{1, 2, 4}, p.Ints("--cudagraph-capture-sizes"))
	assert.True(t, p.Has("--tensor-parallel-size"))
	assert.False(t, p.Has("--enforce-eager"))
	assert.False(t, p.Has("--not-a-flag"))
	port, ok := p.Int("--port")
	assert.False(t, ok)
	assert.Equal(t, int64(8000), port)
	assert.Equal(t, []string{"--model", "--tensor-parallel-size", "--gpu-memory-utilization", "--enable-prefix-caching", "--speculative-config", "--cudagraph-capture-sizes"}, p.Flags())
}

func TestTrimProgram(t *testing.T) {
	tests := []struct {
		tool string
		argv []string
		want []string
	}{
		{"aiperf", []string{"/venv/bin/aiperf", "profile", "--model", "m"}, []string{"profile", "--model", "m"}},
		{"aiperf", []string{"profile"}, []string{"profile"}},
		{"sglang", []string{"python3", "-m", "sglang.launch_server", "--tp", "2"}, []string{"--tp", "2"}},
		{"sglang", []string{"/usr/bin/python3.12", "-m", "sglang.launch_server"}, []string{}},
		{"sglang", []string{"sglang", "serve", "--tp", "2"}, []string{"--tp", "2"}},
		{"vllm", []string{"vllm", "serve", "m"}, []string{"serve", "m"}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, MustLoad(tc.tool, "").TrimProgram(tc.argv), "%s %q", tc.tool, tc.argv)
	}
}

// Suggestions match Python difflib.get_close_matches(word, spellings)[0], which cyclopts uses.
// SMG's router: the leg's launch_router argv, a misspelt flag, and its closed parser
// registries (argparse choices=get_available_*_parsers()).
func TestParseSMG(t *testing.T) {
	s := MustLoad("smg", "")
	base := []string{"--worker-urls", "grpc://127.0.0.1:8001", "--host", "127.0.0.1", "--port", "8000", "--prometheus-port", "8002"}
	tests := []struct {
		name    string
		argv    []string
		want    []problem
		suggest string // the error's Suggestion, when set
	}{
		{name: "the legs' router", argv: append(base, "--tool-call-parser", "minimax_m2", "--reasoning-parser", "minimax", "--model-path", "MiniMaxAI/MiniMax-M2.7")},
		{name: "misspelt flag", argv: append(base, "--model-pth", "m"), want: []problem{{UnknownFlag, "--model-pth"}}, suggest: "--model-path"},
		{name: "unknown reasoning parser", argv: append(base, "--reasoning-parser", "minimax_m9"), want: []problem{{BadChoice, "--reasoning-parser"}}, suggest: "minimax"},
		{name: "unknown tool-call parser", argv: append(base, "--tool-call-parser", "minimax_m9"), want: []problem{{BadChoice, "--tool-call-parser"}}, suggest: "minimax_m2"},
		{name: "vLLM's name is not SMG's", argv: append(base, "--tool-call-parser", "kimi_k2"), want: []problem{{BadChoice, "--tool-call-parser"}}, suggest: "kimik2"},
		{name: "prefix abbreviation", argv: append(base, "--model", "m", "--cache-thresh", "0.5")},
		{name: "worker urls accumulate", argv: []string{"--worker-urls", "http://a:1", "http://b:2", "--worker-urls", "http://c:3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Parse(tc.argv)
			assert.Equal(t, tc.want, problemsOf(err), "argv %q: %v", tc.argv, err)
			if tc.suggest != "" {
				require.Len(t, Problems(err), 1)
				assert.Equal(t, tc.suggest, Problems(err)[0].Suggestion, "%v", err)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	s := MustLoad("aiperf", "0.12.0")
	tests := map[string]string{
		"--use-chat-template":              "--apply-chat-template",
		"--warmup-requests-per-lane":       "--warmup-request-rate",
		"--no-streaming":                   "--streaming",
		"--concurency":                     "--concurrency",
		"--dynamo-session-timeout-seconds": "--request-timeout-seconds",
		"--ISL":                            "",
		"--use-dynamo-conv-aware-routing":  "",
	}
	for word, want := range tests {
		assert.Equal(t, want, s.Suggest(word), word)
	}
}

func BenchmarkParseInferenceXReplay(b *testing.B) {
	s := MustLoad("aiperf", "sa-754356e9")
	argv := s.TrimProgram(inferencexReplay("--apply-chat-template"))
	for b.Loop() {
		if _, err := s.Parse(argv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSuggest(b *testing.B) {
	s := MustLoad("aiperf", "0.12.0")
	for b.Loop() {
		_ = s.Suggest("--use-chat-template")
	}
}

func TestAmbiguousAbbreviation(t *testing.T) {
	_, err := MustLoad("sglang", "v0.5.16").Parse([]string{"--model-path", "m", "--enable-dp", "--enable-dp"})
	errs := Problems(err)
	require.Len(t, errs, 2, "each occurrence is reported once")
	assert.Equal(t, "sglang v0.5.16: ambiguous option: --enable-dp could match --enable-dp-attention, --enable-dp-attention-local-control-broadcast, --enable-dp-lm-head", errs[0].Error())
}

// aiperf 0.12.0 parity: cyclopts accepts the underscore spelling of a long option; the
// sweepable numeric flags are bounded as aiperf's canonical config bounds them; the
// trajectory-start ratios are compared after defaults apply.
func TestAiperfParity(t *testing.T) {
	base := []string{"profile", "--model", "m"}
	tests := []struct {
		name string
		args []string
		want []problem // nil: accepted
		msg  string    // substring of the first error, when set
	}{
		{name: "underscore bool", args: []string{"--apply_chat_template"}},
		{name: "underscore value", args: []string{"--benchmark_duration", "60", "--public_dataset", "sharegpt"}},
		{name: "underscore alias", args: []string{"--num_requests", "10"}},
		{name: "underscore negative form", args: []string{"--no_auto_plot"}},
		{name: "underscore unknown still unknown", args: []string{"--use_chat_template"},
			want: []problem{{UnknownFlag, "--use_chat_template"}}},
		{name: "concurrency 0", args: []string{"--concurrency", "0"},
			want: []problem{{OutOfBounds, "--concurrency"}}, msg: "--concurrency: must be greater than or equal to 1"},
		{name: "concurrency -3", args: []string{"--concurrency", "-3"},
			want: []problem{{OutOfBounds, "--concurrency"}}},
		{name: "concurrency sweep element 0", args: []string{"--concurrency", "4,0"},
			want: []problem{{OutOfBounds, "--concurrency"}}},
		{name: "concurrency 1", args: []string{"--concurrency", "1"}},
		{name: "benchmark-duration -5", args: []string{"--benchmark-duration", "-5"},
			want: []problem{{OutOfBounds, "--benchmark-duration"}}, msg: "must be greater than 0"},
		{name: "benchmark-duration 0", args: []string{"--benchmark-duration", "0"},
			want: []problem{{OutOfBounds, "--benchmark-duration"}}},
		{name: "request-rate 0", args: []string{"--request-rate", "0"},
			want: []problem{{OutOfBounds, "--request-rate"}}},
		{name: "request-count 0", args: []string{"--request-count", "0"},
			want: []problem{{OutOfBounds, "--request-count"}}},
		{name: "prefill-concurrency 0", args: []string{"--streaming", "--concurrency", "4", "--prefill-concurrency", "0"},
			want: []problem{{OutOfBounds, "--prefill-concurrency"}}},
		{name: "num-conversations 0", args: []string{"--num-conversations", "0"},
			want: []problem{{OutOfBounds, "--num-conversations"}}},
		{name: "turn mean 0", args: []string{"--conversation-turn-mean", "0"},
			want: []problem{{OutOfBounds, "--conversation-turn-mean"}}},
		{name: "isl -1", args: []string{"--isl", "-1"},
			want: []problem{{OutOfBounds, "--isl"}}},
		{name: "osl 0 allowed", args: []string{"--osl", "0"}},
		{name: "osl-stddev -1", args: []string{"--osl", "128", "--osl-stddev", "-1"},
			want: []problem{{OutOfBounds, "--osl-stddev"}}},
		{name: "trajectory min above max", args: []string{"--trajectory-start-min-ratio", "0.8", "--trajectory-start-max-ratio", "0.5"},
			want: []problem{{RuleBroken, "--trajectory-start-min-ratio"}}, msg: "(0.8 > 0.5)"},
		{name: "trajectory min above default max", args: []string{"--trajectory-start-min-ratio", "0.9"},
			want: []problem{{RuleBroken, "--trajectory-start-min-ratio"}}, msg: "(0.9 > the default 0.75)"},
		{name: "trajectory max below default min", args: []string{"--trajectory-start-max-ratio", "0.1"},
			want: []problem{{RuleBroken, "--trajectory-start-max-ratio"}}, msg: "(the default 0.25 > 0.1)"},
		{name: "trajectory in range", args: []string{"--trajectory-start-min-ratio", "0.25", "--trajectory-start-max-ratio", "0.75"}},
	}
	for _, schemaID := range []string{"0.12.0", "sa-754356e9"} {
		s := MustLoad("aiperf", schemaID)
		for _, tc := range tests {
			t.Run(schemaID+"/"+tc.name, func(t *testing.T) {
				_, err := s.Parse(append(slices.Clone(base), tc.args...))
				assert.Equal(t, tc.want, problemsOf(err), "args %q: %v", tc.args, err)
				if tc.msg != "" && err != nil {
					assert.Contains(t, Problems(err)[0].Error(), tc.msg)
				}
			})
		}
	}
}

// TestWrites: the paths an aiperf argv writes are its path flags not
// marked reads, by any spelling; an input file is read, not written, and
// WritesOutside lists the written paths not under the directory (another
// directory, a sibling sharing its prefix, a relative path).
func TestWrites(t *testing.T) {
	s := MustLoad("aiperf", "0.12.0")
	p, err := s.Parse([]string{"profile", "--model", "m",
		"--artifact-dir", "/out/p/aiperf_artifacts", "--input-file", "/data/traces.jsonl", "-f", "/etc/aiperf.yaml",
		"--request-rate-series", "/data/rates.csv", "--zmq-ipc-path", "/out/p2/zmq", "--profile-export-prefix", "run1"})
	require.NoError(t, err)
	assert.Equal(t, []Write{{"--artifact-dir", "/out/p/aiperf_artifacts"}, {"--zmq-ipc-path", "/out/p2/zmq"}, {"--profile-export-prefix", "run1"}}, p.Writes())
	assert.Equal(t, []Write{{"--zmq-ipc-path", "/out/p2/zmq"}, {"--profile-export-prefix", "run1"}}, p.WritesOutside("/out/p"))
	assert.Equal(t, []Write{{"--artifact-dir", "/out/p/aiperf_artifacts"}, {"--zmq-ipc-path", "/out/p2/zmq"}}, p.WritesOutside("."), "a relative path lies under a relative directory")
	assert.Equal(t, []Write{{"--profile-export-prefix", "run1"}}, p.WritesOutside("/out"), "only the relative path is outside the parent")
}

// TestEngineWrites: the engines' write-path flags are typed paths, so a
// command's writes are read from any spelling (SGLang's argparse prefix,
// the = form) and a path the engine only reads (the model, a config
// file) is not one of them.
func TestEngineWrites(t *testing.T) {
	tests := []struct {
		tool string
		argv []string
		want []Write
	}{
		{"sglang", []string{"--model-path", "/models/m", "--config", "/etc/sglang.yaml",
			"--crash-dump-folder=/out/p/crash", "--export-metrics-to-file", "--export-metrics-to-file-dir", "/var/metrics",
			"--spec-trace", "traces", "--debug-tensor-dump-output-folder", "/out/p/tensors",
			"--modelopt-checkpoint-save-path", "/ckpt", "--modelopt-export-path", "/export", "--file-storage-path", "files"},
			[]Write{{"--crash-dump-folder", "/out/p/crash"}, {"--export-metrics-to-file-dir", "/var/metrics"}, {"--spec-trace-dir", "traces"},
				{"--debug-tensor-dump-output-folder", "/out/p/tensors"}, {"--modelopt-checkpoint-save-path", "/ckpt"},
				{"--modelopt-export-path", "/export"}, {"--file-storage-path", "files"}}},
		{"vllm", []string{"serve", "/models/m", "--mm-encoder-fp8-scale-path", "/scales.json", "--mm-encoder-fp8-scale-save-path", "/out/p/scales.json"},
			[]Write{{"--mm-encoder-fp8-scale-save-path", "/out/p/scales.json"}}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			p, err := MustLoad(tc.tool, "").Parse(tc.argv)
			require.NoError(t, err)
			assert.Equal(t, tc.want, p.Writes())
		})
	}
}
