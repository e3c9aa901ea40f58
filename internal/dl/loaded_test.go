package dl_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// TestLoaded runs in a child, which plays the host program: Loaded finds
// only what the host loaded, loads nothing itself (a marker library on
// LD_LIBRARY_PATH stays unloaded), and refuses a copy the host loaded from
// an unsafe folder.
func TestLoaded(t *testing.T) {
	if dltest.IsChild(t) {
		loadedChild(t)
		return
	}
	root := dltest.PrivateDir(t)
	safe := buildIn(t, filepath.Join(root, "safe"))
	onPath := filepath.Dir(buildMarker(t, filepath.Join(root, "onpath"), "loaded"))
	ww := filepath.Join(root, "ww")
	require.NoError(t, os.MkdirAll(ww, 0o755))
	other := filepath.Join(ww, "libdlother.so.1")
	dltest.BuildLib(t, other, "libdlother.so.1", []string{dltest.Abs(t, "testdata/libdltest.c")})
	require.NoError(t, os.Chmod(ww, 0o777))
	marker := filepath.Join(root, "marker")
	out, err := dltest.RunChild(t, t.Name(), "LD_LIBRARY_PATH="+onPath, "DLTEST_MARKER="+marker, "SAFE="+safe, "OTHER="+other)
	if b, rerr := os.ReadFile(marker); rerr == nil {
		t.Fatalf("Loaded loaded the library on LD_LIBRARY_PATH (%q)\n%s", b, out)
	}
	require.NoError(t, err, out)
}

func loadedChild(t *testing.T) {
	s := dl.Spec{Name: "libdltest", Sonames: []string{"libnope.so.9", soname}}

	// Nothing loaded yet: ErrNotLoaded, and nothing gets loaded.
	lib, err := dl.Loaded(s)
	require.Error(t, err)
	assert.Nil(t, lib)
	assert.ErrorIs(t, err, dl.ErrNotLoaded)
	assert.Contains(t, err.Error(), "nothing was loaded")
	var oe *dl.OpenError
	require.ErrorAs(t, err, &oe)
	require.Len(t, oe.Attempts, 2)
	assert.Equal(t, dl.FromLoaded, oe.Attempts[1].From)
	_, err = os.Stat(os.Getenv("DLTEST_MARKER"))
	require.ErrorIs(t, err, os.ErrNotExist, "RTLD_NOLOAD loaded the library on LD_LIBRARY_PATH")

	// The host loads the safe copy: Loaded attaches to it.
	safe := os.Getenv("SAFE")
	h, err := purego.Dlopen(safe, purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err)
	lib, err = dl.Loaded(s)
	require.NoError(t, err)
	assert.Equal(t, safe, lib.Path)
	require.Len(t, lib.Attempts, 2)
	assert.ErrorIs(t, lib.Attempts[0].Err, dl.ErrNotLoaded)
	assert.Equal(t, dl.Attempt{Path: soname, File: safe, From: dl.FromLoaded}, lib.Attempts[1])
	addr, err := lib.Sym("dltest_answer")
	require.NoError(t, err)
	r, _, _ := purego.SyscallN(addr)
	assert.Equal(t, uintptr(42), r)
	require.NoError(t, lib.Close())
	again, err := dl.Loaded(s)
	require.NoError(t, err, "Close released Loaded's reference only; the host's stays")
	require.NoError(t, again.Close())
	require.NoError(t, purego.Dlclose(h))

	// A copy the host loaded from a world-writable folder is refused.
	_, err = purego.Dlopen(os.Getenv("OTHER"), purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err)
	_, err = dl.Loaded(dl.Spec{Name: "libdlother", Sonames: []string{"libdlother.so.1"}})
	require.Error(t, err)
	assert.ErrorIs(t, err, dl.ErrUnsafePath)
	assert.Contains(t, err.Error(), "writable by anyone")
	assert.Contains(t, err.Error(), "was loaded from "+os.Getenv("OTHER"))
}
