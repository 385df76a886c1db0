package abgate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBFCLArgv(t *testing.T) {
	cats, err := ExpandCategories([]string{"multi_turn", "parallel"})
	require.NoError(t, err)
	tests := []struct {
		name     string
		b        BFCL
		gen      []string
		eval     []string
		tempWarn bool
	}{
		{name: "defaults: greedy, 16 threads", b: BFCL{Model: "Org/M-FC", Categories: cats[3:]},
			gen:  []string{"bfcl", "generate", "--model", "Org/M-FC", "--test-category", "multi_turn_long_context,parallel", "--temperature", "0", "--num-threads", "16", "--allow-overwrite"},
			eval: []string{"bfcl", "evaluate", "--model", "Org/M-FC", "--test-category", "multi_turn_long_context,parallel"}},
		{name: "bfcl's default temperature warns", b: BFCL{Binary: "/opt/bfcl", Model: "m", Categories: cats[:1], Temperature: 0.001, NumThreads: 4, PartialEval: true},
			gen:      []string{"/opt/bfcl", "generate", "--model", "m", "--test-category", "multi_turn_base", "--temperature", "0.001", "--num-threads", "4", "--allow-overwrite"},
			eval:     []string{"/opt/bfcl", "evaluate", "--model", "m", "--test-category", "multi_turn_base", "--partial-eval"},
			tempWarn: true},
		{name: "0.01 is not clamped", b: BFCL{Model: "m", Categories: cats[:1], Temperature: 0.01},
			gen:  []string{"bfcl", "generate", "--model", "m", "--test-category", "multi_turn_base", "--temperature", "0.01", "--num-threads", "16", "--allow-overwrite"},
			eval: []string{"bfcl", "evaluate", "--model", "m", "--test-category", "multi_turn_base"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.gen, tc.b.Generate())
			assert.Equal(t, tc.eval, tc.b.Evaluate())
			assert.Equal(t, tc.tempWarn, tc.b.TemperatureWarning("vLLM", 0.01) != "", tc.b.TemperatureWarning("vLLM", 0.01))
		})
	}
	env := BFCL{Root: "/r", BaseURL: "http://127.0.0.1:8000/v1"}.Env()
	assert.Equal(t, map[string]string{"BFCL_PROJECT_ROOT": "/r", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "OPENAI_API_KEY": "EMPTY"}, env)
}

func TestPrepareRoot(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "a", "rep1")
	require.NoError(t, PrepareRoot(fresh))
	require.NoError(t, PrepareRoot(fresh), "an empty root is fine")
	require.NoError(t, os.WriteFile(filepath.Join(fresh, ".env"), []byte("OPENAI_BASE_URL=x\n"), 0o644))
	err := PrepareRoot(fresh)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrRootNotEmpty))
	assert.Contains(t, err.Error(), "holds .env")
}
