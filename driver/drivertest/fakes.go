package drivertest

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// csrc are the kit's C sources, embedded: a test binary built with
// -trimpath, or run from a module cache's copy of a vendor package, builds
// its fakes from these bytes, never from a path beside the kit's Go source.
//
//go:embed testdata/fake_common.h testdata/fake_ops.h testdata/fake_cufamily.c testdata/fake_hipfamily.c
var csrc embed.FS

// Include is the folder of the kit's C sources, written out from the
// copies embedded in the kit (see dltest.Sources): fake_common.h (the
// shared fake driver: devices, contexts, memory, modules, streams, the
// FAKE_* knobs), fake_ops.h (the second group's behaviour: memsets, value
// waits, queries, host functions, IPC; included at fake_common.h's end),
// fake_cufamily.c (a CUDA-shaped driver API under any
// prefix: cu, mu, acme...) and fake_hipfamily.c (a HIP-shaped runtime API
// under any prefix: hip, tops, mc). A vendor's fake includes one of them;
// Suite.Build passes -I Include(tb).
func Include(tb testing.TB) string {
	tb.Helper()
	sub, err := fs.Sub(csrc, "testdata")
	require.NoError(tb, err)
	return dltest.Sources(tb, sub)
}

// source is the vendor's fake: FakeSource, else the conventional
// testdata/fake_<Library.Name>.c of the test's package, as an absolute
// path (a relative one is taken from the test's working folder, its
// package's folder: the parent's, never a child's).
func (s *Suite) source(tb testing.TB) string {
	tb.Helper()
	src := s.FakeSource
	if src == "" {
		src = filepath.Join("testdata", "fake_"+s.Vendor.Library.Name+".c")
	}
	if !filepath.IsAbs(src) {
		src = dltest.Abs(tb, src)
	}
	if _, err := os.Stat(src); err != nil {
		tb.Fatalf("drivertest: %s's fake library cannot be built: %v (Suite.FakeSource names the vendor's C fake; "+
			"relative paths are taken from the test's package folder, the default is testdata/fake_%s.c)", s.typ(), err, s.Vendor.Library.Name)
	}
	return src
}

// soname is the file the fake is built as: FakeSoname, else the vendor's
// first soname.
func (s *Suite) soname() string {
	if s.FakeSoname != "" {
		return s.FakeSoname
	}
	return s.Vendor.Library.Sonames[0]
}

// Build compiles the fake (with FakeDefines and defines) into a fresh
// private folder, under its soname, and returns its absolute path.
func (s *Suite) Build(tb testing.TB, defines ...string) string {
	tb.Helper()
	dir := filepath.Join(dltest.PrivateDir(tb), "lib")
	require.NoError(tb, os.MkdirAll(dir, 0o755))
	return s.BuildIn(tb, dir, defines...)
}

// BuildIn is Build into dir, which others must not be able to write.
func (s *Suite) BuildIn(tb testing.TB, dir string, defines ...string) string {
	tb.Helper()
	out := filepath.Join(dir, s.soname())
	s.buildAt(tb, out, defines...)
	return out
}

// Sources are the files the fake is built from (its C source and the
// kit's), for tests that cache built fakes by their sources' hash.
func (s *Suite) Sources(tb testing.TB) []string {
	tb.Helper()
	inc := Include(tb)
	out := []string{s.source(tb)}
	ents, err := fs.ReadDir(csrc, "testdata")
	require.NoError(tb, err)
	for _, e := range ents {
		out = append(out, filepath.Join(inc, e.Name()))
	}
	return out
}

// buildAt compiles the fake as out. A missing C compiler fails tb: the
// kit cannot prove anything without its fake.
func (s *Suite) buildAt(tb testing.TB, out string, defines ...string) {
	tb.Helper()
	if dltest.CC() == "" {
		tb.Fatal("drivertest: no C compiler (go env CC) to build the fake library: the conformance kit cannot run; install one (gcc or clang)")
	}
	flags := append([]string{"-I" + Include(tb)}, s.FakeDefines...)
	dltest.BuildLib(tb, out, s.soname(), []string{s.source(tb)}, append(flags, defines...)...)
}
