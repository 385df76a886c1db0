package configs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/internal/gitfile"
)

func TestValidateFilesRead(t *testing.T) {
	t.Chdir(t.TempDir())
	in, note, err := ValidateFiles{}.Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "note: no ./perf-changelog.yaml here; changelog not checked (use --changelog)", note)
	assert.Len(t, in.Masters, len(DefaultMasterFiles), "the embedded master configs")
	assert.Nil(t, in.Changelog)

	_, _, err = ValidateFiles{BaseRef: "main"}.Read(t.Context())
	assert.ErrorIs(t, err, ErrNoChangelog, "a base without a changelog")

	require.NoError(t, os.WriteFile(DefaultChangelog, []byte("head\n"), 0o644))
	require.NoError(t, os.WriteFile("base.yaml", []byte("base\n"), 0o644))
	in, note, err = ValidateFiles{ChangelogBase: "base.yaml"}.Read(t.Context())
	require.NoError(t, err)
	assert.Empty(t, note)
	assert.Equal(t, &Source{Name: DefaultChangelog, Data: []byte("head\n")}, in.Changelog, "./perf-changelog.yaml by default")
	assert.Equal(t, &Source{Name: "base.yaml", Data: []byte("base\n")}, in.ChangelogBase)

	git := func(_ context.Context, ref, path string) ([]byte, error) {
		switch ref {
		case "new":
			return nil, fmt.Errorf("git show %s:%s: %w", ref, path, gitfile.ErrNotExist)
		case "old":
			return []byte("old\n"), nil
		}
		return nil, fmt.Errorf("bad revision %s", ref)
	}
	in, _, err = ValidateFiles{Changelog: DefaultChangelog, BaseRef: "old", Git: git}.Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, &Source{Name: "old:" + DefaultChangelog, Data: []byte("old\n")}, in.ChangelogBase)
	in, _, err = ValidateFiles{BaseRef: "new", Git: git}.Read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, &Source{Name: "new:" + DefaultChangelog}, in.ChangelogBase, "a change that adds the changelog: every entry is new")
	_, _, err = ValidateFiles{BaseRef: "bad", Git: git}.Read(t.Context())
	assert.EqualError(t, err, "--changelog-base-ref: bad revision bad")

	_, _, err = ValidateFiles{Changelog: filepath.Join("no", "such.yaml")}.Read(t.Context())
	assert.ErrorContains(t, err, "read changelog: ")
	_, _, err = ValidateFiles{RunnerConfig: "missing-runners.yaml"}.Read(t.Context())
	assert.ErrorContains(t, err, "missing-runners.yaml")
}

func TestReportSummary(t *testing.T) {
	in := ValidateInput{Masters: make([]Source, 2)}
	r := &Report{MasterEntries: 40, RunnerLabels: 7, ChangelogEntries: 12, NewEntries: 2}
	assert.NoError(t, r.Err())
	assert.Equal(t, "ok: 40 master configs in 2 files, 7 runner labels", r.Summary(in))
	in.Changelog = &Source{}
	r.Corrections = 1
	assert.Equal(t, "ok: 40 master configs in 2 files, 7 runner labels, 12 changelog entries (2 new, 1 pr-link corrections)", r.Summary(in))
	r.Problems = []*Error{{File: "a.yaml"}, {File: "a.yaml"}, {File: "b.yaml"}}
	assert.EqualError(t, r.Err(), "3 problems in 2 files")
}
