package matrix

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Expected values are Python's fnmatch.fnmatchcase(name, pattern).
func TestFnmatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"dsr1-*", "dsr1-fp4", true},
		{"*", "", true},
		{"?", "a", true},
		{"?", "", false},
		{"[ab]x", "bx", true},
		{"[!ab]x", "bx", false},
		{"[!ab]x", "cx", true},
		{"[a-c]", "b", true},
		{"[c-a]", "b", false},
		{"[]]", "]", true},
		{"[!]]", "a", true},
		{"[", "[", true},
		{"a[b", "a[b", true},
		{"*-agentic*", "x-agentic-mtp", true},
		{"dsr1-fp[48]-b200-*", "dsr1-fp8-b200-sglang", true},
		{"a*b*c", "abXbc", true},
		{"a*b*c", "acb", false},
		{"[a-]", "-", true},
		{"*.*", "a.b", true},
		{"**a", "ba", true},
		{"Dsr1-*", "dsr1-fp4", false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, fnmatch(tc.pattern, tc.name), "fnmatch(%q, %q)", tc.pattern, tc.name)
	}
}
