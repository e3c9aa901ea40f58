package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/examples/acme"
	"github.com/flagos-ai/flagshim/vendors"
)

// TestMain lets testscript run this binary as flagshim-acme, each invocation
// in a process of its own (Init runs once per process).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"flagshim-acme": main})
}

// TestScripts runs testdata/script/*.txtar against Acme's fake library
// ($LIBACME), with every other vendor's library pointed at nothing and a
// machine root ($ACMEROOT) holding two Acme device nodes for the presence
// tier.
func TestScripts(t *testing.T) {
	lib := (&drivertest.Suite{Vendor: acme.Vendor(), FakeSource: "../../testdata/fake_libacme.c"}).Build(t)
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
	for _, n := range []string{"acme0", "acme1"} {
		require.NoError(t, os.Symlink("/dev/null", filepath.Join(root, "dev", n)))
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			// testscript starts from a clean environment: only the other
			// vendors' libraries are pointed at nothing, so that this
			// machine's cannot answer.
			for _, v := range vendors.All() {
				if v.Type != acme.Type {
					env.Setenv(v.Library.EnvVar, "/nonexistent/"+v.Library.Sonames[0])
				}
			}
			env.Setenv("LIBACME", lib)
			env.Setenv("ACMEROOT", root)
			return nil
		},
	})
}
