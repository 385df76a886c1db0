package run

import (
	"slices"
	"sweep/internal/redact"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommandText(t *testing.T) {
	got := commandText(
		[]string{"python3", "-m", "sglang.launch_server", "--model-loader-extra-config", `{"enable_multithread_load": true}`, "--tp", "8", "--enable-metrics"},
		map[string]string{"SGLANG_USE_AITER": "1", "HF_TOKEN": "hf_secret"},
		[]string{"MAX_MODEL_LEN"},
	)
	want := "unset MAX_MODEL_LEN\n" +
		"export HF_TOKEN='<redacted>'\n" +
		"export SGLANG_USE_AITER=1\n" +
		"python3 \\\n  -m sglang.launch_server \\\n  --model-loader-extra-config '{\"enable_multithread_load\": true}' \\\n  --tp 8 \\\n  --enable-metrics\n"
	assert.Equal(t, want, got)
	assert.Equal(t, `'it'\''s'`, shellQuote("it's"))
	assert.Equal(t, "''", shellQuote(""))
}

// TestCommandTextGoRun: under `go run` the command files and run.json
// named the temporary build (/tmp/go-build.../exe/sweep), gone once the
// run ended.
func TestCommandTextGoRun(t *testing.T) {
	tmp := "/tmp/go-build1234567/b001/exe/sweep"
	for path, want := range map[string]bool{
		tmp: true,
		"/home/u/.cache/go-build2/b001/exe/sweep": true,
		"/usr/local/bin/sweep":                    false,
		"/opt/exe/sweep":                          false,
		"exe/sweep":                               false,
		"/tmp/go-build1/b001/sweep":               false,
	} {
		assert.Equal(t, want, isGoRunBuild(path), path)
	}
	got := commandText([]string{tmp, "sim-engine", "--", "python3", "-m", "sglang.launch_server"}, nil, nil)
	assert.Equal(t, goRunNote+"sweep sim-engine \\\n  -- python3 \\\n  -m sglang.launch_server\n", got)
	assert.NotContains(t, got, "go-build1234567")
	argv, goRun := recordedArgv([]string{"/usr/local/bin/sweep", "loadgen"})
	assert.False(t, goRun)
	assert.Equal(t, []string{"/usr/local/bin/sweep", "loadgen"}, argv)
}

// TestParseCommandText: what a command file records reads back as the
// same argv and environment, quotes, redactions and continuations
// included.
func TestParseCommandText(t *testing.T) {
	argv := []string{"/opt/sweep", "sim-engine", "--", "vllm", "serve", "m", "--speculative-config", `{"method": "mtp", "n": 3}`,
		"--chat-template", "it's", "--api-key", "s3cret", "--port", "8000"}
	env := map[string]string{"A": "1", "B": "two words", "HF_TOKEN": "hf_x"}
	got, gotEnv, err := ParseCommandText(commandText(argv, env, []string{"MAX_MODEL_LEN"}))
	require.NoError(t, err)
	want := slices.Clone(argv)
	want[11] = redact.Marker
	assert.Equal(t, want, got)
	assert.Equal(t, map[string]string{"A": "1", "B": "two words", "HF_TOKEN": redact.Marker}, gotEnv)
	_, _, err = ParseCommandText("vllm serve 'm\n")
	assert.Error(t, err)
}
