package dl_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// sys gives spec a private ld.so.cache holding entries and private default
// folders, so the search never depends on this machine's.
func sys(t *testing.T, s dl.Spec, entries [][2]string, defaults ...string) dl.Spec {
	t.Helper()
	cache := filepath.Join(dltest.PrivateDir(t), "ld.so.cache")
	require.NoError(t, os.WriteFile(cache, dl.BuildCache("new", entries...), 0o644))
	return dl.WithSystem(s, cache, defaults...)
}

// TestSonameSearchOrder: LD_LIBRARY_PATH, then ld.so.cache, then the
// default folders, then Spec.Dirs; each place's file opened by its absolute
// path, and the soname's Attempt says which.
func TestSonameSearchOrder(t *testing.T) {
	dir := dltest.PrivateDir(t)
	ldp := buildIn(t, filepath.Join(dir, "ldpath"))
	cached := buildIn(t, filepath.Join(dir, "cached"))
	def := buildIn(t, filepath.Join(dir, "default"))
	well := buildIn(t, filepath.Join(dir, "well"))
	entries := [][2]string{{soname, cached}}
	for _, c := range []struct {
		name    string
		ldpath  string
		entries [][2]string
		defs    []string
		want    string
		from    string
	}{
		{"LD_LIBRARY_PATH first", filepath.Dir(ldp), entries, []string{filepath.Dir(def)}, ldp, dl.FromLibraryPath},
		{"then ld.so.cache", filepath.Join(dir, "empty"), entries, []string{filepath.Dir(def)}, cached, dl.FromCache},
		{"then the default folders", "", nil, []string{filepath.Join(dir, "nothing"), filepath.Dir(def)}, def, dl.FromDefault},
		{"then Spec.Dirs", "", nil, nil, well, dl.FromDirs},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := sys(t, spec(env(map[string]string{"LD_LIBRARY_PATH": c.ldpath}), filepath.Dir(well)), c.entries, c.defs...)
			lib, err := dl.Open(s)
			require.NoError(t, err)
			defer lib.Close()
			assert.Equal(t, c.want, lib.Path)
			assert.True(t, filepath.IsAbs(lib.Path))
			last := lib.Attempts[len(lib.Attempts)-1]
			assert.NoError(t, last.Err)
			assert.Equal(t, c.from, last.From)
			if c.from == dl.FromDirs {
				assert.Equal(t, dl.Attempt{Path: well, From: dl.FromDirs}, last)
				assert.ErrorIs(t, lib.Attempts[0].Err, dl.ErrNotFound)
			} else {
				assert.Equal(t, dl.Attempt{Path: soname, File: c.want, From: c.from}, last)
			}
		})
	}
}

