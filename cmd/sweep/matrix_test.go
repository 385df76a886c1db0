package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMatrixCommandErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"conflicting eval flags", []string{"matrix", "test-config", "--config-keys", "x", "--no-evals", "--evals-only"}, exitUsage, "cannot be combined"},
		{"unknown key", []string{"matrix", "test-config", "--config-keys", "nope-nope"}, exitError, `config key "nope-nope" not found`},
		{"step size", []string{"matrix", "full-sweep", "--step-size", "1"}, exitUsage, "--step-size must be greater than 1"},
		// 0 was silently the default 2.
		{"step size 0", []string{"matrix", "full-sweep", "--step-size", "0"}, exitUsage, "--step-size must be greater than 1, got 0"},
		{"step size -3", []string{"matrix", "full-sweep", "--step-size", "-3"}, exitUsage, "--step-size must be greater than 1, got -3"},
		{"changelog needs a base", []string{"changelog", "--head-file", "x"}, exitUsage, "exactly one of --base-file and --base-ref"},
		{"changelog missing file", []string{"changelog", "--base-file", "/nonexistent/a", "--head-file", "/nonexistent/b"}, exitUsage, "--base-file: read changelog: open /nonexistent/a: no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			assert.Equal(t, tc.code, code, errOut)
			assert.Contains(t, errOut, tc.err)
		})
	}
}

func TestMatrixBuiltInConfigs(t *testing.T) {
	code, out, errOut := runCLI(t, "matrix", "test-config", "--config-keys", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", "--no-evals")
	require.Equal(t, 0, code, errOut)
	rows := decodeJSON(t, out).([]any)
	assert.NotEmpty(t, rows)
	assert.Equal(t, "agentic-coding", rows[0].(map[string]any)["scenario-type"])
}
