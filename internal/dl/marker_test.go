package dl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// buildMarker builds testdata/libdlmarker.c as dir/libdltest.so.1: a
// library whose constructor appends tag to $DLTEST_MARKER when it is
// loaded. Its dltest_answer says 7; the safe copy's says 42.
func buildMarker(t *testing.T, dir, tag string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	out := filepath.Join(dir, soname)
	dltest.BuildLib(t, out, soname, []string{dltest.Abs(t, "testdata/libdlmarker.c")}, `-DDLTEST_TAG="`+tag+`"`)
	return out
}

// markerCase places a marker library where an unsafe search would take it.
type markerCase struct {
	name string
	// setup builds the layout under root and returns the child's
	// LD_LIBRARY_PATH, Spec.Dirs (":"-joined), ld.so.cache entry (a file
	// for soname, or ""), working directory ("" for a fresh one) and the
	// reason the marker must be refused with.
	setup func(t *testing.T, root, safe string) (ldpath, dirs, cached, cwd, why string)
}

var markerCases = []markerCase{
	{"world-writable folder on LD_LIBRARY_PATH", func(t *testing.T, root, safe string) (string, string, string, string, string) {
		ww := filepath.Join(root, "ww")
		buildMarker(t, ww, "ww-folder")
		require.NoError(t, os.Chmod(ww, 0o777))
		return ww + ":" + filepath.Dir(safe), "", "", "", "folder " + ww + " (mode 0777) is writable by anyone"
	}},
	{"world-writable grandparent", func(t *testing.T, root, safe string) (string, string, string, string, string) {
		gp := filepath.Join(root, "gp")
		buildMarker(t, filepath.Join(gp, "sub"), "ww-grandparent")
		require.NoError(t, os.Chmod(gp, 0o777))
		return filepath.Join(gp, "sub") + ":" + filepath.Dir(safe), "", "", "", "folder " + gp + " (mode 0777) is writable by anyone"
	}},
	{"symlink hop through a world-writable folder, LD_LIBRARY_PATH", func(t *testing.T, root, safe string) (string, string, string, string, string) {
		links, why := hopLayout(t, root)
		return links + ":" + filepath.Dir(safe), "", "", "", why
	}},
	{"symlink hop through a world-writable folder, Spec.Dirs", func(t *testing.T, root, safe string) (string, string, string, string, string) {
		links, why := hopLayout(t, root)
		return "", links + ":" + filepath.Dir(safe), "", "", why
	}},
	{"working directory through an empty LD_LIBRARY_PATH", func(t *testing.T, root, safe string) (string, string, string, string, string) {
		cwd := filepath.Dir(buildMarker(t, filepath.Join(root, "cwd"), "cwd-colon"))
		return ":", filepath.Dir(safe), "", cwd, `skipped: relative/empty LD_LIBRARY_PATH element ""`
	}},
	{"working directory through LD_LIBRARY_PATH=.", func(t *testing.T, root, safe string) (string, string, string, string, string) {
		cwd := filepath.Dir(buildMarker(t, filepath.Join(root, "cwd"), "cwd-dot"))
		return ".", filepath.Dir(safe), "", cwd, `skipped: relative/empty LD_LIBRARY_PATH element "."`
	}},
	{"working directory through a leading empty element", func(t *testing.T, root, safe string) (string, string, string, string, string) {
		cwd := filepath.Dir(buildMarker(t, filepath.Join(root, "cwd"), "cwd-leading"))
		return ":" + filepath.Dir(safe), "", "", cwd, `skipped: relative/empty LD_LIBRARY_PATH element ""`
	}},
	{"ld.so.cache entry in a world-writable folder", func(t *testing.T, root, safe string) (string, string, string, string, string) {
		ww := filepath.Join(root, "cachedww")
		p := buildMarker(t, ww, "ww-cache")
		require.NoError(t, os.Chmod(ww, 0o777))
		return "", filepath.Dir(safe), p, "", "folder " + ww + " (mode 0777) is writable by anyone"
	}},
}

