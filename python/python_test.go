// Package python_test runs the Python package's own tests (python/tests,
// unittest) from `go test ./...`, so the README's one test command covers
// them too. scripts/python-test.sh builds libflagshim.so and runs the suite;
// where python3, a C compiler or cgo is missing it says so, and this test
// skips with that reason.
package python_test

import (
	"os/exec"
	"regexp"
	"testing"
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
	t.Log("the Python package's suite: building libflagshim.so (cgo), then about 70 scenarios, each a Python process, in two groups (the pip installs beside the rest); the longest group here, 20-30 s on 2 cores")
	out, err := exec.Command(bash, "../scripts/python-test.sh").CombinedOutput()
	if m := skipped.FindSubmatch(out); m != nil && err == nil {
		t.Skipf("the Python suite did not run: %s", m[1])
	}
	if err != nil {
		t.Fatalf("scripts/python-test.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
