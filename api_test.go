package flagshim_test

import (
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoInternalTypesInTheAPI type-checks every public package of the module
// and walks its exported API (constants, variables, functions, types, their
// exported fields and methods, recursively): none may mention a type from an
// internal/ package, which a user could neither name nor read with go doc.
//
// The packages are read from the compiler's export data, which `go list
// -export` takes from the build cache (type-checking every package and its
// dependencies from source took most of the package's test time).
func TestNoInternalTypesInTheAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{if and (ne .Name \"main\") .GoFiles}}{{.ImportPath}}{{end}}", module+"/...").Output()
	require.NoError(t, err, "go list")
	exp, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", module+"/...").Output()
	require.NoError(t, err, "go list -export")
	exports := map[string]string{}
	for _, line := range strings.Split(string(exp), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	checked := 0
	for _, path := range strings.Fields(string(out)) {
		if strings.Contains(path, "/internal/") || strings.Contains(path, "/examples/") || strings.Contains(path, "/testdata/") {
			continue
		}
		pkg, err := imp.Import(path)
		require.NoError(t, err, path)
		checked++
		w := apiWalker{t: t, seen: map[types.Type]bool{}}
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			w.where = path + "." + name
			w.walk(obj.Type())
			if tn, ok := obj.(*types.TypeName); ok {
				w.methods(tn.Type())
			}
		}
	}
	assert.Greater(t, checked, 8, "the public packages were found")
}

type apiWalker struct {
	t     *testing.T
	where string
	seen  map[types.Type]bool
}

func (w *apiWalker) named(n *types.Named) {
	if p := n.Obj().Pkg(); p != nil && strings.Contains(p.Path()+"/", "/internal/") {
		w.t.Errorf("%s mentions %s.%s, a type of an internal package", w.where, p.Path(), n.Obj().Name())
	}
}

func (w *apiWalker) walk(t types.Type) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	switch x := t.(type) {
	case *types.Named:
		w.named(x)
		if x.Obj().Exported() || x.Obj().Pkg() == nil {
			w.walk(x.Underlying())
			w.methods(x)
		}
		for i := 0; i < x.TypeArgs().Len(); i++ {
			w.walk(x.TypeArgs().At(i))
		}
	case *types.Alias:
		w.walk(types.Unalias(x))
	case *types.Pointer:
		w.walk(x.Elem())
	case *types.Slice:
		w.walk(x.Elem())
	case *types.Array:
		w.walk(x.Elem())
	case *types.Map:
		w.walk(x.Key())
		w.walk(x.Elem())
	case *types.Chan:
		w.walk(x.Elem())
	case *types.Signature:
		w.tuple(x.Params())
		w.tuple(x.Results())
	case *types.Struct:
		for i := 0; i < x.NumFields(); i++ {
			if f := x.Field(i); f.Exported() {
				w.walk(f.Type())
			}
		}
	case *types.Interface:
		for i := 0; i < x.NumMethods(); i++ {
			if m := x.Method(i); m.Exported() {
				w.walk(m.Type())
			}
		}
	}
}

func (w *apiWalker) tuple(tu *types.Tuple) {
	for i := 0; i < tu.Len(); i++ {
		w.walk(tu.At(i).Type())
	}
}

func (w *apiWalker) methods(t types.Type) {
	ms := types.NewMethodSet(types.NewPointer(t))
	for i := 0; i < ms.Len(); i++ {
		if m := ms.At(i).Obj(); m.Exported() {
			w.walk(m.Type())
		}
	}
}