// hopLayout: links/libdltest.so.1 -> hops/hop (hops is world-writable) ->
// real/libdltest.so.1, the marker in a safe folder. Only the hop is
// unsafe: anyone may point it elsewhere at any time.
func hopLayout(t *testing.T, root string) (links, why string) {
	real := buildMarker(t, filepath.Join(root, "real"), "symlink-hop")
	hops := filepath.Join(root, "hops")
	require.NoError(t, os.MkdirAll(hops, 0o755))
	require.NoError(t, os.Symlink(real, filepath.Join(hops, "hop")))
	require.NoError(t, os.Chmod(hops, 0o777))
	links = filepath.Join(root, "links")
	require.NoError(t, os.MkdirAll(links, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(hops, "hop"), filepath.Join(links, soname)))
	return links, "folder " + hops + " (mode 0777) is writable by anyone"
}

// TestMarkerNeverLoaded: in each case a library whose constructor leaves a
// marker sits where the loader would find it; dl.Open runs in a child, the
// marker must never appear, the log says why the library was skipped, and
// the safe copy is found and opened by its absolute path.
func TestMarkerNeverLoaded(t *testing.T) {
	if dltest.IsChild(t) {
		markerChild(t)
		return
	}
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the marker library")
	}
	for _, c := range markerCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := dltest.PrivateDir(t)
			safe := buildIn(t, filepath.Join(root, "safe"))
			ldpath, dirs, cached, cwd, why := c.setup(t, root, safe)
			marker := filepath.Join(root, "marker")
			cache := filepath.Join(root, "ld.so.cache")
			var entries [][2]string
			if cached != "" {
				entries = append(entries, [2]string{soname, cached})
			}
			require.NoError(t, os.WriteFile(cache, dl.BuildCache("new", entries...), 0o644))
			out, err := dltest.RunChildIn(t, cwd, "TestMarkerNeverLoaded",
				"DLTEST_MARKER="+marker, "LD_LIBRARY_PATH="+ldpath, "MARKER_DIRS="+dirs, "MARKER_CACHE="+cache,
				"MARKER_WHY="+why, "MARKER_WANT="+safe)
			if b, rerr := os.ReadFile(marker); rerr == nil {
				t.Fatalf("the marker library was loaded (%q)\n%s", b, out)
			}
			require.NoError(t, err, out)
		})
	}
}

func markerChild(t *testing.T) {
	var dirs []string
	if d := os.Getenv("MARKER_DIRS"); d != "" {
		dirs = strings.Split(d, ":")
	}
	s := dl.WithSystem(spec(nil, dirs...), os.Getenv("MARKER_CACHE")) // no default folders
	lib, err := dl.Open(s)
	require.NoError(t, err)
	defer lib.Close()
	want := os.Getenv("MARKER_WANT")
	assert.Equal(t, want, lib.Path)
	assert.True(t, filepath.IsAbs(lib.Path))
	last := lib.Attempts[len(lib.Attempts)-1]
	require.NoError(t, last.Err)
	if last.From == dl.FromDirs {
		assert.Equal(t, want, last.Path)
	} else {
		assert.Equal(t, soname, last.Path, "the soname's Attempt")
		assert.Equal(t, want, last.File, "says which file was chosen")
	}
	why := os.Getenv("MARKER_WHY")
	found := false
	for _, a := range lib.Attempts {
		found = found || (a.Err != nil && strings.Contains(a.Err.Error(), why))
	}
	assert.True(t, found, "no attempt says %q: %v", why, lib.Attempts)

	addr, err := lib.Sym("dltest_answer")
	require.NoError(t, err)
	r, _, _ := purego.SyscallN(addr)
	assert.Equal(t, uintptr(42), r, "the safe copy answers")
	_, err = os.Stat(os.Getenv("DLTEST_MARKER"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the marker library ran")
}

// TestMarkerControl proves the marker works: loading the library, as the
// old search did by soname, leaves the marker before anything can refuse
// it.
func TestMarkerControl(t *testing.T) {
	if dltest.IsChild(t) {
		_, err := purego.Dlopen(os.Getenv("MARKER_LIB"), purego.RTLD_NOW|purego.RTLD_LOCAL)
		require.NoError(t, err)
		return
	}
	root := dltest.PrivateDir(t)
	lib := buildMarker(t, filepath.Join(root, "lib"), "control")
	marker := filepath.Join(root, "marker")
	dltest.MustChild(t, t.Name(), "DLTEST_MARKER="+marker, "MARKER_LIB="+lib)
	b, err := os.ReadFile(marker)
	require.NoError(t, err, "the constructor did not run")
	assert.Equal(t, "control\n", string(b))
}
