package configs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entryDoc is one changelog entry (lines 1-6); extra lines follow line 6.
func entryDoc(extra string) string {
	return `- config-keys:
    - dsr1-fp4-mi355x-sglang
  description:
    - "Bump the image."
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1
` + extra
}

func TestParseChangelogRules(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []wantErr
	}{
		{name: "valid", doc: entryDoc("")},
		{name: "valid with every optional key", doc: entryDoc("  scenario-type:\n    - fixed-seq-len\n    - agentic-coding\n  evals-only: true\n  all-evals: false\n  eval-min-prefill-ep: 8\n")},
		{name: "valid append-only", doc: entryDoc("  append-only: true\n")},
		{name: "valid empty file", doc: ""},
		{name: "extra key", doc: entryDoc("  owner: me\n"),
			want: []wantErr{{6, "entry[1].owner", `unknown key "owner"`}}},
		{name: "config-keys empty", doc: strings.Replace(entryDoc(""), "- config-keys:\n    - dsr1-fp4-mi355x-sglang\n", "- config-keys: []\n", 1),
			want: []wantErr{{1, "entry[1].config-keys", "at least one config key"}}},
		{name: "config-keys not a list", doc: strings.Replace(entryDoc(""), "- config-keys:\n    - dsr1-fp4-mi355x-sglang\n", "- config-keys: dsr1\n", 1),
			want: []wantErr{{1, "entry[1].config-keys", "must be a list"}}},
		{name: "description missing", doc: strings.Replace(entryDoc(""), "  description:\n    - \"Bump the image.\"\n", "", 1),
			want: []wantErr{{1, "entry[1].description", "required key is missing"}}},
		{name: "description empty", doc: strings.Replace(entryDoc(""), "  description:\n    - \"Bump the image.\"\n", "  description: []\n", 1),
			want: []wantErr{{3, "entry[1].description", "at least one line"}}},
		{name: "pr-link missing", doc: strings.Replace(entryDoc(""), "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n", "", 1),
			want: []wantErr{{1, "entry[1].pr-link", "required key is missing"}}},
		{name: "scenario-type empty", doc: entryDoc("  scenario-type: []\n"),
			want: []wantErr{{6, "entry[1].scenario-type", "at least one scenario type"}}},
		{name: "scenario-type unsupported", doc: entryDoc("  scenario-type: [unsupported]\n"),
			want: []wantErr{{6, "entry[1].scenario-type[0]", `unknown scenario type "unsupported"`}}},
		{name: "append-only with evals-only", doc: entryDoc("  append-only: true\n  evals-only: true\n"),
			want: []wantErr{{6, "entry[1].append-only", "cannot be combined with eval selection (evals-only)"}}},
		{name: "append-only with all-evals and eval-min-prefill-ep", doc: entryDoc("  append-only: true\n  all-evals: true\n  eval-min-prefill-ep: 2\n"),
			want: []wantErr{{6, "entry[1].append-only", "(all-evals, eval-min-prefill-ep)"}}},
		{name: "eval-min-prefill-ep zero", doc: entryDoc("  eval-min-prefill-ep: 0\n"),
			want: []wantErr{{6, "entry[1].eval-min-prefill-ep", "must be >= 1"}}},
		{name: "evals-only not a bool", doc: entryDoc("  evals-only: maybe\n"),
			want: []wantErr{{6, "entry[1].evals-only", "must be true or false"}}},
		{name: "duplicate key", doc: entryDoc("  pr-link: XXX\n"),
			want: []wantErr{{6, "entry[1].pr-link", "duplicate key (first defined at line 5)"}}},
		{name: "entry not a mapping", doc: entryDoc("- just text\n"),
			want: []wantErr{{6, "entry[2]", "must be a mapping"}}},
		{name: "root not a list", doc: "config-keys: [a]\n",
			want: []wantErr{{1, "", "must be a list of entries"}}},
		{name: "second entry problems are reported too", doc: entryDoc("\n") + strings.Replace(entryDoc(""), "pr-link:", "pr-lnk:", 1),
			want: []wantErr{{11, "entry[2].pr-lnk", `did you mean "pr-link"?`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := ParseChangelog("perf-changelog.yaml", []byte(tc.doc))
			assertErrors(t, "perf-changelog.yaml", err, tc.want)
			if len(tc.want) == 0 && tc.doc != "" {
				require.NotEmpty(t, entries)
			}
		})
	}
}

func TestParseChangelogValues(t *testing.T) {
	entries, err := ParseChangelog("c.yaml", []byte(entryDoc("  scenario-type: [agentic-coding]\n  eval-min-prefill-ep: 4\n")+"\n"+entryDoc("  append-only: true\n")))
	require.NoError(t, err)
	require.Len(t, entries, 2)
	e := entries[0]
	assert.Equal(t, []string{"dsr1-fp4-mi355x-sglang"}, e.ConfigKeys)
	assert.Equal(t, []Pos{{File: "c.yaml", Line: 2, Col: 7}}, e.ConfigKeyPos)
	assert.Equal(t, []string{"Bump the image."}, e.Description)
	assert.Equal(t, "https://github.com/SemiAnalysisAI/InferenceX/pull/1", e.PRLink)
	assert.Equal(t, Pos{File: "c.yaml", Line: 5, Col: 12}, e.PRLinkPos)
	assert.Equal(t, []string{"agentic-coding"}, e.ScenarioType)
	require.NotNil(t, e.EvalMinPrefillEP)
	assert.Equal(t, 4, *e.EvalMinPrefillEP)
	assert.Equal(t, []string{"config-keys", "description", "pr-link", "scenario-type", "eval-min-prefill-ep"}, e.Keys)
	assert.Equal(t, 1, e.Index)
	assert.True(t, entries[1].AppendOnly)
	assert.Nil(t, entries[1].ScenarioType)
	assert.Equal(t, 2, entries[1].Index)
	assert.Equal(t, 9, entries[1].Pos.Line)
}

func TestCheckChangelogFileRules(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []wantErr
	}{
		{name: "valid", doc: entryDoc("")},
		{name: "tab", doc: strings.Replace(entryDoc(""), "    - \"Bump", "\t- \"Bump", 1),
			want: []wantErr{{4, "", "line contains a tab"}}},
		{name: "CR line endings", doc: strings.ReplaceAll(entryDoc(""), "\n", "\r\n"),
			want: []wantErr{{1, "", "CR byte"}, {2, "", "CR byte"}, {3, "", "CR byte"}, {4, "", "CR byte"}, {5, "", "CR byte"}}},
		{name: "NUL byte", doc: strings.Replace(entryDoc(""), "Bump", "Bu\x00mp", 1),
			want: []wantErr{{4, "", "NUL byte"}}},
		{name: "no final newline", doc: strings.TrimSuffix(entryDoc(""), "\n"),
			want: []wantErr{{5, "", "does not end with a newline"}}},
		{name: "invalid UTF-8", doc: strings.Replace(entryDoc(""), "Bump", "B\xffump", 1),
			want: []wantErr{{4, "", "not valid UTF-8"}}},
		{name: "entry not starting with config-keys", doc: "- description:\n    - x\n  config-keys: [a]\n  pr-link: XXX\n",
			want: []wantErr{{1, "entry[1]", `must start with a "- config-keys:" line`}}},
		{name: "indented entries", doc: "  - config-keys: [a]\n    description: [x]\n    pr-link: XXX\n",
			want: []wantErr{{1, "entry[1]", `must start with a "- config-keys:" line`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckChangelog("perf-changelog.yaml", []byte(tc.doc))
			assertErrors(t, "perf-changelog.yaml", err, tc.want)
		})
	}
}
