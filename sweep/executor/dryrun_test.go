package executor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/sweep/executor"
)

func TestNodeGPUs(t *testing.T) {
	ids, err := executor.NodeGPUs(executor.Local, []int{3, 1, 2}, false)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, ids, "given ids are sorted")
	_, err = executor.NodeGPUs(executor.Local, []int{1, 2, 1}, false)
	assert.ErrorContains(t, err, "--gpus [1 2 1]: a GPU is listed twice")
	ids, err = executor.NodeGPUs(executor.Local, nil, true)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, ids, "a simulation or dry run has eight GPUs")

	// Neither GPU tool on the PATH: the error says so and how to give
	// the GPUs (it said "rocm-smi/nvidia-smi: <nil>" and advised
	// "--gpus 0 1 2", which the flag refuses).
	t.Setenv("PATH", t.TempDir())
	_, err = executor.NodeGPUs(executor.Local, nil, false)
	assert.EqualError(t, err, "cannot list this node's GPUs (rocm-smi, nvidia-smi: neither is installed); give them with --gpus 0,1,2,3 (or --simulate to run on the simulated engine)")
	_, err = executor.NodeGPUs("", nil, false)
	assert.Error(t, err, "the default executor is the local one")

	// A Slurm arm's GPUs are its job's: a login node without GPU tools
	// submits (it was refused, naming --gpus), as its dry run does.
	ids, err = executor.NodeGPUs(executor.Slurm, nil, false)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, ids)
	ids, err = executor.NodeGPUs(executor.Slurm, []int{0, 1}, false)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, ids, "given ids stand")
}
