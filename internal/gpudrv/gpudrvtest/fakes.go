package gpudrvtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// FakeSources gives the C sources of the fake driver library of vendor
// ("cuda" or "musa") and the folder of the header they share, as absolute
// paths, wherever the calling test runs from.
func FakeSources(tb testing.TB, vendor string) (src, includeDir string) {
	tb.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("gpudrvtest: cannot locate the module's sources")
	}
	root := filepath.Join(filepath.Dir(self), "..", "..", "..")
	src = filepath.Join(root, "drivers", vendor, "testdata", "fake_lib"+vendor+".c")
	if _, err := os.Stat(src); err != nil {
		tb.Fatalf("gpudrvtest: no fake for %q: %v", vendor, err)
	}
	return src, filepath.Join(root, "internal", "gpudrv", "testdata")
}

// BuildFake builds the fake lib<vendor>.so.1 into dir (which must not be
// writable by others) and returns its path. It skips the test, saying why,
// where no C compiler is installed.
func BuildFake(tb testing.TB, vendor, dir string) string {
	tb.Helper()
	src, inc := FakeSources(tb, vendor)
	soname := "lib" + vendor + ".so.1"
	out := filepath.Join(dir, soname)
	dltest.BuildLib(tb, out, soname, []string{src}, "-I"+inc)
	return out
}
