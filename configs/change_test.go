package configs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChangeSides(t *testing.T) {
	dir := t.TempDir()
	baseFile := filepath.Join(dir, "base.yaml")
	require.NoError(t, os.WriteFile(baseFile, []byte("- config-keys: [a]\n"), 0o644))
	var asked []string
	git := func(_ context.Context, ref, path string) ([]byte, error) {
		asked = append(asked, ref+":"+path)
		if ref == "head" && path == "perf-changelog.yaml" {
			return []byte("- config-keys: [a, b]\n"), nil
		}
		return nil, errors.New("fake git: nothing at " + ref + ":" + path)
	}
	c := ChangeSides{BaseFile: baseFile, HeadRef: "head", ChangelogFile: "perf-changelog.yaml", Git: git}
	base, head, err := c.Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, Source{Name: baseFile, Data: []byte("- config-keys: [a]\n")}, base)
	assert.Equal(t, Source{Name: "head:perf-changelog.yaml", Data: []byte("- config-keys: [a, b]\n")}, head)
	b, h := c.Names()
	assert.Equal(t, []string{baseFile, "head"}, []string{b, h}, "a ref names its side, else the file")
	assert.Nil(t, c.BaseLoader(t.Context(), nil, ""), "no base configs without a base ref or files")

	c.HeadRef = "missing"
	_, _, err = c.Read(t.Context())
	assert.EqualError(t, err, "fake git: nothing at missing:perf-changelog.yaml")

	// The base's configs from git at the base ref, at the head's paths.
	asked = nil
	c = ChangeSides{BaseRef: "base", Git: git}
	_, _, err = c.BaseLoader(t.Context(), []string{"m.yaml"}, "r.yaml")()
	assert.EqualError(t, err, "fake git: nothing at base:m.yaml")
	assert.Equal(t, []string{"base:m.yaml"}, asked)

	// Named base files win over the ref; the head's stand in for the one not named.
	c.BaseRunnerConfig = filepath.Join(dir, "base-runners.yaml")
	_, _, err = c.BaseLoader(t.Context(), []string{filepath.Join(dir, "head-master.yaml")}, "r.yaml")()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "head-master.yaml")
	assert.Equal(t, []string{"base:m.yaml"}, asked, "git is not asked")
}
