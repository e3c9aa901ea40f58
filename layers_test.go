package flagshim_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/flagos-ai/flagshim"

// allowedImports reads the table "Allowed imports" of docs/architecture.md:
// for each library package, the packages of this module it may import. The
// page a user reads is the rule the tests enforce.
func allowedImports(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile("docs/architecture.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "\n## Allowed imports\n")
	require.True(t, ok, "docs/architecture.md has an \"Allowed imports\" section")
	table, _, _ = strings.Cut(table, "\n## ")
	name := func(cell string) string {
		cell = strings.Trim(strings.TrimSpace(cell), "`")
		if cell == "(root)" {
			return ""
		}
		return cell
	}
	rules := map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 || strings.TrimSpace(cells[1]) == "package" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		pkg := name(cells[1])
		rules[pkg] = []string{}
		for _, dep := range strings.Split(cells[2], ",") {
			if strings.TrimSpace(dep) != "" {
				rules[pkg] = append(rules[pkg], name(dep))
			}
		}
	}
	require.NotEmpty(t, rules)
	return rules
}

// TestLayering checks every package's imports against allowedImports (the
// packages under internal/ import nothing of the module outside it), and
// that no library package uses cgo (only cmd/libflagshim, a C shared
// library, may).
func TestLayering(t *testing.T) {
	allowedImports := allowedImports(t)
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{len .CgoFiles}}|{{.Name}}", module+"/...").Output()
	require.NoError(t, err, "go list")
	sc := bufio.NewScanner(bytes.NewReader(out))
	seen := 0
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "|")
		require.Len(t, fields, 4)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if fields[3] == "main" || strings.HasPrefix(pkg, "examples/") {
			continue // programs (cmd/) and examples sit above the library
		}
		seen++
		allowed, ok := allowedImports[pkg]
		if !assert.True(t, ok, "package %q has no row in docs/architecture.md's table of allowed imports", pkg) {
			continue
		}
		assert.Equal(t, "0", fields[2], "package %q uses cgo; the library must stay cgo-free", pkg)
		for _, imp := range strings.Fields(fields[1]) {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			assert.Contains(t, allowed, dep, "package %q imports %q, which its layer may not", pkg, dep)
			if strings.HasPrefix(pkg, "internal/") {
				assert.True(t, strings.HasPrefix(dep, "internal/"), "package %q imports %q: internal/ holds the lowest helpers, which import nothing above them", pkg, dep)
			}
		}
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, len(allowedImports), seen, "every rule matches a package")
}
