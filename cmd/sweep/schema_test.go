package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaList(t *testing.T) {
	code, out, errOut := runCLI(t, "schema", "list")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "TOOL    VERSION      DEFAULT  FLAGS  SPELLINGS")
	assert.Regexp(t, `aiperf\s+0\.12\.0\s+yes\s+259\s+316\s+\d+\s+inferencex-agentx-mvp\s+complete`, out)
	assert.Regexp(t, `aiperf\s+sa-754356e9\s+263`, out)
	assert.Regexp(t, `sglang\s+v0\.5\.17\s+yes`, out)
	assert.Regexp(t, `vllm\s+v0\.27\.1\s+yes`, out)

	code, out, _ = runCLI(t, "schema", "list", "--json")
	require.Equal(t, 0, code)
	var rows []schemaListRow
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	assert.Len(t, rows, 5)
}

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
			stdout: []string{"aiperf 0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)\n"}, stderr: "1 problem(s)"},
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
		Problems []validateProblem
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "aiperf@0.12.0", res.Schema)
	assert.False(t, res.Valid)
	require.Len(t, res.Problems, 1)
	assert.Equal(t, validateProblem{Kind: "unknown-flag", Severity: "error", Flag: "--use-chat-template", Suggestion: "--apply-chat-template",
		Message: "aiperf 0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)"}, res.Problems[0])
}

func testdataPath(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...)
}

func TestSchemaCheck(t *testing.T) {
	planted := filepath.Join(t.TempDir(), "help.txt")
	text, err := os.ReadFile(testdataPath("help", "aiperf-0.12.0-profile-help-cols250.txt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(planted, []byte(strings.Replace(string(text), "│ --apply-chat-template ", "│ --use-chat-template   ", 1)), 0o644))

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "real help 100 columns", args: []string{"aiperf@0.12.0", "--help-file", testdataPath("help", "aiperf-0.12.0-profile-help-cols100.txt")}, code: 0, stderr: "259 help rows, 259 matched, no drift"},
		{name: "real help 250 columns", args: []string{"aiperf", "--help-file", testdataPath("help", "aiperf-0.12.0-profile-help-cols250.txt")}, code: 0, stderr: "no drift"},
		{name: "planted drift", args: []string{"aiperf", "--help-file", planted}, code: 1,
			stdout: "added: --use-chat-template (help line", stderr: "drift: 1 added, 1 removed, 0 changed"},
		{name: "fork against upstream help", args: []string{"aiperf@sa-754356e9", "--help-file", testdataPath("help", "aiperf-0.12.0-profile-help-cols250.txt")}, code: 1,
			stdout: "removed: --warmup-requests-per-lane"},
		{name: "sglang fixture", args: []string{"sglang@v0.5.16", "--help-file", testdataPath("help", "sglang-v0.5.16-help.txt"), "-v"}, code: 0,
			stderr: "493 help rows, 493 matched, no drift"},
		{name: "vllm fixture", args: []string{"vllm", "--help-file", testdataPath("help", "vllm-v0.27.1-serve-help.txt")}, code: 0, stderr: "no drift"},
		{name: "needs a source", args: []string{"aiperf"}, code: exitUsage, stderr: "exactly one of --help-file or --exec"},
		{name: "missing file", args: []string{"aiperf", "--help-file", "/nonexistent"}, code: 1, stderr: "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"schema", "check"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assert.Contains(t, out, tc.stdout)
			assert.Contains(t, errOut, tc.stderr)
		})
	}
}

// --exec runs the tool (here a script standing in for aiperf) with its subcommand and --help.
func TestSchemaCheckExec(t *testing.T) {
	dir := t.TempDir()
	help, err := filepath.Abs(testdataPath("help", "aiperf-0.12.0-profile-help-cols100.txt"))
	require.NoError(t, err)
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "aiperf")
	script := "#!/bin/sh\necho \"$@ COLUMNS=$COLUMNS\" > '" + args + "'\ncat '" + help + "'\n"
	require.NoError(t, os.WriteFile(fake, []byte(script), 0o755))

	code, out, errOut := runCLI(t, "schema", "check", "aiperf", "--exec", fake)
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Contains(t, errOut, "no drift")
	got, err := os.ReadFile(args)
	require.NoError(t, err)
	assert.Equal(t, "profile --help COLUMNS=250\n", string(got))

	failing := filepath.Join(dir, "broken")
	require.NoError(t, os.WriteFile(failing, []byte("#!/bin/sh\necho 'ModuleNotFoundError: aiperf' >&2\nexit 3\n"), 0o755))
	code, _, errOut = runCLI(t, "schema", "check", "vllm", "--exec", failing)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "exit status 3: ModuleNotFoundError: aiperf")
}

// Flag parsing builds the options the run function gets.
func TestNewSchemaCheckCmd(t *testing.T) {
	got, err := parseOptions(t, newSchemaCheckCmd, "sglang@v0.5.16", "--exec", "python3", "--timeout", "30s", "--", "-m", "sglang.launch_server")
	require.NoError(t, err)
	assert.Equal(t, "sglang@v0.5.16", got.Schema)
	assert.Equal(t, "python3", got.Exec)
	assert.Equal(t, []string{"-m", "sglang.launch_server"}, got.ExecArgs)
	assert.Equal(t, 30*time.Second, got.Timeout)
}

func TestSchemaShow(t *testing.T) {
	code, out, errOut := runCLI(t, "schema", "show", "aiperf", "--concurrency", "-m")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "--concurrency  (aiperf@0.12.0)\n  type:      int or comma sweep\n")
	assert.Contains(t, out, "rule prefill-le-concurrency (le)")
	assert.Contains(t, out, "scenario inferencex-agentx-mvp (single)")
	assert.Contains(t, out, "--model-names  (aiperf@0.12.0)\n  spellings: --model-names, --model, -m\n  type:      list[string]\n")

	code, out, _ = runCLI(t, "schema", "show", "vllm")
	require.Equal(t, 0, code)
	assert.Regexp(t, `--enable-prefix-caching\s+bool-optional\s+-\s+--no-enable-prefix-caching`, out)

	code, out, errOut = runCLI(t, "schema", "show", "aiperf", "--use-chat-template")
	assert.Equal(t, 1, code)
	assert.Equal(t, "aiperf@0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)\n", out)
	assert.Contains(t, errOut, "unknown flag(s) --use-chat-template")
}
