package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckReplace: an output replaces nothing but its own files.
func TestCheckReplace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	own := Own{Kind: "noise file", Writer: "sweep x", Example: "noise.json", Is: func(b []byte) bool { return strings.HasPrefix(string(b), "noise") }}
	tests := []struct {
		name, path, err string
	}{
		{"a new file", filepath.Join(dir, "new.json"), ""},
		{"its own file", write("old.json", "noise 1"), ""},
		{"another file", write("result.json", `{"conc": 4}`), "exists and is not a noise file (sweep x replaces only its own): name another file, or remove it first"},
		{"an empty file", write("empty", ""), "is not a noise file"},
		{"a directory", dir, "is a directory: name a file (" + filepath.Join(dir, "noise.json") + ")"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReplace(tc.path, own)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.err)
		})
	}
}
