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

// TestOnlyTheCallLayerTouchesPurego keeps the three layers apart: raw.go
// (the symbol table) and calls.go (the checked calls) are the only files
// that import purego or read a symbol's address; the safe layer above them
// (backend.go, memory.go, module.go, ...) calls *api methods only.
func TestOnlyTheCallLayerTouchesPurego(t *testing.T) {
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	callLayer := map[string]bool{"raw.go": true, "calls.go": true, "ccall_fast.go": true, "ccall_purego.go": true}
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
			if strings.Contains(imp.Path.Value, "purego") {
				assert.True(t, callLayer[name], "%s imports purego; only raw.go and calls.go may", name)
			}
		}
		if !callLayer[name] {
			assert.False(t, strings.Contains(string(src), ".addr["), "%s reads a raw symbol address; call a checked *api method instead", name)
		}
	}
	assert.Greater(t, seen, 5)
}
