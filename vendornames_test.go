package flagshim_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/vendors"
)

// TestVendorNamesStayHome: a vendor's libraries and variables are named in
// its own package (drivers/<v>) and nowhere else in the library's code:
// everything else reads them from the vendor registry (package vendors).
// Tests, testdata and documentation are free to name them. A string
// literal of any other Go file that holds a vendor's library name, soname
// or variable fails the test.
func TestVendorNamesStayHome(t *testing.T) {
	owner := map[string][]string{} // name -> the vendor packages that may say it
	for _, v := range vendors.All() {
		home := "drivers/" + string(v.Type)
		add := func(name string) {
			if name != "" && !slices.Contains(owner[name], home) {
				owner[name] = append(owner[name], home)
			}
		}
		add(v.Library.Name)
		for _, so := range v.Library.Sonames {
			add(so)
		}
		for _, x := range v.Variables() {
			add(x.Name)
		}
	}
	require.NotEmpty(t, owner)
	seen := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", ".git", "python", "scripts", "examples", ".gpu":
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(dir, "test") {
			return nil // tests and the test kits (driver/drivertest, ...) are free to name them
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		seen++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for name, homes := range owner {
				if slices.Contains(homes, dir) || dir == "vendors" || !containsWord(s, name) {
					continue
				}
				t.Errorf("%s names %q (%s's); read it from the vendor registry instead", path, name, strings.Join(homes, ", "))
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, seen, 50, "the walk read the library's files")
}

// containsWord reports whether name occurs in s not as part of a longer
// identifier ("libcuda" is not in "libcudart").
func containsWord(s, name string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !identByte(s[start-1])) && (end == len(s) || !identByte(s[end])) {
			return true
		}
		i = start + 1
	}
}

func identByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
