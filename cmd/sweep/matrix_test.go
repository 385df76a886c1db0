package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs/matrix"
)

func TestMatrixTestConfigFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    matrix.TestConfigOptions
		files   []string
		wantErr string
	}{
		{
			name: "argparse-style lists",
			args: []string{"--config-keys", "a", "b*", "--conc", "4", "16", "--no-evals", "--config-files", "x.yaml", "y.yaml", "--seq-lens", "8k1k"},
			want: matrix.TestConfigOptions{ConfigKeys: []string{"a", "b*"}, Conc: []int{4, 16}, SeqLens: []string{"8k1k"},
				EvalOptions: matrix.EvalOptions{NoEvals: true}},
			files: []string{"x.yaml", "y.yaml"},
		},
		{
			name: "repeated and comma-separated",
			args: []string{"--config-keys=a,b", "--config-keys", "c", "--scenario-type", "agentic-coding", "--runner-node-filter", "amds_0", "--all-evals"},
			want: matrix.TestConfigOptions{ConfigKeys: []string{"a", "b", "c"}, ScenarioTypes: []string{"agentic-coding"},
				RunnerNodeFilter: "amds_0", EvalOptions: matrix.EvalOptions{AllEvals: true}},
		},
		{name: "missing keys", args: []string{"--no-evals"}, wantErr: "--config-keys is required"},
		{name: "word after a bool flag", args: []string{"--config-keys", "a", "--no-evals", "b"}, wantErr: `unexpected argument "b" after --no-evals`},
		{name: "bad integer", args: []string{"--config-keys", "a", "--conc", "4", "x"}, wantErr: `invalid argument "x" for --conc`},
		{name: "stray positional", args: []string{"a"}, wantErr: `unexpected argument "a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *matrixTestConfigOptions
			ios := &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			cmd := newMatrixTestConfigCmd(ios, func(_ context.Context, o *matrixTestConfigOptions) error {
				got = o
				return nil
			})
			err := dispatch(t.Context(), ios, cmd, []string{"sweep", "matrix", "test-config"}, tc.args)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				_, isUsage := errors.AsType[*FlagError](err)
				assert.True(t, isUsage, "usage errors exit 2: %T", err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tc.want, got.TestConfigOptions)
			assert.Equal(t, tc.files, got.Inputs.ConfigFiles)
		})
	}
}

func TestMatrixFullSweepFlags(t *testing.T) {
	var got *matrixFullSweepOptions
	ios := &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	cmd := newMatrixFullSweepCmd(ios, func(_ context.Context, o *matrixFullSweepOptions) error {
		got = o
		return nil
	})
	err := dispatch(t.Context(), ios, cmd, []string{"sweep", "matrix", "full-sweep"},
		[]string{"--model-prefix", "dsr1", "qwen", "--max-conc", "64", "--min-conc", "-3", "--step-size", "4", "--multi-node"})
	require.NoError(t, err)
	assert.Equal(t, []string{"dsr1", "qwen"}, got.ModelPrefixes)
	require.NotNil(t, got.MaxConc)
	assert.Equal(t, 64, *got.MaxConc)
	require.NotNil(t, got.MinConc)
	assert.Equal(t, -3, *got.MinConc, "negative numbers are values, as in argparse")
	assert.Nil(t, got.MaxTP, "unset filters stay nil")
	assert.Equal(t, 4, got.StepSize)
	assert.True(t, got.MultiNode)
}

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
		{"changelog needs a base", []string{"changelog", "--head-file", "x"}, exitUsage, "exactly one of --base-file and --base-ref"},
		{"changelog missing file", []string{"changelog", "--base-file", "/nonexistent/a", "--head-file", "/nonexistent/b"}, exitError, "read changelog"},
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
