package pyjson

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The expected values are json.dumps(s) and json.dumps(s, ensure_ascii=False).
func TestAppendString(t *testing.T) {
	tests := []struct {
		name, in, ascii, utf8 string
	}{
		{"empty", "", `""`, `""`},
		{"plain", "lmsysorg/sglang:v0.5.16", `"lmsysorg/sglang:v0.5.16"`, `"lmsysorg/sglang:v0.5.16"`},
		{"html characters stay", "<a&b>", `"<a&b>"`, `"<a&b>"`},
		{"quote and backslash", `say "hi" \ bye`, `"say \"hi\" \\ bye"`, `"say \"hi\" \\ bye"`},
		{"short escapes", "a\nb\rc\td\be\ff", `"a\nb\rc\td\be\ff"`, `"a\nb\rc\td\be\ff"`},
		{"other control characters", "\x00\x01\x1f", `"\u0000\u0001\u001f"`, `"\u0000\u0001\u001f"`},
		{"DEL is escaped only in ASCII mode", "\x7f", `"\u007f"`, "\"\x7f\""},
		{"latin-1", "model-ü", `"model-\u00fc"`, `"model-ü"`},
		{"BMP", "✓", `"\u2713"`, `"✓"`},
		{"astral plane as surrogate pair", "😀", `"\ud83d\ude00"`, `"😀"`},
		{"invalid UTF-8", "a\xffb", `"a\ufffdb"`, "\"a\ufffdb\""},
		{"mixed", "a\x7fü\x00😀\xffz", `"a\u007f\u00fc\u0000\ud83d\ude00\ufffdz"`, "\"a\x7fü\\u0000😀\ufffdz\""},
		{"escape after a long plain run", "0123456789abcdef\"x", `"0123456789abcdef\"x"`, `"0123456789abcdef\"x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ascii, string(AppendString(nil, tc.in, true)), "ensure_ascii=True of %q", tc.in)
			assert.Equal(t, tc.utf8, string(AppendString(nil, tc.in, false)), "UTF-8 output of %q", tc.in)
			assert.Equal(t, "x"+tc.ascii, string(AppendString([]byte("x"), tc.in, true)), "appends to b")
		})
	}
}
