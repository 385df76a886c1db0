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
