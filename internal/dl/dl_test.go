package dl_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

const soname = "libdltest.so.1"

// buildIn builds testdata/libdltest.c as dir/libdltest.so.1.
func buildIn(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	out := filepath.Join(dir, soname)
	dltest.BuildLib(t, out, soname, []string{dltest.Abs(t, "testdata/libdltest.c")}, flags...)
	return out
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func spec(getenv func(string) string, dirs ...string) dl.Spec {
	return dl.Spec{Name: "libdltest", EnvVar: "FLAGOS_LIBDLTEST_PATH", Sonames: []string{soname}, Dirs: dirs, Getenv: getenv}
}

func TestRelativeOverrideRefused(t *testing.T) {
	for _, p := range []string{"libdltest.so.1", "./lib/libdltest.so.1", "../x.so"} {
		lib, err := dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": p})))
		require.Error(t, err)
		assert.Nil(t, lib)
		assert.ErrorIs(t, err, dl.ErrRelativeOverride)
		var oe *dl.OpenError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, p, oe.Override)
		assert.Contains(t, err.Error(), "FLAGOS_LIBDLTEST_PATH")
		assert.Contains(t, err.Error(), "absolute")
	}
}

func TestAbsoluteOverride(t *testing.T) {
	dir := dltest.PrivateDir(t)
	p := buildIn(t, filepath.Join(dir, "a"))
	// A searched folder holding another copy proves the override wins.
	other := buildIn(t, filepath.Join(dir, "b"), "-DWITH_V2")
	lib, err := dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": p}), filepath.Dir(other)))
	require.NoError(t, err)
	defer lib.Close()
	assert.Equal(t, p, lib.Path)
	assert.Equal(t, []dl.Attempt{{Path: p, From: dl.FromOverride}}, lib.Attempts)

	addr, err := lib.Sym("dltest_answer")
	require.NoError(t, err)
	r, _, _ := purego.SyscallN(addr)
	assert.Equal(t, uintptr(42), r)

	_, err = lib.Sym("dltest_missing")
	assert.ErrorIs(t, err, dl.ErrMissingSymbol)
	assert.Contains(t, err.Error(), "dltest_missing")
	assert.Contains(t, err.Error(), p)

	// Versioned name first, fallback second.
	addr, found, err := lib.SymAny("dltest_answer_v2", "dltest_answer")
	require.NoError(t, err)
	assert.Equal(t, "dltest_answer", found)
	r, _, _ = purego.SyscallN(addr)
	assert.Equal(t, uintptr(42), r)
	_, _, err = lib.SymAny("nope_v2", "nope")
	assert.ErrorIs(t, err, dl.ErrMissingSymbol)
	assert.Contains(t, err.Error(), "nope_v2, nope")

	require.NoError(t, lib.Close())
	require.NoError(t, lib.Close())
	_, err = lib.Sym("dltest_answer")
	assert.ErrorIs(t, err, dl.ErrClosed)
}

func TestOverrideDoesNotFallBack(t *testing.T) {
	dir := dltest.PrivateDir(t)
	good := buildIn(t, filepath.Join(dir, "good"))
	missing := filepath.Join(dir, "nowhere", soname)
	_, err := dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": missing}), filepath.Dir(good)))
	require.Error(t, err)
	assert.ErrorIs(t, err, dl.ErrOpen)
	assert.NotErrorIs(t, err, dl.ErrNotFound)
	assert.Contains(t, err.Error(), missing)
	assert.Contains(t, err.Error(), "unset FLAGOS_LIBDLTEST_PATH")
}

