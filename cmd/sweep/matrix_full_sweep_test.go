package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
