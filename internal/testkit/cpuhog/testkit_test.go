package cpuhog

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestKitsNotShipped keeps the test kits (internal/testkit, and
// sweep/testkit for the kits that build on sweep's own packages) out of the
// shipped code: only test files (and the kits themselves) may import them.
func TestKitsNotShipped(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.Contains(filepath.ToSlash(path), "internal/testkit/") || strings.Contains(filepath.ToSlash(path), "sweep/testkit/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(p, "sweep/internal/testkit/") || strings.HasPrefix(p, "sweep/sweep/testkit/") {
				t.Errorf("%s imports %s: test kits are for tests only", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("walked only %d Go files from %s", n, root)
	}
}
