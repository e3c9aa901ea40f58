package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKubernetesManifestsUseRealFlags: every flagshim command line of
// docs/kubernetes.md's manifests ($FLAGSHIM ...) names a command, a
// subcommand and flags that exist: run as written (its paths moved under a
// temporary folder), none is a usage error.
func TestKubernetesManifestsUseRealFlags(t *testing.T) {
	doc, err := os.ReadFile("../docs/kubernetes.md")
	require.NoError(t, err)
	calls := regexp.MustCompile(`\$FLAGSHIM ([^;&|>\n]*)`).FindAllStringSubmatch(string(doc), -1)
	require.GreaterOrEqual(t, len(calls), 3, "the DaemonSet runs cdi generate, cdi check and labels")
	tmp := t.TempDir()
	seen := map[string]bool{}
	for _, c := range calls {
		var args []string
		for _, a := range strings.Fields(c[1]) {
			a = strings.Trim(a, `"`)
			if strings.HasPrefix(a, "$") { // a shell variable: a file the loop found
				a = "/etc/cdi/flagos.ai-cuda.yaml"
			}
			if strings.HasPrefix(a, "/") {
				a = filepath.Join(tmp, a) // never the machine's own /etc
			}
			args = append(args, a)
		}
		require.NotEmpty(t, args)
		require.NotNil(t, lookupCommand(args[0]), "%q: no such command", c[1])
		code, _, errOut := runCLI(args...)
		assert.NotEqual(t, exitUsage, code, "%q is a usage error: %s", c[1], errOut)
		assert.NotContains(t, errOut, "not defined")
		seen[strings.Join(args[:min(2, len(args))], " ")] = true
	}
	for _, want := range []string{"cdi generate", "cdi check", "labels"} {
		assert.True(t, seen[want] || seen[strings.Fields(want)[0]], "the manifests run %s", want)
	}

	// The command table of the page names the real synopsis.
	for _, c := range []string{"cdi", "labels"} {
		assert.Contains(t, string(doc), "`flagshim "+c, c)
	}
	for _, flag := range []string{"--all", "--format", "--output", "--refresh"} {
		assert.Contains(t, lookupCommand("cdi").usage(), flag)
		assert.Contains(t, string(doc), flag)
	}
}

// TestFleetUsage: the commands' usage and their usage errors.
func TestFleetUsage(t *testing.T) {
	code, out, _ := runCLI("help", "cdi")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "flagshim cdi check [--refresh] [--probe TIER] FILE")
	code, _, errOut := runCLI("cdi")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "cdi needs a subcommand")
	code, _, errOut = runCLI("cdi", "generate", "--format", "xml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `format "xml": want yaml or json`)
	code, _, errOut = runCLI("cdi", "check")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "cdi check takes one FILE")
	code, _, errOut = runCLI("cdi", "check", "a.yaml", "--bogus")
	assert.Equal(t, exitUsage, code, "flags after the file are parsed too")
	assert.Contains(t, errOut, "--bogus")
	code, _, errOut = runCLI("labels", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "labels takes no arguments")
}
