package main

import (
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpTextsHaveACommand keeps help/ free of texts no command shows:
// help/<file>.txt belongs to the command in <file>.go, which uses it.
func TestHelpTextsHaveACommand(t *testing.T) {
	names, err := fs.Glob(help, "help/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	for _, n := range names {
		file := strings.TrimSuffix(strings.TrimPrefix(n, "help/"), ".txt")
		src, err := os.ReadFile(file + ".go")
		if !assert.NoError(t, err, "%s has no command file", n) {
			continue
		}
		assert.Contains(t, string(src), `helpText("`+file+`")`, "%s.go does not show %s", file, n)
	}
}
