package flagshim_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/flagos-ai/flagshim"

// allowedImports is DESIGN.md's layering: for each library package, the
// packages of this module it may import. Arrows point down; a package not
// listed here must be added with its rule.
var allowedImports = map[string][]string{
	"probe":             {},
	"device":            {"probe"},
	"phases":            {},
	"internal/dl":       {},
	"internal/logging":  {},
	"device/devicetest": {"device", "probe"},
	"presence":          {"device", "driver", "internal/dl"},
	"driver":            {"device", "probe", "internal/dl"},
	"drivers/cuda":      {"device", "driver", "presence"},
	"drivers/musa":      {"device", "driver", "drivers/cuda", "presence"},
	"drivers/flagos":    {"device", "probe"},
	"alias":             {"device", "probe"},
	"plugins/nvshmem":   {"device", "probe", "internal/dl", "driver", "drivers/cuda"},
	"":                  {"probe", "device", "phases", "alias", "internal/logging", "driver", "drivers/cuda", "drivers/musa", "drivers/flagos", "presence"},
	"internal/cli":      {"", "probe", "device", "alias", "internal/logging"},
}

// TestLayering checks every package's imports against allowedImports, and
// that no library package uses cgo (only cmd/libflagshim, a C shared
// library, may).
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{len .CgoFiles}}|{{.Name}}", module+"/...").Output()
	require.NoError(t, err, "go list")
	sc := bufio.NewScanner(bytes.NewReader(out))
	seen := 0
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "|")
		require.Len(t, fields, 4)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if fields[3] == "main" || strings.HasPrefix(pkg, "examples/") || (strings.HasPrefix(pkg, "internal/") && strings.HasSuffix(pkg, "test")) {
			continue // programs (cmd/), examples and internal test helpers sit above the library
		}
		seen++
		allowed, ok := allowedImports[pkg]
		if !assert.True(t, ok, "package %q has no layering rule in layers_test.go", pkg) {
			continue
		}
		assert.Equal(t, "0", fields[2], "package %q uses cgo; the library must stay cgo-free", pkg)
		for _, imp := range strings.Fields(fields[1]) {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			assert.Contains(t, allowed, dep, "package %q imports %q, which its layer may not", pkg, dep)
		}
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, len(allowedImports), seen, "every rule matches a package")
}
