package schema

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEmbeddedCatalog(t *testing.T) {
	c, err := Embedded()
	require.NoError(t, err)
	var ids []string
	for _, s := range c.All() {
		ids = append(ids, s.ID())
	}
	assert.Equal(t, []string{"aiperf@0.12.0", "aiperf@sa-754356e9", "lmcache@0.5.3", "sglang@v0.5.16", "sglang@v0.5.17", "smg@v1.9.0-193-gf8daa883", "vllm@v0.27.1"}, ids)

	aiperf := MustLoad("aiperf", "")
	assert.Equal(t, "aiperf@0.12.0", aiperf.ID())
	assert.Len(t, aiperf.Flags, 259)
	spellings := 0
	negatives := 0
	for _, f := range aiperf.Flags {
		spellings += len(f.Spellings())
		if f.Negative != "" {
			negatives++
		}
	}
	assert.Equal(t, 316, spellings, "259 names + 48 aliases + 9 negative forms")
	assert.Equal(t, 9, negatives)

	assert.Equal(t, "sglang@v0.5.17", MustLoad("sglang", "").ID())
	assert.Equal(t, "sglang@v0.5.16", MustLoad("sglang", "0.5.16").ID(), "a leading v is optional")
	fork := MustLoad("aiperf", "sa-754356e9")
	assert.Len(t, fork.Flags, 263)
	_, ok := fork.Lookup("--warmup-requests-per-lane")
	assert.True(t, ok)
	_, ok = aiperf.Lookup("--warmup-requests-per-lane")
	assert.False(t, ok)

	smg := MustLoad("smg", "")
	assert.Equal(t, "smg@v1.9.0-193-gf8daa883", smg.ID())
	tools, ok := smg.Lookup("--tool-call-parser")
	require.True(t, ok)
	assert.False(t, tools.OpenChoices, "SMG's argparse refuses a tool-call parser outside its registry")
	assert.Len(t, tools.Choices, 22)
}

func TestCatalogErrors(t *testing.T) {
	c, err := Embedded()
	require.NoError(t, err)
	_, err = c.Get("trtllm", "")
	assert.EqualError(t, err, `no schema for tool "trtllm" (known: aiperf, lmcache, sglang, smg, vllm)`)
	_, err = c.Resolve("aiperf@0.13.0")
	assert.EqualError(t, err, "no schema for aiperf@0.13.0 (known versions: 0.12.0, sa-754356e9)")
}

func TestLoadFSRejectsBadSchemas(t *testing.T) {
	tests := []struct {
		name, file, body, want string
	}{
		{name: "unknown key", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\nflagz: []\n",
			want: "field flagz not found"},
		{name: "file name", file: "y@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\n",
			want: "the file must be named x@1.yaml"},
		{name: "bad type", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\nflags:\n  - {name: --a, type: integer}\n",
			want: "d/x@1.yaml:5:5: flag --a: type \"integer\""},
		{name: "duplicate spelling", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\nflags:\n  - {name: --a, type: int}\n  - {name: --b, aliases: [--a], type: int}\n",
			want: "spelling --a belongs to both --a and --b"},
		{name: "rule names unknown flag", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\nflags:\n  - {name: --a, type: int}\nrules:\n  - {id: r, kind: requires, flags: [--a], needs: [--c]}\n",
			want: "d/x@1.yaml:7:5: rule r names unknown flag --c"},
		{name: "unknown value format", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\nflags:\n  - {name: --a, type: string, format: search-space}\n",
			want: "d/x@1.yaml:5:5: flag --a: format \"search-space\": want one of [search_space]"},
		{name: "non_default on a conflicts rule", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\nflags:\n  - {name: --a, type: int}\n  - {name: --b, type: int}\nrules:\n  - {id: r, kind: conflicts, flags: [--a, --b], non_default: true}\n",
			want: "d/x@1.yaml:8:5: rule r: non_default applies only to requires_* rules"},
		{name: "requires_not_value with two needs", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\nflags:\n  - {name: --a, type: int}\n  - {name: --b, type: int}\nrules:\n  - {id: r, kind: requires_not_value, flags: [--a], needs: [--a, --b], value: \"1\"}\n",
			want: "d/x@1.yaml:8:5: rule r: requires_not_value needs exactly one flag in needs"},
		{name: "reads on a flag that is no path", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nfamily: argparse\nflags:\n  - {name: --a, type: string, reads: true}\n",
			want: "d/x@1.yaml:5:5: flag --a: only a path flag reads (reads: true)"},
		{name: "extends unknown", file: "x@1.yaml", body: "tool: x\nversion: \"1\"\nextends: x@0\n",
			want: "extends unknown schema x@0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadFS(fstest.MapFS{"d/" + tc.file: {Data: []byte(tc.body)}}, "d")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "d/"+tc.file)
		})
	}
}

