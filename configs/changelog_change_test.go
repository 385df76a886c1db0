package configs

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// changeBase is a two-entry changelog: entry 1 on lines 1-5, an empty line
// 6, entry 2 on lines 7-11.
const changeBase = `- config-keys:
    - dsr1-fp4-mi355x-sglang
  description:
    - "Bump the image."
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1

- config-keys:
    - dsr1-fp4-mi355x-atom
  description:
    - "Tune the atom recipe."
  pr-link: XXX
`

// newEntry is an entry to append, with the given pr-link.
func newEntry(link string) string {
	return "- config-keys:\n    - qwen3.5-fp8-mi325x-sglang-agentic-mtp\n  description:\n    - \"Add points.\"\n  pr-link: " + link + "\n"
}

func TestCheckChangelogChange(t *testing.T) {
	const pr = "https://github.com/SemiAnalysisAI/InferenceX/pull/2566"
	tests := []struct {
		name        string
		base, head  string
		baseErrs    []wantErr // positioned in base.yaml
		want        []wantErr // positioned in head.yaml
		added       int
		corrections int
	}{
		{name: "unchanged", base: changeBase, head: changeBase},
		{name: "one entry appended", base: changeBase, head: changeBase + "\n" + newEntry(pr), added: 1},
		{name: "two entries appended", base: changeBase, head: changeBase + "\n" + newEntry(pr) + "\n" + newEntry("XXX"), added: 2},
		{name: "placeholder pull URL", base: changeBase, head: changeBase + "\n" + newEntry("https://github.com/SemiAnalysisAI/InferenceX/pull/XXX"), added: 1},
		{name: "base ending in an empty line", base: changeBase + "\n", head: changeBase + "\n" + newEntry(pr), added: 1},
		{name: "new file", base: "", head: "# header comment\n\n" + newEntry(pr), added: 1},
		{name: "pr-link correction", base: changeBase, head: strings.Replace(changeBase, "pr-link: XXX", "pr-link: "+pr, 1), corrections: 1},

		{name: "appended without an empty line", base: changeBase, head: changeBase + newEntry(pr),
			want: []wantErr{{12, "", "preceded by 0 empty lines"}}},
		{name: "appended after two empty lines", base: changeBase, head: changeBase + "\n\n" + newEntry(pr),
			want: []wantErr{{14, "", "preceded by 2 empty lines"}}},
		{name: "second appended entry without separator", base: changeBase, head: changeBase + "\n" + newEntry(pr) + newEntry(pr),
			want: []wantErr{{18, "", "preceded by 0 empty lines"}}},
		{name: "trailing empty line", base: changeBase, head: changeBase + "\n" + newEntry(pr) + "\n",
			want: []wantErr{{18, "", "ends with an empty line"}}},
		{name: "only empty lines appended", base: changeBase, head: changeBase + "\n",
			want: []wantErr{{12, "", "only empty lines were appended"}}},
		{name: "line deleted", base: changeBase, head: strings.Replace(changeBase, "    - \"Tune the atom recipe.\"\n", "", 1),
			baseErrs: []wantErr{{10, "", `line deleted or rewritten in head head.yaml: "    - \"Tune the atom recipe.\""`}},
			want:     []wantErr{{9, "entry[2].description", "must be a list, got null"}}},
		{name: "empty separator deleted", base: changeBase, head: strings.Replace(changeBase, "pull/1\n\n", "pull/1\n", 1),
			baseErrs: []wantErr{{6, "", "deleted (an empty line)"}}},
		{name: "entry deleted", base: changeBase, head: changeBase[:strings.Index(changeBase, "\n\n")+1],
			baseErrs: []wantErr{
				{6, "", "empty line"}, {7, "", `"- config-keys:"`}, {8, "", "dsr1-fp4-mi355x-atom"},
				{9, "", "description"}, {10, "", "Tune"}, {11, "", "pr-link: XXX"},
			}},
		{name: "description rewritten", base: changeBase, head: strings.Replace(changeBase, "Bump the image.", "Bump the image again.", 1),
			baseErrs: []wantErr{{4, "", `"    - \"Bump the image.\""`}},
			want:     []wantErr{{4, "", "line inserted among historical entries (before base line 5)"}}},
		{name: "entry inserted in the middle", base: changeBase, head: strings.Replace(changeBase, "pull/1\n\n", "pull/1\n\n"+newEntry(pr)+"\n", 1),
			want: []wantErr{
				{8, "", "line inserted among historical entries (before base line 8)"}, {9, "", "inserted"}, {10, "", "inserted"},
				{11, "", "inserted"}, {12, "", `inserted among historical entries (before base line 8): ""`}, {13, "", `"- config-keys:"`},
			}},
		{name: "line appended to the last entry", base: changeBase, head: changeBase + "  evals-only: true\n",
			want: []wantErr{{12, "", "line appended to the last historical entry"}}},
		{name: "pr-link correction to a placeholder", base: changeBase, head: strings.Replace(changeBase, "pull/1\n", "pull/XXX\n", 1),
			want: []wantErr{{5, "pr-link", "is not a pull request URL"}}},
		{name: "pr-link reformatted", base: changeBase, head: strings.Replace(changeBase, "pr-link: XXX", "pr-link:  XXX", 1),
			want: []wantErr{{11, "pr-link", "reformatted without changing the link"}}},
		{name: "correction mixed with an appended entry", base: changeBase, head: strings.Replace(changeBase, "pr-link: XXX", "pr-link: "+pr, 1) + "\n" + newEntry(pr),
			want: []wantErr{{12, "", "do not mix pr-link corrections"}}},
		{name: "new entry with a bad pr-link", base: changeBase, head: changeBase + "\n" + newEntry("see slack"),
			want: []wantErr{{17, "pr-link", `new entry's pr-link "see slack" must be a pull request URL`}}},
		{name: "append-only mixed with regular entries", base: changeBase, head: changeBase + "\n" + newEntry(pr) + "  append-only: true\n\n" + newEntry(pr),
			want: []wantErr{{13, "append-only", "1 of the 2 new entries are append-only"}}},
		{name: "appended entry breaks the schema", base: changeBase, head: changeBase + "\n" + strings.Replace(newEntry(pr), "description", "descr", 1),
			want: []wantErr{{13, "entry[3].description", "required key is missing"}, {15, "entry[3].descr", `unknown key "descr"`}}},
		{name: "tab in appended entry", base: changeBase, head: changeBase + "\n" + strings.Replace(newEntry(pr), "    - \"Add", "\t- \"Add", 1),
			want: []wantErr{{16, "", "line contains a tab"}}},
		{name: "no final newline", base: changeBase, head: strings.TrimSuffix(changeBase+"\n"+newEntry(pr), "\n"),
			want: []wantErr{{17, "", "does not end with a newline"}}},
		{name: "base without final newline", base: strings.TrimSuffix(changeBase, "\n"), head: changeBase + "\n" + newEntry(pr),
			baseErrs: []wantErr{{11, "", "base changelog does not end with a newline"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := CheckChangelogChange(Source{Name: "base.yaml", Data: []byte(tc.base)}, Source{Name: "head.yaml", Data: []byte(tc.head)})
			var baseGot, headGot []*Error
			for _, e := range Errors(err) {
				if e.File == "base.yaml" {
					baseGot = append(baseGot, e)
				} else {
					headGot = append(headGot, e)
				}
			}
			assertErrors(t, "base.yaml", joinErrors(baseGot), tc.baseErrs)
			assertErrors(t, "head.yaml", joinErrors(headGot), tc.want)
			if len(tc.want)+len(tc.baseErrs) == 0 {
				require.NotNil(t, ch)
				assert.Len(t, ch.Added, tc.added)
				assert.Equal(t, tc.corrections, ch.Corrections)
			}
		})
	}
}

// TestCheckChangelogChangeInferenceX replays the last appends of
// InferenceX's own changelog: each must pass the rules, with the added
// entry positioned in the head file.
func TestCheckChangelogChangeInferenceX(t *testing.T) {
	data := readTestdata(t, "inferencex/configs/perf-changelog.yaml")
	starts := entryStarts(data)
	require.Greater(t, len(starts), 700)
	for _, n := range []int{len(starts) - 1, len(starts) - 2, len(starts) - 3} {
		base := data[:starts[n]]
		head := data
		if n+1 < len(starts) {
			head = data[:starts[n+1]]
			head = []byte(strings.TrimRight(string(head), "\n ") + "\n")
		}
		ch, err := CheckChangelogChange(Source{Name: "base", Data: base}, Source{Name: "head", Data: head})
		require.NoError(t, err, "entry %d", n+1)
		require.Len(t, ch.Added, 1)
		assert.Equal(t, n+1, ch.Added[0].Index)
	}
	entries, err := ParseChangelog("perf-changelog.yaml", data)
	require.NoError(t, err)
	assert.Len(t, entries, len(starts))
}

// entryStarts returns the byte offsets of lines starting with "- ".
func entryStarts(data []byte) []int {
	var starts []int
	off := 0
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte("- ")) {
			starts = append(starts, off)
		}
		off += len(line)
	}
	return starts
}
