package dl_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// raceRounds bounds TestCheckedIsLoaded: each round races one fresh pair
// of files (a loaded library stays loaded, so a round cannot be repeated).
// Before the loader held the file it checked, 6 to 16 rounds in 300 loaded
// the library no check saw.
const raceRounds = 300

// TestCheckedIsLoaded: a link flipped again and again between a safe copy
// and one in a world-writable folder while dl.Open checks and loads it.
// Whatever the timing, the file loaded is the file checked: the unsafe
// copy's constructor never runs, and each load that succeeds ran the safe
// copy's. It runs in a child process (what it loads stays loaded).
func TestCheckedIsLoaded(t *testing.T) {
	if dltest.IsChild(t) {
		raceChild(t)
		return
	}
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the marker libraries")
	}
	root := dltest.PrivateDir(t)
	checked := buildMarker(t, filepath.Join(root, "checked"), "checked")
	evil := buildMarker(t, filepath.Join(root, "evil"), "evil")
	marker := filepath.Join(root, "marker")
	out, err := dltest.RunChild(t, t.Name(), "DLTEST_MARKER="+marker, "RACE_CHECKED="+checked, "RACE_EVIL="+evil, "RACE_ROOT="+root)
	log, _ := os.ReadFile(marker)
	if n := strings.Count(string(log), "evil\n"); n > 0 {
		t.Fatalf("the library no check saw was loaded %d time(s) in %d rounds\n%s", n, raceRounds, out)
	}
	require.NoError(t, err, out)
	if testing.Verbose() {
		t.Log(out)
	}
}

func raceChild(t *testing.T) {
	root := os.Getenv("RACE_ROOT")
	safe, ww, links := filepath.Join(root, "safe"), filepath.Join(root, "ww"), filepath.Join(root, "links")
	for _, d := range []string{safe, ww, links} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.Chmod(ww, 0o777)) // anyone may put a library here: never loaded from here
	marker := os.Getenv("DLTEST_MARKER")
	loaded, refused := 0, 0
	for i := range raceRounds {
		good, bad := filepath.Join(safe, fmt.Sprintf("lib%d.so", i)), filepath.Join(ww, fmt.Sprintf("lib%d.so", i))
		copyFile(t, os.Getenv("RACE_CHECKED"), good)
		copyFile(t, os.Getenv("RACE_EVIL"), bad)
		link := filepath.Join(links, fmt.Sprintf("lib%d.so", i))
		require.NoError(t, os.Symlink(good, link))

		var stop atomic.Bool
		var wg sync.WaitGroup
		flipping := make(chan struct{})
		wg.Add(1)
		go func() { // flips link between the two, atomically (rename over it)
			defer wg.Done()
			tmp := link + ".tmp"
			for n := 0; !stop.Load(); n++ {
				target := good
				if n%2 == 0 {
					target = bad
				}
				_ = os.Remove(tmp)
				if os.Symlink(target, tmp) == nil {
					_ = os.Rename(tmp, link)
				}
				if n == 1 {
					close(flipping)
				}
			}
		}()
		<-flipping
		before := markerLines(marker)
		lib, err := dl.Open(dl.Spec{Name: "libdltest", EnvVar: "RACE_LIB", Getenv: func(string) string { return link }})
		stop.Store(true)
		wg.Wait()
		after := markerLines(marker)
		require.NotContains(t, after, "evil", "round %d: the library no check saw ran its constructor", i)
		if err != nil {
			assert.ErrorIs(t, err, dl.ErrUnsafePath, "round %d: refused only for the world-writable folder", i)
			assert.Equal(t, before, after, "round %d: refused, and nothing ran", i)
			refused++
			continue
		}
		loaded++
		assert.Equal(t, append(before, "checked"), after, "round %d: the file checked is the one loaded, once", i)
		addr, err := lib.Sym("dltest_answer")
		require.NoError(t, err)
		r, _, _ := purego.SyscallN(addr)
		assert.Equal(t, uintptr(7), r)
	}
	t.Logf("%d rounds: %d loaded the checked copy, %d refused the other", raceRounds, loaded, refused)
	assert.Positive(t, loaded, "some rounds must load: the race proves nothing otherwise")
	assert.Positive(t, refused, "some rounds must see the unsafe link: the race proves nothing otherwise")
}

