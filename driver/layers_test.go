package driver

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnlyTheCallLayerCallsC keeps the three layers apart: the package
// calls C only through the binding kit (clib, never purego), and only
// raw.go (the symbol table) and calls.go (the checked calls) touch a
// resolved function; the safe layer above them (backend.go, memory.go,
// module.go, ...) calls *api methods only.
func TestOnlyTheCallLayerCallsC(t *testing.T) {
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	callLayer := map[string]bool{"raw.go": true, "calls.go": true}
	seen := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		seen++
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			assert.NotContains(t, imp.Path.Value, "purego", "%s imports purego; the driver core calls C through clib only", name)
		}
		if !callLayer[name] {
			assert.False(t, strings.Contains(string(src), ".fn["), "%s touches a resolved C function; call a checked *api method instead", name)
		}
	}
	assert.Greater(t, seen, 5)
}
