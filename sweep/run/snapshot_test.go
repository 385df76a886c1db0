package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/recipes"
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
		name string
		argv []string
		want string
		err  string
	}{
		{name: "cached revision", argv: arg(model), want: model + "/snapshots/abc123"},
		{name: "not cached", argv: arg(filepath.Join(cache, "models--org--absent")), err: "no cached snapshot"},
		{name: "refs/main is not a revision", argv: arg(bad), err: `refs/main holds "../x", not a revision`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := resolveSnapshot(tc.argv)
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