func TestWorldWritableRefused(t *testing.T) {
	dir := dltest.PrivateDir(t)

	// A world-writable file.
	f := buildIn(t, filepath.Join(dir, "file"))
	require.NoError(t, os.Chmod(f, 0o777))
	_, err := dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": f})))
	assert.ErrorIs(t, err, dl.ErrUnsafePath)
	assert.Contains(t, err.Error(), "chmod o-w")

	// A world-writable folder.
	d := filepath.Join(dir, "folder")
	g := buildIn(t, d)
	require.NoError(t, os.Chmod(d, 0o777))
	_, err = dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": g})))
	assert.ErrorIs(t, err, dl.ErrUnsafePath)

	// A symlink from a safe folder to a file in the unsafe one.
	safe := filepath.Join(dir, "safe")
	require.NoError(t, os.MkdirAll(safe, 0o755))
	link := filepath.Join(safe, soname)
	require.NoError(t, os.Symlink(g, link))
	_, err = dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": link})))
	assert.ErrorIs(t, err, dl.ErrUnsafePath)

	// Searched: skipped with the reason, and the search goes on (a folder
	// that does not hold the library, stubs or not, is not worth a line).
	good := buildIn(t, filepath.Join(dir, "good"))
	lib, err := dl.Open(spec(env(nil), "relative/dir", d, filepath.Join(dir, "stubs"), filepath.Dir(good)))
	require.NoError(t, err)
	defer lib.Close()
	assert.Equal(t, good, lib.Path)
	require.Len(t, lib.Attempts, 4, "%v", lib.Attempts) // soname, relative dir, unsafe folder, good
	assert.Equal(t, soname, lib.Attempts[0].Path)
	assert.ErrorIs(t, lib.Attempts[0].Err, dl.ErrNotFound)
	assert.ErrorIs(t, lib.Attempts[1].Err, dl.ErrRelativePath)
	assert.Equal(t, g, lib.Attempts[2].Path)
	assert.ErrorIs(t, lib.Attempts[2].Err, dl.ErrUnsafePath)
	assert.Contains(t, lib.Attempts[2].Err.Error(), "chmod o-w "+d)
	assert.Equal(t, dl.Attempt{Path: good, From: dl.FromDirs}, lib.Attempts[3])
}

func TestStubsSkipped(t *testing.T) {
	dir := dltest.PrivateDir(t)
	stub := buildIn(t, filepath.Join(dir, "cuda", "lib64", "stubs"))
	good := buildIn(t, filepath.Join(dir, "drv"))
	lib, err := dl.Open(spec(env(nil), filepath.Dir(stub), filepath.Dir(good)))
	require.NoError(t, err)
	defer lib.Close()
	assert.Equal(t, good, lib.Path)
	require.Len(t, lib.Attempts, 3)
	assert.ErrorIs(t, lib.Attempts[1].Err, dl.ErrStubPath)

	// An override into a stubs folder is an error too.
	_, err = dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": stub})))
	assert.ErrorIs(t, err, dl.ErrStubPath)
}

func TestGlobDirs(t *testing.T) {
	dir := dltest.PrivateDir(t)
	want := buildIn(t, filepath.Join(dir, "python3.10", "nvidia", "lib"))
	buildIn(t, filepath.Join(dir, "python3.12", "nvidia", "lib"))
	lib, err := dl.Open(spec(env(nil), filepath.Join(dir, "python3*", "nvidia", "lib")))
	require.NoError(t, err)
	defer lib.Close()
	assert.Equal(t, want, lib.Path, "glob matches are tried sorted")
}

func TestNotFound(t *testing.T) {
	dir := dltest.PrivateDir(t)
	_, err := dl.Open(spec(env(nil), dir, filepath.Join(dir, "nomatch*")))
	require.Error(t, err)
	assert.ErrorIs(t, err, dl.ErrNotFound)
	var oe *dl.OpenError
	require.ErrorAs(t, err, &oe)
	require.Len(t, oe.Attempts, 1)
	assert.Equal(t, soname, oe.Attempts[0].Path)
	msg := err.Error()
	for _, s := range []string{"libdltest not found", soname, "LD_LIBRARY_PATH", "FLAGOS_LIBDLTEST_PATH=/abs/path"} {
		assert.Contains(t, msg, s)
	}
}

// TestLDLibraryPath runs in a child: LD_LIBRARY_PATH is read at start-up.
func TestLDLibraryPath(t *testing.T) {
	if dltest.IsChild(t) {
		lib, err := dl.Open(spec(nil, "/nonexistent"))
		require.NoError(t, err)
		assert.Equal(t, os.Getenv("WANT_PATH"), lib.Path, "the loader's choice is reported")
		require.Len(t, lib.Attempts, 1)
		assert.Equal(t, dl.Attempt{Path: soname, File: os.Getenv("WANT_PATH"), From: dl.FromLibraryPath}, lib.Attempts[0])
		return
	}
	dir := dltest.PrivateDir(t)
	p := buildIn(t, filepath.Join(dir, "lib"))
	dltest.MustChild(t, t.Name(), "LD_LIBRARY_PATH="+filepath.Dir(p), "WANT_PATH="+p)
}

