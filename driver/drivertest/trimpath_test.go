package drivertest_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

var caseRE = regexp.MustCompile(`(?m)^ {4}--- (PASS|SKIP|FAIL): TestFakes/(\S+)`)

// TestTrimpath: a vendor package's tests built so that the binary names no
// source folder (nothing can find the kit's C beside its Go source) and run,
// as from a module cache, in a read-only copy of the package's testdata
// folder alone, run every case of the kit: drivers/cuda, to which every
// case applies, passes each, none skipped.
//
// The build trims this module's file names to its module path, as
// -trimpath writes them, with -gcflags and -asmflags for this module's
// packages alone: -trimpath itself rebuilds the standard library and every
// dependency, most of a cold run's minute on 2 CPUs. It builds through a
// symbolic link to the module, removed before the run, so that the flags
// it records in the binary name no source folder either.
func TestTrimpath(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds drivers/cuda's tests with trimmed file names (seconds, more on a cold cache)")
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the vendor's tests")
	require.NotEmpty(t, dltest.CC(), "no C compiler (go env CC): the kit cannot run")
	dir := dltest.PrivateDir(t)
	bin := filepath.Join(dir, "cuda.test")
	here, err := os.Getwd()
	require.NoError(t, err)
	link := filepath.Join(dir, "module")
	require.NoError(t, os.Symlink(filepath.Dir(filepath.Dir(here)), link))
	const modulePath = "github.com/flagos-ai/flagshim"
	trim := modulePath + "/...=-trimpath=" + link + "=>" + modulePath
	build := exec.Command(goTool, "test", "-c", "-gcflags="+trim, "-asmflags="+trim, "-o", bin, "./drivers/cuda")
	build.Dir = link
	build.Env = append(os.Environ(), "PWD="+link)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go test -c (trimmed): %s", out)
	require.NoError(t, os.Remove(link))

	exe, err := os.ReadFile(bin)
	require.NoError(t, err)
	assert.False(t, bytes.Contains(exe, []byte(filepath.Dir(filepath.Dir(here)))), "the binary names no source folder")
	assert.True(t, bytes.Contains(exe, []byte(modulePath+"/driver/drivertest/")), "the kit's file names are trimmed to the module path")

	pkg := filepath.Join(dir, "drivers-cuda@v0")
	copyDir(t, filepath.Join("..", "..", "drivers", "cuda", "testdata"), filepath.Join(pkg, "testdata"))
	readOnly(t, pkg)

	run := exec.Command(bin, "-test.run=^TestFakes$", "-test.v", "-test.count=1")
	run.Dir = pkg
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, dltest.ChildEnv+"=") && !strings.HasPrefix(kv, "FAKE_") && !strings.HasPrefix(kv, "FLAGOS_") {
			run.Env = append(run.Env, kv)
		}
	}
	out, err = run.CombinedOutput()
	assert.NoError(t, err, "the kit under -trimpath:\n%s", out)
	got := map[string]string{}
	for _, m := range caseRE.FindAllStringSubmatch(string(out), -1) {
		got[m[2]] = m[1]
	}
	for _, name := range drivertest.CaseNames() {
		assert.Equal(t, "PASS", got[name], "case %s", name)
	}
	assert.Len(t, got, len(drivertest.CaseNames()), "every case ran, no other")
}

// copyDir copies the files of src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}

// readOnly makes the tree at root read-only, as a module cache keeps it,
// until the test ends.
func readOnly(t *testing.T, root string) {
	t.Helper()
	var dirs []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	}))
	for _, d := range dirs {
		require.NoError(t, os.Chmod(d, 0o555))
	}
	t.Cleanup(func() {
		for _, d := range dirs {
			os.Chmod(d, 0o755)
		}
	})
}