// Deprecated flags parse with a warning; the schema's own loader resolves extends.
func TestDeprecatedAndExtends(t *testing.T) {
	fsys := fstest.MapFS{
		"d/t@1.yaml": {Data: []byte("tool: t\nversion: \"1\"\nfamily: argparse\nflags:\n  - {name: --old, type: int, deprecated: use --new}\n  - {name: --new, type: int}\n")},
		"d/t@2.yaml": {Data: []byte("tool: t\nversion: \"2\"\ndefault: true\nextends: t@1\nflags:\n  - {name: --old, type: int, removed: gone in 2; use --new}\n")},
	}
	c, err := LoadFS(fsys, "d")
	require.NoError(t, err)
	v1, err := c.Get("t", "1")
	require.NoError(t, err)
	p, err := v1.Parse([]string{"--old", "3"})
	require.NoError(t, err)
	require.Len(t, p.Warnings, 1)
	assert.Equal(t, Deprecated, p.Warnings[0].Kind)
	assert.Equal(t, "warning: t 1: --old: deprecated: use --new", p.Warnings[0].Error())
	v2, err := c.Get("t", "")
	require.NoError(t, err)
	_, err = v2.Parse([]string{"--old", "3"})
	assert.Equal(t, []problem{{RemovedFlag, "--old"}}, problemsOf(err))
	_, err = v2.Parse([]string{"--new", "3"})
	assert.NoError(t, err)
}

// The engine schemas are derived from the engines' own argument definitions; the number of
// flags that are not marked curated equals the count recorded in the provenance, and the
// provenance names the repository, the commit and the files read.
func TestEngineSchemaProvenance(t *testing.T) {
	tests := []struct {
		id               string
		derived, curated int
		complete         bool
	}{
		{"sglang@v0.5.16", 497, 1, true},
		{"sglang@v0.5.17", 497, 1, true}, // extends v0.5.16 unchanged
		{"vllm@v0.27.1", 305, 13, true},
		{"smg@v1.9.0-193-gf8daa883", 152, 0, true},
	}
	c, err := Embedded()
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			s, err := c.Resolve(tc.id)
			require.NoError(t, err)
			require.NotEmpty(t, s.Provenance)
			recorded := 0
			for _, p := range s.Provenance {
				assert.NotEmpty(t, p.Repository)
				assert.Len(t, p.Commit, 40)
				assert.NotEmpty(t, p.Files)
				recorded += p.Flags
			}
			derived, curated := 0, 0
			for _, f := range s.Flags {
				if f.Curated {
					curated++
				} else {
					derived++
				}
			}
			assert.Equal(t, recorded, derived, "flags not marked curated must match the provenance count")
			assert.Equal(t, tc.derived, derived)
			assert.Equal(t, tc.curated, curated)
			assert.Equal(t, tc.complete, s.Complete)
		})
	}
}

// A misspelt engine flag is unknown and gets the closest real spelling.
func TestEngineFlagDidYouMean(t *testing.T) {
	tests := []struct {
		tool    string
		argv    []string
		flag    string
		suggest string
	}{
		{"vllm", []string{"serve", "m", "--max-num-seq", "8"}, "--max-num-seq", "--max-num-seqs"},
		{"vllm", []string{"serve", "m", "--gpu-memory-utilisation", "0.9"}, "--gpu-memory-utilisation", "--gpu-memory-utilization"},
		{"vllm", []string{"serve", "m", "--enable-prefix-cache"}, "--enable-prefix-cache", "--enable-prefix-caching"},
		{"sglang", []string{"--model-path", "m", "--mem-fraction-statc", "0.8"}, "--mem-fraction-statc", "--mem-fraction-static"},
		{"sglang", []string{"--model-path", "m", "--speculative-num-stpes", "3"}, "--speculative-num-stpes", "--speculative-num-steps"},
		{"sglang", []string{"--model-path", "m", "--enable-hierarchical-cahce"}, "--enable-hierarchical-cahce", "--enable-hierarchical-cache"},
	}
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			s := MustLoad(tc.tool, "")
			_, err := s.Parse(tc.argv)
			var unknown *Error
			for _, pe := range Problems(err) {
				if pe.Kind == UnknownFlag {
					unknown = pe
				}
			}
			require.NotNil(t, unknown, "argv %q: %v", tc.argv, err)
			assert.Equal(t, tc.flag, unknown.Spelling)
			assert.Equal(t, tc.suggest, unknown.Suggestion)
		})
	}
}