// TestSonameCandidatesChecked: a candidate of the loader's search that
// fails a check is skipped with the reason, and the search goes on.
func TestSonameCandidatesChecked(t *testing.T) {
	dir := dltest.PrivateDir(t)
	ww := filepath.Join(dir, "ww")
	bad := buildIn(t, ww)
	require.NoError(t, os.Chmod(ww, 0o777))
	def := buildIn(t, filepath.Join(dir, "default"))
	stale := filepath.Join(dir, "gone", soname)

	t.Run("unsafe cache entry", func(t *testing.T) {
		lib, err := dl.Open(sys(t, spec(env(nil)), [][2]string{{soname, bad}}, filepath.Dir(def)))
		require.NoError(t, err)
		defer lib.Close()
		assert.Equal(t, def, lib.Path)
		require.Len(t, lib.Attempts, 2)
		assert.Equal(t, bad, lib.Attempts[0].Path)
		assert.Equal(t, dl.FromCache, lib.Attempts[0].From)
		assert.ErrorIs(t, lib.Attempts[0].Err, dl.ErrUnsafePath)
		assert.Equal(t, dl.Attempt{Path: soname, File: def, From: dl.FromDefault}, lib.Attempts[1])
	})
	t.Run("stale cache entry", func(t *testing.T) {
		lib, err := dl.Open(sys(t, spec(env(nil)), [][2]string{{soname, stale}}, filepath.Dir(def)))
		require.NoError(t, err)
		defer lib.Close()
		require.Len(t, lib.Attempts, 2)
		assert.Equal(t, stale, lib.Attempts[0].Path)
		assert.Contains(t, lib.Attempts[0].Err.Error(), "run ldconfig")
	})
	t.Run("relative cache entry", func(t *testing.T) {
		lib, err := dl.Open(sys(t, spec(env(nil)), [][2]string{{soname, "lib/" + soname}}, filepath.Dir(def)))
		require.NoError(t, err)
		defer lib.Close()
		assert.ErrorIs(t, lib.Attempts[0].Err, dl.ErrRelativePath)
	})
	t.Run("corrupt cache", func(t *testing.T) {
		cache := filepath.Join(dltest.PrivateDir(t), "ld.so.cache")
		require.NoError(t, os.WriteFile(cache, []byte("glibc-ld.so.cache1.1 but cut"), 0o644))
		lib, err := dl.Open(dl.WithSystem(spec(env(nil)), cache, filepath.Dir(def)))
		require.NoError(t, err)
		defer lib.Close()
		require.Len(t, lib.Attempts, 2)
		assert.Equal(t, cache, lib.Attempts[0].Path)
		assert.Contains(t, lib.Attempts[0].Err.Error(), "run ldconfig")
		assert.Equal(t, def, lib.Path)
	})
	t.Run("unsafe default folder", func(t *testing.T) {
		_, err := dl.Open(dl.WithSystem(spec(env(nil)), "", ww))
		require.ErrorIs(t, err, dl.ErrNotFound)
		var oe *dl.OpenError
		require.ErrorAs(t, err, &oe)
		require.Len(t, oe.Attempts, 2)
		assert.ErrorIs(t, oe.Attempts[0].Err, dl.ErrUnsafePath)
		assert.Contains(t, oe.Attempts[1].Err.Error(), "1 candidate(s) refused")
		assert.Contains(t, err.Error(), "chmod o-w "+ww)
	})
}

// TestRelativeLibraryPathElements: empty and relative elements are never
// searched, each recorded in the log; absolute ones after them are.
func TestRelativeLibraryPathElements(t *testing.T) {
	dir := dltest.PrivateDir(t)
	good := buildIn(t, filepath.Join(dir, "good"))
	ldpath := ":.;lib:$ORIGIN/x:/opt/$LIB::" + filepath.Dir(good)
	lib, err := dl.Open(dl.WithSystem(spec(env(map[string]string{"LD_LIBRARY_PATH": ldpath})), ""))
	require.NoError(t, err)
	defer lib.Close()
	assert.Equal(t, good, lib.Path)
	want := []string{"./" + soname, "./" + soname, "lib/" + soname, "$ORIGIN/x/" + soname, "/opt/$LIB/" + soname}
	require.Len(t, lib.Attempts, len(want)+1, "%v", lib.Attempts)
	for i, p := range want {
		a := lib.Attempts[i]
		assert.Equal(t, p, a.Path)
		assert.Equal(t, dl.FromLibraryPath, a.From)
		assert.Error(t, a.Err)
	}
	assert.Contains(t, lib.Attempts[0].Err.Error(), `skipped: relative/empty LD_LIBRARY_PATH element ""`)
	assert.Contains(t, lib.Attempts[1].Err.Error(), `skipped: relative/empty LD_LIBRARY_PATH element "."`)
	assert.Contains(t, lib.Attempts[4].Err.Error(), "dynamic string token")
	assert.Equal(t, dl.Attempt{Path: soname, File: good, From: dl.FromLibraryPath}, lib.Attempts[5])
}

func TestSonameMustBeBare(t *testing.T) {
	s := dl.WithSystem(dl.Spec{Name: "libdltest", Sonames: []string{"lib/" + soname, ""}}, "")
	_, err := dl.Open(s)
	require.ErrorIs(t, err, dl.ErrNotFound)
	var oe *dl.OpenError
	require.ErrorAs(t, err, &oe)
	require.Len(t, oe.Attempts, 2)
	assert.Contains(t, oe.Attempts[0].Err.Error(), "bare file name")
}
