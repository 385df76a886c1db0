package executor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/executor"
)

func TestNodeGPUs(t *testing.T) {
	ids, err := executor.NodeGPUs([]int{3, 1, 2}, false)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, ids, "given ids are sorted")
	_, err = executor.NodeGPUs([]int{1, 2, 1}, false)
	assert.ErrorContains(t, err, "--gpus [1 2 1]: a GPU is listed twice")
	ids, err = executor.NodeGPUs(nil, true)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, ids, "a simulation or dry run has eight GPUs")
}