// TestLDLibraryPathUnsafe: the library on LD_LIBRARY_PATH is in a
// world-writable folder; it is skipped (never opened) and the search goes
// on.
func TestLDLibraryPathUnsafe(t *testing.T) {
	if dltest.IsChild(t) {
		lib, err := dl.Open(spec(nil, os.Getenv("GOOD_DIR")))
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(os.Getenv("GOOD_DIR"), soname), lib.Path)
		require.Len(t, lib.Attempts, 3, "%v", lib.Attempts)
		assert.Equal(t, filepath.Join(os.Getenv("BAD_DIR"), soname), lib.Attempts[0].Path)
		assert.Equal(t, dl.FromLibraryPath, lib.Attempts[0].From)
		assert.ErrorIs(t, lib.Attempts[0].Err, dl.ErrUnsafePath)
		assert.Contains(t, lib.Attempts[0].Err.Error(), "writable by anyone")
		assert.Equal(t, soname, lib.Attempts[1].Path)
		assert.ErrorIs(t, lib.Attempts[1].Err, dl.ErrNotFound)
		assert.Contains(t, lib.Attempts[1].Err.Error(), "1 candidate(s) refused")
		assert.Equal(t, dl.Attempt{Path: lib.Path, From: dl.FromDirs}, lib.Attempts[2])
		return
	}
	dir := dltest.PrivateDir(t)
	bad := filepath.Join(dir, "bad")
	buildIn(t, bad)
	require.NoError(t, os.Chmod(bad, 0o777))
	good := filepath.Dir(buildIn(t, filepath.Join(dir, "good")))
	dltest.MustChild(t, t.Name(), "LD_LIBRARY_PATH="+bad, "BAD_DIR="+bad, "GOOD_DIR="+good)
}

func TestConcurrentSym(t *testing.T) {
	dir := dltest.PrivateDir(t)
	p := buildIn(t, filepath.Join(dir, "conc"))
	lib, err := dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": p})))
	require.NoError(t, err)
	defer lib.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := lib.Sym("dltest_answer"); err != nil {
				errs <- err
			}
			if _, err := lib.Sym("missing"); !errors.Is(err, dl.ErrMissingSymbol) || !strings.Contains(err.Error(), "missing") {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFindOpensNothing(t *testing.T) {
	if !dltest.IsChild(t) {
		dir := dltest.PrivateDir(t)
		p := buildIn(t, filepath.Join(dir, "lib"))
		dltest.MustChild(t, t.Name(), "DLTEST_LIB="+p)
		return
	}
	p := os.Getenv("DLTEST_LIB")
	path, attempts, err := dl.Find(spec(env(nil), filepath.Dir(p)))
	require.NoError(t, err)
	assert.Equal(t, p, path)
	assert.NotEmpty(t, attempts)
	_, err = dl.Loaded(spec(env(nil), filepath.Dir(p)))
	assert.ErrorIs(t, err, dl.ErrNotLoaded, "Find loaded nothing")
	_, _, err = dl.Find(spec(env(nil)))
	assert.ErrorIs(t, err, dl.ErrNotFound)
}

// TestNotFoundSaysEachReasonOnce: sonames missing for the same reason share
// one parenthesis, and the advice names the first soname, not a guess.
func TestNotFoundSaysEachReasonOnce(t *testing.T) {
	dir := dltest.PrivateDir(t)
	s := dl.WithSystem(dl.Spec{Name: "libdltest", EnvVar: "FLAGOS_LIBDLTEST_PATH",
		Sonames: []string{"libdltest.so.7", "libdltest.so.6", "libdltest.so"}, Getenv: env(nil)}, "", dir)
	_, err := dl.Open(s)
	require.ErrorIs(t, err, dl.ErrNotFound)
	var oe *dl.OpenError
	require.ErrorAs(t, err, &oe)
	require.Len(t, oe.Attempts, 3)
	reason := oe.Attempts[0].Message()
	require.NotEmpty(t, reason)
	msg := err.Error()
	assert.Contains(t, msg, "tried libdltest.so.7, libdltest.so.6, libdltest.so ("+reason+")")
	assert.Equal(t, 1, strings.Count(msg, reason), "the shared reason is said once: %s", msg)
	assert.Contains(t, msg, "FLAGOS_LIBDLTEST_PATH=/abs/path/to/libdltest.so.7")
}
