package drivertest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// root is the module's root folder, wherever the calling test runs from.
func root(tb testing.TB) string {
	tb.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("drivertest: cannot locate the module's sources")
	}
	return filepath.Join(filepath.Dir(self), "..", "..")
}

// Include is the folder of the kit's C sources: fake_common.h (the shared
// fake driver: devices, contexts, memory, modules, the FAKE_* knobs),
// fake_cufamily.c (a CUDA-shaped driver API under any prefix) and
// fake_env.h. A vendor's own fake includes them with -I Include(tb).
func Include(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(root(tb), "driver", "drivertest", "testdata")
}

// fake is how one vendor's fake library is built.
type fake struct {
	src     string   // relative to the module root
	defines []string // -D flags
	soname  string
}

var fakes = map[string]fake{
	"cuda": {src: "driver/drivertest/testdata/fake_cufamily.c", soname: "libcuda.so.1"},
	"musa": {src: "driver/drivertest/testdata/fake_cufamily.c", defines: []string{"-DFAKE_MU"}, soname: "libmusa.so.1"},
	"hip":  {src: "drivers/hip/testdata/fake_libamdhip64.c", soname: "libamdhip64.so.6"},
	"maca": {src: "drivers/maca/testdata/fake_libmcruntime.c", soname: "libmcruntime.so"},
	// The management libraries of the presence tier (each vendor's testdata).
	"nvml": {src: "drivers/cuda/testdata/fake_nvml.c", soname: "libnvidia-ml.so.1"},
	"mtml": {src: "drivers/musa/testdata/fake_mtml.c", soname: "libmtml.so"},
}

// FakeSoname is the file name the fake of vendor is built as.
func FakeSoname(vendor string) string { return fakes[vendor].soname }

// buildFakeAt compiles vendor's fake as out with extra -D flags. It skips
// the test, saying why, where no C compiler is installed.
func buildFakeAt(tb testing.TB, vendor, out string, defines ...string) {
	tb.Helper()
	f, ok := fakes[vendor]
	if !ok {
		tb.Fatalf("drivertest: no fake for %q", vendor)
	}
	r := root(tb)
	src := filepath.Join(r, f.src)
	if _, err := os.Stat(src); err != nil {
		tb.Skipf("the fake's source %s is not here (a test binary run outside its module): %v", src, err)
	}
	flags := append([]string{"-I" + Include(tb)}, f.defines...)
	dltest.BuildLib(tb, out, f.soname, []string{src}, append(flags, defines...)...)
}

// BuildFake builds the fake library of vendor ("cuda", "musa", "hip", "maca", or a
// management library: "nvml", "mtml") into
// dir, which must not be writable by others, under its real soname, and
// returns its path. It skips the test, saying why, where no C compiler is
// installed.
func BuildFake(tb testing.TB, vendor, dir string, defines ...string) string {
	tb.Helper()
	out := filepath.Join(dir, FakeSoname(vendor))
	buildFakeAt(tb, vendor, out, defines...)
	return out
}

// FakeSources lists the files vendor's fake is built from (its C source and
// the shared headers), as absolute paths, for tests that cache built fakes
// by their sources' hash.
func FakeSources(tb testing.TB, vendor string) []string {
	tb.Helper()
	r := root(tb)
	td := filepath.Join(r, "driver", "drivertest", "testdata")
	return []string{filepath.Join(r, fakes[vendor].src), filepath.Join(td, "fake_common.h"), filepath.Join(td, "fake_ops.h")}
}
