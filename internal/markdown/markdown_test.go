package markdown

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"qwen3.5 mi325x-amds sglang fp8 tp8", "qwen3.5 mi325x-amds sglang fp8 tp8"},
		{"a | b", `a \| b`},
		{"error rate 20%\n# Approved\n", `error rate 20% \# Approved `},
		{"line\r\nnext\ttab", "line  next tab"},
		{"[click](https://evil.example/x)", `\[click\](https://evil.example/x)`},
		{"![x](https://evil.example/p.png)", `\!\[x\](https://evil.example/p.png)`},
		{`<img src="https://evil.example/p.png">`, `\<img src="https://evil.example/p.png"\>`},
		{"**bold** _em_ ~~del~~ `code` $x$ &amp;", `\*\*bold\*\* \_em\_ \~\~del\~\~ \` + "`" + `code\` + "`" + ` \$x\$ \&amp;`},
		{`back\slash`, `back\\slash`},
		{"sep\u2028and\u0085", "sep and "},
		{"ünïcode ✓", "ünïcode ✓"},
	}
	for _, tc := range tests {
		got := Cell(tc.in)
		assert.Equal(t, tc.want, got, "Cell(%q)", tc.in)
		assert.NotContains(t, got, "\n")
		assert.NotContains(t, got, "\r")
	}
}

// TestCellNeverBreaksOut: whatever the input, no unescaped special
// character and no line break is left.
func TestCellNeverBreaksOut(t *testing.T) {
	var in strings.Builder
	for r := rune(0); r < 0x300; r++ {
		in.WriteRune(r)
	}
	got := Cell(in.String())
	escaped := false
	for _, r := range got {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r < 0x20 || r == 0x7f || r == 0x85:
			t.Fatalf("control character %U left", r)
		case r < 0x80 && strings.ContainsRune(special, r):
			t.Fatalf("unescaped %q", r)
		}
	}
}

// TestHTML: text inside raw HTML (a <details><summary>) is HTML-escaped,
// never backslash-escaped (GitHub reads no Markdown there and showed
// "p \< 0.001"), and keeps to one line (a blank line ends the block).
func TestHTML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"qwen3.5 mi325x-amds sglang fp8 tp8", "qwen3.5 mi325x-amds sglang fp8 tp8"},
		{"left out (p < 0.001): a change", "left out (p &lt; 0.001): a change"},
		{`<img src="x"> & [x](http://e) | *a* arm's`, `&lt;img src="x"&gt; &amp; [x](http://e) | *a* arm's`},
		{"</summary>\n\n# heading", "&lt;/summary&gt;  # heading"},
		{"sep\u2028and\u0085\r", "sep and  "},
	} {
		got := HTML(tc.in)
		assert.Equal(t, tc.want, got, "HTML(%q)", tc.in)
		assert.NotContains(t, got, `\`)
	}
}
