package matrix

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sweep/configs"
)

func TestAddedLines(t *testing.T) {
	tests := []struct {
		name       string
		base, head string
		want       string
		deleted    int // line number of the reported deletion, 0 for none
		col        int // its column
	}{
		{name: "pure append", base: "a\n\nb\n", head: "a\n\nb\n\nc\nd\n", want: "\n\n\n\nc\nd"},
		{name: "empty base", base: "", head: "x\ny\n", want: "x\ny"},
		{name: "insert in the middle", base: "a\nb\n", head: "a\nx\nb\n", want: "\nx"},
		{name: "rewritten line", base: "a\nb\nc\n", head: "a\nB\nc\nd\n", deleted: 2, col: 1},
		{name: "indented line rewritten: its column", base: "a:\n  b: 1\n", head: "a:\n  b: 2\n", deleted: 2, col: 3},
		{name: "blank line removed", base: "a\n\n\nb\n", head: "a\n\nb\nc\n", want: "\n\n\nc"},
		{name: "whitespace-only line removed", base: "a\n  \nb\n", head: "a\nb\nc\n", want: "\n\nc"},
		{name: "last line gains its newline", base: "a\nb", head: "a\nb\nc\n", deleted: 2, col: 1},
		{name: "deleted line starting with -- is not seen (as in InferenceX)", base: "a\n-- x\n", head: "a\nc\n", want: "\nc"},
		{name: "added line starting with ++ is dropped (as in InferenceX)", base: "a\n", head: "a\n++x\ny\n", want: "\n\ny"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := addedLines("base.yaml", []byte(tc.base), []byte(tc.head))
			if tc.deleted > 0 {
				de, ok := errors.AsType[*DeletionError](err)
				require.True(t, ok, "want *DeletionError, got %v", err)
				assert.Equal(t, tc.deleted, de.Line)
				assert.Equal(t, tc.col, de.Col)
				assert.Equal(t, "base.yaml", de.File)
				assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("base.yaml:%d:%d: deletions are not allowed", tc.deleted, tc.col)), "%v", err)
				assert.Contains(t, err.Error(), "found deleted line: "+de.Text)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestDiffLines(t *testing.T) {
	a := strings.Split("a b c a b b a", " ")
	b := strings.Split("c b a b a c", " ")
	del, ins := diffLines(a, b)
	// The classic Myers example: edit distance 5.
	assert.Equal(t, 5, len(del)+len(ins))
	// Applying the script must give b.
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case len(del) > 0 && del[0] == i:
			del = del[1:]
			i++
		case len(ins) > 0 && ins[0] == j:
			out = append(out, b[j])
			ins = ins[1:]
			j++
		default:
			require.Equal(t, a[i], b[j])
			out = append(out, a[i])
			i++
			j++
		}
	}
	assert.Equal(t, b, out)
}

const changelogBase = `- config-keys:
    - m-fixed
  description:
    - "first"
  pr-link: https://example.com/pull/1
`

func TestProcessChangelog(t *testing.T) {
	g := testGenerator(t, testMasters, testRunners)
	run := func(head string, o ChangelogOptions) (*Changelog, error) {
		o.Base = configs.Source{Name: "base.yaml", Data: []byte(changelogBase)}
		o.Head = configs.Source{Name: "head.yaml", Data: []byte(changelogBase + head)}
		return g.ProcessChangelog(o)
	}

	cl, err := run("\n- config-keys:\n    - 'm-*'\n  description:\n    - \"both\"\n  pr-link: https://example.com/pull/2\n",
		ChangelogOptions{BaseRef: "b", HeadRef: "h", TrimConc: true})
	require.NoError(t, err)
	require.Len(t, cl.SingleNode, 2)
	assert.Equal(t, "8k1k", cl.SingleNode[0].Name)
	assert.Equal(t, "agentic", cl.SingleNode[1].Name)
	assert.Equal(t, []string{"m_8k1k", "m_8k1k"}, []string{cl.SingleNode[0].Rows[0].ExpName, cl.SingleNode[0].Rows[1].ExpName})
	assert.Equal(t, []int{4, 1}, []int{cl.SingleNode[0].Rows[0].Conc, cl.SingleNode[0].Rows[1].Conc}, "trim-conc keeps the lowest conc")
	for _, r := range cl.Throughput() {
		assert.Equal(t, Fingerprint(r), r.RecipeFingerprint)
	}
	assert.Len(t, cl.Evals, 2, "highest and median conc >= 16 of the tp8 group")
	require.Len(t, cl.AgenticEvals, 1, "eval-only runs include agentic rows: the highest conc per model and runner")
	assert.Equal(t, 8, cl.AgenticEvals[0].Conc)
	b, err := cl.MarshalJSON()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"changelog_metadata":{"base_ref":"b","head_ref":"h","entries":[{"config-keys":["m-*"],"description":["both"],"pr-link":"https://example.com/pull/2","evals-only":false,"all-evals":false,"append-only":false}]}}`)

	_, err = run("", ChangelogOptions{})
	assert.ErrorContains(t, err, "no additions found")

	// Errors in the added entries point at head lines.
	_, err = run("\n- config-keys:\n    - m-fixed\n  descripton:\n    - x\n  pr-link: y\n", ChangelogOptions{})
	require.Error(t, err)
	ce := configs.Errors(err)
	require.NotEmpty(t, ce, "want positioned config errors, got %v", err)
	assert.Equal(t, "head.yaml", ce[0].File)
	assert.Equal(t, 9, ce[0].Line, "%v", err)

	_, err = run("\n- config-keys:\n    - nope\n  description:\n    - x\n  pr-link: y\n", ChangelogOptions{})
	assert.ErrorContains(t, err, `config key "nope" not found`)

	_, err = run("\n- config-keys:\n    - m-fixed\n  description:\n    - x\n  pr-link: y\n  append-only: true\n", ChangelogOptions{})
	assert.ErrorContains(t, err, "append-only entries need the base revision's master configs")
}
