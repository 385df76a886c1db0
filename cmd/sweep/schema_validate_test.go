package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes/schema"
)

func TestSchemaValidate(t *testing.T) {
	replay := "aiperf profile --scenario inferencex-agentx-mvp --url http://localhost:8888 --endpoint /v1/chat/completions --endpoint-type chat --streaming --model Qwen/Qwen3.5-397B-A17B-FP8 --tokenizer Qwen/Qwen3.5-397B-A17B-FP8 --concurrency 4 --benchmark-duration 3600 --stats-interval 30 --random-seed 42 --failed-request-threshold 0.10 --trajectory-start-min-ratio 0.25 --trajectory-start-max-ratio 0.75 --warmup-requests-per-lane 10 --trace-idle-gap-cap-seconds 300 --warmup-grace-period 1800 --use-server-token-count --no-gpu-telemetry --tokenizer-trust-remote-code --num-dataset-entries 393 --slice-duration 1.0 --server-metrics http://localhost:8888/metrics --output-artifact-dir /r/aiperf_artifacts --public-dataset semianalysis_cc_traces_weka_062126_256k --apply-chat-template"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings, or exact lines when exact is set
		stderr string
	}{
		{name: "use-chat-template", args: []string{"aiperf", "--", "profile", "--model", "m", "--use-chat-template"}, code: 1,
			stdout: []string{"aiperf 0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)\n"}, stderr: "1 problem in"},
		{name: "valid prints normalised argv", args: []string{"aiperf@0.12.0", "--", "profile", "-m", "m", "--concurrency=8", "--endpoint-type", "CHAT", "--extra-inputs", "ignore_eos:true"}, code: 0,
			stdout: []string{"profile --model-names m --concurrency 8 --endpoint-type chat --extra-inputs ignore_eos:true\n"}},
		{name: "without the double dash", args: []string{"aiperf", "profile", "--model", "m"}, code: 0, stdout: []string{"profile --model-names m\n"}},
		{name: "one line per problem", args: []string{"aiperf", "--", "profile", "--concurrency", "x", "--streaming", "--streaming", "--no-streaming"}, code: 1,
			stdout: []string{"--concurrency: invalid literal for int", "--streaming: specified multiple times", "has no flag --no-streaming (did you mean --streaming?)", "--model-names: a model is required"}},
		{name: "InferenceX replay against the fork", args: append([]string{"aiperf@sa-754356e9", "--"}, strings.Fields(replay)...), code: 0, stdout: []string{"profile --scenario inferencex-agentx-mvp "}},
		{name: "InferenceX replay against 0.12.0", args: append([]string{"aiperf@0.12.0", "--"}, strings.Fields(replay)...), code: 1,
			stdout: []string{"has no flag --warmup-requests-per-lane (did you mean --warmup-request-rate?)", "--trace-idle-gap-cap-seconds: scenario \"inferencex-agentx-mvp\" preserves original per-trace request timing and forbids timeline compression"}},
		{name: "override turns locks into warnings", args: []string{"aiperf", "--", "profile", "--model", "m", "--scenario", "inferencex-agentx-mvp", "--public-dataset", "semianalysis_cc_traces_weka_062126", "--benchmark-duration", "600", "--unsafe-override"}, code: 0,
			stdout: []string{"--unsafe-override\n"}, stderr: "warning: aiperf 0.12.0: --benchmark-duration: scenario"},
		{name: "sglang recipe", args: []string{"sglang@v0.5.16", "--", "python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2", "--enable-metrics", "--model-loader-extra-config", `{"enable_multithread_load": true}`}, code: 0,
			stdout: []string{`--model-path m --tp-size 2 --enable-metrics --model-loader-extra-config '{"enable_multithread_load": true}'` + "\n"}},
		{name: "vllm", args: []string{"vllm", "--", "vllm", "serve", "m", "-tp", "8", "--no-enable-prefix-caching", "--enable-prefix-caching=yes"}, code: 1,
			stdout: []string{"--enable-prefix-caching: takes no value"}},
		{name: "unknown schema", args: []string{"aiperf@9", "--", "profile"}, code: exitUsage, stderr: "no schema for aiperf@9"},
		{name: "no tool", args: nil, code: exitUsage, stderr: "needs TOOL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"schema", "validate"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			for _, s := range tc.stdout {
				assert.Contains(t, out, s)
			}
			assert.Contains(t, errOut, tc.stderr)
		})
	}
}

func TestSchemaValidateJSON(t *testing.T) {
	code, out, _ := runCLI(t, "schema", "validate", "--json", "aiperf", "--", "profile", "--model", "m", "--use-chat-template")
	assert.Equal(t, 1, code)
	var res struct {
		Schema   string
		Valid    bool
		Problems []schema.Problem
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "aiperf@0.12.0", res.Schema)
	assert.False(t, res.Valid)
	require.Len(t, res.Problems, 1)
	assert.Equal(t, schema.Problem{Kind: "unknown-flag", Severity: "error", Flag: "--use-chat-template", Suggestion: "--apply-chat-template",
		Message: "aiperf 0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)"}, res.Problems[0])
}
