package configs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// testdataDir is the repository's testdata directory (go test runs in the
// package directory).
const testdataDir = "../testdata"

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir, name))
	require.NoError(t, err)
	return data
}

// TestShippedConfigsMatchInferenceX checks that the project's configs carry
// the same values as InferenceX's files at the conformance commit: only
// comments and formatting differ.
func TestShippedConfigsMatchInferenceX(t *testing.T) {
	for _, name := range []string{"amd-master.yaml", "nvidia-master.yaml", "runners.yaml"} {
		t.Run(name, func(t *testing.T) {
			ours, err := os.ReadFile(name)
			require.NoError(t, err)
			theirs := readTestdata(t, "inferencex/configs/"+name)
			var a, b any
			require.NoError(t, yaml.Unmarshal(ours, &a))
			require.NoError(t, yaml.Unmarshal(theirs, &b))
			assert.Equal(t, b, a)
		})
	}
}

func TestInferenceXConfigsLoad(t *testing.T) {
	dir := filepath.Join(testdataDir, "inferencex/configs")
	m, err := LoadMasters(filepath.Join(dir, "amd-master.yaml"), filepath.Join(dir, "nvidia-master.yaml"))
	require.NoError(t, err)
	assert.Len(t, m.Entries, 208)
	r, err := LoadRunners(filepath.Join(dir, "runners.yaml"))
	require.NoError(t, err)
	assert.Len(t, r.Labels, 37)
	assert.Len(t, r.Hardware, 16)
	require.NoError(t, CheckHardware(m, r))

	// File order across files, and lookup by key.
	assert.Equal(t, "dsr1-fp4-mi355x-sglang", m.Entries[0].Key)
	e, ok := m.Lookup("qwen3.5-fp8-mi325x-sglang-agentic-mtp")
	require.True(t, ok)
	assert.Equal(t, filepath.Join(dir, "amd-master.yaml"), e.File)
	assert.Equal(t, "cluster:mi325x-amds", e.Runner)
	require.Len(t, e.Scenarios.AgenticCoding, 1)
	ac := e.Scenarios.AgenticCoding[0]
	require.NotNil(t, ac.DRAMUtilization)
	assert.InDelta(t, 0.8, *ac.DRAMUtilization, 1e-12)
	points := 0
	for _, s := range ac.SearchSpace {
		points += len(s.ConcList)
	}
	assert.Equal(t, 32, points, "the 32-point official MI325X matrix")
	amdCount := 0
	for _, e := range m.Entries {
		if e.File == filepath.Join(dir, "amd-master.yaml") {
			amdCount++
		} else {
			break
		}
	}
	assert.Equal(t, m.Keys()[amdCount-1], m.Entries[amdCount-1].Key)
	assert.Equal(t, filepath.Join(dir, "nvidia-master.yaml"), m.Entries[amdCount].File)
}

// TestEmbeddedMatchesFiles checks that the compiled-in files are the
// repository's configs/ files.
func TestEmbeddedMatchesFiles(t *testing.T) {
	err := fs.WalkDir(Embedded(), ".", func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		got, err := fs.ReadFile(Embedded(), path)
		require.NoError(t, err)
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), path)
		return nil
	})
	require.NoError(t, err)

	m, err := DefaultMasters()
	require.NoError(t, err)
	assert.Len(t, m.Entries, 208)
	assert.Equal(t, DefaultMasterFiles, m.Files)
	r, err := DefaultRunners()
	require.NoError(t, err)
	assert.Equal(t, DefaultRunnerFile, r.File)
}

func TestProjectChangelogIsValid(t *testing.T) {
	data, err := os.ReadFile("../perf-changelog.yaml")
	require.NoError(t, err)
	entries, err := CheckChangelog("perf-changelog.yaml", data)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	m, err := DefaultMasters()
	require.NoError(t, err)
	require.NoError(t, CheckChangelogKeys("perf-changelog.yaml", entries, m))
	// Appending every entry to an empty file passes the append-only rules.
	ch, err := CheckChangelogChange(Source{Name: "empty"}, Source{Name: "perf-changelog.yaml", Data: data})
	require.NoError(t, err)
	assert.Len(t, ch.Added, len(entries))
}

func TestGoldenAL(t *testing.T) {
	g, err := DefaultGoldenAL()
	require.NoError(t, err)
	require.Len(t, g.Sets, 9)
	s, ok := g.Set("qwen3.5_mtp")
	require.True(t, ok)
	assert.Equal(t, "configs/golden-al/qwen3.5_mtp.yaml", s.File)
	al, ok := s.AL("qwen3.5-397b-a17b-nvfp4", ThinkingOn, 3)
	require.True(t, ok)
	assert.InDelta(t, 3.39, al, 1e-12)
	al, ok = s.AL("qwen3.5-397b-a17b-nvfp4", ThinkingOff, 8)
	require.True(t, ok)
	assert.InDelta(t, 4.71, al, 1e-12)
	_, ok = s.AL("qwen3.5-397b-a17b-nvfp4", ThinkingOn, 9)
	assert.False(t, ok)
	// Two curve files may describe the same model.
	a, _ := g.Set("minimaxm3_eagle3")
	b, _ := g.Set("minimaxm3_eagle3_gqa")
	alA, _ := a.AL("minimax-m3", ThinkingOn, 3)
	alB, _ := b.AL("minimax-m3", ThinkingOn, 3)
	assert.InDelta(t, 2.83, alA, 1e-12)
	assert.InDelta(t, 2.78, alB, 1e-12)

	// The shipped curves are InferenceX's.
	for _, set := range g.Sets {
		ours, err := os.ReadFile(filepath.Join("golden-al", set.Name+".yaml"))
		require.NoError(t, err)
		assert.Equal(t, string(readTestdata(t, "inferencex/golden_al_distribution/"+set.Name+".yaml")), string(ours))
	}
}

func TestGoldenALRules(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []wantErr
	}{
		{name: "unknown thinking mode", doc: "m:\n  thinking_maybe:\n    1: 1.5\n", want: []wantErr{{2, "m.thinking_maybe", "unknown key"}}},
		{name: "AL below one", doc: "m:\n  thinking_on:\n    1: 0.5\n", want: []wantErr{{3, "m.thinking_on.1", "must be >= 1"}}},
		{name: "token count not an integer", doc: "m:\n  thinking_on:\n    one: 1.5\n", want: []wantErr{{3, "m.thinking_on", "must be an integer"}}},
		{name: "duplicate token count", doc: "m:\n  thinking_on:\n    1: 1.5\n    1: 1.6\n", want: []wantErr{{4, "m.thinking_on.1", "duplicate key"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"al/x.yaml": {Data: []byte(tc.doc)}}
			_, err := LoadGoldenAL(fsys, "al")
			assertErrors(t, "al/x.yaml", err, tc.want)
		})
	}
}
