package vendorstest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// management are the fake management libraries other packages' tests load,
// by name: the vendor package that holds each, its fake and its soname.
var management = map[string]struct{ vendor, src, soname string }{
	"nvml": {"cuda", "fake_nvml.c", "libnvidia-ml.so.1"},
	"mtml": {"musa", "fake_mtml.c", "libmtml.so"},
}

// Driver builds v's fake driver library (v is one of this module's vendors)
// into dir, which others must not be able to write, under its first
// soname, with extra -D flags, and returns its path. A missing C compiler
// fails tb.
func Driver(tb testing.TB, v *driver.Vendor, dir string, defines ...string) string {
	tb.Helper()
	return suite(tb, v).BuildIn(tb, dir, defines...)
}

// DriverSources lists the files v's fake is built from, as absolute paths,
// for tests that cache built fakes by their sources' hash.
func DriverSources(tb testing.TB, v *driver.Vendor) []string {
	tb.Helper()
	return suite(tb, v).Sources(tb)
}

// Management builds the fake management library name ("nvml", "mtml") into
// dir, as Driver does.
func Management(tb testing.TB, name, dir string, defines ...string) string {
	tb.Helper()
	m := managementLib(tb, name)
	return presencetest.Lib{Src: m.src}.Build(tb, dir, m.soname, defines...)
}

// ManagementSources lists the files name's fake is built from.
func ManagementSources(tb testing.TB, name string) []string {
	tb.Helper()
	return append([]string{managementLib(tb, name).src}, presencetest.Sources(tb)...)
}

func managementLib(tb testing.TB, name string) (m struct{ src, soname string }) {
	tb.Helper()
	l, ok := management[name]
	if !ok {
		tb.Fatalf("vendorstest: no fake management library %q (there are %v)", name, management)
	}
	return struct{ src, soname string }{filepath.Join(Root(tb), "drivers", l.vendor, "testdata", l.src), l.soname}
}

// suite is the kit's Suite of v, with its fake in its package's testdata
// folder, as the package's own tests build it.
func suite(tb testing.TB, v *driver.Vendor) *drivertest.Suite {
	tb.Helper()
	return &drivertest.Suite{Vendor: v,
		FakeSource: filepath.Join(Root(tb), "drivers", string(v.Type), "testdata", "fake_"+v.Library.Name+".c")}
}

// Root is the module's root folder: the first folder above the test's
// working folder whose go.mod is this module's.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/flagos-ai/flagshim\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("vendorstest: no folder above the test's working folder holds flagshim's go.mod: run the test from this module")
		}
		dir = parent
	}
}
