package configs

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plantAt applies edit to line n (1-based) of data.
func plantAt(t *testing.T, data []byte, n int, edit func(string) string) []byte {
	t.Helper()
	lines := strings.SplitAfter(string(data), "\n")
	require.Less(t, n-1, len(lines))
	lines[n-1] = edit(lines[n-1])
	return []byte(strings.Join(lines, ""))
}

// lineOf returns the 1-based line of the first line of data at or after
// line from that starts with prefix (after trimming nothing).
func lineOf(t *testing.T, data []byte, from int, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 >= from && strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starting with %q after line %d", prefix, from)
	return 0
}

// TestSyntaxErrorPosition plants indentation mistakes deep in the shipped
// AMD master config and checks that the error names the planted line, not
// the line yaml.v3 prints (the enclosing construct's, 0-based).
func TestSyntaxErrorPosition(t *testing.T) {
	master, err := fs.ReadFile(Embedded(), "amd-master.yaml")
	require.NoError(t, err)
	top := lineOf(t, master, 1, "dsr1") // the top-level mapping's first key
	// The "runner:" line of an agentic entry 200 or more lines into the file.
	runner := lineOf(t, master, 200, "  runner: cluster:")
	// The second item of the first search-space list after it.
	item := lineOf(t, master, lineOf(t, master, runner, "          - {")+1, "          - {")
	require.Contains(t, strings.Split(string(master), "\n")[item-1], "]}")

	tests := []struct {
		name    string
		line    int
		edit    func(string) string
		wantCol int
		want    []string // substrings of the message
	}{
		{name: "key dedented by one", line: runner, edit: func(s string) string { return s[1:] }, wantCol: 2,
			want: []string{"did not find expected key", fmt.Sprintf("does not continue the block mapping that starts at line %d (keys at column 1)", top)}},
		{name: "key indented by one", line: runner, edit: func(s string) string { return " " + s }, wantCol: 10,
			want: []string{"mapping values are not allowed in this context"}},
		{name: "sequence item indented by one", line: item, edit: func(s string) string { return " " + s }, wantCol: 12,
			want: []string{"did not find expected '-' indicator", "block sequence that starts at line"}},
		{name: "flow sequence not closed", line: item, edit: func(s string) string { return strings.Replace(s, "]}", "}", 1) }, wantCol: 0,
			want: []string{"did not find expected ',' or ']'"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := plantAt(t, master, tc.line, tc.edit)
			_, err := ParseMasters(Source{Name: "amd.yaml", Data: data})
			errs := Errors(err)
			require.Len(t, errs, 1, "%v", err)
			got := errs[0]
			assert.Equal(t, tc.line, got.Line, "%v", got)
			if tc.wantCol > 0 {
				assert.Equal(t, tc.wantCol, got.Col, "%v", got)
			}
			for _, w := range tc.want {
				assert.Contains(t, got.Msg, w)
			}
		})
	}
}

// TestSyntaxErrorEarlierConstruct: when the failing token is far from the
// construct that broke (an unclosed flow list), the message names the
// construct's line.
func TestSyntaxErrorEarlierConstruct(t *testing.T) {
	doc := "k:\n  a: [1, 2,\n     3\n  b: c\n"
	// Line 3 is the last the list could have been closed on: every
	// prefix that includes it fails the same way.
	_, err := ParseRunners(Source{Name: "r.yaml", Data: []byte(doc)})
	errs := Errors(err)
	require.Len(t, errs, 1, "%v", err)
	assert.Equal(t, 3, errs[0].Line, "%v", errs[0])
	assert.Contains(t, errs[0].Msg, "the cause is the flow sequence opened at line 2")
}

func TestSyntaxPosNoReproduction(t *testing.T) {
	line, col := syntaxPos([]byte("a: b\n"), "yaml: line 1: something else")
	assert.Zero(t, line)
	assert.Zero(t, col)
	assert.Equal(t, []int{2, 4}, lineEnds([]byte("a\nbc")))
	assert.Equal(t, 3, blockColumn([]byte("x\n- a: 1\n"), 2, true))
	assert.Equal(t, 1, blockColumn([]byte("x\n- a: 1\n"), 2, false))
	assert.True(t, bytes.Equal(plantAt(t, []byte("a\nb\n"), 2, strings.ToUpper), []byte("a\nB\n")))
}
