package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// isCommandConstructor reports whether name is a command's constructor
// (newXCmd): the one name of a command's file that a group's file or the
// root command may use.
func isCommandConstructor(name string) bool {
	return strings.HasPrefix(name, "new") && strings.HasSuffix(name, "Cmd")
}

// TestCommandFilesUseNoOtherCommandFile: a command's file (one that
// defines a newXCmd) is used by other files only through its constructor;
// what several commands share lives in files of their own (issue 27's
// layering). Top-level names are matched by name, as the package has one
// scope.
func TestCommandFilesUseNoOtherCommandFile(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	defs := map[string]string{} // top-level name -> its file
	commandFile := map[string]bool{}
	parsed := map[string]*ast.File{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		parsed[f] = af
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					defs[d.Name.Name] = f
					commandFile[f] = commandFile[f] || isCommandConstructor(d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						defs[s.Name.Name] = f
					case *ast.ValueSpec:
						for _, n := range s.Names {
							defs[n.Name] = f
						}
					}
				}
			}
		}
	}
	require.NotEmpty(t, commandFile)
	var uses []string
	for f, af := range parsed {
		ast.Inspect(af, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			if home, ok := defs[id.Name]; ok && home != f && commandFile[home] && !isCommandConstructor(id.Name) {
				uses = append(uses, f+" uses "+id.Name+" of "+home)
			}
			return true
		})
	}
	slices.Sort(uses)
	assert.Empty(t, slices.Compact(uses), "move what several commands share into a file of its own")
}
