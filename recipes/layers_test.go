package recipes_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFilesFormLayers checks that the package's files form layers: no file
// uses a name defined in a file that, through the names it uses, comes back
// to the first (ARCHITECTURE.md: shared helpers in files of their own).
func TestFilesFormLayers(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, n, src, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	// The compiler's export data of the imported packages (go list builds it).
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".").Output()
	require.NoError(t, err)
	export := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(l, " "); ok {
			export[path] = file
		}
	}
	lookup := func(path string) (io.ReadCloser, error) { return os.Open(export[path]) }
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	pkg, err := conf.Check("sweep/recipes", fset, files, info)
	require.NoError(t, err)

	home := map[types.Object]string{} // package-level names and methods → file
	for id, obj := range info.Defs {
		if _, isFunc := obj.(*types.Func); obj != nil && (isFunc || obj.Parent() == pkg.Scope()) {
			home[obj] = fset.Position(id.Pos()).Filename
		}
	}
	uses := map[string]map[string]string{} // file → file → a name it uses there
	for id, obj := range info.Uses {
		if fn, ok := obj.(*types.Func); ok {
			obj = fn.Origin()
		}
		from, to := fset.Position(id.Pos()).Filename, home[obj]
		if to == "" || to == from {
			continue
		}
		if uses[from] == nil {
			uses[from] = map[string]string{}
		}
		uses[from][to] = obj.Name()
	}
	// A use is a cycle when the used file reaches the user back.
	reaches := func(from, to string) bool {
		seen := map[string]bool{}
		stack := []string{from}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f == to {
				return true
			}
			if seen[f] {
				continue
			}
			seen[f] = true
			for g := range uses[f] {
				stack = append(stack, g)
			}
		}
		return false
	}
	var back []string
	for from, tos := range uses {
		for to, name := range tos {
			if reaches(to, from) {
				back = append(back, from+" uses "+name+" of "+to+", which uses "+from+" in turn")
			}
		}
	}
	slices.Sort(back)
	if len(back) > 0 {
		t.Errorf("files of recipes use each other both ways; move what both need into a file of its own, below both:\n%s", strings.Join(back, "\n"))
	}
}