func markerLines(p string) []string {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

func copyFile(t *testing.T, src, dst string) {
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// TestLoadedOnce: loading through the checked descriptor keeps the
// loader's identity of a library: a second Open of the same file, and a
// host's dlopen by its soname, give the same object (not a second copy),
// the second descriptor is closed, and Loaded names the file checked (not
// the descriptor's /proc/self/fd name the loader keeps).
func TestLoadedOnce(t *testing.T) {
	if dltest.IsChild(t) {
		loadedOnceChild(t)
		return
	}
	root := dltest.PrivateDir(t)
	safe := buildIn(t, filepath.Join(root, "safe"))
	link := filepath.Join(root, "link.so")
	require.NoError(t, os.Symlink(safe, link))
	other := filepath.Join(root, "other", "libdlother.so.1")
	require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o755))
	dltest.BuildLib(t, other, "libdlother.so.1", []string{dltest.Abs(t, "testdata/libdltest.c")}, "-DWITH_V2")
	dltest.MustChild(t, t.Name(), "SAFE="+safe, "LINK="+link, "OTHER="+other)
}

func loadedOnceChild(t *testing.T) {
	safe, link := os.Getenv("SAFE"), os.Getenv("LINK")
	open := func(p string) (*dl.Library, uintptr) {
		lib, err := dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": p})))
		require.NoError(t, err)
		addr, err := lib.Sym("dltest_answer")
		require.NoError(t, err)
		return lib, addr
	}
	first, addr := open(link)
	assert.Equal(t, link, first.Path, "the path asked for, as before")
	fds := openFDs(t)
	_, again := open(safe)
	assert.Equal(t, addr, again, "the same file opened again is the same object")
	assert.Equal(t, fds, openFDs(t), "the second descriptor is closed")

	// Another file then gets the descriptor number just closed: it is that
	// file, never the object a name of that number once meant.
	_, v2 := open(os.Getenv("OTHER"))
	assert.NotEqual(t, addr, v2)
	otherLib, err := dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": os.Getenv("OTHER")})))
	require.NoError(t, err)
	_, err = otherLib.Sym("dltest_answer_v2")
	require.NoError(t, err, "the other library is loaded, not the first one again")

	// The host asks for the soname: the loader matches the object loaded.
	h, err := purego.Dlopen(soname, purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err, "a host's dlopen by soname finds the object loaded through the descriptor")
	hostAddr, err := purego.Dlsym(h, "dltest_answer")
	require.NoError(t, err)
	assert.Equal(t, addr, hostAddr)

	lib, err := dl.Loaded(dl.Spec{Name: "libdltest", Sonames: []string{soname}})
	require.NoError(t, err)
	assert.Equal(t, safe, lib.Path, "Loaded names the file checked, not /proc/self/fd/N")
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}

// TestOriginLoaded: a library whose RUNPATH names $ORIGIN (its dependency
// beside it, on no search path) loads: it is loaded by the path the chain
// check resolved, and the file mapped is proven to be the file checked.
func TestOriginLoaded(t *testing.T) {
	if dltest.IsChild(t) {
		lib, err := dl.Open(dl.Spec{Name: "libdlorigin", EnvVar: "ORIGIN_LIB", Getenv: os.Getenv})
		require.NoError(t, err)
		addr, err := lib.Sym("origin_answer")
		require.NoError(t, err)
		r, _, _ := purego.SyscallN(addr)
		assert.Equal(t, uintptr(6), r, "its dependency, found through $ORIGIN, answers")
		return
	}
	dir := filepath.Join(dltest.PrivateDir(t), "lib")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	dltest.BuildLib(t, filepath.Join(dir, "libdlneed.so.1"), "libdlneed.so.1", []string{dltest.Abs(t, "testdata/libdlneed.c")})
	lib := filepath.Join(dir, "libdlorigin.so.1")
	dltest.BuildLib(t, lib, "libdlorigin.so.1", []string{dltest.Abs(t, "testdata/libdlorigin.c")},
		"-L"+dir, "-Wl,--no-as-needed", "-l:libdlneed.so.1", "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags")
	dltest.MustChild(t, t.Name(), "ORIGIN_LIB="+lib)
}
