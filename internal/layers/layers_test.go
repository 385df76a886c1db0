// Package layers_test holds the check that the files of every package of
// the module form layers (ARCHITECTURE.md: imports only go down, also
// inside a package): no file uses a name (a type, function, method,
// field's type's method, constant or variable) defined in a file that,
// through the names it uses, comes back to it. It type-checks each
// package's non-test files against the compiler's export data of its
// imports, so a use is a real one, never a word in a comment.
package layers_test

import (
	"bufio"
	"bytes"
	"fmt"
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

// TestEveryPackageFormsLayers: each package's file uses that close a
// cycle of files are listed, per package, with the fix.
func TestEveryPackageFormsLayers(t *testing.T) {
	pkgs := listPackages(t)
	require.NotEmpty(t, pkgs)
	for _, p := range pkgs {
		t.Run(p.path, func(t *testing.T) {
			if back := cycleUses(t, p); len(back) > 0 {
				t.Errorf("files of %s use each other both ways; move what both need into a file of its own, below both (moves only):\n  %s",
					p.path, strings.Join(back, "\n  "))
			}
		})
	}
}

// TestCycleUses: the check finds a cycle of two files and of three, and
// passes files that form layers.
func TestCycleUses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"layers", map[string]string{"a.go": "func A() int { return b() }", "b.go": "func b() int { return c }", "c.go": "const c = 1"}, nil},
		{"a pair", map[string]string{"a.go": "func A() int { return b() }\nfunc a() int { return 1 }", "b.go": "func b() int { return a() }"},
			[]string{"a.go uses b of b.go", "b.go uses a of a.go"}},
		{"a method of a type of another file", map[string]string{"a.go": "type T struct{}\nfunc (T) M() int { return f() }", "b.go": "func f() int { var t T; _ = t; return 0 }"},
			[]string{"a.go uses f of b.go", "b.go uses T of a.go"}},
		{"a chain of four, no loop", map[string]string{"a.go": "func A() int { return b() }", "b.go": "func b() int { return c() }", "c.go": "func c() int { return len(A2) }\nvar A2 = []int{}", "d.go": "func d() { _ = A() }"},
			nil},
		{"a loop of three", map[string]string{"a.go": "func A() int { return b() }\nvar x = 1", "b.go": "func b() int { return c() }", "c.go": "func c() int { return x }"},
			[]string{"a.go uses b of b.go", "b.go uses c of c.go", "c.go uses x of a.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var names []string
			for name, body := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("package p\n\n"+body+"\n"), 0o644))
				names = append(names, filepath.Join(dir, name))
			}
			slices.Sort(names)
			require.Equal(t, tc.want, cycleUses(t, pkg{path: "p", files: names}))
		})
	}
}

// pkg is one package of the module: its import path, its non-test Go
// files and the export data of everything it imports.
type pkg struct {
	path   string
	files  []string
	export map[string]string
}

// listPackages lists the module's packages with go list, which builds
// the export data of their imports (with -race under the race detector,
// so it is the build the tests already made).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Module}}\t{{.Dir}}\t{{join .GoFiles \" \"}}"}
	if raceDetector {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "sweep/...")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	export := map[string]string{}
	var own []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		require.Len(t, f, 5, "go list line %q", sc.Text())
		export[f[0]] = f[1]
		if f[2] != "sweep" || f[4] == "" {
			continue
		}
		p := pkg{path: f[0], export: export}
		for _, name := range strings.Fields(f[4]) {
			p.files = append(p.files, filepath.Join(f[3], name))
		}
		own = append(own, p)
	}
	require.NoError(t, sc.Err())
	return own
}

// cycleUses type-checks p and returns, sorted, "FILE uses NAME of FILE2"
// for each use of a name of another file that reaches the using file
// back through the names the files use (one name per pair of files).
func cycleUses(t *testing.T, p pkg) []string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	lookup := func(path string) (io.ReadCloser, error) {
		if p.export[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.export[path])
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	tp, err := conf.Check(p.path, fset, files, info)
	require.NoError(t, err)

	home := map[types.Object]string{} // package-level names and methods → file
	for id, obj := range info.Defs {
		if _, isFunc := obj.(*types.Func); obj != nil && (isFunc || obj.Parent() == tp.Scope()) {
			home[obj] = filepath.Base(fset.Position(id.Pos()).Filename)
		}
	}
	uses := map[string]map[string]string{} // file → file → a name it uses there
	for id, obj := range info.Uses {
		if fn, ok := obj.(*types.Func); ok {
			obj = fn.Origin()
		}
		from, to := filepath.Base(fset.Position(id.Pos()).Filename), home[obj]
		if to == "" || to == from {
			continue
		}
		if uses[from] == nil {
			uses[from] = map[string]string{}
		}
		if prev, ok := uses[from][to]; !ok || obj.Name() < prev {
			uses[from][to] = obj.Name()
		}
	}
	reaches := func(from, to string) bool {
		seen := map[string]bool{}
		stack := []string{from}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f == to {
				return true
			}
			if !seen[f] {
				seen[f] = true
				for g := range uses[f] {
					stack = append(stack, g)
				}
			}
		}
		return false
	}
	var back []string
	for from, tos := range uses {
		for to, name := range tos {
			if reaches(to, from) {
				back = append(back, from+" uses "+name+" of "+to)
			}
		}
	}
	slices.Sort(back)
	return back
}
