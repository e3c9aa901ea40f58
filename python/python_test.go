// Package python_test runs the Python package's own tests (python/tests,
// unittest) from `go test ./...`, so the README's one test command covers
// them too. The test builds libflagshim.so (dltest.GoBuild: cached while
// the sources stay the same) and hands it to scripts/python-test.sh, which
// runs the suite; where python3, a C compiler or cgo is missing it says so,
// and this test skips with that reason.
package python_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

var skipped = regexp.MustCompile(`(?m)^python-test: skipped: (.*)$`)

func TestPythonPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Python suite builds libflagshim.so and runs about 40 subprocess scenarios; run it without -short")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run scripts/python-test.sh")
	}
	// As the build backend builds it, and TestCShared too: one build.
	lib := dltest.GoBuild(t, "../cmd/libflagshim", "libflagshim.so", dltest.CSharedFlags...)
	t.Log("the Python package's suite: about 70 scenarios, each a Python process, in two groups (the pip installs beside the rest); the longest group here, 10-20 s on 2 cores")
	cmd := exec.Command(bash, "../scripts/python-test.sh")
	cmd.Env = append(os.Environ(), "FLAGSHIM_TEST_LIBRARY="+lib)
	out, err := cmd.CombinedOutput()
	if m := skipped.FindSubmatch(out); m != nil && err == nil {
		t.Skipf("the Python suite did not run: %s", m[1])
	}
	if err != nil {
		t.Fatalf("scripts/python-test.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// The tests build the C library with the build backend's flags
// (dltest.CSharedFlags), so that one build serves cmd/libflagshim's tests,
// this package's and, in a cold build cache, pip's compile of the world.
// A change to either side fails here.
func TestCSharedFlagsAreTheBackends(t *testing.T) {
	src, err := os.ReadFile("_build_backend/flagshim_build.py")
	if err != nil {
		t.Fatal(err)
	}
	want := `cmd = [go, "build", "-trimpath", "-tags", "netgo", "-buildmode=c-shared", "-o", out, "./cmd/libflagshim"]`
	if !strings.Contains(string(src), want) {
		t.Fatalf("flagshim_build.py no longer builds with %s: make dltest.CSharedFlags (%q) its flags again", want, dltest.CSharedFlags)
	}
	if got := strings.Join(dltest.CSharedFlags, " "); got != "-trimpath -tags=netgo -buildmode=c-shared" {
		t.Fatalf("dltest.CSharedFlags = %q: the build backend builds with -trimpath -tags netgo -buildmode=c-shared", got)
	}
}
