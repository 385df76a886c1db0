package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
	"sweep/recipes/schema"
)

func TestResolveSnapshot(t *testing.T) {
	cache := t.TempDir()
	model := filepath.Join(cache, "models--org--m")
	require.NoError(t, os.MkdirAll(filepath.Join(model, "refs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(model, "refs", "main"), []byte("abc123\n"), 0o644))
	bad := filepath.Join(cache, "models--org--bad")
	require.NoError(t, os.MkdirAll(filepath.Join(bad, "refs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "refs", "main"), []byte("../x"), 0o644))
	arg := func(dir string) []string {
		return []string{"vllm", "serve", dir + "/snapshots/" + recipes.HFSnapshotPlaceholder, "--port", "8888"}
	}
	tests := []struct {
		name     string
		argv     []string
		simulate bool
		want     string
		err      string
	}{
		{name: "cached revision", argv: arg(model), want: model + "/snapshots/abc123"},
		{name: "simulated engine loads nothing", argv: arg(filepath.Join(cache, "models--org--absent")), simulate: true, want: filepath.Join(cache, "models--org--absent") + "/snapshots/simulated"},
		{name: "not cached", argv: arg(filepath.Join(cache, "models--org--absent")), err: "no cached snapshot"},
		{name: "refs/main is not a revision", argv: arg(bad), err: `refs/main holds "../x", not a revision`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := resolveSnapshot(tc.argv, tc.simulate)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, tc.argv[2])
			assert.Equal(t, "8888", tc.argv[4], "other arguments are untouched")
		})
	}
}

func TestSimulatedEngineGetsThePlansUncheckedFlags(t *testing.T) {
	p := &recipes.Point{
		Engine: recipes.Command{Argv: []string{"vllm", "serve", "m", "--numa-bind", "--attention-config", "{}"}},
		Escapes: []schema.Escape{
			{Flag: "--numa-bind", Reason: "r"},
			{Flag: "--attention-config", Values: []string{"{}"}, Reason: "r"},
			{Flag: "--numa-bind", Reason: "r"},
			{Flag: "lm_eval", Reason: "not an engine flag"},
			{Flag: "--client-only", Reason: "not in the engine argv"},
		},
	}
	assert.Equal(t, []string{"--unchecked", "--numa-bind:0", "--unchecked", "--attention-config:1"}, uncheckedArgs(p.Escapes, p.Engine.Argv))
}

// TestSimulatedEngineGetsAttachedUncheckedFlags: an escaped flag given
// as FLAG=VALUE, which the schema check and the simulated engine both
// accept, is passed as --unchecked too. Before, only FLAG VALUE was
// found, so the simulated engine refused the plan's flag as unknown.
func TestSimulatedEngineGetsAttachedUncheckedFlags(t *testing.T) {
	escapes := []schema.Escape{{Flag: "--attention-config", Values: []string{"{}"}, Reason: "r"}}
	assert.Equal(t, []string{"--unchecked", "--attention-config:1"}, uncheckedArgs(escapes, []string{"vllm", "serve", "m", "--attention-config={}"}))
}
